% Relations read from tables (friend.facts, age.facts): their rows are
% certain; each friendship is known with 0.5, knowing is transitive.
%   knows(ann,bob) = 0.5 (no other path to bob)
%   knows(ann,'Cid Smith') = k(ann,cid) or (k(ann,bob) and k(bob,cid)) = 1 - 0.5 * 0.75 = 0.625
%   adult: 0.9 for each of ann and 'Cid Smith' (bob is 17); a text value
%   that is not a plain lower-case name is written quoted.
0.5::knows(X, Y) :- friend(X, Y).
knows(X, Z) :- knows(X, Y), knows(Y, Z).
0.9::adult(X) :- age(X, A), A >= 18.
query(knows(ann, _)). query(adult(_)).
