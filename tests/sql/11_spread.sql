-- One MAP job on several workers (0.4.0): the options partitions and rounds
-- and their errors, the plan and part tables, who may see a job's parts, and
-- what mln.part_progress and mln.job_progress make of the parts' rows.  The
-- worker side (one worker against two, killed workers):
-- tests/e2e/spread.sh.
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_mln;
SELECT plan(23);

SELECT has_table('mln', 'job_parts', 'mln.job_parts holds the parts of spread jobs');
SELECT has_table('mln', 'job_plans', 'mln.job_plans holds their plans');
SELECT has_view('mln', 'part_progress', 'mln.part_progress shows the parts');
SELECT col_type_is('mln', 'jobs', 'parts', 'integer', 'jobs.parts is int');
SELECT col_type_is('mln', 'jobs', 'rounds', 'integer', 'jobs.rounds is int');
SELECT has_column('mln', 'job_progress', 'part_workers', 'job_progress shows the parts'' workers');

SELECT mln.create_program('smoke', pg_read_file(:'datasets' || '/smoke/prog.mln'));
SELECT mln.load_evidence('smoke', pg_read_file(:'datasets' || '/smoke/evidence.db'));
SELECT mln.set_query('smoke', 'Cancer(x)');
SELECT mln.ground('smoke');

-- Options.
SELECT lives_ok($$SELECT mln.infer('smoke', 'map', '{"partitions": 4, "rounds": 2}')$$, 'partitions and rounds');
SELECT lives_ok($$SELECT mln.infer('smoke', 'dual', '{"partitions": 0}')$$, 'partitions 0 (auto) on a dual job');
SELECT lives_ok($$SELECT mln.infer('smoke', 'marginal', '{"partitions": 2}')$$, 'and on a marginal job');
SELECT throws_ok($$SELECT mln.infer('smoke', 'map', '{"partitions": -1}')$$, '22023', NULL, 'partitions < 0');
SELECT throws_ok($$SELECT mln.infer('smoke', 'map', '{"partitions": 1.5}')$$, '22023', NULL,
                 'partitions must be an integer');
SELECT throws_ok($$SELECT mln.infer('smoke', 'map', '{"partitions": 5000}')$$, '22023', NULL, 'partitions > 4096');
SELECT throws_ok($$SELECT mln.infer('smoke', 'map', '{"rounds": 0}')$$, '22023', NULL, 'rounds < 1');
SELECT throws_ok($$SELECT mln.infer('smoke', 'marginal', '{"rounds": 2}')$$, '22023',
                 'inference option "rounds" applies to MAP inference, not to task "marginal"',
                 'rounds is a MAP option');

-- A job's parts, as a worker writes them.
UPDATE mln.jobs SET status = 'running', worker = 'w0', parts = 2, rounds = 1 WHERE id = (SELECT min(id) FROM mln.jobs);
INSERT INTO mln.job_parts (job, round, part, status, worker, seed, max_flips, time_limit, device, flips, flips_per_s)
SELECT (SELECT min(id) FROM mln.jobs), 1, p, 'done', 'w' || p, 7, 0, 0, 'cpu', 100, 1000 FROM generate_series(0, 1) p;
INSERT INTO mln.job_parts (job, round, part, status, worker, seed, max_flips, time_limit, device, flips_per_s)
SELECT min(id), 2, 0, 'running', 'w1', 8, 0, 0, 'gpu (GPU 1)', 5e6 FROM mln.jobs;
SELECT is((SELECT count(*)::int FROM mln.part_progress), 3, 'part_progress lists every part of every round');
SELECT is((SELECT part_workers FROM mln.job_progress ORDER BY id LIMIT 1),
          '[{"part": 0, "round": 2, "device": "gpu (GPU 1)", "status": "running", "worker": "w1", "flips_per_s": 5000000}]'::jsonb,
          'job_progress lists the latest round''s parts with worker, device and flips/s');
SELECT throws_ok($$INSERT INTO mln.job_parts (job, round, part, status, seed, max_flips, time_limit)
                   SELECT min(id), 3, 0, 'lost', 1, 0, 0 FROM mln.jobs$$, '23514', NULL, 'a part''s status is checked');

-- Another role sees neither the job nor its parts.
CREATE ROLE mln_spread_other;
GRANT USAGE ON SCHEMA mln TO mln_spread_other;
SET LOCAL ROLE mln_spread_other;
SELECT is((SELECT count(*)::int FROM mln.job_parts), 0, 'another role sees no part of the job');
SELECT is((SELECT count(*)::int FROM mln.part_progress), 0, 'nor in part_progress');
RESET ROLE;

-- A marginal plan's slices (0.5.0): one by default, never fewer.
SELECT col_default_is('mln', 'job_plans', 'slices', '1', 'a plan samples each part in one slice by default');
SELECT throws_ok($$INSERT INTO mln.job_plans (job, parts, part_of, cut, components, solved_components, slices)
                   SELECT min(id), 1, '\x'::bytea, '\x00'::bytea, 1, 1, 0 FROM mln.jobs$$,
                 '23514', NULL, 'a plan of 0 slices is refused');

-- A deleted job takes its parts and plan with it.
INSERT INTO mln.job_plans (job, parts, part_of, cut, components, solved_components)
SELECT min(id), 2, '\x'::bytea, '\x0000'::bytea, 1, 1 FROM mln.jobs;
DELETE FROM mln.jobs WHERE id = (SELECT min(id) FROM mln.jobs);
SELECT is((SELECT count(*)::int FROM mln.job_parts), 0, 'deleting the job deletes its parts');
SELECT is((SELECT count(*)::int FROM mln.job_plans), 0, 'and its plan');

SELECT * FROM finish();
ROLLBACK;
