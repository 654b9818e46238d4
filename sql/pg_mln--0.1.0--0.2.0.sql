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

-- A numeric option within its range (kind: inference or learning), else
-- an error naming the option and its range.
CREATE FUNCTION mln._check_option_range(options jsonb, kind text, name text, integral boolean, lo numeric,
                                        lo_incl boolean, hi numeric, what text) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE v numeric;
BEGIN
  IF NOT options ? name THEN RETURN; END IF;
  v := mln._infer_number(options, name);
  IF v IS NOT NULL AND ((integral AND v <> trunc(v)) OR (lo_incl AND v < lo) OR (NOT lo_incl AND v <= lo)
                        OR (hi IS NOT NULL AND v > hi)) THEN
    RAISE EXCEPTION 'invalid value % for % option "%"', options->name, kind, name
      USING ERRCODE = 'invalid_parameter_value', HINT = format('%s must be %s', name, what);
  END IF;
END $$;
COMMENT ON FUNCTION mln._check_option_range(jsonb, text, text, boolean, numeric, boolean, numeric, text) IS
  'internal: raises when a numeric job option is out of its range, with a HINT giving the range';

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
    PERFORM mln._check_option_range(options, 'inference', lim.name, lim.integral, lim.lo, lim.lo_incl, lim.hi, lim.what);
  END LOOP;
END $$;
COMMENT ON FUNCTION mln._check_infer_options(text, jsonb) IS
  'internal: validates an inference task (map, marginal, dual) and its options; raises with a HINT naming what is allowed';

-- The worker role (see the end of this script): the program's schema and
-- its network and result tables ('_'-prefixed; not the evidence tables) are
-- opened to it when a job is queued.  Runs as the caller, the program's
-- owner or a member of it; nothing happens when the role does not exist.
CREATE FUNCTION mln._grant_worker(sch name) RETURNS void
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE t record;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'mln_worker') THEN
    RETURN;
  END IF;
  EXECUTE format('GRANT USAGE, CREATE ON SCHEMA %I TO mln_worker', sch);
  FOR t IN SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = sch AND c.relkind = 'r' AND c.relname LIKE '\_%' AND pg_has_role(c.relowner, 'USAGE')
  LOOP
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON %I.%I TO mln_worker', sch, t.relname);
  END LOOP;
END $$;
COMMENT ON FUNCTION mln._grant_worker(name) IS
  'internal: opens a program''s schema and its network and result tables to role mln_worker (when it exists)';

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
  PERFORM mln._grant_worker(r.schema_name);
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

-------------------------------------------------------------------------------
-- Weight learning: mln.learn_weights queues task 'learn'.
-------------------------------------------------------------------------------
-- mln.learn_weights grounds the program for learning in the caller's
-- transaction (the query predicates' evidence becomes the training world;
-- mln_<name>._learn_rules, _learn_clauses and _learn_world hold what the
-- worker needs) and queues the job.  The worker learns by diagonal Newton on
-- MC-SAT counts (or the voted perceptron), records every iteration in
-- mln.learn_iterations and, in the transaction that marks the job done,
-- writes the weights to mln.clauses as a new version in mln.weight_history
-- (the weights before learning are kept there as an earlier version).  A
-- failed or cancelled job changes no weight.  New weights make the ground
-- network stale: mln.ground the program again before inference.

ALTER TABLE mln.jobs DROP CONSTRAINT jobs_task_check;
ALTER TABLE mln.jobs ADD CONSTRAINT jobs_task_check CHECK (task IN ('map', 'marginal', 'dual', 'learn'));
ALTER TABLE mln.jobs
  ADD COLUMN iterations       int,     -- learning iterations done
  ADD COLUMN iterations_total int,     -- learning iterations asked for (at most)
  ADD COLUMN objective        float8;  -- estimated gain in conditional log-likelihood so far
COMMENT ON COLUMN mln.jobs.iterations IS 'learn jobs: iterations done';
COMMENT ON COLUMN mln.jobs.iterations_total IS 'learn jobs: iterations asked for (the job may converge sooner)';
COMMENT ON COLUMN mln.jobs.objective IS 'learn jobs: estimated gain in (penalised) conditional log-likelihood since the initial weights';

