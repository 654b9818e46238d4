-- Marginal inference (MC-SAT): the SQL surface of tasks 'marginal' and
-- 'dual', option checking, the job columns, and mln.marginals on a result
-- written the way the worker writes it (the worker itself: tests/e2e/marginal.sh).
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_mln;
SELECT plan(67);

-- The HINT (or DETAIL) of the error a statement raises; NULL if none.
CREATE FUNCTION pg_temp.error_part(stmt text, part text DEFAULT 'hint') RETURNS text LANGUAGE plpgsql AS $$
DECLARE h text; d text;
BEGIN
  EXECUTE stmt;
  RETURN NULL;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS h = PG_EXCEPTION_HINT, d = PG_EXCEPTION_DETAIL;
  RETURN CASE part WHEN 'hint' THEN h ELSE d END;
END $$;

-- New columns, views and functions.
SELECT has_column('mln', 'jobs', 'samples', 'jobs.samples');
SELECT col_type_is('mln', 'jobs', 'samples', 'bigint', 'jobs.samples is bigint');
SELECT has_column('mln', 'jobs', 'samples_total', 'jobs.samples_total');
SELECT col_type_is('mln', 'jobs', 'samples_per_s', 'double precision', 'jobs.samples_per_s is float8');
SELECT col_type_is('mln', 'jobs', 'average_cost', 'double precision', 'jobs.average_cost is float8');
SELECT has_column('mln', 'job_progress', 'samples', 'job_progress shows samples');
SELECT has_column('mln', 'job_progress', 'samples_per_s', 'job_progress shows samples/s');
SELECT has_column('mln', 'job_progress', 'best_cost', 'job_progress keeps its MAP columns');
SELECT has_function('mln', 'marginals', ARRAY['text'], 'mln.marginals(text)');
SELECT has_function('mln', '_materialize_marginal', ARRAY['text'], 'mln._materialize_marginal(text)');
SELECT is((SELECT count(*)::int FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = 'mln' AND p.proname ~ '(marginal|infer|_job_json)'
              AND obj_description(p.oid, 'pg_proc') IS NULL), 0,
          'the functions of marginal inference have comments');
SELECT isnt(obj_description('mln.marginals(text)'::regprocedure, 'pg_proc'), NULL, 'mln.marginals has a comment');

-- The task CHECK of mln.jobs.
SELECT mln.create_program('smoke', pg_read_file(:'datasets' || '/smoke/prog.mln'));
SELECT mln.load_evidence('smoke', pg_read_file(:'datasets' || '/smoke/evidence.db'));
SELECT mln.set_query('smoke', 'Cancer(x)');
SELECT lives_ok($$INSERT INTO mln.jobs(program, task) VALUES ('smoke', 'marginal'), ('smoke', 'dual')$$,
                'jobs accept tasks marginal and dual');
SELECT throws_ok($$INSERT INTO mln.jobs(program, task) VALUES ('smoke', 'bogus')$$, '22023', 'unknown inference task "bogus"',
                 'jobs refuse other tasks (checked as mln.infer checks them, 0.6.0)');
DELETE FROM mln.jobs;

-- Errors of mln.infer: unknown program, not grounded, bad task, bad options.
SELECT throws_ok($$SELECT mln.infer('nosuch', 'marginal')$$, '42704', NULL, 'marginal: unknown program');
SELECT throws_ok($$SELECT mln.infer('smoke', 'marginal')$$, '55000', NULL, 'marginal: program not grounded');
SELECT throws_ok($$SELECT mln.infer('smoke', 'dual')$$, '55000', NULL, 'dual: program not grounded');
SELECT throws_ok($$SELECT mln.infer('smoke', 'learn')$$, '22023', 'unknown inference task "learn"', 'unknown task');
SELECT alike(pg_temp.error_part($$SELECT mln.infer('smoke', 'MAP')$$), '%map%marginal%dual%',
            'the hint of an unknown task names the tasks');
SELECT throws_ok($$SELECT mln.marginals('nosuch')$$, '42704', NULL, 'mln.marginals: unknown program');
SELECT throws_ok($$SELECT mln.marginals('smoke')$$, '55000', 'program "smoke" has not been grounded',
                 'mln.marginals: not grounded');

SELECT is((mln.ground('smoke', 'cpu')->>'atoms')::int, 6, 'smoke grounds to 6 atoms');

SELECT throws_ok($$SELECT mln.infer('smoke', 'marginal', '{"samples": 0}')$$, '22023',
                 'invalid value 0 for inference option "samples"', 'samples 0');
SELECT alike(pg_temp.error_part($$SELECT mln.infer('smoke', 'marginal', '{"samples": 0}')$$), '%positive integer%',
            'its hint: a positive integer');
