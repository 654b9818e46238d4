-- Rule learning as a worker job (mln.learn_rules_job, docs/rules.md): the
-- worker (run here with \!, so the setup is committed, not rolled back,
-- and dropped at the end) learns what mln.learn_rules_from learns in the
-- backend, for both scores; bad options and an unknown target are refused
-- when queued; a cancelled job writes nothing; mln.add_learned_rules
-- appends the rules to the program as a weight version that
-- mln.restore_weights takes back, and changes nothing when a rule does not
-- parse.  The worker's running side (progress, cancel while it searches):
-- tests/e2e/learn_rules.sh.
SET client_min_messages = error;
CREATE EXTENSION IF NOT EXISTS pg_mln;
SELECT mln.drop_program(name) FROM mln.programs WHERE name IN ('rj_family', 'rj_cancer');
DROP ROLE IF EXISTS rj_other;
-- The worker reaches this database as psql does.
\setenv PGDATABASE :DBNAME
\setenv PGHOST :HOST
\setenv PGPORT :PORT
SELECT plan(39);

-- Four generations of 15 people; grandparent's true atoms are the
-- parent-of-parent pairs, its false ones some other pairs.  One rule is
-- written: 1.5 parent(x, y) => !parent(y, x).
SELECT setseed(0.42);
CREATE TEMP TABLE parent AS
  SELECT DISTINCT 'P' || ((g - 1) * 15 + (random() * 14)::int) AS a, 'P' || (g * 15 + i) AS b
  FROM generate_series(1, 3) g, generate_series(0, 14) i, generate_series(1, 2) k
  WHERE k = 1 OR random() < 0.5;
CREATE TEMP TABLE gp AS SELECT DISTINCT x.a, y.b FROM parent x JOIN parent y ON x.b = y.a;
CREATE TEMP TABLE not_gp AS
  SELECT DISTINCT 'P' || (random() * 59)::int AS a, 'P' || (random() * 59)::int AS b FROM generate_series(1, 300)
  EXCEPT SELECT a, b FROM gp;
SELECT mln.create_program('rj_family',
  E'parent(person, person)\nmale(person)\ngrandparent(person, person)\n1.5 parent(x, y) => !parent(y, x)\n');
SELECT mln.load_evidence('rj_family',
  (SELECT string_agg(format('parent(%s, %s)', a, b), E'\n') FROM parent) || E'\n' ||
  (SELECT string_agg(format('male(P%s)', i), E'\n') FROM generate_series(0, 59, 2) i) || E'\n' ||
  (SELECT string_agg(format('grandparent(%s, %s)', a, b), E'\n') FROM gp) || E'\n' ||
  (SELECT string_agg(format('!grandparent(%s, %s)', a, b), E'\n') FROM not_gp));
SELECT mln.set_query('rj_family', 'grandparent(x, y)');
-- Cancer drawn from -1 + 2.5 smokes - 2 exercises, for score wpll.
CREATE TEMP TABLE person AS SELECT i, random() < 0.4 AS s, random() < 0.4 AS e FROM generate_series(1, 800) i;
SELECT mln.create_program('rj_cancer', E'smokes(person)\nexercises(person)\ncancer(person)\n');
SELECT mln.load_evidence('rj_cancer',
  (SELECT string_agg(format('smokes(Q%s)', i), E'\n') FROM person WHERE s) || E'\n' ||
  (SELECT string_agg(format('exercises(Q%s)', i), E'\n') FROM person WHERE e) || E'\n' ||
  (SELECT string_agg(format('%scancer(Q%s)', CASE WHEN random() < 1 / (1 + exp(1 - 2.5 * s::int + 2 * e::int))
                                                  THEN '' ELSE '!' END, i), E'\n') FROM person));

-- Queued, served by the worker, done.
SELECT mln.learn_rules_job('rj_family', 'grandparent', '{"device": "cpu"}') AS job \gset
SELECT mln.learn_rules_job('rj_cancer', 'cancer', '{"score": "wpll", "max_body": 1, "device": "cpu"}') AS wjob \gset
SELECT results_eq(format('SELECT task, status, options->>''target'' FROM mln.jobs WHERE id = %s', :job),
                  $$VALUES ('rules', 'queued', 'grandparent')$$, 'a rules job is queued with its target');
\! mln_worker --quiet --once >/dev/null 2>&1
SELECT is((mln.wait(:job, interval '60 s'))->>'status', 'done', 'the worker learns the rules');
SELECT is((mln.wait(:wjob, interval '60 s'))->>'status', 'done', 'and the MLN formulas');