-- Columns may only be appended to a view that is replaced.
CREATE OR REPLACE VIEW mln.job_progress AS
  SELECT id, program, task, status, worker, best_cost, hard_violated, flips, flips_per_s,
         seconds, device, gpu_memory_bytes, attempts, created_at, started_at, finished_at, error, warnings,
         samples, samples_total, samples_per_s, average_cost, iterations, iterations_total, objective
    FROM mln.jobs;
COMMENT ON VIEW mln.job_progress IS
  'jobs with their progress (MAP: best cost so far, flips/s; marginal: samples drawn of samples_total, samples/s; '
  'learn: iterations of iterations_total and the objective)';

CREATE TABLE mln.learn_iterations (
  job        bigint NOT NULL REFERENCES mln.jobs ON DELETE CASCADE,
  program    text NOT NULL REFERENCES mln.programs ON DELETE CASCADE,
  iteration  int NOT NULL,
  clauses    int[] NOT NULL,              -- mln.clauses.idx of each weight
  weights    float8[] NOT NULL,
  objective  float8,
  accepted   boolean NOT NULL DEFAULT true,  -- false: the trust region took the step back
  PRIMARY KEY (job, iteration)
);
COMMENT ON TABLE mln.learn_iterations IS 'weights after each iteration of each learning job (see mln.learning_trace)';
ALTER TABLE mln.learn_iterations ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_learn_iterations ON mln.learn_iterations
  USING (EXISTS (SELECT 1 FROM mln.programs p WHERE p.name = program));
GRANT SELECT, INSERT, DELETE ON mln.learn_iterations TO PUBLIC;

CREATE TABLE mln.weight_history (
  program    text NOT NULL REFERENCES mln.programs ON DELETE CASCADE,
  version    int NOT NULL,
  idx        int NOT NULL,
  weight     float8 NOT NULL,
  source     text NOT NULL,            -- 'as written', 'learned', 'restored'
  job        bigint,                   -- the learning job of a 'learned' version
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (program, version, idx)
);
COMMENT ON TABLE mln.weight_history IS
  'every version of each program''s soft clause weights: the weights as written (version 1, kept when first learning), '
  'each learning job''s result and each restore; mln.restore_weights brings one back';
ALTER TABLE mln.weight_history ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_weight_history ON mln.weight_history
  USING (EXISTS (SELECT 1 FROM mln.programs p WHERE p.name = program));
GRANT SELECT, INSERT, DELETE ON mln.weight_history TO PUBLIC;

CREATE VIEW mln.learning_trace AS
  SELECT i.program, i.job, i.iteration, c.idx + 1 AS clause_no, c.clause, u.weight, i.objective, i.accepted
    FROM mln.learn_iterations i
   CROSS JOIN LATERAL unnest(i.clauses, i.weights) AS u(idx, weight)
    JOIN mln.clauses c ON c.program = i.program AND c.idx = u.idx;
COMMENT ON VIEW mln.learning_trace IS 'each learnable clause''s weight after each iteration of each learning job';
GRANT SELECT ON mln.learning_trace TO PUBLIC;

CREATE VIEW mln.weight_versions AS
  SELECT h.program, h.version, h.source, h.job, h.created_at, c.idx + 1 AS clause_no, c.clause, h.weight
    FROM mln.weight_history h JOIN mln.clauses c ON c.program = h.program AND c.idx = h.idx;
COMMENT ON VIEW mln.weight_versions IS 'the program''s weight versions, clause by clause (mln.restore_weights brings one back)';
GRANT SELECT ON mln.weight_versions TO PUBLIC;

CREATE FUNCTION mln._ground_learning(name text, device text DEFAULT 'auto') RETURNS jsonb
  AS 'MODULE_PATHNAME', 'mln_ground_learning' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION mln._ground_learning(text, text) IS
  'internal: grounds a program for weight learning (query predicates'' evidence as the training world, every unknown atom '
  'active, each ground clause''s learnable origins); raises when there is nothing to learn or no training data';

