-- Weight learning: the SQL surface (mln.learn_weights, the learning
-- grounding, versions, restore, trace), its errors, and that a job that is
-- not done changes no weight.  The worker's side (it learns, cancel, a
-- killed worker): tests/e2e/learn.sh.
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_mln;
SELECT plan(48);

SELECT has_function('mln', 'learn_weights', ARRAY['text', 'jsonb', 'text'], 'mln.learn_weights(text, jsonb, text)');
SELECT has_function('mln', 'restore_weights', ARRAY['text', 'integer'], 'mln.restore_weights(text, int)');
SELECT has_table('mln', 'weight_history', 'mln.weight_history');
SELECT has_table('mln', 'learn_iterations', 'mln.learn_iterations');
SELECT has_view('mln', 'learning_trace', 'mln.learning_trace');
SELECT has_view('mln', 'weight_versions', 'mln.weight_versions');
SELECT has_column('mln', 'job_progress', 'iterations', 'job_progress shows iterations');
SELECT has_column('mln', 'job_progress', 'objective', 'job_progress shows the objective');
SELECT is((SELECT count(*)::int FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = 'mln' AND p.proname ~ '(learn|weights)'
              AND obj_description(p.oid, 'pg_proc') IS NULL), 0,
          'the functions of weight learning have comments');

-- Smokers with training data: Cancer is the query predicate, its evidence the training world.
SELECT mln.create_program('sm', $p$
*Friends(person, person)
*Smokes(person)
Cancer(person)
0.5  !Smokes(a1) v Cancer(a1)
0.4  !Friends(a1,a2) v !Cancer(a1) v Cancer(a2)
@-0.3 Cancer(a1)
$p$);
SELECT mln.load_evidence('sm', $e$
Friends(Anna, Bob)
Friends(Anna, Edward)
Friends(Edward, Frank)
Smokes(Anna)
Smokes(Edward)
Smokes(Gary)
Cancer(Anna)
Cancer(Edward)
!Cancer(Bob)
Cancer(Frank)
$e$);

-- Errors: unknown program, bad options, no query predicates.
SELECT throws_ok($$SELECT mln.learn_weights('nosuch')$$, '42704', NULL, 'unknown program');
SELECT throws_ok($$SELECT mln.learn_weights('sm', '{"iterations": 0}')$$, '22023', NULL, 'iterations must be >= 1');
SELECT throws_ok($$SELECT mln.learn_weights('sm', '{"methd": "dn"}')$$, '22023', 'unknown learning option "methd"',
                 'unknown option');
SELECT throws_ok($$SELECT mln.learn_weights('sm', '{"method": "newton"}')$$, '22023', NULL, 'unknown method');
SELECT throws_ok($$SELECT mln.learn_weights('sm', '{"device": "tpu"}')$$, '22023', 'invalid learning device "tpu"',
                 'unknown sampler device');
SELECT throws_ok($$SELECT mln.learn_weights('sm', '"x"')$$, '22023', 'options must be a JSON object', 'options not an object');
SELECT throws_like($$SELECT mln.learn_weights('sm')$$, '%has no query%', 'no query predicates');
SELECT mln.set_query('sm', 'Cancer(x)');
SELECT throws_ok($$SELECT mln.learn_weights('sm', '{}', 'sql')$$, '0A000', NULL, 'learning does not ground on device sql');

-- A program with only hard clauses: nothing to learn.
SELECT mln.create_program('hardonly', $p$
P(t)
Q(t)
!P(a1) v Q(a1).
$p$);
SELECT mln.load_evidence('hardonly', 'P(A)' || E'\n' || 'Q(A)');
SELECT mln.set_query('hardonly', 'Q(x)');
SELECT throws_ok($$SELECT mln.learn_weights('hardonly')$$, '55000', 'program "hardonly" has nothing to learn',
                 'hard-only program');

-- No training data: no evidence for the query predicate.
SELECT mln.create_program('notrain', $p$
*S(t)
C(t)
1 !S(a1) v C(a1)
$p$);
SELECT mln.load_evidence('notrain', 'S(A)');
SELECT mln.set_query('notrain', 'C(x)');
SELECT throws_ok($$SELECT mln.learn_weights('notrain')$$, '55000', 'program "notrain" has no training data',
                 'no training data');
SELECT is((SELECT count(*)::int FROM mln.jobs WHERE task = 'learn'), 0, 'failed calls queue no job');

-- The learning grounding and the job.
SELECT ok(mln.learn_weights('sm', '{"iterations": 7, "samples": 50}', 'cpu') > 0, 'learn_weights queues a job');
SELECT is((SELECT task || ' ' || status || ' ' || iterations_total FROM mln.jobs), 'learn queued 7', 'a queued learn job');
SELECT is((SELECT (ground_stats->>'learning')::boolean FROM mln.programs WHERE name = 'sm'), true,
          'the network is a learning grounding');
