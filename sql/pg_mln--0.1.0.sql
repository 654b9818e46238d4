-- pg_mln 0.1.0: base install script.
\echo Use "CREATE EXTENSION pg_mln" to load this file. \quit

CREATE FUNCTION mln.version() RETURNS text
  AS 'MODULE_PATHNAME', 'mln_version' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION mln.version() IS 'version of the pg_mln library';

CREATE FUNCTION mln.device_warmup(device text DEFAULT NULL) RETURNS boolean
  AS 'MODULE_PATHNAME', 'mln_device_warmup' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION mln.device_warmup(text) IS
  'starts initialising the GPU in the background and returns at once, so that a later operator or mln.ground of this session does not wait for CUDA''s context creation; false when nothing was started (device cpu, or no usable GPU known)';

CREATE FUNCTION mln.device_info() RETURNS jsonb
  AS 'MODULE_PATHNAME', 'mln_device_info' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION mln.device_info() IS
  'backend in use (cuda or cpu) and, with a GPU, its name and memory';

-------------------------------------------------------------------------------
-- Catalog.  Rows are visible to (and changeable by) the roles that own them.
-------------------------------------------------------------------------------
CREATE TABLE mln.programs (
  name         text PRIMARY KEY
               CONSTRAINT program_name_valid CHECK (name ~ '^[A-Za-z_][A-Za-z0-9_]{0,58}$'),
  schema_name  name NOT NULL UNIQUE,
  owner        regrole NOT NULL DEFAULT current_user::regrole,
  source       text NOT NULL,
  query        text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  evidence_atoms bigint NOT NULL DEFAULT 0,
  grounded_at  timestamptz,
  ground_stats jsonb
);
COMMENT ON TABLE mln.programs IS 'MLN programs: source text, query, grounding state';

CREATE TABLE mln.predicates (
  program      text NOT NULL REFERENCES mln.programs ON DELETE CASCADE,
  idx          int NOT NULL,
  name         text NOT NULL,
  arg_types    text[] NOT NULL,
  arg_names    text[] NOT NULL,
  arg_kinds    text[] NOT NULL,           -- symbol | int | float
  closed_world boolean NOT NULL,
  completely_specified boolean NOT NULL,
  key_labels   boolean[] NOT NULL,        -- '!' markers (key constraints)
  bound_relation regclass,                -- evidence read from a user relation
  bound_columns text[],
  truth_column text,
  PRIMARY KEY (program, idx),
  UNIQUE (program, name)
);
COMMENT ON TABLE mln.predicates IS 'declared predicates of each program';

CREATE TABLE mln.clauses (
  program      text NOT NULL REFERENCES mln.programs ON DELETE CASCADE,
  idx          int NOT NULL,
  weight       float8 NOT NULL,
  hard         boolean NOT NULL,
  clause       text NOT NULL,             -- normalised clause form
  exist_vars   text[] NOT NULL DEFAULT '{}',
  line         int,
  PRIMARY KEY (program, idx)
);
COMMENT ON TABLE mln.clauses IS 'first-order clauses after normalisation and merging';

ALTER TABLE mln.programs ENABLE ROW LEVEL SECURITY;
ALTER TABLE mln.predicates ENABLE ROW LEVEL SECURITY;
ALTER TABLE mln.clauses ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_programs ON mln.programs USING (pg_has_role(owner, 'MEMBER'));
CREATE POLICY own_predicates ON mln.predicates
  USING (EXISTS (SELECT 1 FROM mln.programs p WHERE p.name = program));
CREATE POLICY own_clauses ON mln.clauses
  USING (EXISTS (SELECT 1 FROM mln.programs p WHERE p.name = program));
GRANT USAGE ON SCHEMA mln TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON mln.programs, mln.predicates, mln.clauses TO PUBLIC;

CREATE VIEW mln.program_clauses AS
  SELECT program, idx + 1 AS clause_no,
         CASE WHEN hard THEN clause || '.' ELSE to_char(weight, 'FM999999990.0000') || ' ' || clause END
           AS clause_form,
         weight, hard, line
    FROM mln.clauses;