-- Checks learning options; raises with a HINT on the first problem.
CREATE FUNCTION mln._check_learn_options(options jsonb) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  allowed text[] := ARRAY['method', 'iterations', 'samples', 'prior_stddev', 'init', 'seed', 'timeout', 'threads',
                          'device', 'exact_max_atoms', 'learning_rate'];
  k text;
  lim record;
BEGIN
  IF options IS NULL OR jsonb_typeof(options) <> 'object' THEN
    RAISE EXCEPTION 'options must be a JSON object' USING ERRCODE = 'invalid_parameter_value',
      HINT = 'for example ''{"iterations": 50, "samples": 200}''';
  END IF;
  FOR k IN SELECT jsonb_object_keys(options) LOOP
    CONTINUE WHEN k = ANY (allowed);
    RAISE EXCEPTION 'unknown learning option "%"', k USING ERRCODE = 'invalid_parameter_value',
      HINT = format('learning options: %s', array_to_string(allowed, ', '));
  END LOOP;
  IF options ? 'method' AND coalesce(options->>'method', '') NOT IN ('dn', 'perceptron') THEN
    RAISE EXCEPTION 'invalid learning method %', options->'method' USING ERRCODE = 'invalid_parameter_value',
      HINT = 'methods are dn (diagonal Newton on MC-SAT counts, the default) and perceptron (voted perceptron on MAP counts)';
  END IF;
  IF options ? 'init' AND coalesce(options->>'init', '') NOT IN ('tuffy', 'program') THEN
    RAISE EXCEPTION 'invalid learning option init %', options->'init' USING ERRCODE = 'invalid_parameter_value',
      HINT = 'init is tuffy (ln(#satisfied / #violated) in the training world, the default) or program (the current weights)';
  END IF;
  IF options ? 'device' AND coalesce(options->>'device', '') NOT IN ('auto', 'cpu', 'gpu') THEN
    RAISE EXCEPTION 'invalid learning device %', options->'device' USING ERRCODE = 'invalid_parameter_value',
      HINT = 'the sampler''s device: auto (the GPU for large components when there is one), cpu or gpu';
  END IF;
  FOR lim IN SELECT * FROM (VALUES
      ('iterations',      true,  1::numeric, true,  100000::numeric, 'an integer from 1 to 100000'),
      ('samples',         true,  1,          true,  2147483647,      'a positive integer (MC-SAT samples per iteration)'),
      ('prior_stddev',    false, 0,          true,  NULL,            'a number >= 0 (0: no prior)'),
      ('learning_rate',   false, 0,          false, NULL,            'a number > 0'),
      ('seed',            true,  0,          true,  9223372036854775807, 'an integer >= 0'),
      ('timeout',         false, 0,          true,  NULL,            'seconds >= 0 (0: none)'),
      ('threads',         true,  0,          true,  4096,            'an integer from 0 (all cores) to 4096'),
      ('exact_max_atoms', true,  0,          true,  20,              'an integer from 0 (off) to 20')
    ) t(name, integral, lo, lo_incl, hi, what) LOOP
    PERFORM mln._check_option_range(options, 'learning', lim.name, lim.integral, lim.lo, lim.lo_incl, lim.hi, lim.what);
  END LOOP;
END $$;
COMMENT ON FUNCTION mln._check_learn_options(jsonb) IS
  'internal: validates learning options; raises with a HINT naming what is allowed';

CREATE FUNCTION mln.learn_weights(name text, options jsonb DEFAULT '{}', device text DEFAULT 'auto') RETURNS bigint
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE
  r mln.programs;
  j bigint;
BEGIN
  r := mln._program(name);
  PERFORM mln._check_learn_options(options);
  IF EXISTS (SELECT 1 FROM mln.jobs WHERE program = name AND task = 'learn' AND status IN ('queued', 'running')) THEN
    RAISE EXCEPTION 'program "%" already has a learning job queued or running', name
      USING ERRCODE = 'object_in_use', HINT = 'wait for it (mln.wait) or cancel it (mln.cancel)';
  END IF;
  PERFORM mln._ground_learning(name, device);
  PERFORM mln._grant_worker(r.schema_name);
  INSERT INTO mln.jobs(program, task, options, iterations_total)
  VALUES (name, 'learn', options, coalesce(mln._infer_number(options, 'iterations'), 100))
  RETURNING id INTO j;
  PERFORM pg_notify('mln_jobs', j::text);
  RETURN j;
