0.5::a.
evidence(a).
evidence(a, false).
query(a).