COMMENT ON VIEW mln.program_clauses IS 'clauses in Tuffy''s listing form (weight, clause; hard clauses end with a period)';
GRANT SELECT ON mln.program_clauses TO PUBLIC;

-------------------------------------------------------------------------------
-- Programs
-------------------------------------------------------------------------------
CREATE FUNCTION mln._parse_program(program text) RETURNS jsonb
  AS 'MODULE_PATHNAME', 'mln_parse_program' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION mln._parse_program(text) IS
  'parses MLN program text; returns predicates, clauses and constants as JSON (internal)';

-- The program's row, checking it exists and is visible to the caller.
CREATE FUNCTION mln._program(p_name text) RETURNS mln.programs
LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE r mln.programs;
BEGIN
  SELECT * INTO r FROM mln.programs WHERE name = p_name;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'program "%" does not exist', p_name
      USING ERRCODE = 'undefined_object', HINT = 'create it with mln.create_program(name, program)';
  END IF;
  RETURN r;
END $$;

CREATE FUNCTION mln.create_program(name text, program text) RETURNS void
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
END $$;
COMMENT ON FUNCTION mln.create_program(text, text) IS
  'parses an MLN program (Tuffy or Alchemy syntax) and creates its catalog entries and schema mln_<name>';

CREATE FUNCTION mln.drop_program(name text) RETURNS void
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE r mln.programs;
BEGIN
  r := mln._program(name);
  EXECUTE format('DROP SCHEMA %I CASCADE', r.schema_name);
  DELETE FROM mln.programs p WHERE p.name = r.name;
END $$;
COMMENT ON FUNCTION mln.drop_program(text) IS 'drops a program, its schema, evidence tables, ground network and results';

CREATE VIEW mln.program_predicates AS
  SELECT program, idx, name,
         name || '(' || array_to_string(arg_types, ', ') || ')' AS declaration,
         closed_world, completely_specified, bound_relation
    FROM mln.predicates;
GRANT SELECT ON mln.program_predicates TO PUBLIC;
COMMENT ON VIEW mln.program_predicates IS 'declared predicates, with their evidence binding if any';

-------------------------------------------------------------------------------
-- Evidence and queries
-------------------------------------------------------------------------------
CREATE FUNCTION mln.load_evidence(name text, evidence text) RETURNS bigint
  AS 'MODULE_PATHNAME', 'mln_load_evidence' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION mln.load_evidence(text, text) IS
  'parses Tuffy evidence text (P(A,B), !P(A,B), 0.7 P(A)) into the program''s evidence tables; returns the atom count';

CREATE FUNCTION mln.ingest_evidence(name text) RETURNS bigint
  AS 'MODULE_PATHNAME', 'mln_ingest_evidence' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION mln.ingest_evidence(text) IS
  'streaming path: parses the line-aligned chunks COPYed into mln_<name>._staging(seq, first_line, body), then empties it';

-- Creates the staging table of the streaming path (idempotent).
CREATE FUNCTION mln.evidence_staging(name text) RETURNS regclass
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE r mln.programs;
BEGIN
  r := mln._program(name);
  EXECUTE format('CREATE UNLOGGED TABLE IF NOT EXISTS %I._staging (seq int4 NOT NULL, first_line int4 NOT NULL, body text NOT NULL)',
                 r.schema_name);
  RETURN format('%I._staging', r.schema_name)::regclass;
END $$;
COMMENT ON FUNCTION mln.evidence_staging(text) IS
  'creates (if needed) and returns the staging table that COPY fills for mln.ingest_evidence';

CREATE FUNCTION mln.set_query(name text, query text) RETURNS void
  AS 'MODULE_PATHNAME', 'mln_set_query' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION mln.set_query(text, text) IS
  'sets the query atoms (Tuffy query syntax: Cancer(x), or a bare predicate name)';