END $$;
COMMENT ON FUNCTION mln.learn_weights(text, jsonb, text) IS
  'grounds the program for learning (the query predicates'' evidence is the training world) on device (auto, gpu, cpu) and '
  'queues a learning job; returns its id.  Options: method (dn | perceptron), iterations (default 100), samples (MC-SAT, '
  'default 100), prior_stddev (2), init (tuffy | program), seed, timeout, threads, device (the sampler''s: auto | cpu | '
  'gpu), exact_max_atoms, learning_rate.  '
  'The learned weights replace mln.clauses'' weights (previous ones kept in mln.weight_history) when the job is done';

-- Called by the worker in the transaction that finishes a learning job.
CREATE FUNCTION mln._apply_learned_weights(name text, job bigint, clauses int[], weights float8[]) RETURNS int
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE v int;
BEGIN
  PERFORM mln._program(name);
  PERFORM 1 FROM mln.programs WHERE programs.name = _apply_learned_weights.name FOR UPDATE;
  IF NOT EXISTS (SELECT 1 FROM mln.weight_history h WHERE h.program = name) THEN
    INSERT INTO mln.weight_history(program, version, idx, weight, source)
    SELECT name, 1, c.idx, c.weight, 'as written' FROM mln.clauses c WHERE c.program = name AND NOT c.hard;
  END IF;
  SELECT max(version) + 1 INTO v FROM mln.weight_history h WHERE h.program = name;
  UPDATE mln.clauses c SET weight = u.w
    FROM unnest(clauses, weights) AS u(i, w) WHERE c.program = name AND c.idx = u.i;
  INSERT INTO mln.weight_history(program, version, idx, weight, source, job)
  SELECT name, v, c.idx, c.weight, 'learned', job FROM mln.clauses c WHERE c.program = name AND NOT c.hard;
  UPDATE mln.programs SET grounded_at = NULL WHERE programs.name = _apply_learned_weights.name;
  RETURN v;
END $$;
COMMENT ON FUNCTION mln._apply_learned_weights(text, bigint, int[], float8[]) IS
  'internal: called by the worker when a learning job is done: writes the weights to mln.clauses as a new version';

CREATE FUNCTION mln.restore_weights(name text, version int DEFAULT NULL) RETURNS int
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  want int := version;
  v int;
BEGIN
  PERFORM mln._program(name);
  IF want IS NULL THEN  -- the version before the current one
    SELECT max(h.version) - 1 INTO want FROM mln.weight_history h WHERE h.program = name;
  END IF;
  IF want IS NULL OR NOT EXISTS (SELECT 1 FROM mln.weight_history h WHERE h.program = name AND h.version = want) THEN
    RAISE EXCEPTION 'program "%" has no weight version %', name, coalesce(want::text, '(none)')
      USING ERRCODE = 'undefined_object', HINT = 'SELECT DISTINCT version, source FROM mln.weight_versions WHERE program = ...';
  END IF;
  UPDATE mln.clauses c SET weight = h.weight FROM mln.weight_history h
   WHERE c.program = name AND h.program = name AND h.version = want AND h.idx = c.idx;
  SELECT max(h.version) + 1 INTO v FROM mln.weight_history h WHERE h.program = name;
  INSERT INTO mln.weight_history(program, version, idx, weight, source)
  SELECT name, v, c.idx, c.weight, 'restored' FROM mln.clauses c WHERE c.program = name AND NOT c.hard;
  UPDATE mln.programs SET grounded_at = NULL WHERE programs.name = restore_weights.name;
  RETURN v;
END $$;
COMMENT ON FUNCTION mln.restore_weights(text, int) IS
  'writes an earlier weight version back to mln.clauses (default: the one before the current), recorded as a new version; '
  'the program must be grounded again';

