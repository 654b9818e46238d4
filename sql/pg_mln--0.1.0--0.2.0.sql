-- pg_mln 0.1.0 -> 0.2.0.  A new install runs pg_mln--0.1.0.sql and then this
-- script (PostgreSQL follows the update path), so an upgraded database and a
-- fresh one have the same objects; tests/e2e/upgrade.sh holds them to it.
\echo Use "ALTER EXTENSION pg_mln UPDATE TO '0.2.0'" to load this file. \quit

-------------------------------------------------------------------------------
-- Every function explains itself in \df+ mln.* (the internal ones too).
-------------------------------------------------------------------------------
COMMENT ON FUNCTION mln._program(text) IS
  'internal: the catalog row of a program the caller may see, or the error "program does not exist"';
COMMENT ON FUNCTION mln._args_sql(name, text[]) IS
  'internal: SQL fragments that decode an atom''s argument ids into constants (one hash join per argument)';
COMMENT ON FUNCTION mln._array_le(anyarray) IS
  'internal: an int4/float8 array''s elements as raw little-endian bytes (the worker reads clause chunks this way)';
COMMENT ON FUNCTION mln._clause_rows(name) IS
  'internal: the ground clauses of a program schema, one row per clause (used by mln.ground_clauses)';
COMMENT ON FUNCTION mln._job_json(mln.jobs) IS
  'internal: the JSON that mln.wait returns for a job row';
COMMENT ON FUNCTION mln._map_sql(text, name) IS
  'internal: the query behind mln.map and map_result (query atoms with their MAP truth, plus true query evidence)';
COMMENT ON FUNCTION mln._materialize_map(text) IS
  'internal: called by the worker after writing _map; rebuilds the program''s map_result table';

-------------------------------------------------------------------------------
-- Marginal inference (MC-SAT): task => 'marginal' | 'dual'.
-------------------------------------------------------------------------------
-- One grounding, one job: 'dual' runs MAP and then MC-SAT on the network it
-- read once, and writes both answers.  The worker writes P(atom true) into
-- mln_<name>._marginal (created with COPY when absent; mln.ground drops it
-- with the rest of the network, so no stale result survives a re-grounding)
-- and calls mln._materialize_marginal, which rebuilds marginal_result.