-- The worker's rules are the backend's.
SELECT results_eq(format('SELECT rule, positives, negatives, new_positives, score, weight FROM mln.learned_rules '
                         'WHERE job = %s ORDER BY rule_no', :job),
                  $$SELECT * FROM mln.learn_rules_from('rj_family', 'grandparent', '{"device": "cpu"}')$$,
                  'coverage: the rules of mln.learn_rules_from, with their coverage and score');
SELECT is((SELECT rule FROM mln.learned_rules WHERE job = :job), 'grandparent(A, B) :- parent(A, C), parent(C, B).',
          'the planted rule');
SELECT results_eq(format('SELECT positives, negatives FROM mln.learned_rules WHERE job = %s', :job),
                  'SELECT count(*), 0::bigint FROM gp', 'covering every true atom and no false one');
SELECT results_eq(format('SELECT rule, positives, negatives, new_positives, score, round(weight::numeric, 9) '
                         'FROM mln.learned_rules WHERE job = %s ORDER BY rule_no', :wjob),
                  $$SELECT rule, positives, negatives, new_positives, score, round(weight::numeric, 9)
                      FROM mln.learn_rules_from('rj_cancer', 'cancer', '{"score": "wpll", "max_body": 1, "device": "cpu"}')$$,
                  'wpll: the formulas and weights of mln.learn_rules_from');
SELECT is((SELECT string_agg(formula, ' | ' ORDER BY rule_no) FROM mln.learned_rules WHERE job = :wjob),
          'cancer(a) | smokes(a) => cancer(a) | exercises(a) => cancer(a)', 'each as an MLN formula');
SELECT results_eq(format('SELECT iterations, candidates > 0, device FROM mln.jobs WHERE id = %s', :job),
                  $$VALUES (1, true, 'cpu')$$, 'the job row counts the rules and the candidates scored');

-- Refused when queued, by the options reader the worker uses.
SELECT throws_ok($$SELECT mln.learn_rules_job('rj_family', 'grandparent', '{"beam": 0}')$$, '22023',
                 'option "beam" of mln.learn_rules_job must be a whole number >= 1', 'a bad option value');
SELECT throws_ok($$SELECT mln.learn_rules_job('rj_family', 'grandparent', '{"depth": 2}')$$, '22023',
                 'unknown option "depth" of mln.learn_rules_job', 'an unknown option');
SELECT throws_ok($$SELECT mln.learn_rules_job('rj_family', 'uncle')$$, '42704',
                 'program "rj_family" has no predicate "uncle"', 'an unknown target');
SELECT throws_ok($$SELECT mln.learn_rules_job('rj_nothing', 'uncle')$$, '42704',
                 'program "rj_nothing" does not exist', 'an unknown program');
SELECT throws_ok($$SELECT mln.learn_rules_job('rj_family', 'grandparent', '{"score": "wpll", "recursion": true}')$$,
                 '22023', 'mln.learn_rules_job: recursion applies to the coverage search, not to wpll',
                 'a combination the search refuses');
SELECT throws_ok($$INSERT INTO mln.jobs(program, task, options) VALUES ('rj_family', 'rules', '{"beam": 2}')$$,
                 '22023', NULL, 'a direct insert without a target is refused by the jobs trigger');
SELECT throws_ok($$INSERT INTO mln.jobs(program, task, options) VALUES ('rj_family', 'rules', '{"target": "male", "max_vars": 0}')$$,
                 '22023', NULL, 'and one with a bad option');
SELECT is((SELECT count(*) FROM mln.jobs WHERE program = 'rj_family'), 1::bigint, 'nothing refused was queued');

-- Cancelled: no rows.
SELECT mln.learn_rules_job('rj_family', 'grandparent') AS cjob \gset
SELECT ok(mln.cancel(:cjob), 'a queued rules job is cancelled');
\! mln_worker --quiet --once >/dev/null 2>&1
SELECT is((SELECT status FROM mln.jobs WHERE id = :cjob), 'cancelled', 'and stays cancelled');
SELECT is((SELECT count(*) FROM mln.learned_rules WHERE job = :cjob), 0::bigint, 'it wrote no rule');
SELECT throws_ok(format('SELECT mln.add_learned_rules(''rj_family'', %s)', :cjob), '55000', NULL,
                 'and has none to add');

