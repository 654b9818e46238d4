% the heads of one annotated disjunction add up to more than 1
0.6::a; 0.6::b.
query(a).
