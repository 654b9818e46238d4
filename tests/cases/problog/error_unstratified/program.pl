0.5::a.
b :- a, \+c.
c :- \+b.
query(b).
