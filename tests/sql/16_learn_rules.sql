-- Rule learning from the caller's tables (docs/rules.md): planted rules
-- recovered from generated data and checked by what they derive when
-- mln.datalog runs them over the same tables (grandparent against a join,
-- recursive ancestor against WITH RECURSIVE), trains linked by column
-- names, coverage counts against SQL, and every kind of bad input refused
-- before any work.  Soundness: a recursive body is read as what the theory
-- derives, every rule binds its head, and closed-world negatives come from
-- the target's values, not every text value.
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_mln;
SELECT plan(34);

CREATE SCHEMA rl;
CREATE SCHEMA rl_out;
SET search_path = rl, public;
SELECT setseed(0.27);
-- Four generations of 15 people; each person after the first generation
-- has one or two parents in the generation before.
CREATE TABLE parent AS
  SELECT DISTINCT 'p' || ((g - 1) * 15 + (random() * 14)::int) AS a, 'p' || (g * 15 + i) AS b
  FROM generate_series(1, 3) g, generate_series(0, 14) i, generate_series(1, 2) k
  WHERE k = 1 OR random() < 0.5;
CREATE TABLE male AS SELECT 'p' || i AS a FROM generate_series(0, 59, 2) i;
CREATE TABLE gp_pos AS SELECT DISTINCT x.a, y.b FROM parent x JOIN parent y ON x.b = y.a;
CREATE TABLE gp_neg AS
  SELECT DISTINCT 'p' || (random() * 59)::int AS a, 'p' || (random() * 59)::int AS b FROM generate_series(1, 400)
  EXCEPT SELECT a, b FROM gp_pos;

CREATE TEMP TABLE learned AS
  SELECT * FROM mln.learn_rules('grandparent', 'gp_pos', 'gp_neg', ARRAY['parent', 'male'], '{"device": "cpu"}');
SELECT is((SELECT count(*) FROM learned), 1::bigint, 'grandparent: one rule');
SELECT is((SELECT positives FROM learned), (SELECT count(*) FROM gp_pos), 'it covers every positive example');
SELECT is((SELECT negatives FROM learned), 0::bigint, 'and no negative one');
SELECT lives_ok($$SELECT mln.datalog((SELECT string_agg(rule, ' ') FROM learned), 'rl_out')$$,
                'the rule runs as it is in mln.datalog');
SELECT set_eq('SELECT c1, c2 FROM rl_out.grandparent', 'SELECT a, b FROM gp_pos',
              'and derives exactly the grandparents');

-- No negatives: closed-world ones sampled from the people seen.
CREATE TEMP TABLE learned_cw AS
  SELECT * FROM mln.learn_rules('grandparent', 'gp_pos', NULL, ARRAY['parent', 'male'], '{"seed": 3}');
SELECT is((SELECT rule FROM learned_cw), 'grandparent(A, B) :- parent(A, C), parent(C, B).',
          'closed-world negatives: the same rule');
SELECT is((SELECT negatives FROM learned_cw), 0::bigint, 'covering none of them');

-- No negatives, and a text relation of other values beside the people
-- (colours): the sample draws people only, and the rule is the same.
CREATE TABLE colour AS SELECT 'colour' || i AS c FROM generate_series(1, 3000) i;
CREATE TEMP TABLE learned_cw_wide AS
  SELECT * FROM mln.learn_rules('grandparent', 'gp_pos', NULL, ARRAY['parent', 'male', 'colour'], '{"seed": 3}');
SELECT is((SELECT string_agg(rule, ' ') FROM learned_cw_wide), 'grandparent(A, B) :- parent(A, C), parent(C, B).',
          'closed-world negatives beside 3,000 other text values: the same rule');

-- Recursive: ancestor, the target read as what the theory derives.
CREATE TABLE anc_pos AS
  WITH RECURSIVE anc(a, b) AS (SELECT a, b FROM parent UNION SELECT anc.a, p.b FROM anc JOIN parent p ON p.a = anc.b)
  SELECT a, b FROM anc;
CREATE TABLE anc_neg AS
  SELECT DISTINCT 'p' || (random() * 59)::int AS a, 'p' || (random() * 59)::int AS b FROM generate_series(1, 600)
  EXCEPT SELECT a, b FROM anc_pos;
CREATE TEMP TABLE learned_anc AS
  SELECT * FROM mln.learn_rules('ancestor', 'anc_pos', 'anc_neg', ARRAY['parent'], '{"recursion": true}');
SELECT cmp_ok((SELECT count(*) FROM learned_anc), '>=', 2::bigint, 'ancestor: a base rule and a recursive one');
SELECT lives_ok($$SELECT mln.datalog((SELECT string_agg(rule, ' ') FROM learned_anc), 'rl_out')$$,
                'the theory runs in mln.datalog');
SELECT set_eq('SELECT c1, c2 FROM rl_out.ancestor', 'SELECT a, b FROM anc_pos',
              'and derives exactly WITH RECURSIVE''s ancestors');