CREATE OR REPLACE FUNCTION mln._job_json(j mln.jobs) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('job', j.id, 'task', j.task, 'status', j.status, 'best_cost', j.best_cost,
                            'hard_violated', j.hard_violated, 'flips', j.flips,
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
COMMENT ON FUNCTION mln._job_json(mln.jobs) IS
  'internal: the JSON that mln.wait returns for a job row (status, costs, flips, samples drawn of samples_total, '
  'learning iterations and objective, seconds, progress in [0, 1])';

-- Several users in one database: the views answer for the calling role.
-- Without security_invoker a view reads its tables as its owner (the role
-- that created the extension), past their row-level security.
ALTER VIEW mln.program_clauses SET (security_invoker = true);
ALTER VIEW mln.program_predicates SET (security_invoker = true);
ALTER VIEW mln.job_progress SET (security_invoker = true);
ALTER VIEW mln.learning_trace SET (security_invoker = true);
ALTER VIEW mln.weight_versions SET (security_invoker = true);

-- A job the caller may not see does not exist for it, as a program does not.
CREATE OR REPLACE FUNCTION mln.cancel(job bigint) RETURNS boolean
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE st text;
BEGIN
  SELECT j.status INTO st FROM mln.jobs j WHERE j.id = job FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'job % does not exist', job USING ERRCODE = 'undefined_object';
  END IF;
  IF st NOT IN ('queued', 'running') THEN
    RETURN false;
  END IF;
  UPDATE mln.jobs j SET status = 'cancelled', finished_at = clock_timestamp(), error = 'cancelled by user' WHERE j.id = job;
  RETURN true;
END $$;
COMMENT ON FUNCTION mln.cancel(bigint) IS
  'cancels a queued or running job: true; false when it had already ended; "job does not exist" for a job the caller '
  'may not see';

-- Result tables the worker made (it owns them) are the program owner's to
-- read and replace: the worker calls this after writing them.
CREATE FUNCTION mln._share_results(name text) RETURNS void
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE
  r mln.programs;
  t record;
BEGIN
  r := mln._program(name);
  FOR t IN SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = r.schema_name AND c.relkind = 'r'
              AND c.relname IN ('_marginal', 'map_result', 'marginal_result')
              AND c.relowner = current_user::regrole AND c.relowner <> r.owner
  LOOP
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON %I.%I TO %s', r.schema_name, t.relname, r.owner);
  END LOOP;
END $$;
COMMENT ON FUNCTION mln._share_results(text) IS
  'internal: grants the program''s owner the result tables the calling worker created';

-- The worker role: a worker logged in as a member of mln_worker claims every
-- program's jobs, reads their networks and writes their answers (policies
-- below; program schemas are opened to it by mln._grant_worker), and has no
-- other right: no superuser, no access to the users' own tables.  A role is
-- global to the cluster: it is created once, kept by DROP EXTENSION, and
-- not made at all when the installing role may not create roles (the worker
-- must then be a superuser or a member of the program owners, as before).
DO $$
DECLARE t text;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'mln_worker') THEN
    BEGIN
      CREATE ROLE mln_worker NOLOGIN;
      COMMENT ON ROLE mln_worker IS 'pg_mln: members run mln_worker for every program (jobs, networks, answers)';
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE NOTICE 'pg_mln: role mln_worker not created (%); workers must run as a superuser or a member of the program owners', SQLERRM;
      RETURN;
    END;
  END IF;
  FOREACH t IN ARRAY ARRAY['programs', 'predicates', 'clauses', 'jobs', 'learn_iterations', 'weight_history'] LOOP
    EXECUTE format('CREATE POLICY worker_all ON mln.%I TO mln_worker USING (true) WITH CHECK (true)', t);
  END LOOP;
  -- Programs that exist already (an upgraded install).
  PERFORM mln._grant_worker(schema_name) FROM mln.programs;
END $$;


-- create_program makes a table per predicate in one transaction, each
-- holding a lock to its end: a program with more predicates than the lock
-- table holds failed with a bare "out of shared memory".  As in 0.1.0, plus
-- the handler that says which setting to raise.
CREATE OR REPLACE FUNCTION mln.create_program(name text, program text) RETURNS void
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE
  parsed jsonb;
  pred jsonb;
  cl jsonb;
  sch name;
  cols text;
  i int;
