-- ProbLog / CP-logic programs by forward sampling (docs/problog.md):
-- mln.problog's estimates against exact probabilities of small programs
-- (negation, annotated disjunctions, evidence, recursion), a program over
-- the caller's tables (found by name and through .input, integers and
-- text), non-ground queries, the options, and the errors with line and
-- column.
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_mln;
SELECT plan(27);

-- Suzy and Billy: P(broken) = 1 - (1 - 0.5 * 0.8) * (1 - 0.6) = 0.76.
CREATE TEMP TABLE r1 AS SELECT * FROM mln.problog($$
  0.5::throws(suzy). throws(billy).
  0.8::broken :- throws(suzy).
  0.6::broken :- throws(billy).
  query(broken). query(throws(X)).
$$);
SELECT ok((SELECT abs(probability - 0.76) < 0.015 FROM r1 WHERE query = 'broken'), 'P(broken) = 0.76');
SELECT ok((SELECT 0.76 BETWEEN ci_low AND ci_high AND ci_high - ci_low <= 0.011 FROM r1 WHERE query = 'broken'),
          'its 95% interval holds 0.76 and is at most delta wide');
SELECT ok((SELECT samples BETWEEN 30000 AND 38416 FROM r1 WHERE query = 'broken'),
          'the stopping rule: (1.96 / 0.01)^2 samples at most (throws(suzy) = 0.5 needs about that many)');
SELECT is((SELECT array_agg(query || '=' || round(probability::numeric, 1) ORDER BY query) FROM r1 WHERE query LIKE 'throws%'),
          ARRAY['throws(billy)=1.0', 'throws(suzy)=0.5'], 'a non-ground query: one row per atom that can be true');

-- Evidence by rejection: P(burglary | alarm) = 0.082 / 0.1, P(earthquake | alarm) = 0.036 / 0.1.
CREATE TEMP TABLE r2 AS SELECT * FROM mln.problog($$
  0.1::burglary. 0.2::earthquake.
  0.9::alarm :- burglary, earthquake.
  0.8::alarm :- burglary, \+earthquake.
  0.1::alarm :- \+burglary, earthquake.
  evidence(alarm).
  query(burglary). query(earthquake).
$$, '{"seed": 7}');
SELECT ok((SELECT abs(probability - 0.82) < 0.015 FROM r2 WHERE query = 'burglary'), 'P(burglary | alarm) = 0.82');
SELECT ok((SELECT abs(probability - 0.36) < 0.015 FROM r2 WHERE query = 'earthquake'), 'P(earthquake | alarm) = 0.36');
SELECT ok((SELECT bool_and(samples > 30000) FROM r2),
          'the stopping rule counts accepted samples (one in ten is: P(alarm) = 0.1)');
-- Evidence on probabilistic facts is set, not sampled: every sample counts.
SELECT ok((SELECT abs(probability - 0.5) < 0.015 AND samples = 20000 FROM mln.problog($$
  0.001::a. 0.3::c.
  0.5::b :- a. 0.2::b :- \+a, c. 0.4::b :- c.
  evidence(a). evidence(c, false).
  query(b).
$$, '{"samples": 20000}')), 'evidence on facts: P(b | a, not c) = 0.5 from all 20000 samples');

-- An annotated disjunction under negation: c(1) = 0.3 * 0.6 * 0.5, c(2) = 0.6 * 0.5, b(1) = 0.3 * 0.6 * 0.2.
CREATE TEMP TABLE r3 AS SELECT * FROM mln.problog($$
  0.3::a(1). 0.6::a(2).
  0.2::b(X); 0.5::c(X) :- a(X), \+ d(X).
  0.4::d(1).
  query(c(X)). query(b(1)). query(b(3)).
$$, '{"samples": 200000, "device": "cpu"}');
SELECT ok((SELECT abs(probability - 0.09) < 0.005 FROM r3 WHERE query = 'c(1)'), 'P(c(1)) = 0.09');
SELECT ok((SELECT abs(probability - 0.3) < 0.005 FROM r3 WHERE query = 'c(2)'), 'P(c(2)) = 0.3');
SELECT ok((SELECT abs(probability - 0.036) < 0.003 FROM r3 WHERE query = 'b(1)'), 'P(b(1)) = 0.036');
SELECT is((SELECT (probability, ci_low, ci_high)::text FROM r3 WHERE query = 'b(3)'), '(0,0,0)',
          'a ground query nothing can make true: probability 0');
SELECT is((SELECT min(samples) FROM r3), 200000::bigint, 'a fixed sample count');