SELECT throws_ok($$SELECT mln.infer('smoke', 'marginal', '{"samples": -5}')$$, '22023', NULL, 'negative samples');
SELECT throws_ok($$SELECT mln.infer('smoke', 'marginal', '{"samples": 2.5}')$$, '22023', NULL, 'fractional samples');
SELECT throws_ok($$SELECT mln.infer('smoke', 'marginal', '{"samples": "many"}')$$, '22023',
                 'inference option "samples" must be a number, not "many"', 'samples not a number');
SELECT throws_ok($$SELECT mln.infer('smoke', 'marginal', '{"samples": 3000000000}')$$, '22023', NULL,
                 'samples beyond int4');
SELECT throws_ok($$SELECT mln.infer('smoke', 'marginal', '{"burn_in": -1}')$$, '22023', NULL, 'burn_in < 0');
SELECT throws_ok($$SELECT mln.infer('smoke', 'marginal', '{"mcsat_param": 0}')$$, '22023', NULL, 'mcsat_param 0');
SELECT throws_ok($$SELECT mln.infer('smoke', 'marginal', '{"sa_temperature": -2}')$$, '22023', NULL,
                 'sa_temperature < 0');
SELECT throws_ok($$SELECT mln.infer('smoke', 'marginal', '{"sa_temperature": 0}')$$, '22023', NULL,
                 'sa_temperature 0');
SELECT throws_ok($$SELECT mln.infer('smoke', 'marginal', '{"random_step": 1.5}')$$, '22023', NULL,
                 'random_step > 1');
SELECT throws_ok($$SELECT mln.infer('smoke', 'marginal', '{"max_flips": -1}')$$, '22023', NULL, 'max_flips < 0');
SELECT throws_ok($$SELECT mln.infer('smoke', 'marginal', '{"timeout": -1}')$$, '22023', NULL, 'timeout < 0');
SELECT throws_ok($$SELECT mln.infer('smoke', 'marginal', '{"threads": 1.5}')$$, '22023', NULL, 'fractional threads');
SELECT throws_ok($$SELECT mln.infer('smoke', 'marginal', '{"exact_max_atoms": 21}')$$, '22023', NULL,
                 'exact_max_atoms > 20');
SELECT throws_ok($$SELECT mln.infer('smoke', 'marginal', '{"device": "tpu"}')$$, '22023', 'invalid device "tpu"',
                 'unknown device');
SELECT throws_ok($$SELECT mln.infer('smoke', 'marginal', '{"skip_components_without_query": 1}')$$, '22023', NULL,
                 'a boolean option given a number');
SELECT throws_ok($$SELECT mln.infer('smoke', 'marginal', '[1, 2]')$$, '22023', 'options must be a JSON object',
                 'options not an object');
SELECT throws_ok($$SELECT mln.infer('smoke', 'marginal', '{"sampels": 10}')$$, '22023',
                 'unknown inference option "sampels"', 'unknown option');
SELECT alike(pg_temp.error_part($$SELECT mln.infer('smoke', 'marginal', '{"sampels": 10}')$$),
            '%samples, burn_in, mcsat_param, sa_temperature%', 'its hint lists the marginal options');
SELECT throws_ok($$SELECT mln.infer('smoke', 'marginal', '{"max_tries": 3}')$$, '22023',
                 'inference option "max_tries" applies to MAP inference, not to task "marginal"',
                 'a MAP-only option on a marginal job');
SELECT throws_ok($$SELECT mln.infer('smoke', 'map', '{"samples": 10}')$$, '22023',
                 'inference option "samples" applies to marginal inference, not to task "map"',
                 'a marginal-only option on a MAP job');
SELECT alike(pg_temp.error_part($$SELECT mln.infer('smoke', 'map', '{"samples": 10}')$$), '%''marginal'' or ''dual''%',
            'its hint names the tasks that take it');
SELECT is((SELECT count(*)::int FROM mln.jobs), 0, 'refused jobs are not queued');

-- Jobs that are queued.
SELECT lives_ok($$SELECT mln.infer('smoke', 'marginal', '{"samples": 1000, "burn_in": 10, "mcsat_param": 0.5,
                  "sa_temperature": 5, "random_step": 0.2, "max_flips": 100, "seed": 7, "timeout": 30, "threads": 1,
                  "device": "cpu", "skip_components_without_query": false, "exact_max_atoms": 0}')$$,
                'every marginal option at once');
SELECT lives_ok($$SELECT mln.infer('smoke', 'marginal', '{"samples": "200", "seed": null}')$$,
                'numeric strings and JSON null are accepted');
