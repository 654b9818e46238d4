-- pg_mln 0.2.0 -> 0.3.0: MAP you can trust.
--
-- Every MAP answer carries a lower bound on the optimum and says whether it
-- is proven optimal; the exact path (COIN-OR CBC with cutting-plane
-- inference) is chosen with the job option "solver" (auto | walksat | ilp).
\echo Use "ALTER EXTENSION pg_mln UPDATE TO '0.3.0'" to load this file. \quit

ALTER TABLE mln.jobs
  ADD COLUMN bound   float8,   -- lower bound on the optimum (MAP and dual jobs)
  ADD COLUMN optimal boolean,  -- best_cost is proven to be the optimum
  ADD COLUMN solver  text;     -- what produced the answer: walksat, ilp or walksat+ilp
COMMENT ON COLUMN mln.jobs.bound IS 'MAP: a lower bound on the optimum cost (best_cost - bound is the gap)';
COMMENT ON COLUMN mln.jobs.optimal IS 'MAP: true when best_cost is proven optimal (enumeration or the exact ILP path)';
COMMENT ON COLUMN mln.jobs.solver IS 'MAP: which solver produced the answer (walksat, ilp or walksat+ilp)';

-- The relative gap of a MAP answer: (cost - bound) / cost, 0 for a proven
-- or zero-cost answer.
CREATE FUNCTION mln._gap(best_cost float8, bound float8) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN best_cost IS NULL OR bound IS NULL THEN NULL
              WHEN best_cost <= bound OR best_cost = 0 THEN 0::float8
              ELSE (best_cost - bound) / abs(best_cost) END
$$;
COMMENT ON FUNCTION mln._gap(float8, float8) IS
  'internal: the relative gap (best_cost - bound) / best_cost of a MAP answer, 0 when proven or zero';

CREATE OR REPLACE VIEW mln.job_progress WITH (security_invoker = true) AS
  SELECT id, program, task, status, worker, best_cost, hard_violated, flips, flips_per_s,
         seconds, device, gpu_memory_bytes, attempts, created_at, started_at, finished_at, error, warnings,
         samples, samples_total, samples_per_s, average_cost, iterations, iterations_total, objective,
         bound, mln._gap(best_cost, bound) AS gap, optimal, solver
    FROM mln.jobs;
COMMENT ON VIEW mln.job_progress IS
  'jobs with their progress (MAP: best cost so far, flips/s, and when done the bound, gap and whether proven optimal; '
  'marginal: samples drawn of samples_total, samples/s; learn: iterations of iterations_total and the objective)';

CREATE OR REPLACE FUNCTION mln._check_infer_options(task text, options jsonb) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  common   text[] := ARRAY['max_flips', 'timeout', 'seed', 'threads', 'device', 'random_step',
                           'skip_components_without_query', 'exact_max_atoms'];
  map_only text[] := ARRAY['max_tries', 'dont_break', 'solver', 'ilp_seconds', 'cpu_walk'];
  mar_only text[] := ARRAY['samples', 'burn_in', 'mcsat_param', 'sa_temperature'];
  allowed  text[];
  k text;
  lim record;