CREATE FUNCTION mln.bind_predicate(name text, predicate text, relation regclass, columns text[],
                                   truth_column text DEFAULT NULL) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  pr mln.predicates;
  c text;
  n int;
BEGIN
  IF name IS NULL OR predicate IS NULL OR relation IS NULL OR columns IS NULL THEN
    RAISE EXCEPTION 'mln.bind_predicate: name, predicate, relation and columns must not be null'
      USING ERRCODE = 'null_value_not_allowed';
  END IF;
  PERFORM mln._program(name);
  SELECT * INTO pr FROM mln.predicates p WHERE p.program = bind_predicate.name AND p.name = predicate;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'predicate "%" is not declared in program "%"', predicate, name USING ERRCODE = 'undefined_object';
  END IF;
  n := coalesce(array_length(columns, 1), 0);
  IF n <> array_length(pr.arg_types, 1) THEN
    RAISE EXCEPTION 'predicate % has % arguments but % columns were given', predicate,
      array_length(pr.arg_types, 1), n USING ERRCODE = 'invalid_parameter_value';
  END IF;
  FOREACH c IN ARRAY columns || CASE WHEN truth_column IS NULL THEN '{}'::text[] ELSE ARRAY[truth_column] END LOOP
    IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = relation AND attname = c
                   AND attnum > 0 AND NOT attisdropped) THEN
      RAISE EXCEPTION 'column "%" does not exist in relation %', c, relation USING ERRCODE = 'undefined_column';
    END IF;
  END LOOP;
  IF truth_column IS NOT NULL AND (SELECT atttypid FROM pg_attribute WHERE attrelid = relation
                                   AND attname = truth_column) <> 'boolean'::regtype THEN
    RAISE EXCEPTION 'truth column "%" of % must be boolean', truth_column, relation USING ERRCODE = 'datatype_mismatch';
  END IF;
  IF NOT has_table_privilege(relation, 'SELECT') THEN
    RAISE EXCEPTION 'permission denied for relation %', relation USING ERRCODE = 'insufficient_privilege';
  END IF;
  UPDATE mln.predicates p SET bound_relation = relation, bound_columns = columns,
         truth_column = bind_predicate.truth_column
   WHERE p.program = bind_predicate.name AND p.name = predicate;
  UPDATE mln.programs SET grounded_at = NULL WHERE programs.name = bind_predicate.name;
END $$;
COMMENT ON FUNCTION mln.bind_predicate(text, text, regclass, text[], text) IS
  'reads a predicate''s evidence from an existing table or view (columns map to arguments; rows are true unless truth_column says otherwise); nothing is copied';

-------------------------------------------------------------------------------
-- Grounding
-------------------------------------------------------------------------------
CREATE FUNCTION mln.ground(name text, device text DEFAULT 'auto', activate_all boolean DEFAULT false,
                           closed_world text[] DEFAULT '{}')
  RETURNS jsonb AS 'MODULE_PATHNAME', 'mln_ground' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION mln.ground(text, text, boolean, text[]) IS
  'grounds the program (KBMC, active-atom closure, active clauses) on the operator engine; device auto|gpu|cpu; returns counts and per-phase seconds';

