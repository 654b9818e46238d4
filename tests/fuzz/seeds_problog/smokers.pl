.input friend(a text, b text) from friends
0.3::stress(X) :- person(X).
0.2::influences(X, Y) :- friend(X, Y).
smokes(X) :- stress(X).
smokes(X) :- friend(X, Y), influences(Y, X), smokes(Y).
0.4::asthma(X); 0.3::cough(X) :- smokes(X).
person("Anna"). person(bob).
healthy(X) :- person(X), \+smokes(X).
evidence(smokes("Anna"), true).
evidence(\+cough(bob)).
query(smokes(bob)).
query(healthy(X)).