-- A body of target literals that rereads the example it proves derives
-- nothing from this background: no rule.
CREATE TABLE e AS SELECT * FROM (VALUES (1, 3), (2, 4)) v(a, b);
CREATE TABLE t_pos AS SELECT * FROM (VALUES (1, 2), (3, 4)) v(a, b);
CREATE TABLE t_neg AS SELECT * FROM (VALUES (1, 4), (3, 2)) v(a, b);
SELECT is((SELECT count(*) FROM mln.learn_rules('t', 't_pos', 't_neg', ARRAY['e'], '{"recursion": true}')), 0::bigint,
          'recursion: no rule that only rereads the examples');
-- q holds of every positive's second column and of no negative's, but
-- t(A, B) :- q(B) leaves A unbound: the rule learned binds both, and runs.
CREATE TABLE q AS SELECT * FROM (VALUES (10), (11), (12)) v(b);
CREATE TABLE r AS SELECT * FROM (VALUES (1), (2), (3), (4)) v(a);
CREATE TABLE u_pos AS SELECT * FROM (VALUES (1, 10), (2, 11), (3, 12), (4, 10)) v(a, b);
CREATE TABLE u_neg AS SELECT * FROM (VALUES (1, 20), (2, 21), (3, 22)) v(a, b);
CREATE TEMP TABLE learned_u AS
  SELECT * FROM mln.learn_rules('u', 'u_pos', 'u_neg', ARRAY['q', 'r'], '{"max_constants": 0}');
SELECT results_eq('SELECT positives, negatives FROM learned_u', $$VALUES (4::bigint, 0::bigint)$$,
                  'a rule covering every positive and no negative');
SELECT lives_ok($$SELECT mln.datalog((SELECT string_agg(rule, ' ') FROM learned_u), 'rl_out')$$,
                'binds every head variable: mln.datalog runs it');
SELECT set_eq('SELECT c1, c2 FROM rl_out.u', 'SELECT a, b FROM r, q', 'and it derives r x q');
-- An empty negatives table: the search goes on (tests/e2e/learn_rules.sh sees the WARNING).
CREATE TABLE u_none(a int, b int);
SET client_min_messages = error;
SELECT cmp_ok((SELECT count(*) FROM mln.learn_rules('u', 'u_pos', 'u_none', ARRAY['q', 'r'])), '>=', 1::bigint,
              'an empty negatives table: rules, over-general ones allowed');
SET client_min_messages = warning;

-- Trains: columns link by name (train, car); eastbound has a short closed car.
CREATE TABLE has_car AS
  SELECT 't' || t AS train, 'c' || t || '_' || k AS car FROM generate_series(1, 50) t, generate_series(1, 3) k;
CREATE TABLE short AS SELECT car FROM has_car WHERE random() < 0.5;
CREATE TABLE closed AS SELECT car FROM has_car WHERE random() < 0.3;
CREATE TABLE east AS SELECT DISTINCT h.train FROM has_car h JOIN short USING (car) JOIN closed USING (car);
CREATE TABLE west AS SELECT DISTINCT train FROM has_car EXCEPT SELECT train FROM east;
CREATE TEMP TABLE learned_trains AS
  SELECT * FROM mln.learn_rules('eastbound', 'east', 'west', ARRAY['has_car', 'short', 'closed'], '{"link": "name"}');
SELECT results_eq('SELECT positives, negatives FROM learned_trains',
                  $$SELECT (SELECT count(*) FROM east), 0::bigint$$,
                  'trains: one rule covering every eastbound train and no westbound one');

-- MLN formulas by WPLL: cancer drawn from -1 + 2.5 smokes - 2 exercises;
-- the formulas found carry those signs and form a program pg_mln parses.
CREATE TABLE person AS SELECT i AS p, random() < 0.4 AS s, random() < 0.4 AS e FROM generate_series(1, 3000) i;
CREATE TABLE smokes AS SELECT p FROM person WHERE s;
CREATE TABLE exercises AS SELECT p FROM person WHERE e;
CREATE TABLE labelled AS
  SELECT p, random() < 1 / (1 + exp(-(-1 + 2.5 * s::int - 2 * e::int))) AS cancer FROM person;
CREATE TABLE cancer_pos AS SELECT p FROM labelled WHERE cancer;
CREATE TABLE cancer_neg AS SELECT p FROM labelled WHERE NOT cancer;
CREATE TEMP TABLE learned_mln AS
  SELECT * FROM mln.learn_rules('cancer', 'cancer_pos', 'cancer_neg', ARRAY['smokes', 'exercises'],
                                '{"score": "wpll", "max_body": 1}');
SELECT is((SELECT count(*) FROM learned_mln), 3::bigint, 'wpll: the unit clause and two formulas');
SELECT cmp_ok((SELECT weight FROM learned_mln WHERE rule LIKE '% smokes(a) => cancer(a)'), '>', 1.5::float8,
              'smokes => cancer has a large positive weight');