BEGIN
  IF task IS NULL OR task NOT IN ('map', 'marginal', 'dual') THEN
    RAISE EXCEPTION 'unknown inference task "%"', task USING ERRCODE = 'invalid_parameter_value',
      HINT = 'tasks are map (the most likely world), marginal (MC-SAT probabilities) and dual (both, from one job)';
  END IF;
  IF options IS NULL OR jsonb_typeof(options) <> 'object' THEN
    RAISE EXCEPTION 'options must be a JSON object' USING ERRCODE = 'invalid_parameter_value',
      HINT = 'for example ''{"samples": 1000, "seed": 7}''';
  END IF;
  allowed := common || CASE task WHEN 'map' THEN map_only WHEN 'marginal' THEN mar_only
                                 ELSE map_only || mar_only END;
  FOR k IN SELECT jsonb_object_keys(options) LOOP
    IF k = ANY (allowed) THEN
      CONTINUE;
    ELSIF k = ANY (map_only) THEN
      RAISE EXCEPTION 'inference option "%" applies to MAP inference, not to task "%"', k, task
        USING ERRCODE = 'invalid_parameter_value',
        HINT = format('use task => ''map'' or ''dual''; options of task %s: %s', task, array_to_string(allowed, ', '));
    ELSIF k = ANY (mar_only) THEN
      RAISE EXCEPTION 'inference option "%" applies to marginal inference, not to task "%"', k, task
        USING ERRCODE = 'invalid_parameter_value',
        HINT = format('use task => ''marginal'' or ''dual''; options of task %s: %s', task, array_to_string(allowed, ', '));
    END IF;
    RAISE EXCEPTION 'unknown inference option "%"', k USING ERRCODE = 'invalid_parameter_value',
      HINT = format('options of task %s: %s', task, array_to_string(allowed, ', '));
  END LOOP;

  IF options ? 'device' AND jsonb_typeof(options->'device') <> 'null'
     AND coalesce(options->>'device', '') NOT IN ('auto', 'gpu', 'cpu') THEN
    RAISE EXCEPTION 'invalid device "%"', options->>'device' USING ERRCODE = 'invalid_parameter_value',
      HINT = 'valid devices are auto, gpu and cpu';
  END IF;
  IF options ? 'solver' AND (jsonb_typeof(options->'solver') <> 'string'
                             OR options->>'solver' NOT IN ('auto', 'walksat', 'ilp')) THEN
    RAISE EXCEPTION 'invalid solver %', options->'solver' USING ERRCODE = 'invalid_parameter_value',
      HINT = 'solvers are auto (MaxWalkSAT, then the exact ILP path within ilp_seconds), '
             'walksat (MaxWalkSAT only) and ilp (the exact path only)';
  END IF;
  IF options ? 'cpu_walk' AND jsonb_typeof(options->'cpu_walk') <> 'null'
     AND (jsonb_typeof(options->'cpu_walk') <> 'string' OR options->>'cpu_walk' NOT IN ('walksat', 'weighted')) THEN
    RAISE EXCEPTION 'invalid cpu_walk %', options->'cpu_walk' USING ERRCODE = 'invalid_parameter_value',
      HINT = 'CPU walks are walksat (Tuffy''s MaxWalkSAT, the default) and weighted (the GPU''s weighted walk on CPU threads)';
  END IF;
  FOREACH k IN ARRAY ARRAY['dont_break', 'skip_components_without_query'] LOOP
    IF options ? k AND jsonb_typeof(options->k) <> 'null' AND coalesce(options->>k, '') NOT IN ('true', 'false') THEN
      RAISE EXCEPTION 'inference option "%" must be true or false, not %', k, options->k
        USING ERRCODE = 'invalid_parameter_value', HINT = format('for example {"%s": true}', k);
    END IF;
  END LOOP;
  -- Numeric options: (name, integer?, low, low inclusive?, high, what).
  FOR lim IN SELECT * FROM (VALUES
      ('samples',        true,  1::numeric,  true,  2147483647::numeric, 'a positive integer (samples per component)'),
      ('burn_in',        true,  0,           true,  2147483647,          'an integer >= 0 (MC-SAT steps before counting)'),
      ('mcsat_param',    false, 0,           false, NULL,                'a number > 0 (a satisfied clause is kept with probability 1 - exp(-|w| x))'),
      ('sa_temperature', false, 0,           false, NULL,                'a number > 0 (SampleSAT''s simulated-annealing coefficient)'),
      ('random_step',    false, 0,           true,  1,                   'a probability within [0, 1]'),
      ('max_flips',      true,  0,           true,  9223372036854775807, 'an integer >= 0 (0: 100 x atoms)'),
      ('max_tries',      true,  1,           true,  2147483647,          'an integer >= 1'),
      ('seed',           true,  0,           true,  9223372036854775807, 'an integer >= 0'),
      ('timeout',        false, 0,           true,  NULL,                'seconds >= 0 (0: none)'),
      ('threads',        true,  0,           true,  4096,                'an integer from 0 (all cores) to 4096'),
      ('exact_max_atoms', true, 0,           true,  20,                  'an integer from 0 (off) to 20'),
      ('ilp_seconds',    false, 0,           true,  NULL,                'seconds >= 0: the exact path''s time for the whole job in solver auto (0: off)')
    ) t(name, integral, lo, lo_incl, hi, what) LOOP
    PERFORM mln._check_option_range(options, 'inference', lim.name, lim.integral, lim.lo, lim.lo_incl, lim.hi, lim.what);
  END LOOP;
END $$;

CREATE OR REPLACE FUNCTION mln._job_json(j mln.jobs) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('job', j.id, 'task', j.task, 'status', j.status, 'best_cost', j.best_cost,
                            'hard_violated', j.hard_violated, 'bound', j.bound, 'gap', mln._gap(j.best_cost, j.bound),
                            'optimal', j.optimal, 'solver', j.solver, 'flips', j.flips,
                            'seconds', coalesce(j.seconds, CASE WHEN j.status = 'running' AND j.started_at IS NOT NULL
                              THEN round(extract(epoch FROM clock_timestamp() - j.started_at)::numeric, 3)::float8 END),
                            'samples', j.samples, 'samples_total', j.samples_total,
                            'samples_per_s', j.samples_per_s, 'average_cost', j.average_cost,
                            'iterations', j.iterations, 'iterations_total', j.iterations_total, 'objective', j.objective,
                            'progress', CASE WHEN j.status = 'done' THEN 1.0::float8
                                             WHEN j.samples_total > 0
                                             THEN least(1.0, coalesce(j.samples, 0)::float8 / j.samples_total)
                                             WHEN j.iterations_total > 0
                                             THEN least(1.0, coalesce(j.iterations, 0)::float8 / j.iterations_total) END,
                            'device', j.device, 'gpu_memory_bytes', j.gpu_memory_bytes, 'error', j.error,
                            'warnings', to_jsonb(j.warnings))
$$;

COMMENT ON FUNCTION mln.infer(text, text, jsonb) IS
  'queues an inference job for the worker; returns the job id.  task: map (default), marginal (MC-SAT) or dual (both from one job).  '
  'Options of every task: max_flips, timeout, seed, threads, device, random_step, skip_components_without_query, exact_max_atoms; '
  'map and dual: max_tries, dont_break, solver (auto | walksat | ilp), ilp_seconds, cpu_walk (walksat | weighted); '
  'marginal and dual: samples (default 100), burn_in, mcsat_param, sa_temperature';

COMMENT ON FUNCTION mln.wait(bigint, interval) IS
  'waits for a job (up to timeout) and returns its status, task, best cost, hard clauses violated, bound, gap, optimal, solver, '
  'flips, samples drawn and samples_total, average cost, seconds and progress; cancelling the wait cancels the job';