ALTER TABLE mln.jobs DROP CONSTRAINT jobs_task_check;
ALTER TABLE mln.jobs ADD CONSTRAINT jobs_task_check CHECK (task IN ('map', 'marginal', 'dual'));
ALTER TABLE mln.jobs
  ADD COLUMN samples       bigint,   -- MC-SAT samples counted per component so far (of samples_total)
  ADD COLUMN samples_total bigint,   -- samples asked for per component
  ADD COLUMN samples_per_s float8,   -- samples per component per second (components run in parallel)
  ADD COLUMN average_cost  float8;   -- mean full-network cost per sample (Tuffy's "### Average Cost")
COMMENT ON COLUMN mln.jobs.samples IS 'marginal/dual jobs: MC-SAT samples counted per component so far';
COMMENT ON COLUMN mln.jobs.samples_total IS 'marginal/dual jobs: MC-SAT samples asked for per component';
COMMENT ON COLUMN mln.jobs.samples_per_s IS 'marginal/dual jobs: samples per component per second (the rate of samples toward samples_total)';
COMMENT ON COLUMN mln.jobs.average_cost IS 'marginal/dual jobs: mean full-network cost per sample, summed over components';

-- Columns may only be appended to a view that is replaced.
CREATE OR REPLACE VIEW mln.job_progress AS
  SELECT id, program, task, status, worker, best_cost, hard_violated, flips, flips_per_s,
         seconds, device, gpu_memory_bytes, attempts, created_at, started_at, finished_at, error, warnings,
         samples, samples_total, samples_per_s, average_cost
    FROM mln.jobs;
COMMENT ON VIEW mln.job_progress IS
  'inference jobs with their progress (MAP: best cost so far, flips/s; marginal: samples drawn of samples_total, samples/s)';

-- A numeric option's value: a JSON number or a string holding one; NULL
-- when absent or JSON null (the default applies).  Raises for anything else.
CREATE FUNCTION mln._infer_number(options jsonb, k text) RETURNS numeric
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE v jsonb := options -> k;
BEGIN
  IF v IS NULL OR jsonb_typeof(v) = 'null' THEN
    RETURN NULL;
  ELSIF jsonb_typeof(v) = 'number' THEN
    RETURN v::text::numeric;
  ELSIF jsonb_typeof(v) = 'string' AND (v #>> '{}') ~ '^\s*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\s*$' THEN
    RETURN (v #>> '{}')::numeric;
  END IF;
  RAISE EXCEPTION 'inference option "%" must be a number, not %', k, v USING ERRCODE = 'invalid_parameter_value',
    HINT = format('for example {"%s": 10}', k);
END $$;
COMMENT ON FUNCTION mln._infer_number(jsonb, text) IS
  'internal: the numeric value of an inference option (a JSON number or numeric string), or an error naming it';

-- Checks a job's task and options; raises with a HINT on the first problem.
CREATE FUNCTION mln._check_infer_options(task text, options jsonb) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  common   text[] := ARRAY['max_flips', 'timeout', 'seed', 'threads', 'device', 'random_step',
                           'skip_components_without_query', 'exact_max_atoms'];
  map_only text[] := ARRAY['max_tries', 'dont_break'];
  mar_only text[] := ARRAY['samples', 'burn_in', 'mcsat_param', 'sa_temperature'];
  allowed  text[];
  k text;
  v numeric;
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
      ('exact_max_atoms', true, 0,           true,  20,                  'an integer from 0 (off) to 20')
    ) t(name, integral, lo, lo_incl, hi, what) LOOP
    CONTINUE WHEN NOT options ? lim.name;
    v := mln._infer_number(options, lim.name);
    CONTINUE WHEN v IS NULL;
    IF (lim.integral AND v <> trunc(v)) OR (lim.lo_incl AND v < lim.lo) OR (NOT lim.lo_incl AND v <= lim.lo)
       OR (lim.hi IS NOT NULL AND v > lim.hi) THEN
      RAISE EXCEPTION 'invalid value % for inference option "%"', options->lim.name, lim.name USING ERRCODE = 'invalid_parameter_value',
        HINT = format('%s must be %s', lim.name, lim.what);
    END IF;
  END LOOP;
END $$;
COMMENT ON FUNCTION mln._check_infer_options(text, jsonb) IS
  'internal: validates an inference task (map, marginal, dual) and its options; raises with a HINT naming what is allowed';

CREATE OR REPLACE FUNCTION mln.infer(name text, task text DEFAULT 'map', options jsonb DEFAULT '{}') RETURNS bigint
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE
  r mln.programs;
  j bigint;
BEGIN
  r := mln._program(name);
  PERFORM mln._check_infer_options(task, options);
  IF r.grounded_at IS NULL OR to_regclass(format('%I._clauses', r.schema_name)) IS NULL THEN
    RAISE EXCEPTION 'program "%" is not grounded (or its evidence changed since)', name
      USING ERRCODE = 'object_not_in_prerequisite_state', HINT = 'run mln.ground(name) first';
  END IF;
  INSERT INTO mln.jobs(program, task, options, samples_total)
  VALUES (name, task, options,
          CASE WHEN task <> 'map' THEN coalesce(mln._infer_number(options, 'samples'), 100) END)
  RETURNING id INTO j;
  PERFORM pg_notify('mln_jobs', j::text);
  RETURN j;
END $$;
COMMENT ON FUNCTION mln.infer(text, text, jsonb) IS
  'queues an inference job for the worker; returns the job id.  task: map (default), marginal (MC-SAT) or dual (both from one job).  '
  'Options of every task: max_flips, timeout, seed, threads, device, random_step, skip_components_without_query, exact_max_atoms; '
  'map and dual: max_tries, dont_break; marginal and dual: samples (default 100), burn_in, mcsat_param, sa_temperature';

CREATE OR REPLACE FUNCTION mln._job_json(j mln.jobs) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('job', j.id, 'task', j.task, 'status', j.status, 'best_cost', j.best_cost,
                            'hard_violated', j.hard_violated, 'flips', j.flips,
                            'seconds', coalesce(j.seconds, CASE WHEN j.status = 'running' AND j.started_at IS NOT NULL
                              THEN round(extract(epoch FROM clock_timestamp() - j.started_at)::numeric, 3)::float8 END),
                            'samples', j.samples, 'samples_total', j.samples_total,
                            'samples_per_s', j.samples_per_s, 'average_cost', j.average_cost,
                            'progress', CASE WHEN j.status = 'done' THEN 1.0::float8
                                             WHEN j.samples_total > 0
                                             THEN least(1.0, coalesce(j.samples, 0)::float8 / j.samples_total) END,
                            'device', j.device, 'gpu_memory_bytes', j.gpu_memory_bytes, 'error', j.error,
                            'warnings', to_jsonb(j.warnings))
$$;
COMMENT ON FUNCTION mln._job_json(mln.jobs) IS
  'internal: the JSON that mln.wait returns for a job row (status, costs, flips, samples drawn of samples_total, seconds, progress in [0, 1])';
COMMENT ON FUNCTION mln.wait(bigint, interval) IS
  'waits for a job (up to timeout) and returns its status, task, best cost, hard clauses violated, flips, samples drawn and samples_total, '
  'average cost, seconds and progress; cancelling the wait cancels the job';

-- The query behind mln.marginals and marginal_result, unordered: one branch
-- per predicate, the active query atoms that are not hard evidence (Tuffy
-- section 8.2: inactive and hard-evidence query atoms are not listed at all).
CREATE FUNCTION mln._marginal_sql(prog text, sch name) RETURNS text
LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
  p record;
  a record;
  parts text[] := '{}';
BEGIN
  FOR p IN SELECT idx, name, arg_kinds FROM mln.predicates WHERE program = prog ORDER BY idx LOOP
    a := mln._args_sql(sch, p.arg_kinds);
    parts := parts || format(
      'SELECT %L::text AS predicate, %s AS arguments, m.probability
         FROM %I._atoms x JOIN %I._marginal m ON m.atom = x.id%s
        WHERE x.is_query AND (x.evidence IS NULL OR x.prior IS NOT NULL) AND x.pred = %s',
      p.name, a.elems, sch, sch, a.joins, p.idx);
  END LOOP;
  IF cardinality(parts) = 0 THEN
    RETURN 'SELECT NULL::text AS predicate, NULL::text[] AS arguments, NULL::float8 AS probability WHERE false';
  END IF;
  RETURN array_to_string(parts, ' UNION ALL ');
END $$;
COMMENT ON FUNCTION mln._marginal_sql(text, name) IS
  'internal: the query behind mln.marginals and marginal_result (active, non-evidence query atoms with P(true))';

-- The program's row, checking that it was grounded and has a marginal result.
CREATE FUNCTION mln._marginal_program(p_name text) RETURNS mln.programs
LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE r mln.programs;
BEGIN
  r := mln._program(p_name);
  IF to_regclass(format('%I._atoms', r.schema_name)) IS NULL THEN
    RAISE EXCEPTION 'program "%" has not been grounded', p_name USING ERRCODE = 'object_not_in_prerequisite_state',
      HINT = 'run mln.ground(name), then mln.wait(mln.infer(name, task => ''marginal''))';
  END IF;
  IF to_regclass(format('%I._marginal', r.schema_name)) IS NULL THEN
    RAISE EXCEPTION 'program "%" has no marginal inference result', p_name
      USING ERRCODE = 'object_not_in_prerequisite_state',
      DETAIL = 'no marginal or dual job has finished since the program was last grounded',
      HINT = 'run mln.wait(mln.infer(name, task => ''marginal''))';
  END IF;
  RETURN r;
END $$;
COMMENT ON FUNCTION mln._marginal_program(text) IS
  'internal: the catalog row of a program with a marginal result, or a clear error (unknown, not grounded, no result yet)';

CREATE FUNCTION mln.marginals(name text)
  RETURNS TABLE (predicate text, arguments text[], probability float8)
LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE r mln.programs;
BEGIN
  r := mln._marginal_program(name);
  RETURN QUERY EXECUTE 'SELECT * FROM (' || mln._marginal_sql(name, r.schema_name) || ') q '
                       'ORDER BY predicate COLLATE "C", probability DESC, arguments';
END $$;
COMMENT ON FUNCTION mln.marginals(text) IS
  'marginal probabilities P(true) of the active query atoms (hard evidence and inactive atoms are not listed), '
  'by predicate and then most probable first; from the last marginal or dual job since grounding';

-- Called by the worker after writing _marginal: refreshes marginal_result.
CREATE FUNCTION mln._materialize_marginal(name text) RETURNS void
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE r mln.programs;
BEGIN
  r := mln._marginal_program(name);
  EXECUTE format('DROP TABLE IF EXISTS %I.marginal_result', r.schema_name);
  EXECUTE format('CREATE TABLE %I.marginal_result AS ', r.schema_name) || mln._marginal_sql(name, r.schema_name);
  EXECUTE format('COMMENT ON TABLE %I.marginal_result IS %L', r.schema_name,
                 'marginal probabilities of the query atoms, written by the last marginal or dual job (see mln.marginals)');
END $$;
COMMENT ON FUNCTION mln._materialize_marginal(text) IS
  'internal: called by the worker after writing _marginal; rebuilds the program''s marginal_result table';
