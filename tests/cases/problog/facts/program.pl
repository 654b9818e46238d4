% Independent probabilistic facts, a conjunction, a disjunction of two
% rules and a probability written as a fraction.
0.3::a. 0.6::b.
c :- a, b.            % P(c) = 0.3 * 0.6 = 0.18
d :- a.
d :- b.               % P(d) = 1 - 0.7 * 0.4 = 0.72
1/4::e.               % 0.25
f.                    % a certain fact: 1
query(a). query(c). query(d). query(e). query(f).