SELECT is((SELECT array_agg(idx ORDER BY pos) FROM mln_sm._learn_rules), ARRAY[0, 1],
          'learnable clauses: the soft ones, not the fixed (@) clause');
SELECT is((SELECT count(*)::int FROM mln_sm._learn_world), 3, 'the training world has the three true Cancer atoms');
SELECT is((SELECT count(*)::int FROM mln_sm._atoms WHERE pred = 2 AND is_query), 5,
          'every Cancer atom of the domain is active (their evidence is not evidence here)');
SELECT is((SELECT count(*)::int FROM mln_sm._atoms WHERE pred = 2 AND evidence IS NOT NULL), 0,
          'query atoms carry no evidence in a learning grounding');
SELECT is((SELECT sum(cardinality(origins))::int FROM mln_sm._learn_clauses), 6,
          'each ground clause records its learnable origins (3 smokers, 3 friend pairs; the fixed clause none)');
SELECT throws_ok($$SELECT mln.learn_weights('sm')$$, '55006', NULL, 'one learning job per program at a time');
SELECT is(mln.wait((SELECT id FROM mln.jobs), interval '0 s')->>'iterations_total', '7', 'mln.wait reports iterations_total');

-- A cancelled job leaves the weights as they were.
SELECT ok(mln.cancel((SELECT id FROM mln.jobs)), 'cancel the learning job');
SELECT is((SELECT array_agg(weight ORDER BY idx) FROM mln.clauses WHERE program = 'sm'), ARRAY[0.5, 0.4, -0.3]::float8[],
          'weights unchanged after a cancelled job');
SELECT is((SELECT count(*)::int FROM mln.weight_history), 0, 'no version written');

-- What the worker does when a job is done: the weights as a new version.
SELECT is(mln._apply_learned_weights('sm', (SELECT id FROM mln.jobs), ARRAY[0, 1], ARRAY[1.25, -0.5]::float8[]), 2,
          'the learned weights are version 2');
SELECT is((SELECT array_agg(weight ORDER BY idx) FROM mln.clauses WHERE program = 'sm'),
          ARRAY[1.25, -0.5, -0.3]::float8[], 'mln.clauses holds the learned weights');
SELECT is((SELECT array_agg(weight ORDER BY idx) FROM mln.weight_history WHERE program = 'sm' AND version = 1),
          ARRAY[0.5, 0.4, -0.3]::float8[], 'version 1 keeps the weights as written');
SELECT is((SELECT DISTINCT source FROM mln.weight_versions WHERE program = 'sm' AND version = 2), 'learned',
          'weight_versions names the source');
SELECT is((SELECT grounded_at FROM mln.programs WHERE name = 'sm'), NULL, 'new weights make the network stale');
SELECT throws_ok($$SELECT mln.infer('sm')$$, '55000', NULL, 'inference asks for a new grounding');

-- Grounding uses the catalog's weights.
SELECT mln.set_query('sm', 'Cancer(x)');
SELECT is((mln.ground('sm', 'cpu', activate_all => true)->>'clauses')::int > 0, true, 'ground with the learned weights');
SELECT ok(EXISTS (SELECT 1 FROM mln.ground_clauses('sm') WHERE abs(weight - 0.95) < 1e-9 AND literals = '{Cancer(Gary)}'),
          'Cancer(Gary) carries the learned weight plus the fixed one (1.25 - 0.3)');

-- The trace view.
INSERT INTO mln.learn_iterations(job, program, iteration, clauses, weights, objective)
VALUES ((SELECT id FROM mln.jobs), 'sm', 1, ARRAY[0, 1], ARRAY[0.9, 0.1], 0.5);
SELECT is((SELECT array_agg(weight ORDER BY clause_no) FROM mln.learning_trace WHERE program = 'sm' AND iteration = 1),
          ARRAY[0.9, 0.1]::float8[], 'learning_trace lists each clause''s weight per iteration');

-- Restore: the previous version (as written) comes back as version 3.
SELECT is(mln.restore_weights('sm'), 3, 'restore_weights writes version 3');
SELECT is((SELECT array_agg(weight ORDER BY idx) FROM mln.clauses WHERE program = 'sm'), ARRAY[0.5, 0.4, -0.3]::float8[],
          'the weights as written are back');
SELECT throws_ok($$SELECT mln.restore_weights('sm', 9)$$, '42704', NULL, 'restoring an unknown version');
SELECT is(mln.restore_weights('sm', 2), 4, 'restore a named version');
SELECT is((SELECT weight FROM mln.clauses WHERE program = 'sm' AND idx = 0), 1.25::float8, 'version 2''s weight is back');

-- Dropping the program drops its history.
SELECT mln.drop_program('sm');
SELECT is((SELECT count(*)::int FROM mln.weight_history WHERE program = 'sm'), 0, 'history goes with the program');

SELECT * FROM finish();
ROLLBACK;
