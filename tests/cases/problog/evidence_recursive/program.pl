% Evidence on a recursive atom, by rejection: r(1,3) holds when e(1,3), or
% e(1,2) and e(2,3):  P(r(1,3)) = 1 - 0.5 * 0.75 = 0.625.
%   P(e(1,2) | r(1,3)) = P(e(1,2)) * P(e(1,3) or e(2,3)) / 0.625 = 0.5 * 0.75 / 0.625 = 0.6
%   P(e(1,3) | r(1,3)) = 0.5 / 0.625 = 0.8
%   P(e(2,3) | r(1,3)) = 0.6, by symmetry with e(1,2)
0.5::e(1, 2). 0.5::e(2, 3). 0.5::e(1, 3).
r(X, Y) :- e(X, Y).
r(X, Z) :- r(X, Y), e(Y, Z).
evidence(r(1, 3)).
query(e(_, _)).
