% Conditioning on evidence: P(c1 | some) = P(c1) / P(some) = 0.5 / 0.75 = 2/3,
% the same for c2; x is independent of the evidence: 0.3.
0.5::c1. 0.5::c2.
some :- c1.
some :- c2.
0.3::x.
evidence(some).
query(c1). query(c2). query(x).