-- Tables: integers found by name, text through .input.  P(path(1,3)) = 1 - 0.5 * (1 - 0.25).
CREATE SCHEMA pl_in;
CREATE TABLE pl_in.edge(src int, dst int);
INSERT INTO pl_in.edge VALUES (1, 2), (2, 3), (1, 3), (NULL, 1);
CREATE TABLE pl_in.friend(a text, b text, since int);
INSERT INTO pl_in.friend VALUES ('ann', 'bob', 2001), ('bob', 'Cid Smith', 2003), ('ann', 'Cid Smith', 2010);
SET search_path = pl_in, public;
SELECT ok((SELECT abs(probability - 0.625) < 0.015 FROM mln.problog($$
  0.5::path(X, Y) :- edge(X, Y).
  path(X, Y) :- path(X, Z), path(Z, Y).
  query(path(1, 3)).
$$)), 'a table found by its name: P(path(1,3)) = 0.625');
SELECT is((SELECT array_agg(query || '=' || probability ORDER BY query) FROM mln.problog($$
  0.5::path(X, Y) :- edge(X, Y).
  evidence(edge(1, 2)).
  query(edge(2, 3)). query(edge(3, 3)).
$$, '{"samples": 1000}')), ARRAY['edge(2,3)=1', 'edge(3,3)=0'],
          'a table''s atoms are certain: a row true, any other false; evidence on a row holds');
SELECT throws_ok($$SELECT * FROM mln.problog('0.5::p(X) :- edge(X, _). evidence(edge(1, 2), false). query(p(1)).')$$,
                 '22023', 'line 1, column 35: evidence edge(1,2) = false cannot hold: it is certain (a table row)',
                 'evidence against a table row');
RESET search_path;
CREATE TEMP TABLE r4 AS SELECT * FROM mln.problog($$
  .input friend(a text, b text) from pl_in.friend(a, b)
  0.5::knows(X, Y) :- friend(X, Y).
  knows(X, Z) :- knows(X, Y), knows(Y, Z).
  query(knows(ann, _)).
$$);
SELECT is((SELECT array_agg(query ORDER BY query COLLATE "C") FROM r4), ARRAY['knows(ann,''Cid Smith'')', 'knows(ann,bob)'],
          'text constants from a table, quoted where they are not plain names');
SELECT ok((SELECT abs(probability - 0.625) < 0.015 FROM r4 WHERE query LIKE '%Cid%'), 'P(knows(ann, Cid)) = 0.625');

-- Errors, each before any sampling.
SELECT throws_ok($$SELECT * FROM mln.problog(E'0.5::a.\n0.5:b. query(a).')$$, '42601',
                 'line 2, column 4: syntax error at or near ":": expected ''::'' after a probability',
                 'a syntax error with its line and column');
SELECT throws_ok($$SELECT * FROM mln.problog(E'0.5::a.\nb :- a, \\+ c.\nc :- b.\nquery(c).')$$, '42804',
                 'line 2, column 12: the program is not stratifiable: "c" is negated inside its own recursion (cycle b -> \+c -> b)',
                 'negation through recursion is refused with the cycle named');
SELECT throws_like($$SELECT * FROM mln.problog(E'0.5::a(1, 2).\n0.5::a(3, x).\nb :- a(1, 2).\nquery(b).')$$,
                   'line 2, %argument 2 of "a" is used as text here but as integer elsewhere',
                   'a type error names the argument as written (not the Datalog program''s hidden first column)');
SELECT throws_ok($$SELECT * FROM mln.problog('0.6::a; 0.6::b. query(a).')$$, '22023',
                 'line 1, column 1: the probabilities of an annotated disjunction add up to 1.200000, more than 1',
                 'heads adding up to more than 1');
SELECT throws_ok($$SELECT * FROM mln.problog('0.5::a(1). evidence(a(2)). query(a(1)).')$$, '22023',
                 'line 1, column 21: evidence a(2) = true cannot hold: no rule can make it true',
                 'impossible evidence');
SELECT throws_ok($$SELECT * FROM mln.problog('p(X) :- nowhere_pl(X). query(p(1)).')$$, '42P01', NULL,
                 'an input relation that is no table');
SELECT throws_ok($$SELECT * FROM mln.problog('0.5::a. query(a).', '{"delta": 2}')$$, '22023',
                 'option "delta" of mln.problog must be a number in (0, 1): the width of the 95% interval the stopping rule reaches',
                 'a bad option');
SELECT throws_ok($$SELECT * FROM mln.problog('0.5::a. query(a).', '{"sample": 10}')$$, '22023',
                 'unknown option "sample" of mln.problog', 'an unknown option');
SELECT throws_ok($$SELECT * FROM mln.problog('0.001::a. b :- a. evidence(b). query(a).', '{"max_samples": 100}')$$, '22000',
                 'mln.problog: no sample satisfied the evidence (100 drawn)', 'evidence no sample satisfies');

SELECT * FROM finish();
ROLLBACK;
