% Evidence false, by rejection: c has two causes, each 0.5 strong.
%   P(not c | a, b) = 0.25, P(not c | a, not b) = P(not c | not a, b) = 0.5,
%   P(not c | not a, not b) = 1.
%   P(a, not c) = 0.3 * (0.6 * 0.25 + 0.4 * 0.5) = 0.105
%   P(b, not c) = 0.6 * (0.3 * 0.25 + 0.7 * 0.5) = 0.255
%   P(not c)    = 0.105 + 0.7 * (0.6 * 0.5 + 0.4 * 1) = 0.595
%   P(a | not c) = 0.105 / 0.595 = 3/17, P(b | not c) = 0.255 / 0.595 = 3/7.
% And evidence on an atom that only a fact defines (set, not sampled):
% given f, g = 0.5.
0.3::a. 0.6::b.
0.5::c :- a.
0.5::c :- b.
0.2::f.
0.5::g :- f.
evidence(c, false).
evidence(f, true).
query(a). query(b). query(g).
