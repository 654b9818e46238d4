-- pg_mln 0.3.0 -> 0.4.0: one job on several workers.
--
-- A MAP job (or the MAP half of a dual job) whose network is large is cut
-- into parts (a marginal job, or a dual job's marginal half, into parts of
-- whole components, each sampled once) (METIS splits a component larger than a worker's share; the
-- other components are packed into groups), and the parts become units of
-- work in mln.job_parts that every worker claims as it claims jobs (FOR
-- UPDATE SKIP LOCKED under a lease).  Parts that share clauses are solved
-- again in rounds, each with its neighbours' atoms held at their states of
-- the round before, which the parts' rows carry.  Job options "partitions"
-- and "rounds"; mln.part_progress and mln.job_progress.parts show each
-- part's worker, device and flips/s.
\echo Use "ALTER EXTENSION pg_mln UPDATE TO '0.4.0'" to load this file. \quit

ALTER TABLE mln.jobs
  ADD COLUMN parts  int,   -- spread jobs: the number of parts
  ADD COLUMN rounds int;   -- spread jobs: rounds done
COMMENT ON COLUMN mln.jobs.parts IS 'MAP spread over workers: the number of parts (see mln.part_progress)';
COMMENT ON COLUMN mln.jobs.rounds IS 'MAP spread over workers: the rounds done over the parts that share clauses';

CREATE TABLE mln.job_plans (
  job        bigint PRIMARY KEY REFERENCES mln.jobs ON DELETE CASCADE,
  parts      int NOT NULL,
  part_of    bytea NOT NULL,  -- little-endian int4 per atom id 0..n: its part, -1 when not searched
  cut        bytea NOT NULL,  -- a byte per part: 1 when it shares clauses with another part
  components int NOT NULL,    -- the network's components, and those searched
  solved_components int NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
COMMENT ON TABLE mln.job_plans IS
  'internal: the parts of a MAP job spread over workers, kept while it runs (a worker that takes over resumes from it)';
ALTER TABLE mln.job_plans ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_job_plans ON mln.job_plans USING (EXISTS (SELECT 1 FROM mln.jobs j WHERE j.id = job));
GRANT SELECT, INSERT, UPDATE, DELETE ON mln.job_plans TO PUBLIC;

CREATE TABLE mln.job_parts (
  job         bigint NOT NULL REFERENCES mln.jobs ON DELETE CASCADE,
  round       int NOT NULL,        -- MAP: 1, 2, ...; the marginal half of a job: 0
  part        int NOT NULL,
  status      text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'done')),
  worker      text,
  lease_until timestamptz,
  attempts    int NOT NULL DEFAULT 0,
  seed        bigint NOT NULL,     -- the part's own seed: the same answer whichever worker runs it
  max_flips   bigint NOT NULL,     -- its flips per try (0: 100 per atom)
  time_limit  float8 NOT NULL,     -- its seconds (0: none)
  device      text,
  atoms       bigint,
  clauses     bigint,
  flips       bigint,
  flips_per_s float8,
  cost        float8,              -- with its neighbours held at their states
  bound       float8,
  optimal     boolean,
  seconds     float8,
  state       bytea,               -- MAP: a byte per atom of the part, in ascending atom id
  probabilities bytea,             -- marginal (round 0): a little-endian float8 per atom of the part
  samples     bigint,              -- marginal: samples per component
  average_cost float8,             -- marginal: mean cost per sample, summed over the part's components
  components  int,                 -- marginal: the part's components, and those solved exactly
  exact_components int,
  cancelled   boolean,             -- marginal: stopped by the time limit (the samples so far kept)
  started_at  timestamptz,
  finished_at timestamptz,
  PRIMARY KEY (job, round, part)
);
CREATE INDEX job_parts_open ON mln.job_parts (job, round, part) WHERE status <> 'done';
COMMENT ON TABLE mln.job_parts IS
  'parts of MAP jobs spread over workers, one row per part and round: units of work claimed with FOR UPDATE SKIP LOCKED under a lease';