SELECT cmp_ok((SELECT weight FROM learned_mln WHERE rule LIKE '% exercises(a) => cancer(a)'), '<', -1.0::float8,
              'exercises => cancer a negative one');
SELECT lives_ok($$SELECT mln.create_program('rl_learned', E'smokes(person)\nexercises(person)\ncancer(person)\n' ||
                  (SELECT string_agg(rule, E'\n') FROM learned_mln))$$, 'the formulas are an MLN program');
SELECT throws_ok($$SELECT * FROM mln.learn_rules('g', 'gp_pos', 'gp_neg', ARRAY['parent'],
                   '{"score": "wpll", "recursion": true}')$$,
                 '22023', 'mln.learn_rules: recursion applies to the coverage search, not to wpll', 'wpll refuses recursion');

-- From a program's evidence: grandparent's true atoms the positives, its
-- false ones the negatives, linked by declared types.
SET client_min_messages = error;  -- create_program warns that the program has no rules
SELECT mln.create_program('rl_family', E'parent(person, person)\nmale(person)\ngrandparent(person, person)\n');
SELECT mln.load_evidence('rl_family',
  (SELECT string_agg(format('parent(%s, %s)', initcap(a), initcap(b)), E'\n') FROM parent) || E'\n' ||
  (SELECT string_agg(format('male(%s)', initcap(a)), E'\n') FROM male) || E'\n' ||
  (SELECT string_agg(format('grandparent(%s, %s)', initcap(a), initcap(b)), E'\n') FROM gp_pos) || E'\n' ||
  (SELECT string_agg(format('!grandparent(%s, %s)', initcap(a), initcap(b)), E'\n') FROM gp_neg));
SET client_min_messages = warning;
CREATE TEMP TABLE learned_prog AS SELECT * FROM mln.learn_rules_from('rl_family', 'grandparent');
SELECT is((SELECT rule FROM learned_prog), 'grandparent(A, B) :- parent(A, C), parent(C, B).',
          'learn_rules_from: the rule from the program''s evidence');
SELECT results_eq('SELECT positives, negatives FROM learned_prog',
                  $$SELECT (SELECT count(*) FROM gp_pos), 0::bigint$$, 'covering every true atom and no false one');
SELECT throws_ok($$SELECT * FROM mln.learn_rules_from('rl_family', 'uncle')$$, '42704',
                 'program "rl_family" has no predicate "uncle"', 'an unknown target predicate');
SELECT throws_ok($$SELECT * FROM mln.learn_rules_from('rl_nothing', 'uncle')$$, '42704',
                 'program "rl_nothing" does not exist', 'an unknown program');

-- Bad input, refused with what and where.
SELECT throws_ok($$SELECT * FROM mln.learn_rules('g', 'no_such_table', 'gp_neg', ARRAY['parent'])$$,
                 '42P01', 'relation "no_such_table" does not exist (the positive examples)', 'a missing table is named');
SELECT throws_ok($$SELECT * FROM mln.learn_rules('g', 'gp_pos', 'male', ARRAY['parent'])$$,
                 '42804', NULL, 'negatives of another arity are refused');
SELECT throws_ok($$SELECT * FROM mln.learn_rules('g', 'gp_pos', 'gp_neg', ARRAY['parent'], '{"beam": 0}')$$,
                 '22023', 'option "beam" of mln.learn_rules must be a whole number >= 1', 'a bad option value');
SELECT throws_ok($$SELECT * FROM mln.learn_rules('g', 'gp_pos', 'gp_neg', ARRAY['parent'], '{"depth": 2}')$$,
                 '22023', 'unknown option "depth" of mln.learn_rules', 'an unknown option');
SELECT throws_ok($$SELECT * FROM mln.learn_rules('g', NULL, 'gp_neg', ARRAY['parent'])$$,
                 '22004', NULL, 'a null argument');
SELECT throws_ok($$SELECT * FROM mln.learn_rules('parent', 'gp_pos', 'gp_neg', ARRAY['parent'])$$,
                 '22023', NULL, 'a background relation with the target''s name');
SELECT throws_ok($$SELECT * FROM mln.learn_rules('g', 'gp_pos', 'gp_neg', ARRAY[]::text[])$$,
                 '22023', 'mln.learn_rules needs at least one background relation', 'no background');
-- Privileges: a role that may not read the background is refused.
CREATE ROLE rl_reader;
GRANT USAGE ON SCHEMA rl TO rl_reader;
GRANT SELECT ON gp_pos, gp_neg TO rl_reader;
SET ROLE rl_reader;
SELECT throws_ok($$SELECT * FROM mln.learn_rules('g', 'gp_pos', 'gp_neg', ARRAY['parent'])$$,
                 '42501', NULL, 'tables are read with the caller''s privileges');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
