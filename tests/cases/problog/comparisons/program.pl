% Comparisons on integers: only big(3) and big(4) can be true, so the
% non-ground query lists those two (0.5 each); pair(3,4) needs both: 0.25.
n(1). n(2). n(3). n(4).
0.5::big(X) :- n(X), X > 2.
0.5::small(X) :- n(X), X =< 1.
pair(X, Y) :- big(X), big(Y), X < Y.
two :- n(X), X == 2.              % certain: 1
other :- big(X), X \= 3.          % big(4): 0.5
differ :- big(X), big(Y), X \== Y. % both big: 0.25
query(big(_)). query(small(_)). query(pair(_, _)). query(two). query(other). query(differ).
