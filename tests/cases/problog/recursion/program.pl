% Paths over probabilistic edges with cycles (1 -> 2 -> 3 -> 1, 1 -> 3).
%   path(1,3) = e13 or (e12 and e23)        = 1 - 0.5 * 0.75 = 0.625
%   path(3,2) = e31 and e12                 = 0.25
%   path(1,1) = e31 and path(1,3)           = 0.3125
%   path(2,3) = e23                         = 0.5
%   path(2,1) = e23 and e31                 = 0.25
%   path(2,2) = e23 and e31 and e12         = 0.125
0.5::edge(1, 2). 0.5::edge(2, 3). 0.5::edge(1, 3). 0.5::edge(3, 1).
path(X, Y) :- edge(X, Y).
path(X, Y) :- edge(X, Z), path(Z, Y).
query(path(1, 3)). query(path(3, 2)). query(path(1, 1)). query(path(2, _)).
