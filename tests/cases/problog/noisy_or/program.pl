% Each written rule is its own event (noisy-or): two 0.5 facts of one atom
% make it true with 1 - 0.5 * 0.5 = 0.75; two causes of smoke:
% P(smoke) = 1 - (1 - 0.4 * P(burn)) * (1 - 0.2 * P(a))
%          = 1 - (1 - 0.2) * (1 - 0.15) = 1 - 0.8 * 0.85 = 0.32.
0.5::a. 0.5::a.
0.5::burn.
0.4::smoke :- burn.
0.2::smoke :- a.
query(a). query(smoke).