SELECT lives_ok($$SELECT mln.infer(name => 'smoke', task => 'dual', options => '{"max_tries": 2, "samples": 50}')$$,
                'dual takes MAP and marginal options');
SELECT lives_ok($$SELECT mln.infer('smoke')$$, 'MAP is still the default task');
SELECT results_eq($$SELECT task, samples_total FROM mln.jobs ORDER BY id$$,
                  $$VALUES ('marginal', 1000::bigint), ('marginal', 200), ('dual', 50), ('map', NULL)$$,
                  'queued jobs carry their task and the samples asked for');
SELECT mln.infer('smoke', 'marginal');
SELECT is((SELECT samples_total FROM mln.jobs ORDER BY id DESC LIMIT 1), 100::bigint, 'samples defaults to 100');
SELECT ok((SELECT mln.wait(max(id), interval '0 s') ?& ARRAY['samples', 'samples_total', 'seconds', 'progress', 'task']
             FROM mln.jobs), 'mln.wait reports samples, samples_total, seconds, progress and task');
SELECT is((SELECT (mln.wait(max(id), interval '0 s')->>'progress')::float8 FROM mln.jobs), 0::float8,
          'a queued marginal job has progress 0');
UPDATE mln.jobs SET status = 'running', started_at = clock_timestamp() - interval '2 s', samples = 25
 WHERE id = (SELECT max(id) FROM mln.jobs);
SELECT is((SELECT (mln.wait(max(id), interval '0 s')->>'progress')::float8 FROM mln.jobs), 0.25::float8,
          'progress = samples / samples_total');
SELECT ok((SELECT (mln.wait(max(id), interval '0 s')->>'seconds')::float8 >= 2 FROM mln.jobs),
          'a running job reports the seconds since it started');
SELECT is((SELECT samples FROM mln.job_progress WHERE id = (SELECT max(id) FROM mln.jobs)), 25::bigint,
          'job_progress shows the samples drawn');
DELETE FROM mln.jobs;

-- Results: no result yet, then one written the way the worker writes it.
SELECT throws_ok($$SELECT mln.marginals('smoke')$$, '55000', 'program "smoke" has no marginal inference result',
                 'mln.marginals before any marginal job');
SELECT alike(pg_temp.error_part($$SELECT mln.marginals('smoke')$$), '%CALL mln.solve(name, ''marginal'')%',
            'its hint says how to get one (one call that cannot hang)');
-- Add soft evidence on a query atom (listed, with its prior) and re-ground.
SELECT mln.load_evidence('smoke', '0.3 Cancer(Gary)');
SELECT is((mln.ground('smoke', 'cpu')->>'atoms')::int, 7, 'soft evidence makes Cancer(Gary) active');
CREATE TABLE mln_smoke._marginal (atom int4 PRIMARY KEY, probability float8 NOT NULL);
INSERT INTO mln_smoke._marginal
  SELECT id, CASE arguments[1] WHEN 'Anna' THEN 0.62 WHEN 'Edward' THEN 0.63 WHEN 'Bob' THEN 0.57
                               WHEN 'Frank' THEN 0.58 WHEN 'Gary' THEN 0.3 ELSE 0.5 END
    FROM mln.ground_atoms('smoke');
SELECT lives_ok($$SELECT mln._materialize_marginal('smoke')$$, '_materialize_marginal');
SELECT results_eq($$SELECT predicate, arguments, probability FROM mln.marginals('smoke')$$,
                  $$VALUES ('Cancer', '{Edward}'::text[], 0.63::float8), ('Cancer', '{Anna}', 0.62),
                           ('Cancer', '{Frank}', 0.58), ('Cancer', '{Bob}', 0.57), ('Cancer', '{Gary}', 0.3)$$,
                  'mln.marginals: query atoms only, most probable first');
SELECT set_eq($$SELECT predicate, arguments, probability FROM mln_smoke.marginal_result$$,
              $$SELECT predicate, arguments, probability FROM mln.marginals('smoke')$$, 'marginal_result holds the same rows');
SELECT has_view('mln_smoke', 'marginal_result', 'marginal_result is a view of the program''s schema (0.5.0)');
-- Re-grounding drops the result with the rest of the network.
SELECT mln.ground('smoke', 'cpu');
SELECT hasnt_table('mln_smoke', '_marginal', 're-grounding drops _marginal');
SELECT hasnt_view('mln_smoke', 'marginal_result', 're-grounding drops the marginal_result view with it');
SELECT throws_ok($$SELECT mln.marginals('smoke')$$, '55000', NULL, 'no stale marginals after a re-grounding');

SELECT * FROM finish();
ROLLBACK;
