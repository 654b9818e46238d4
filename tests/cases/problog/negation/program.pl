% Stratified negation, of a plain atom and of a recursive relation.
0.4::rain. 0.3::sprinkler.
wet :- rain.
wet :- sprinkler.          % 1 - 0.6 * 0.7 = 0.58
dry :- \+wet.              % 0.42
0.5::slip :- wet, \+rain.  % sprinkler and no rain: 0.3 * 0.6 * 0.5 = 0.09
% Nodes that 1 does not reach: 1 never (no edge into it): 1;
% 2 unless e(1,2): 0.5; 3 unless e(1,2) and e(2,3): 1 - 0.25 = 0.75.
0.5::e(1, 2). 0.5::e(2, 3).
r(X, Y) :- e(X, Y).
r(X, Z) :- r(X, Y), e(Y, Z).
n(1). n(2). n(3).
unreached(X) :- n(X), \+r(1, X).
query(wet). query(dry). query(slip). query(unreached(_)).
