-- MAP you can trust (0.3.0): the solver options and their errors, the
-- bound/gap/optimal job columns and what mln.wait and mln.job_progress make
-- of them, and the grounding's unit propagation with its GUC.  The worker
-- side (an ILP job, proven answers): tests/e2e/map_trust.sh.
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_mln;
SELECT plan(29);

CREATE FUNCTION pg_temp.error_part(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE h text;
BEGIN
  EXECUTE stmt;
  RETURN NULL;
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS h = PG_EXCEPTION_HINT;
  RETURN h;
END $$;

SELECT col_type_is('mln', 'jobs', 'bound', 'double precision', 'jobs.bound is float8');
SELECT col_type_is('mln', 'jobs', 'optimal', 'boolean', 'jobs.optimal is boolean');
SELECT col_type_is('mln', 'jobs', 'solver', 'text', 'jobs.solver is text');
SELECT has_column('mln', 'job_progress', 'gap', 'job_progress shows the gap');
SELECT has_column('mln', 'job_progress', 'optimal', 'job_progress shows whether the answer is proven');
SELECT is(mln._gap(10, 9), 0.1::float8, 'gap: (cost - bound) / cost');
SELECT is(mln._gap(5, 5), 0::float8, 'gap of a proven answer is 0');
SELECT is(mln._gap(0, 0), 0::float8, 'gap of a zero-cost answer is 0');
SELECT is(mln._gap(NULL, 1), NULL, 'no cost, no gap');

SELECT mln.create_program('smoke', pg_read_file(:'datasets' || '/smoke/prog.mln'));
SELECT mln.load_evidence('smoke', pg_read_file(:'datasets' || '/smoke/evidence.db'));
SELECT mln.set_query('smoke', 'Cancer(x)');
SELECT mln.ground('smoke');

-- Options.
SELECT lives_ok($$SELECT mln.infer('smoke', 'map', '{"solver": "ilp"}')$$, 'solver ilp is accepted');
SELECT lives_ok($$SELECT mln.infer('smoke', 'dual', '{"solver": "walksat", "ilp_seconds": 0}')$$,
                'solver and ilp_seconds apply to dual jobs');
SELECT throws_ok($$SELECT mln.infer('smoke', 'map', '{"solver": "simplex"}')$$, '22023', 'invalid solver "simplex"',
                 'an unknown solver is refused');
SELECT alike(pg_temp.error_part($$SELECT mln.infer('smoke', 'map', '{"solver": "simplex"}')$$), '%auto%walksat%ilp%',
             'the HINT names the solvers');
SELECT throws_ok($$SELECT mln.infer('smoke', 'map', '{"solver": 3}')$$, '22023', NULL, 'solver must be a string');
SELECT throws_ok($$SELECT mln.infer('smoke', 'map', '{"ilp_seconds": -1}')$$, '22023', NULL, 'ilp_seconds < 0');
SELECT throws_ok($$SELECT mln.infer('smoke', 'map', '{"ilp_seconds": "long"}')$$, '22023', NULL,
                 'ilp_seconds must be a number');
SELECT lives_ok($$SELECT mln.infer('smoke', 'map', '{"cpu_walk": "weighted"}')$$, 'cpu_walk weighted is accepted');
SELECT throws_ok($$SELECT mln.infer('smoke', 'map', '{"cpu_walk": "tabu"}')$$, '22023', 'invalid cpu_walk "tabu"',
                 'an unknown cpu_walk is refused');
SELECT throws_ok($$SELECT mln.infer('smoke', 'marginal', '{"cpu_walk": "weighted"}')$$, '22023',
                 'inference option "cpu_walk" applies to MAP inference, not to task "marginal"',
                 'cpu_walk is a MAP option');
SELECT throws_ok($$SELECT mln.infer('smoke', 'marginal', '{"solver": "ilp"}')$$, '22023',
                 'inference option "solver" applies to MAP inference, not to task "marginal"',
                 'solver is a MAP option');

-- What the worker writes, as mln.wait and the view show it.
UPDATE mln.jobs SET status = 'done', best_cost = 4.0, hard_violated = 0, bound = 3.0, optimal = false,
                    solver = 'walksat+ilp', finished_at = now()
 WHERE id = (SELECT min(id) FROM mln.jobs);
SELECT is((SELECT mln.wait(min(id))->>'bound' FROM mln.jobs), '3', 'mln.wait reports the bound');
SELECT is((SELECT (mln.wait(min(id))->>'gap')::float8 FROM mln.jobs), 0.25::float8, 'and the gap');
SELECT is((SELECT mln.wait(min(id))->>'optimal' FROM mln.jobs), 'false', 'and whether it is proven');
SELECT is((SELECT mln.wait(min(id))->>'solver' FROM mln.jobs), 'walksat+ilp', 'and the solver that answered');
SELECT is((SELECT gap FROM mln.job_progress ORDER BY id LIMIT 1), 0.25::float8, 'job_progress shows the gap');

-- Unit propagation at grounding: a hard rule over hard evidence forces atoms.
SELECT mln.create_program('anc', E'Parent(person, person)\nAnc(person, person)\n' ||
                                 E'Parent(x, y) => Anc(x, y).\nAnc(x, y), Anc(y, z) => Anc(x, z).\n1 !Anc(x, y)\n');
SELECT mln.load_evidence('anc', E'Parent(A, B)\nParent(B, C)\n');
SELECT mln.set_query('anc', 'Anc(x, y)');
SELECT is((mln.ground('anc')->'unit_propagation'->>'atoms_fixed')::int, 3,
          'unit propagation fixes Anc(A,B), Anc(B,C) and Anc(A,C)');
SELECT is((SELECT ground_stats->'unit_propagation'->>'hard_conflict' FROM mln.programs WHERE name = 'anc'), 'false',
          'no hard conflict');
SET LOCAL mln.unit_propagation = off;
SELECT is(mln.ground('anc')->'unit_propagation'->>'enabled', 'false', 'SET mln.unit_propagation = off turns it off');
RESET mln.unit_propagation;
SELECT is((mln.ground('anc')->'unit_propagation'->>'enabled'), 'true', 'on by default');

SELECT * FROM finish();
ROLLBACK;
