% b needs a, c needs not a: no world satisfies both observations.
0.5::a.
b :- a.
c :- \+a.
evidence(b).
evidence(c).
query(a).