ALTER TABLE mln.job_parts ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_job_parts ON mln.job_parts USING (EXISTS (SELECT 1 FROM mln.jobs j WHERE j.id = job));
GRANT SELECT, INSERT, UPDATE, DELETE ON mln.job_parts TO PUBLIC;

CREATE VIEW mln.part_progress WITH (security_invoker = true) AS
  SELECT job, round, part, status, worker, device, atoms, clauses, flips, flips_per_s, cost, seconds, attempts,
         started_at, finished_at
    FROM mln.job_parts;
GRANT SELECT ON mln.part_progress TO PUBLIC;
COMMENT ON VIEW mln.part_progress IS
  'the parts of MAP jobs spread over workers: which worker and device runs each part in each round, flips and flips/s';

CREATE OR REPLACE VIEW mln.job_progress WITH (security_invoker = true) AS
  SELECT id, program, task, status, worker, best_cost, hard_violated, flips, flips_per_s,
         seconds, device, gpu_memory_bytes, attempts, created_at, started_at, finished_at, error, warnings,
         samples, samples_total, samples_per_s, average_cost, iterations, iterations_total, objective,
         bound, mln._gap(best_cost, bound) AS gap, optimal, solver, j.parts, j.rounds,
         (SELECT jsonb_agg(jsonb_build_object('part', p.part, 'round', p.round, 'status', p.status,
                                              'worker', p.worker, 'device', p.device, 'flips_per_s', p.flips_per_s)
                           ORDER BY p.part)
            FROM mln.job_parts p
           WHERE p.job = j.id AND p.round = (SELECT max(round) FROM mln.job_parts q WHERE q.job = j.id)) AS part_workers
    FROM mln.jobs j;
COMMENT ON VIEW mln.job_progress IS
  'jobs with their progress (MAP: best cost so far, flips/s, and when done the bound, gap and whether proven optimal; '
  'a job spread over workers: parts, rounds done, and its latest round''s parts with worker, device and flips/s; '
  'marginal: samples drawn of samples_total, samples/s; learn: iterations of iterations_total and the objective)';

CREATE OR REPLACE FUNCTION mln._check_infer_options(task text, options jsonb) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  common   text[] := ARRAY['max_flips', 'timeout', 'seed', 'threads', 'device', 'random_step',
                           'skip_components_without_query', 'exact_max_atoms', 'partitions'];
  map_only text[] := ARRAY['max_tries', 'dont_break', 'solver', 'ilp_seconds', 'cpu_walk', 'rounds'];
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
      ('ilp_seconds',    false, 0,           true,  NULL,                'seconds >= 0: the exact path''s time for the whole job in solver auto (0: off)'),
      ('partitions',     true,  0,           true,  4096,                'an integer from 0 (auto: whole components over the connected workers, for networks of 10^6 clauses or more) to 4096 (1: one worker)'),
      ('rounds',         true,  1,           true,  1000,                'an integer from 1 to 1000 (rounds over the parts that share clauses)')
    ) t(name, integral, lo, lo_incl, hi, what) LOOP
    PERFORM mln._check_option_range(options, 'inference', lim.name, lim.integral, lim.lo, lim.lo_incl, lim.hi, lim.what);
  END LOOP;
END $$;

COMMENT ON FUNCTION mln.infer(text, text, jsonb) IS
  'queues an inference job for the worker; returns the job id.  task: map (default), marginal (MC-SAT) or dual (both from one job).  '
  'Options of every task: max_flips, timeout, seed, threads, device, random_step, skip_components_without_query, exact_max_atoms, '
  'partitions (parts for several workers: N > 1 cuts large components; 0, auto: whole components over the connected workers, for 10^6 clauses or more; marginal parts are whole components); '
  'map and dual: max_tries, dont_break, solver (auto | walksat | ilp), ilp_seconds, cpu_walk (walksat | weighted), rounds; '
  'marginal and dual: samples (default 100), burn_in, mcsat_param, sa_temperature';