-- The rules into the program: a new clause, a weight version, stale.
SELECT NULL FROM (SELECT mln.ground('rj_family', 'cpu')) g;
SELECT is(mln.add_learned_rules('rj_family', :job), 2, 'add_learned_rules records version 2 (1: as written)');
SELECT results_eq($$SELECT clause_no, clause, weight FROM mln.weight_versions WHERE program = 'rj_family' AND version = 2
                    ORDER BY clause_no$$,
                  format($$VALUES (1, '!parent(x,y) v !parent(y,x)', 1.5::float8),
                                  (2, '!parent(a,c) v !parent(c,b) v grandparent(a,b)', ln(%s + 1)::float8)$$,
                         (SELECT count(*) FROM gp)),
                  'the rule is a clause weighted ln((P + 1) / (N + 1)), beside the one written');
SELECT is((SELECT source FROM mln.weight_versions WHERE program = 'rj_family' AND version = 2 LIMIT 1), 'rules',
          'the version''s source is rules');
SELECT is((SELECT added_in_version FROM mln.learned_rule_coverage WHERE job = :job), 2,
          'learned_rule_coverage says which version added the rule');
SELECT is(mln.program_state('rj_family'), 'stale', 'the program needs grounding again');
-- One grandparent atom no longer evidence: the rule's ground clause on it.
DELETE FROM mln_rj_family.grandparent WHERE truth AND ctid = (SELECT min(ctid) FROM mln_rj_family.grandparent WHERE truth);
SELECT lives_ok($$SELECT mln.ground('rj_family', 'cpu')$$, 'and grounds with the rule');
SELECT is((SELECT count(*) FROM mln.ground_clauses('rj_family') WHERE weight = ln((SELECT count(*) FROM gp) + 1)),
          1::bigint, 'whose ground clause is in the network');
SELECT throws_ok(format('SELECT mln.add_learned_rules(''rj_family'', %s)', :job), '42710', NULL,
                 'a job''s rules are added once');
SELECT throws_ok(format('SELECT mln.add_learned_rules(''rj_cancer'', %s)', :job), '42704', NULL,
                 'to their own program only');
SELECT is(mln.restore_weights('rj_family', 1), 3, 'restore_weights brings version 1 back (as version 3)');
SELECT results_eq($$SELECT weight FROM mln.clauses WHERE program = 'rj_family' ORDER BY idx$$,
                  $$VALUES (1.5::float8), (0::float8)$$, 'the written weight, and 0 for the rule added after it');
SELECT lives_ok($$SELECT mln.restore_weights('rj_family', 2)$$, 'restoring version 2');
SELECT is((SELECT weight FROM mln.clauses WHERE program = 'rj_family' AND idx = 1),
          ln((SELECT count(*) FROM gp) + 1)::float8, 'brings the rule''s weight back');

-- All or nothing: a formula that does not parse changes nothing.
CREATE TEMP TABLE before_add AS
  SELECT (SELECT source FROM mln.programs WHERE name = 'rj_cancer') AS source,
         (SELECT count(*) FROM mln.clauses WHERE program = 'rj_cancer') AS clauses,
         (SELECT count(*) FROM mln.weight_history WHERE program = 'rj_cancer') AS versions;
UPDATE mln.learned_rules SET formula = 'exercises(a) =>' WHERE job = :wjob AND rule_no = 3;
SELECT throws_ok(format('SELECT mln.add_learned_rules(''rj_cancer'', %s)', :wjob), NULL, NULL,
                 'a rule that does not parse: the add fails');
SELECT results_eq($$SELECT (SELECT source FROM mln.programs WHERE name = 'rj_cancer'),
                           (SELECT count(*) FROM mln.clauses WHERE program = 'rj_cancer'),
                           (SELECT count(*) FROM mln.weight_history WHERE program = 'rj_cancer')$$,
                  'SELECT * FROM before_add', 'and the program, its clauses and versions are unchanged');
UPDATE mln.learned_rules SET formula = 'exercises(a) => cancer(a)' WHERE job = :wjob AND rule_no = 3;
SELECT is(mln.add_learned_rules('rj_cancer', :wjob), 2, 'mended, the three formulas are added');
SELECT results_eq($$SELECT weight FROM mln.clauses WHERE program = 'rj_cancer' ORDER BY idx$$,
                  format('SELECT weight FROM mln.learned_rules WHERE job = %s ORDER BY rule_no', :wjob),
                  'wpll: with their learned weights');

-- Row-level security: another role sees none of it.
CREATE ROLE rj_other;
SET ROLE rj_other;
SELECT is((SELECT count(*) FROM mln.learned_rules), 0::bigint, 'another role sees no learned rule');
RESET ROLE;

SELECT * FROM finish();
SELECT mln.drop_program('rj_family');
SELECT mln.drop_program('rj_cancer');
DROP ROLE rj_other;