BEGIN
  IF name !~ '^[A-Za-z_][A-Za-z0-9_]{0,58}$' THEN
    RAISE EXCEPTION 'invalid program name "%"', name USING ERRCODE = 'invalid_name',
      DETAIL = 'a program name starts with a letter or underscore and holds at most 59 letters, digits or underscores';
  END IF;
  IF EXISTS (SELECT 1 FROM mln.programs p WHERE p.name = create_program.name) THEN
    RAISE EXCEPTION 'program "%" already exists', name USING ERRCODE = 'duplicate_object',
      HINT = 'drop it first with mln.drop_program(name)';
  END IF;
  sch := 'mln_' || lower(name);
  IF EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = sch) THEN
    RAISE EXCEPTION 'schema "%" already exists', sch USING ERRCODE = 'duplicate_schema',
      DETAIL = 'pg_mln keeps each program in its own schema and never reuses an existing one';
  END IF;
  parsed := mln._parse_program(program);
  INSERT INTO mln.programs(name, schema_name, source) VALUES (name, sch, program);
  EXECUTE format('CREATE SCHEMA %I', sch);
  EXECUTE format('CREATE TABLE %I._symbols (id int4 PRIMARY KEY, name text NOT NULL UNIQUE)', sch);
  EXECUTE format('INSERT INTO %I._symbols SELECT ord::int4, c FROM jsonb_array_elements_text($1) WITH ORDINALITY AS t(c, ord)', sch)
    USING parsed->'constants';
  i := 0;
  FOR pred IN SELECT * FROM jsonb_array_elements(parsed->'predicates') LOOP
    INSERT INTO mln.predicates(program, idx, name, arg_types, arg_names, arg_kinds, closed_world,
                               completely_specified, key_labels)
    VALUES (name, i, pred->>'name',
            ARRAY(SELECT jsonb_array_elements_text(pred->'arg_types')),
            ARRAY(SELECT jsonb_array_elements_text(pred->'arg_names')),
            ARRAY(SELECT jsonb_array_elements_text(pred->'arg_kinds')),
            (pred->>'closed_world')::boolean, (pred->>'completely_specified')::boolean,
            ARRAY(SELECT jsonb_array_elements_text(pred->'key_labels')::boolean));
    SELECT string_agg(format('%I int4 NOT NULL', n), ', ' ORDER BY o) INTO cols
      FROM jsonb_array_elements_text(pred->'arg_names') WITH ORDINALITY AS a(n, o);
    EXECUTE format('CREATE TABLE %I.%I (%s, truth boolean NOT NULL, prior float8)', sch, pred->>'name', cols);
    EXECUTE format('COMMENT ON TABLE %I.%I IS %L', sch, pred->>'name',
                   'evidence of predicate ' || (pred->>'name') || ' (arguments are ids in _symbols)');
    i := i + 1;
  END LOOP;
  i := 0;
  FOR cl IN SELECT * FROM jsonb_array_elements(parsed->'clauses') LOOP
    INSERT INTO mln.clauses(program, idx, weight, hard, clause, exist_vars, line)
    VALUES (name, i, (cl->>'weight')::float8, (cl->>'hard')::boolean, cl->>'text',
            ARRAY(SELECT jsonb_array_elements_text(cl->'exist_vars')), (cl->>'line')::int);
    i := i + 1;
  END LOOP;
  FOR cl IN SELECT * FROM jsonb_array_elements(parsed->'warnings') LOOP
    RAISE WARNING '%', cl #>> '{}';
  END LOOP;
EXCEPTION WHEN out_of_memory THEN
  IF SQLERRM NOT LIKE '%shared memory%' THEN
    RAISE;
  END IF;
  RAISE EXCEPTION 'program "%" has more predicates than the server''s lock table can hold in one transaction', name
    USING ERRCODE = 'out_of_memory',
    DETAIL = format('creating a program locks one table per predicate until it commits; the lock table holds about '
                    '%s x (max_connections + max_prepared_transactions) locks', current_setting('max_locks_per_transaction')),
    HINT = 'raise max_locks_per_transaction in postgresql.conf and restart the server';
END $$;