-- SQL pieces that decode one predicate's argument ids (x.args) into text:
-- `elems`, an ARRAY[...]::text[] expression (raw numbers for int-typed
-- arguments, symbols from the program's dictionary otherwise), and `joins`,
-- one LEFT JOIN to _symbols per symbol argument.  Queries built from them run
-- one hash-joined branch per predicate (mln.ground_atoms, mln.map) instead of
-- a subquery per row.
CREATE FUNCTION mln._args_sql(sch name, arg_kinds text[], OUT elems text, OUT joins text)
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
BEGIN
  elems := '';
  joins := '';
  FOR k IN 1 .. coalesce(array_length(arg_kinds, 1), 0) LOOP
    IF arg_kinds[k] = 'int' THEN
      elems := elems || format(', (x.args[%s])::text', k);
    ELSE
      elems := elems || format(', s%s.name', k);
      joins := joins || format(' LEFT JOIN %I._symbols s%s ON s%s.id = x.args[%s]', sch, k, k, k);
    END IF;
  END LOOP;
  elems := 'ARRAY[' || substr(elems, 3) || ']::text[]';
END $$;

CREATE FUNCTION mln.ground_atoms(name text)
  RETURNS TABLE (id int4, predicate text, arguments text[], evidence boolean, prior float8, is_query boolean)
LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
  r mln.programs;
  p record;
  a record;
  parts text[] := '{}';
BEGIN
  r := mln._program(name);
  IF to_regclass(format('%I._atoms', r.schema_name)) IS NULL THEN
    RAISE EXCEPTION 'program "%" has not been grounded', name USING ERRCODE = 'object_not_in_prerequisite_state',
      HINT = 'run mln.ground(name) first';
  END IF;
  FOR p IN SELECT pr.idx, pr.name AS pname, pr.arg_kinds FROM mln.predicates pr WHERE pr.program = $1 ORDER BY pr.idx LOOP
    a := mln._args_sql(r.schema_name, p.arg_kinds);
    parts := parts || format(
      'SELECT x.id, %L::text, %s, x.evidence, x.prior, x.is_query FROM %I._atoms x%s WHERE x.pred = %s',
      p.pname, a.elems, r.schema_name, a.joins, p.idx);
  END LOOP;
  IF cardinality(parts) = 0 THEN
    RETURN;
  END IF;
  RETURN QUERY EXECUTE array_to_string(parts, ' UNION ALL ') || ' ORDER BY 1';
END $$;
COMMENT ON FUNCTION mln.ground_atoms(text) IS 'the ground atoms (MRF variables) with predicate names and constants';

-- The elements of an int4[] / float8[] as raw little-endian bytes: how the
-- worker reads the chunked clause rows (one memcpy per chunk on the server).
CREATE FUNCTION mln._array_le(anyarray) RETURNS bytea
  AS 'MODULE_PATHNAME', 'mln_array_le' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- One row per ground clause, decoded from the chunked rows (in C: each
-- chunk is detoasted once).
CREATE FUNCTION mln._clause_rows(sch name) RETURNS TABLE (clause bigint, weight float8, lits int4[])
  AS 'MODULE_PATHNAME', 'mln_clause_rows' LANGUAGE C STABLE STRICT;

CREATE FUNCTION mln.ground_clauses(name text)
  RETURNS TABLE (clause bigint, weight float8, hard boolean, literals text[])
LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE r mln.programs;
BEGIN
  r := mln._program(name);
  IF to_regclass(format('%I._clauses', r.schema_name)) IS NULL THEN
    RAISE EXCEPTION 'program "%" has not been grounded', name USING ERRCODE = 'object_not_in_prerequisite_state',
      HINT = 'run mln.ground(name) first';
  END IF;
  RETURN QUERY
    WITH atoms AS (SELECT a.id, a.predicate || '(' || array_to_string(a.arguments, ', ') || ')' AS txt
                     FROM mln.ground_atoms(name) a),
         cl AS MATERIALIZED (SELECT * FROM mln._clause_rows(r.schema_name)),
         lit AS (SELECT cl.clause, u.o, u.l FROM cl, unnest(cl.lits) WITH ORDINALITY AS u(l, o))
    SELECT cl.clause, cl.weight, abs(cl.weight) >= 1e7,
           array_agg(CASE WHEN lit.l < 0 THEN '!' ELSE '' END || atoms.txt ORDER BY lit.o)
      FROM cl JOIN lit ON lit.clause = cl.clause JOIN atoms ON atoms.id = abs(lit.l)
     GROUP BY cl.clause, cl.weight
     ORDER BY cl.clause;
END $$;
COMMENT ON FUNCTION mln.ground_clauses(text) IS 'the ground clauses with readable literals (a leading ! is a negated atom)';

-------------------------------------------------------------------------------
-- Inference jobs (served by mln_worker processes)
-------------------------------------------------------------------------------
CREATE TABLE mln.jobs (
  id            bigserial PRIMARY KEY,
  program       text NOT NULL REFERENCES mln.programs ON DELETE CASCADE,
  task          text NOT NULL CHECK (task IN ('map')),
  options       jsonb NOT NULL DEFAULT '{}',
  owner         regrole NOT NULL DEFAULT current_user::regrole,
  status        text NOT NULL DEFAULT 'queued'
                CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
  worker        text,
  lease_until   timestamptz,
  attempts      int NOT NULL DEFAULT 0,
  created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  started_at    timestamptz,
  finished_at   timestamptz,
  best_cost     float8,
  hard_violated bigint,
  flips         bigint,
  flips_per_s   float8,
  seconds       float8,
  device        text,
  atoms         bigint,
  clauses       bigint,
  components    int,
  gpu_memory_bytes bigint,             -- device memory of the GPU walks at their peak
  error         text,
  warnings      text[] NOT NULL DEFAULT '{}',
  wait_ok_at    timestamptz            -- set when an mln.wait returned normally
);
CREATE INDEX jobs_queued ON mln.jobs (id) WHERE status IN ('queued', 'running');
ALTER TABLE mln.jobs ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_jobs ON mln.jobs USING (pg_has_role(owner, 'MEMBER'));
GRANT SELECT, INSERT, UPDATE ON mln.jobs TO PUBLIC;
GRANT USAGE ON SEQUENCE mln.jobs_id_seq TO PUBLIC;
COMMENT ON TABLE mln.jobs IS 'inference job queue; workers claim rows with FOR UPDATE SKIP LOCKED under a lease';

CREATE VIEW mln.job_progress AS
  SELECT id, program, task, status, worker, best_cost, hard_violated, flips, flips_per_s,
         seconds, device, gpu_memory_bytes, attempts, created_at, started_at, finished_at, error, warnings
    FROM mln.jobs;
GRANT SELECT ON mln.job_progress TO PUBLIC;
COMMENT ON VIEW mln.job_progress IS 'inference jobs with their progress (best cost so far, flips/s)';

CREATE FUNCTION mln.infer(name text, task text DEFAULT 'map', options jsonb DEFAULT '{}') RETURNS bigint
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE
  r mln.programs;
  k text;
  j bigint;
BEGIN
  r := mln._program(name);
  IF task <> 'map' THEN
    RAISE EXCEPTION 'inference task "%" is not supported yet', task USING ERRCODE = 'feature_not_supported',
      HINT = 'use task => ''map''';
  END IF;
  IF jsonb_typeof(options) <> 'object' THEN
    RAISE EXCEPTION 'options must be a JSON object' USING ERRCODE = 'invalid_parameter_value';
  END IF;
  FOR k IN SELECT jsonb_object_keys(options) LOOP
    IF k NOT IN ('max_flips', 'max_tries', 'timeout', 'seed', 'threads', 'dont_break', 'device',
                 'random_step', 'skip_components_without_query', 'exact_max_atoms') THEN
      RAISE EXCEPTION 'unknown inference option "%"', k USING ERRCODE = 'invalid_parameter_value',
        HINT = 'options: max_flips, max_tries, timeout, seed, threads, dont_break, device, random_step, '
               'skip_components_without_query, exact_max_atoms';
    END IF;
  END LOOP;
  IF options ? 'device' AND options->>'device' NOT IN ('auto', 'gpu', 'cpu') THEN
    RAISE EXCEPTION 'invalid device "%"', options->>'device' USING ERRCODE = 'invalid_parameter_value',
      HINT = 'valid devices are auto, gpu and cpu';
  END IF;
  IF options ? 'exact_max_atoms' AND (jsonb_typeof(options->'exact_max_atoms') <> 'number'
      OR (options->>'exact_max_atoms')::numeric NOT BETWEEN 0 AND 20) THEN
    RAISE EXCEPTION 'invalid exact_max_atoms %', options->'exact_max_atoms' USING ERRCODE = 'invalid_parameter_value',
      HINT = 'an integer from 0 (off) to 20';
  END IF;
  IF r.grounded_at IS NULL OR to_regclass(format('%I._clauses', r.schema_name)) IS NULL THEN
    RAISE EXCEPTION 'program "%" is not grounded (or its evidence changed since)', name
      USING ERRCODE = 'object_not_in_prerequisite_state', HINT = 'run mln.ground(name) first';
  END IF;
  INSERT INTO mln.jobs(program, task, options) VALUES (name, task, options) RETURNING id INTO j;
  PERFORM pg_notify('mln_jobs', j::text);
  RETURN j;
END $$;
COMMENT ON FUNCTION mln.infer(text, text, jsonb) IS
  'queues an inference job for the worker; returns the job id (options: max_flips, max_tries, timeout, seed, threads, dont_break, device, random_step, skip_components_without_query, exact_max_atoms)';

CREATE FUNCTION mln._job_json(j mln.jobs) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('job', j.id, 'status', j.status, 'best_cost', j.best_cost,
                            'hard_violated', j.hard_violated, 'flips', j.flips, 'seconds', j.seconds,
                            'device', j.device, 'gpu_memory_bytes', j.gpu_memory_bytes, 'error', j.error,
                            'warnings', to_jsonb(j.warnings))
$$;

CREATE FUNCTION mln.wait(job bigint, timeout interval DEFAULT NULL) RETURNS jsonb
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  j mln.jobs;
  deadline timestamptz := clock_timestamp() + coalesce(timeout, interval '100 years');
BEGIN
  -- Held while waiting: a worker that sees it released without wait_ok_at
  -- having been set knows the wait was cancelled, and cancels the job.
  PERFORM pg_advisory_xact_lock(20260522, job::int4);
  LOOP
    SELECT * INTO j FROM mln.jobs WHERE id = job;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'job % does not exist', job USING ERRCODE = 'undefined_object';
    END IF;
    EXIT WHEN j.status IN ('done', 'failed', 'cancelled') OR clock_timestamp() >= deadline;
    PERFORM pg_sleep(0.02);
  END LOOP;
  UPDATE mln.jobs SET wait_ok_at = clock_timestamp() WHERE id = job;
  RETURN mln._job_json(j);
END $$;
COMMENT ON FUNCTION mln.wait(bigint, interval) IS
  'waits for a job (up to timeout) and returns status, best cost, hard clauses violated, flips, seconds; cancelling the wait cancels the job';

CREATE FUNCTION mln.cancel(job bigint) RETURNS boolean
LANGUAGE sql VOLATILE STRICT AS $$
  UPDATE mln.jobs SET status = 'cancelled', finished_at = clock_timestamp(), error = 'cancelled by user'
   WHERE id = job AND status IN ('queued', 'running') RETURNING true
$$;
COMMENT ON FUNCTION mln.cancel(bigint) IS 'cancels a queued or running job';

-- The query behind mln.map, unordered: one branch per predicate (and per
-- source: the query atoms with their MAP truth, the true query evidence),
-- each decoding argument k by a hash join of args[k] with _symbols.  Plain
-- joins scale linearly: a subquery per row, or unnest + array_agg, sorted
-- and spilled at a million atoms (RC at 10^5 papers).
CREATE FUNCTION mln._map_sql(prog text, sch name) RETURNS text
LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
  p record;
  a record;
  parts text[] := '{}';
BEGIN
  FOR p IN SELECT idx, name, arg_kinds FROM mln.predicates WHERE program = prog ORDER BY idx LOOP
    a := mln._args_sql(sch, p.arg_kinds);
    parts := parts || format(
      'SELECT %L::text AS predicate, %s AS arguments, coalesce(m.truth, false) AS truth
         FROM %I._atoms x LEFT JOIN %I._map m ON m.atom = x.id%s WHERE x.is_query AND x.pred = %s',
      p.name, a.elems, sch, sch, a.joins, p.idx);
    parts := parts || format(
      'SELECT %L::text, %s, true FROM %I._query_evidence x%s WHERE x.pred = %s',
      p.name, a.elems, sch, a.joins, p.idx);
  END LOOP;
  IF cardinality(parts) = 0 THEN
    RETURN 'SELECT NULL::text AS predicate, NULL::text[] AS arguments, NULL::boolean AS truth WHERE false';
  END IF;
  RETURN array_to_string(parts, ' UNION ALL ');
END $$;

CREATE FUNCTION mln.map(name text)
  RETURNS TABLE (predicate text, arguments text[], truth boolean)
LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE r mln.programs;
BEGIN
  r := mln._program(name);
  IF to_regclass(format('%I._map', r.schema_name)) IS NULL THEN
    RAISE EXCEPTION 'program "%" has no inference result', name USING ERRCODE = 'object_not_in_prerequisite_state',
      HINT = 'run mln.ground(name), then mln.wait(mln.infer(name))';
  END IF;
  RETURN QUERY EXECUTE mln._map_sql(name, r.schema_name) || ' ORDER BY 1, 2';
END $$;
COMMENT ON FUNCTION mln.map(text) IS 'MAP truth of the query atoms (true query evidence included)';

-- Called by the worker after writing _map: refreshes the map_result table.
CREATE FUNCTION mln._materialize_map(name text) RETURNS void
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE r mln.programs;
BEGIN
  r := mln._program(name);
  EXECUTE format('DROP TABLE IF EXISTS %I.map_result', r.schema_name);
  EXECUTE format('CREATE TABLE %I.map_result AS ', r.schema_name) || mln._map_sql(name, r.schema_name);
END $$;

-------------------------------------------------------------------------------
-- Relational operators on ordinary tables (GPU, or the CPU backend)
-------------------------------------------------------------------------------
CREATE FUNCTION mln.gpu_select(source regclass, filter text, target text, columns text[] DEFAULT NULL,
                               device text DEFAULT NULL) RETURNS bigint
  AS 'MODULE_PATHNAME', 'mln_gpu_select' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION mln.gpu_select(regclass, text, text, text[], text) IS
  'rows of an int table satisfying a conjunction (a >= 10 AND b <> c), written to a new table; returns the row count';

CREATE FUNCTION mln.gpu_join(left_rel regclass, right_rel regclass, left_keys text[], right_keys text[],
                             target text, anti boolean DEFAULT false, device text DEFAULT NULL) RETURNS bigint
  AS 'MODULE_PATHNAME', 'mln_gpu_join' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION mln.gpu_join(regclass, regclass, text[], text[], text, boolean, text) IS
  'equi-join (or anti-join) of two int tables on one or several key columns, written to a new table';

CREATE FUNCTION mln.gpu_distinct(source regclass, target text, columns text[] DEFAULT NULL,
                                 device text DEFAULT NULL) RETURNS bigint
  AS 'MODULE_PATHNAME', 'mln_gpu_distinct' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION mln.gpu_distinct(regclass, text, text[], text) IS
  'distinct rows of the given int columns, written to a new table';

CREATE FUNCTION mln.gpu_plan(source regclass, steps text[], target text, device text DEFAULT NULL) RETURNS bigint
  AS 'MODULE_PATHNAME', 'mln_gpu_plan' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION mln.gpu_plan(regclass, text[], text, text) IS
  'runs a chain of steps (select ..., join T on a = b, antijoin T on ..., distinct, project a, b) on the engine in one call; intermediates stay on the device';

CREATE FUNCTION mln.explain_ground(name text)
  RETURNS TABLE (clause int, clause_text text, plan text, estimated_groundings float8)
  AS 'MODULE_PATHNAME', 'mln_explain_ground' LANGUAGE C STABLE STRICT;
COMMENT ON FUNCTION mln.explain_ground(text) IS
  'the operator plan of each first-order clause and an estimate of its ground clauses, before grounding';
