% Annotated disjunctions: exclusive heads, a remainder with no head, a body,
% and variables.
0.2::red; 0.3::green; 0.5::blue.
0.5::x :- red.
0.5::x :- green.      % red and green exclude each other: 0.2 * 0.5 + 0.3 * 0.5 = 0.25
both :- red, green.   % never: 0
0.3::h1; 0.3::h2.     % neither with 1 - 0.6 = 0.4
none :- \+h1, \+h2.
0.8::toss.
0.5::coin(heads); 0.5::coin(tails) :- toss.   % each 0.8 * 0.5 = 0.4
item(1). item(2).
0.6::col(X, r); 0.4::col(X, b) :- item(X).    % one event per item
same :- col(1, C), col(2, C).                 % 0.6^2 + 0.4^2 = 0.52
query(red). query(green). query(blue). query(x). query(both). query(none).
query(coin(_)). query(same).
