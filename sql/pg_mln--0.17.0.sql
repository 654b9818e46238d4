-- pg_mln 0.17.0: consolidated install script.
\echo Use "CREATE EXTENSION pg_mln" to load this file. \quit

-- CREATE EXTENSION pg_mln (at pg_mln.control's default_version) runs this
-- script alone.  It creates what pg_mln--0.1.0.sql followed by the upgrade
-- scripts pg_mln--0.1.0--0.2.0.sql ... pg_mln--0.15.0--0.16.0.sql create, in
-- their final form: each function as last defined, each table with the
-- columns later versions added (in the order they were added), each comment
-- and privilege as it ends up.  A database installed at an older version
-- comes here through those upgrade scripts (ALTER EXTENSION pg_mln UPDATE);
-- tests/e2e/upgrade.sh holds each earlier version's update to the catalog of
-- a fresh install (scripts/sql_catalog.sh).  docs/developing.md says how the
-- next release's base script is made from this one.

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
-- A grounding records the snapshot it read its tables under, its
-- transaction and its arguments (ground_snapshot, ground_xid, ground_args:
-- see "Is a network current?" below).
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
  ground_stats jsonb,
  ground_snapshot pg_snapshot,
  ground_xid   xid8,
  ground_args  jsonb
);
COMMENT ON TABLE mln.programs IS 'MLN programs: source text, query, grounding state';
COMMENT ON COLUMN mln.programs.ground_snapshot IS
  'the snapshot the last grounding read its tables under (a change it does not see makes the network stale)';
COMMENT ON COLUMN mln.programs.ground_args IS 'the last grounding''s arguments (CALL mln.solve grounds a stale network again with them)';

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

-- Several users in one database: the views answer for the calling role.
-- Without security_invoker a view reads its tables as its owner (the role
-- that created the extension), past their row-level security.  Every view
-- of this script is security_invoker.
CREATE VIEW mln.program_clauses WITH (security_invoker = true) AS
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
COMMENT ON FUNCTION mln._program(text) IS
  'internal: the catalog row of a program the caller may see, or the error "program does not exist"';

-- create_program makes a table per predicate in one transaction, each
-- holding a lock to its end: a program with more predicates than the lock
-- table holds gets an error that says which setting to raise (not a bare
-- "out of shared memory").  Two sessions creating one name at once: the
-- second waits for the first and then gets the same error as if it came
-- after.  A rule of weight zero is dropped with a NOTICE.
CREATE FUNCTION mln.create_program(name text, program text) RETURNS void
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE
  parsed jsonb;
  pred jsonb;
  cl jsonb;
  sch name;
  cols text;
  i int;
  cname text;
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
  -- A rule of weight zero is dropped, as in Tuffy: said as a NOTICE; any
  -- other parse warning as a WARNING.
  FOR cl IN SELECT * FROM jsonb_array_elements(parsed->'warnings') LOOP
    IF cl #>> '{}' LIKE '%zero weight%' THEN
      RAISE NOTICE '%', cl #>> '{}';
    ELSE
      RAISE WARNING '%', cl #>> '{}';
    END IF;
  END LOOP;
EXCEPTION
  WHEN unique_violation THEN
    -- Another session created the program (or its schema) and committed
    -- while this one waited on the row or the schema name.
    GET STACKED DIAGNOSTICS cname = CONSTRAINT_NAME;
    IF cname = 'programs_pkey' THEN
      RAISE EXCEPTION 'program "%" already exists', name USING ERRCODE = 'duplicate_object',
        DETAIL = 'another session created it at the same time', HINT = 'drop it first with mln.drop_program(name)';
    ELSIF cname = 'pg_namespace_nspname_index' THEN
      RAISE EXCEPTION 'schema "%" already exists', 'mln_' || lower(name) USING ERRCODE = 'duplicate_schema',
        DETAIL = 'another session created it at the same time; pg_mln never reuses an existing schema';
    END IF;
    RAISE;
  WHEN out_of_memory THEN
    IF SQLERRM NOT LIKE '%shared memory%' THEN
      RAISE;
    END IF;
    RAISE EXCEPTION 'program "%" has more predicates than the server''s lock table can hold in one transaction', name
      USING ERRCODE = 'out_of_memory',
      DETAIL = format('creating a program locks one table per predicate until it commits; the lock table holds about '
                      '%s x (max_connections + max_prepared_transactions) locks', current_setting('max_locks_per_transaction')),
      HINT = 'raise max_locks_per_transaction in postgresql.conf and restart the server';
END $$;
COMMENT ON FUNCTION mln.create_program(text, text) IS
  'parses an MLN program (Tuffy or Alchemy syntax) and creates its catalog entries and schema mln_<name>';

-- Quiet (client_min_messages = warning): the schema's objects go with it,
-- as the function's comment says.
CREATE FUNCTION mln.drop_program(name text) RETURNS void
LANGUAGE plpgsql VOLATILE STRICT SET client_min_messages = warning AS $$
DECLARE r mln.programs;
BEGIN
  r := mln._program(name);
  EXECUTE format('DROP SCHEMA %I CASCADE', r.schema_name);
  DELETE FROM mln.programs p WHERE p.name = r.name;
END $$;
COMMENT ON FUNCTION mln.drop_program(text) IS 'drops a program, its schema, evidence tables, ground network and results';

CREATE VIEW mln.program_predicates WITH (security_invoker = true) AS
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

-- Creates the staging table of the streaming path (idempotent).  Its chunks
-- are stored uncompressed: a staged chunk is read once, by
-- mln.ingest_evidence, and then the table is emptied, so compressing it
-- (TOAST's default for text) only costs time, 61 of the 250 ms that class's
-- evidence took to load (2.5 MB in one chunk; CHANGELOG.md, 0.12.0).  A
-- table made before 0.12.0 is altered the next time it is asked for.
CREATE FUNCTION mln.evidence_staging(name text) RETURNS regclass
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE r mln.programs;
BEGIN
  r := mln._program(name);
  EXECUTE format('CREATE UNLOGGED TABLE IF NOT EXISTS %I._staging (seq int4 NOT NULL, first_line int4 NOT NULL, body text NOT NULL)',
                 r.schema_name);
  IF (SELECT attstorage FROM pg_attribute
      WHERE attrelid = format('%I._staging', r.schema_name)::regclass AND attname = 'body') <> 'e' THEN
    EXECUTE format('ALTER TABLE %I._staging ALTER COLUMN body SET STORAGE EXTERNAL', r.schema_name);
  END IF;
  RETURN format('%I._staging', r.schema_name)::regclass;
END $$;
COMMENT ON FUNCTION mln.evidence_staging(text) IS
  'creates (if needed) and returns the staging table that COPY fills for mln.ingest_evidence (chunks stored uncompressed)';

CREATE FUNCTION mln.set_query(name text, query text) RETURNS void
  AS 'MODULE_PATHNAME', 'mln_set_query' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION mln.set_query(text, text) IS
  'sets the query atoms (Tuffy query syntax: Cancer(x), or a bare predicate name)';

-- A predicate's evidence read from a relation of the caller's; the tables
-- its rows come from get the change trigger (mln._track_table, below).
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
  -- The change trigger goes on now, in a transaction of its own as a rule,
  -- rather than in the first grounding's, which would hold the tables'
  -- writers until it commits.
  PERFORM mln._track_table(b.relid, b.kind) FROM mln._base_tables(relation) b;
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
COMMENT ON FUNCTION mln._args_sql(name, text[]) IS
  'internal: SQL fragments that decode an atom''s argument ids into constants (one hash join per argument)';

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
COMMENT ON FUNCTION mln._array_le(anyarray) IS
  'internal: an int4/float8 array''s elements as raw little-endian bytes (the worker reads clause chunks this way)';

-- One row per ground clause, decoded from the chunked rows (in C: each
-- chunk is detoasted once).
CREATE FUNCTION mln._clause_rows(sch name) RETURNS TABLE (clause bigint, weight float8, lits int4[])
  AS 'MODULE_PATHNAME', 'mln_clause_rows' LANGUAGE C STABLE STRICT;
COMMENT ON FUNCTION mln._clause_rows(name) IS
  'internal: the ground clauses of a program schema, one row per clause (used by mln.ground_clauses)';

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
-- Is a network current?  An answer knows whether it follows its tables
-- (issue #60).
-------------------------------------------------------------------------------
-- A grounding records the tables its evidence comes from (each predicate's
-- own evidence table; under a bound relation every table it reads, through
-- views, and the children of a partitioned or inherited table) and the
-- snapshot it read them under.  A statement-level trigger on each such table
-- logs (table, transaction) in mln.table_changes, once per writing
-- transaction.  The network is stale when a logged transaction is not
-- visible in the grounding's snapshot: it committed after the grounding
-- started, or was running then.
-- Why a log and not a counter per table: a counter is one row that every
-- writing transaction updates, so writers of one table would wait for each
-- other's commit; inserts never wait.  Why not row-level triggers with
-- transition tables: staleness needs only "which table, which transaction";
-- the rows come in with incremental grounding (issue #62).
CREATE TABLE mln.program_sources (
  program  text NOT NULL REFERENCES mln.programs ON DELETE CASCADE ON UPDATE CASCADE,
  relid    oid NOT NULL,
  tracked  boolean NOT NULL,
  why      text,
  PRIMARY KEY (program, relid)
);
CREATE INDEX ON mln.program_sources (relid);
COMMENT ON TABLE mln.program_sources IS
  'the tables each program''s last grounding read its evidence from; tracked: a trigger logs their changes (why: the reason when not)';
ALTER TABLE mln.program_sources ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_program_sources ON mln.program_sources USING (EXISTS (SELECT 1 FROM mln.programs p WHERE p.name = program));
GRANT SELECT, INSERT, DELETE ON mln.program_sources TO PUBLIC;

CREATE TABLE mln.table_changes (relid oid NOT NULL, xid xid8 NOT NULL);
CREATE INDEX ON mln.table_changes (relid, xid);
COMMENT ON TABLE mln.table_changes IS
  'internal: the transactions that wrote a table some program was grounded from (one row per table and transaction)';
REVOKE ALL ON mln.table_changes FROM PUBLIC;

-- The trigger on every source table.  It runs with the extension owner's
-- rights (the writer may not read pg_mln's catalog) and runs no code of the
-- writer's: its search path is pinned.  pg_mln.changed_tables (local to the
-- transaction, and undone with a subtransaction that rolls back, like its
-- insert) keeps one row per table and transaction.  A transaction that
-- grounded a program and then writes one of its tables makes that network
-- stale at once: its own writes are visible in its own snapshot.
CREATE FUNCTION mln._note_change() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE seen text := coalesce(current_setting('pg_mln.changed_tables', true), '');
BEGIN
  IF strpos(seen || ',', ',' || TG_RELID || ',') = 0 THEN
    IF EXISTS (SELECT 1 FROM mln.program_sources WHERE relid = TG_RELID) THEN
      INSERT INTO mln.table_changes VALUES (TG_RELID, pg_current_xact_id());
    END IF;
    PERFORM set_config('pg_mln.changed_tables', seen || ',' || TG_RELID, true);
  END IF;
  IF coalesce(current_setting('pg_mln.grounded_here', true), '') <> '' THEN
    UPDATE mln.programs p SET grounded_at = NULL
     WHERE p.ground_xid = pg_current_xact_id() AND p.grounded_at IS NOT NULL
       AND EXISTS (SELECT 1 FROM mln.program_sources s WHERE s.program = p.name AND s.relid = TG_RELID);
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION mln._note_change() IS
  'internal: statement trigger on the tables programs are grounded from; logs the writing transaction once per table';

-- The tables a relation's rows come from: itself when a table; the tables
-- a view reads, through the dependencies of its rewrite rule, recursively;
-- and the children (partitions, inheritance) of each.  A view's rows that a
-- function computes are reached only through the tables the view names.
CREATE FUNCTION mln._base_tables(rel regclass) RETURNS TABLE (relid oid, kind "char")
LANGUAGE sql STABLE STRICT AS $$
  WITH RECURSIVE reached(relid) AS (
    SELECT rel::oid
    UNION
    SELECT n.relid FROM reached x,
      LATERAL (SELECT d.refobjid AS relid
                 FROM pg_rewrite w JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = w.oid
                WHERE w.ev_class = x.relid AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> x.relid
               UNION ALL
               SELECT i.inhrelid FROM pg_inherits i WHERE i.inhparent = x.relid) n
  )
  SELECT c.oid, c.relkind FROM reached x JOIN pg_class c ON c.oid = x.relid WHERE c.relkind IN ('r', 'p', 'm', 'f')
$$;
COMMENT ON FUNCTION mln._base_tables(regclass) IS
  'internal: the tables (and materialized views, foreign tables) a relation''s rows are read from';

-- Puts the change trigger on table `rel` once, as the caller, enabled
-- always (changes a logical replication subscription applies count too).
-- A materialized view (REFRESH fires no trigger), a foreign table (its rows
-- change elsewhere) or a table the caller may not put a trigger on is not
-- tracked: `why` says so.
CREATE FUNCTION mln._track_table(rel oid, kind "char", OUT tracked boolean, OUT why text)
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE en "char";
BEGIN
  tracked := false;
  IF kind = 'm' THEN why := 'a materialized view: REFRESH is not seen'; RETURN;
  ELSIF kind = 'f' THEN why := 'a foreign table: its rows change where they are kept'; RETURN;
  END IF;
  SELECT tgenabled INTO en FROM pg_trigger WHERE tgrelid = rel AND tgname = 'mln_note_change'
                                             AND tgfoid = 'mln._note_change()'::regprocedure;
  IF en IS NULL THEN
    BEGIN
      EXECUTE format('CREATE TRIGGER mln_note_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %s '
                     'FOR EACH STATEMENT EXECUTE FUNCTION mln._note_change()', rel::regclass);
      EXECUTE format('ALTER TABLE %s ENABLE ALWAYS TRIGGER mln_note_change', rel::regclass);
      -- A transaction whose snapshot came before the trigger may have missed
      -- a change committed in between (REPEATABLE READ, SERIALIZABLE).
      IF current_setting('transaction_isolation') <> 'read committed' THEN
        why := 'its change trigger was put in place by this transaction, whose snapshot is older: ground it again';
        RETURN;
      END IF;
      en := 'A';
    EXCEPTION WHEN insufficient_privilege OR wrong_object_type OR feature_not_supported OR duplicate_object THEN
      why := SQLERRM;
      RETURN;
    END;
  END IF;
  IF en = 'D' THEN why := 'its trigger mln_note_change is disabled'; RETURN; END IF;
  tracked := true;
END $$;
COMMENT ON FUNCTION mln._track_table(oid, "char") IS
  'internal: puts pg_mln''s change trigger on a source table (as the caller); false and the reason where it cannot';

-- The tables program `prog` is grounded from, with whether they are tracked.
CREATE FUNCTION mln._track_sources(prog text) RETURNS void
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE
  r mln.programs := mln._program(prog);
  t record;
  tr record;
BEGIN
  DELETE FROM mln.program_sources WHERE program = r.name;
  FOR t IN SELECT DISTINCT b.relid, b.kind
             FROM mln.predicates p,
                  LATERAL mln._base_tables(coalesce(p.bound_relation, format('%I.%I', r.schema_name, p.name)::regclass)) b
            WHERE p.program = r.name LOOP
    tr := mln._track_table(t.relid, t.kind);
    INSERT INTO mln.program_sources VALUES (r.name, t.relid, tr.tracked, tr.why);
    IF NOT tr.tracked THEN
      RAISE WARNING 'program "%": changes to % are not tracked (%)', r.name, t.relid::regclass, tr.why
        USING HINT = 'its answers cannot say when they are stale: ground it again after that relation changes, '
                     'or bind a table its owner may put a trigger on';
    END IF;
  END LOOP;
END $$;
COMMENT ON FUNCTION mln._track_sources(text) IS
  'internal: records the tables a program is grounded from and puts the change trigger on them';

-- Called by mln.bind_predicate and at the start of every grounding
-- (before its snapshot: a change a grounding does not see is then always
-- logged).  Groundings hold this shared lock to their commit, so
-- mln._forget_changes never removes a change a grounding running now has
-- not seen.  A grounding drops the warm start a grounding under 0.16.0
-- left (_warm) with the network it replaces.  Returns that snapshot.
CREATE FUNCTION mln._begin_ground(prog text) RETURNS text
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE sch name;
BEGIN
  PERFORM pg_advisory_xact_lock_shared(20261202, 0);
  PERFORM mln._track_sources(prog);
  sch := (mln._program(prog)).schema_name;
  IF to_regclass(format('%I._warm', sch)) IS NOT NULL THEN
    EXECUTE format('DROP TABLE %I._warm', sch);
  END IF;
  RETURN pg_current_snapshot()::text;
END $$;
COMMENT ON FUNCTION mln._begin_ground(text) IS
  'internal: called first by mln.ground: records the program''s source tables, returns the snapshot it reads them under';

-- Removes the logged changes of tables `relids` that every program grounded
-- from them has seen, when no other grounding runs (a grounding running
-- now may have an older snapshot).  A change this snapshot sees is seen by
-- every later one.
CREATE FUNCTION mln._forget_changes(relids oid[]) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF NOT pg_try_advisory_lock(20261202, 0) THEN RETURN; END IF;
  DELETE FROM mln.table_changes c
   WHERE c.relid = ANY(relids) AND pg_visible_in_snapshot(c.xid, pg_current_snapshot())
     AND NOT EXISTS (SELECT 1 FROM mln.program_sources s JOIN mln.programs p ON p.name = s.program
                      WHERE s.relid = c.relid
                        AND (p.ground_snapshot IS NULL
                             OR (c.xid <> p.ground_xid AND NOT pg_visible_in_snapshot(c.xid, p.ground_snapshot))));
  PERFORM pg_advisory_unlock(20261202, 0);
END $$;
COMMENT ON FUNCTION mln._forget_changes(oid[]) IS
  'internal: drops the logged changes every program grounded from those tables has seen';

-- Called last by mln.ground, in its transaction.
CREATE FUNCTION mln._end_ground(prog text, snapshot text, args jsonb) RETURNS void
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE r mln.programs := mln._program(prog);
BEGIN
  UPDATE mln.programs p SET ground_snapshot = snapshot::pg_snapshot, ground_xid = pg_current_xact_id(), ground_args = args
   WHERE p.name = r.name;
  PERFORM set_config('pg_mln.grounded_here', 'true', true);
  PERFORM mln._forget_changes(ARRAY(SELECT relid FROM mln.program_sources WHERE program = r.name));
END $$;
COMMENT ON FUNCTION mln._end_ground(text, text, jsonb) IS
  'internal: called last by mln.ground: keeps its snapshot and arguments';

-- Which of `relids` a transaction not visible in `snap` wrote, other than
-- the grounding's own (`own`): a snapshot does not see the transaction that
-- takes it, and what that transaction writes after grounding marks the
-- network stale at once (mln._note_change).
CREATE FUNCTION mln._changed_tables(relids oid[], snap pg_snapshot, own xid8) RETURNS oid[]
LANGUAGE sql STABLE STRICT SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce(array_agg(DISTINCT c.relid), '{}') FROM mln.table_changes c
   WHERE c.relid = ANY(relids) AND c.xid >= pg_snapshot_xmin(snap) AND c.xid <> own
     AND NOT pg_visible_in_snapshot(c.xid, snap)
$$;
COMMENT ON FUNCTION mln._changed_tables(oid[], pg_snapshot, xid8) IS
  'internal: the tables among relids that a transaction the snapshot does not see, other than own, wrote';

-- Writing transactions of each table among relids that the snapshot does
-- not see, other than own (as mln._changed_tables).
CREATE FUNCTION mln._pending_changes(relids oid[], snap pg_snapshot, own xid8)
  RETURNS TABLE (relid oid, transactions bigint)
LANGUAGE sql STABLE STRICT SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT c.relid, count(DISTINCT c.xid) FROM mln.table_changes c
   WHERE c.relid = ANY(relids) AND c.xid >= pg_snapshot_xmin(snap) AND c.xid <> own
     AND NOT pg_visible_in_snapshot(c.xid, snap)
   GROUP BY c.relid
$$;
COMMENT ON FUNCTION mln._pending_changes(oid[], pg_snapshot, xid8) IS
  'internal: per table among relids, the writing transactions that the snapshot does not see, other than own';

-- Whether a program's network is behind what it was grounded from: true
-- (evidence, query, bindings or weights changed through pg_mln, or a source
-- table changed, or was dropped), false, or NULL when it cannot be known;
-- detail says which.
CREATE FUNCTION mln._freshness(r mln.programs, OUT stale boolean, OUT detail text)
LANGUAGE plpgsql STABLE AS $$
DECLARE names text;
BEGIN
  IF r.grounded_at IS NULL THEN
    stale := true; detail := 'its evidence, query, bindings or weights changed since it was grounded'; RETURN;
  ELSIF r.ground_snapshot IS NULL THEN
    stale := NULL; detail := 'it was grounded before pg_mln 0.14.0, which records the tables a grounding reads'; RETURN;
  END IF;
  SELECT string_agg(CASE WHEN c.oid IS NULL THEN format('a dropped table (oid %s)', s.relid) ELSE s.relid::regclass::text END,
                    ', ' ORDER BY s.relid)
    INTO names
    FROM mln.program_sources s LEFT JOIN pg_class c ON c.oid = s.relid
   WHERE s.program = r.name AND s.tracked
     AND (c.oid IS NULL OR s.relid = ANY(mln._changed_tables(ARRAY(SELECT relid FROM mln.program_sources
                                                                     WHERE program = r.name AND tracked),
                                                               r.ground_snapshot, r.ground_xid)));
  IF names IS NOT NULL THEN
    stale := true; detail := names || ' changed since it was grounded'; RETURN;
  END IF;
  SELECT string_agg(format('%s (%s)', s.relid::regclass, s.why), ', ' ORDER BY s.relid) INTO names
    FROM mln.program_sources s WHERE s.program = r.name AND NOT s.tracked;
  IF names IS NOT NULL THEN
    stale := NULL; detail := 'changes to ' || names || ' are not tracked'; RETURN;
  END IF;
  stale := false;
END $$;
COMMENT ON FUNCTION mln._freshness(mln.programs) IS
  'internal: whether a program''s network is stale (true, false, or NULL when not known) and why';

-- `changes`: how many committed transactions wrote the table since the
-- grounding (NULL when its changes are not tracked).
CREATE FUNCTION mln.sources(name text)
  RETURNS TABLE (relation regclass, tracked boolean, changed boolean, changes bigint, why text)
LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE r mln.programs := mln._program(name);
BEGIN
  RETURN QUERY
  WITH pend AS (
    SELECT p.relid, p.transactions FROM mln._pending_changes(
             ARRAY(SELECT s.relid FROM mln.program_sources s WHERE s.program = r.name AND s.tracked),
             r.ground_snapshot, r.ground_xid) p
     WHERE r.ground_snapshot IS NOT NULL)
  SELECT s.relid::regclass, s.tracked,
         CASE WHEN s.tracked AND r.ground_snapshot IS NOT NULL THEN coalesce(p.transactions, 0) > 0 OR c.oid IS NULL END,
         CASE WHEN s.tracked AND r.ground_snapshot IS NOT NULL THEN coalesce(p.transactions, 0) END,
         s.why
    FROM mln.program_sources s LEFT JOIN pend p USING (relid) LEFT JOIN pg_class c ON c.oid = s.relid
   WHERE s.program = r.name ORDER BY s.relid::regclass::text;
END $$;
COMMENT ON FUNCTION mln.sources(text) IS
  'the tables a program''s last grounding read its evidence from: whether their changes are tracked (why not), '
  'whether one changed since and how many committed transactions wrote it since (NULL when not tracked)';

-- The state of a program's network: what mln.infer and mln.learn_weights check.
CREATE FUNCTION mln.program_state(name text) RETURNS text
LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE r mln.programs;
BEGIN
  r := mln._program(name);
  IF to_regclass(format('%I._clauses', r.schema_name)) IS NULL THEN
    RETURN 'not grounded';
  ELSIF (mln._freshness(r)).stale THEN
    RETURN 'stale';
  ELSIF coalesce((r.ground_stats->>'learning')::boolean, false) THEN
    RETURN 'grounded for learning';
  END IF;
  RETURN 'grounded';
END $$;
COMMENT ON FUNCTION mln.program_state(text) IS
  'the state of a program''s ground network: not grounded; grounded (for inference); grounded for learning '
  '(by mln.learn_weights; mln.ground grounds it for inference again); stale (evidence, bindings or weights changed '
  'since, or a table it was grounded from: mln.sources says which)';

-- Says, before an answer, when the network it was computed on is stale or
-- when that cannot be known.
CREATE FUNCTION mln._notice_freshness(r mln.programs) RETURNS boolean
LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE f record := mln._freshness(r);
BEGIN
  IF f.stale THEN
    RAISE NOTICE 'program "%" is stale: its answer was computed before a change', r.name
      USING DETAIL = f.detail, HINT = 'CALL mln.solve(name) grounds it again and solves it';
  ELSIF f.stale IS NULL THEN
    RAISE NOTICE 'program "%": whether its answer is current is not known', r.name USING DETAIL = f.detail;
  END IF;
  RETURN f.stale;
END $$;
COMMENT ON FUNCTION mln._notice_freshness(mln.programs) IS
  'internal: a NOTICE when a program''s answer is stale or not known to be current; returns _freshness''s stale';

-- == Bringing a network up to date (issue #62, first step) ==
-- mln.refresh(name) brings a stale network up to date without solving it;
-- CALL mln.solve does the same before it queues the job.  Today both ground
-- the program again, with its last grounding's arguments: the grounding of
-- only what a change touches (issue #62) will take its place here.
-- The MAP job that follows starts from the previous answer (issue #62):
-- mln.ground itself carries the last MAP answer to the new network
-- (<schema>._carried, with its cost and bound in ground_stats' carried;
-- extension/pg/live_ground.hpp), and where the live state was updated,
-- the atoms the change touched, so that the job searches only their
-- components.
CREATE FUNCTION mln._reground(r mln.programs) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM mln.ground(r.name, coalesce(r.ground_args->>'device', 'auto'),
                     coalesce((r.ground_args->>'activate_all')::boolean, false),
                     ARRAY(SELECT jsonb_array_elements_text(coalesce(r.ground_args->'closed_world', '[]'))));
END $$;
COMMENT ON FUNCTION mln._reground(mln.programs) IS
  'internal: grounds a program again with its last grounding''s arguments (mln.refresh, CALL mln.solve); mln.ground '
  'carries the last MAP answer to the next MAP job';

CREATE FUNCTION mln.refresh(name text) RETURNS jsonb
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE
  r mln.programs := mln._program(name);
  f record;
  changes bigint;
  t0 timestamptz := clock_timestamp();
BEGIN
  IF to_regclass(format('%I._clauses', r.schema_name)) IS NULL THEN
    RAISE EXCEPTION 'program "%" has not been grounded', name USING ERRCODE = 'object_not_in_prerequisite_state',
      HINT = 'run mln.ground(name) first; mln.refresh grounds it again with the same arguments';
  END IF;
  f := mln._freshness(r);
  IF f.stale IS FALSE THEN
    RETURN jsonb_build_object('refreshed', false, 'detail', 'its network is current');
  END IF;
  SELECT sum(s.changes) INTO changes FROM mln.sources(name) s;
  PERFORM mln._reground(r);
  RETURN jsonb_build_object('refreshed', true, 'how', 'grounded again', 'detail', f.detail,
                            'changes', changes, 'seconds', extract(epoch FROM clock_timestamp() - t0));
END $$;
COMMENT ON FUNCTION mln.refresh(text) IS
  'brings a program''s ground network up to date with its tables without solving it: a stale network, or one '
  'whose currency is not known, is grounded again with its last grounding''s arguments; returns what it did';


-------------------------------------------------------------------------------
-- Jobs (served by mln_worker processes): inference (map, marginal, dual),
-- weight learning (learn), rule learning (rules) and ProbLog (problog).
-------------------------------------------------------------------------------
-- A problog job names no program of mln.programs: its program is its
-- ground program, so mln.jobs.program is NULL for it, and only for it.
-- The columns after wait_ok_at came with later versions, in this order.
CREATE TABLE mln.jobs (
  id            bigserial PRIMARY KEY,
  program       text REFERENCES mln.programs ON DELETE CASCADE,
  task          text NOT NULL CHECK (task IN ('map', 'marginal', 'dual', 'learn', 'rules', 'problog')),
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
  wait_ok_at    timestamptz,           -- set when an mln.wait returned normally
  samples       bigint,   -- MC-SAT samples counted per component so far (of samples_total)
  samples_total bigint,   -- samples asked for per component
  samples_per_s float8,   -- samples per component per second (components run in parallel)
  average_cost  float8,   -- mean full-network cost per sample (Tuffy's "### Average Cost")
  iterations       int,     -- learning iterations done
  iterations_total int,     -- learning iterations asked for (at most)
  objective        float8,  -- estimated gain in conditional log-likelihood so far
  bound   float8,   -- lower bound on the optimum (MAP and dual jobs)
  optimal boolean,  -- best_cost is proven to be the optimum
  solver  text,     -- what produced the answer: walksat, ilp or walksat+ilp
  parts  int,   -- spread jobs: the number of parts
  rounds int,   -- spread jobs: rounds done
  -- How a MAP answer was reached: seconds to the first whole answer and to
  -- the final bound, and why the search ended.
  first_answer_seconds float8,
  bound_seconds float8,
  stop_reason   text,
  -- A rule learning job's progress: the rule searched is in iterations (of
  -- max_rules, in iterations_total), the refinement depth and candidates here.
  rule_depth    int,
  candidates    bigint,
  -- A problog job's progress: samples drawn in samples (of samples_total:
  -- the fixed count or max_samples) and samples_per_s, and here the samples
  -- that satisfy the evidence and the widest query interval.
  accepted      bigint,
  widest_interval float8,
  CONSTRAINT jobs_program_check CHECK ((program IS NULL) = (task = 'problog'))
);
CREATE INDEX jobs_queued ON mln.jobs (id) WHERE status IN ('queued', 'running');
ALTER TABLE mln.jobs ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_jobs ON mln.jobs USING (pg_has_role(owner, 'MEMBER'));
-- Privileges: a queueing call names the program, task and options; an
-- update (a cancel, a wait, a command line's in-process worker) writes
-- anything but those and the owner (every column but id, program, task,
-- options, owner and created_at).
GRANT SELECT ON mln.jobs TO PUBLIC;
GRANT INSERT (program, task, options, samples_total, iterations_total) ON mln.jobs TO PUBLIC;
GRANT UPDATE (status, worker, lease_until, attempts, started_at, finished_at, best_cost, hard_violated, flips,
              flips_per_s, seconds, device, atoms, clauses, components, gpu_memory_bytes, error, warnings, wait_ok_at,
              samples, samples_total, samples_per_s, average_cost, iterations, iterations_total, objective, bound,
              optimal, solver, parts, rounds, first_answer_seconds, bound_seconds, stop_reason, rule_depth, candidates,
              accepted, widest_interval) ON mln.jobs TO PUBLIC;
GRANT USAGE ON SEQUENCE mln.jobs_id_seq TO PUBLIC;
COMMENT ON TABLE mln.jobs IS 'inference job queue; workers claim rows with FOR UPDATE SKIP LOCKED under a lease';
COMMENT ON COLUMN mln.jobs.program IS 'the program the job runs on; NULL for a problog job (its program is its ground program)';
COMMENT ON COLUMN mln.jobs.samples IS 'marginal/dual jobs: MC-SAT samples counted per component so far';
COMMENT ON COLUMN mln.jobs.samples_total IS 'marginal/dual jobs: MC-SAT samples asked for per component';
COMMENT ON COLUMN mln.jobs.samples_per_s IS 'marginal/dual jobs: samples per component per second (the rate of samples toward samples_total)';
COMMENT ON COLUMN mln.jobs.average_cost IS 'marginal/dual jobs: mean full-network cost per sample, summed over components';
COMMENT ON COLUMN mln.jobs.iterations IS 'learn jobs: iterations done';
COMMENT ON COLUMN mln.jobs.iterations_total IS 'learn jobs: iterations asked for (the job may converge sooner)';
COMMENT ON COLUMN mln.jobs.objective IS 'learn jobs: estimated gain in (penalised) conditional log-likelihood since the initial weights';
COMMENT ON COLUMN mln.jobs.bound IS 'MAP: a lower bound on the optimum cost (best_cost - bound is the gap)';
COMMENT ON COLUMN mln.jobs.optimal IS 'MAP: true when best_cost is proven optimal (enumeration or the exact ILP path)';
COMMENT ON COLUMN mln.jobs.solver IS 'MAP: which solver produced the answer (walksat, ilp or walksat+ilp)';
COMMENT ON COLUMN mln.jobs.parts IS 'MAP spread over workers: the number of parts (see mln.part_progress)';
COMMENT ON COLUMN mln.jobs.rounds IS 'MAP spread over workers: the rounds done over the parts that share clauses';
COMMENT ON COLUMN mln.jobs.stop_reason IS
  'MAP: why the search ended: proven optimal, within the gap tolerance, exact path budget spent, timeout, cancelled, search finished';
COMMENT ON COLUMN mln.jobs.rule_depth IS 'rules jobs: the refinement depth of the rule searched (iterations: that rule)';
COMMENT ON COLUMN mln.jobs.candidates IS 'rules jobs: candidate rules scored so far';
COMMENT ON COLUMN mln.jobs.accepted IS 'problog jobs: samples drawn so far that satisfy the evidence';
COMMENT ON COLUMN mln.jobs.widest_interval IS
  'problog jobs: the widest 95% query interval so far (the stopping rule ends the job once it is at most delta)';

-- == One job on several workers ==
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
-- A marginal job asked for more partitions than its plan has parts samples
-- each part in slices, one worker each; round 0's part is then the unit
-- part * slices + slice.
CREATE TABLE mln.job_plans (
  job        bigint PRIMARY KEY REFERENCES mln.jobs ON DELETE CASCADE,
  parts      int NOT NULL,
  part_of    bytea NOT NULL,  -- per atom id 0..n: its part, -1 when not searched (or as runs: the column's comment)
  cut        bytea NOT NULL,  -- a byte per part: 1 when it shares clauses with another part
  components int NOT NULL,    -- the network's components, and those searched
  solved_components int NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  slices     int NOT NULL DEFAULT 1 CHECK (slices >= 1)
);
COMMENT ON TABLE mln.job_plans IS
  'internal: the parts of a MAP job spread over workers, kept while it runs (a worker that takes over resumes from it)';
COMMENT ON COLUMN mln.job_plans.part_of IS
  'internal: each atom''s part (-1: not searched), a little-endian int4 per atom id, or ''RUN1'' then little-endian int4 (part, atoms in a row) pairs';
COMMENT ON COLUMN mln.job_plans.slices IS
  'internal: marginal jobs: each part is sampled in this many slices (round 0''s part = part * slices + slice)';
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
  state       bytea,               -- MAP: a bit per atom of the part, in ascending atom id
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
COMMENT ON COLUMN mln.job_parts.state IS
  'internal: MAP: the part''s state, a bit per atom of the part in ascending atom id, least significant bit first';
ALTER TABLE mln.job_parts ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_job_parts ON mln.job_parts USING (EXISTS (SELECT 1 FROM mln.jobs j WHERE j.id = job));
GRANT SELECT, INSERT, UPDATE, DELETE ON mln.job_parts TO PUBLIC;

-- == Job options ==
-- Every option of inference and learning jobs (name, the tasks it applies
-- to, type, allowed values or range, default, what it does) is one C++
-- table (options/options.hpp) that the checks below, the worker and the
-- command line all read.  mln.options() lists it.  The checks keep the
-- messages and SQLSTATE of the PL/pgSQL checks they replaced (0.7.0); JSON
-- null is an option's default for every option.
CREATE FUNCTION mln.options(OUT name text, OUT task text, OUT type text, OUT "default" text, OUT allowed text,
                            OUT doc text) RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'mln_options' LANGUAGE C IMMUTABLE STRICT;
COMMENT ON FUNCTION mln.options() IS
  'the options of mln.infer and mln.learn_weights: name, the tasks it applies to (map: map and dual jobs; marginal: '
  'marginal and dual jobs; infer: every inference job; learn; all: inference and learning), type, default, the '
  'values allowed and what it does';

CREATE FUNCTION mln._option_default(option text, for_task text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT o."default" FROM mln.options() o WHERE o.name = option AND o.task = for_task
$$;
COMMENT ON FUNCTION mln._option_default(text, text) IS
  'internal: the default of an option of a task, from the options table (mln.options())';

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

CREATE FUNCTION mln._check_infer_options(task text, options jsonb) RETURNS void
  AS 'MODULE_PATHNAME', 'mln_check_infer_options' LANGUAGE C IMMUTABLE;
COMMENT ON FUNCTION mln._check_infer_options(text, jsonb) IS
  'internal: validates an inference task (map, marginal, dual) and its options; raises with a HINT naming what is allowed';

CREATE FUNCTION mln._check_learn_options(options jsonb) RETURNS void
  AS 'MODULE_PATHNAME', 'mln_check_learn_options' LANGUAGE C IMMUTABLE;
COMMENT ON FUNCTION mln._check_learn_options(jsonb) IS
  'internal: validates learning options; raises with a HINT naming what is allowed';

-- == The job protocol ==
-- Whether the calling role does a worker's part of the job protocol.
CREATE FUNCTION mln._is_worker() RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT coalesce((SELECT rolsuper FROM pg_roles WHERE rolname = current_user), false)
      OR (EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'mln_worker')
          AND pg_has_role(current_user, 'mln_worker', 'MEMBER'))
$$;
COMMENT ON FUNCTION mln._is_worker() IS
  'internal: whether the current role runs jobs (a superuser or a member of role mln_worker)';

-- The jobs queued by the current transaction (a transaction-local setting,
-- so a rolled-back savepoint forgets its jobs too).
CREATE FUNCTION mln._queued_here(job bigint) RETURNS boolean
LANGUAGE sql STABLE STRICT AS $$
  SELECT job::text = ANY (string_to_array(coalesce(current_setting('pg_mln.jobs_this_transaction', true), ''), ','))
$$;
COMMENT ON FUNCTION mln._queued_here(bigint) IS
  'internal: whether the job was queued by the current transaction (which no worker can see before it commits)';

-- Every insert or update of mln.jobs, whoever makes it: a job is queued
-- only on a program its role owns (or is a member of the owner of), with
-- options mln.infer / mln.learn_weights / mln.learn_rules_job /
-- mln.problog_job accept, as that role; a plain role never changes what
-- defines a job (program, task, options, owner) or the outcome of one that
-- ended.  Checked on every path, a direct INSERT or UPDATE included, and by
-- the column privileges above.
CREATE FUNCTION mln._jobs_check() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF NEW.task = 'problog' THEN
      IF NEW.program IS NOT NULL THEN
        RAISE EXCEPTION 'a problog job names no program' USING ERRCODE = 'invalid_parameter_value',
          HINT = 'queue it with mln.problog_job(program text, options)';
      END IF;
    ELSIF NOT EXISTS (SELECT 1 FROM mln.programs p WHERE p.name = NEW.program AND pg_has_role(p.owner, 'MEMBER')) THEN
      RAISE EXCEPTION 'program "%" does not exist', NEW.program
        USING ERRCODE = 'undefined_object', HINT = 'create it with mln.create_program(name, program)';
    END IF;
    IF NOT pg_has_role(NEW.owner, 'MEMBER') THEN
      RAISE EXCEPTION 'a job''s owner is the role that queues it' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NEW.task = 'learn' THEN
      PERFORM mln._check_learn_options(NEW.options);
    ELSIF NEW.task = 'rules' THEN
      PERFORM mln._check_rules_job(NEW.program, NEW.options);
    ELSIF NEW.task = 'problog' THEN
      PERFORM mln._check_problog_job(NEW.options);
    ELSE
      PERFORM mln._check_infer_options(NEW.task, NEW.options);
    END IF;
    IF NOT mln._is_worker() AND (NEW.status <> 'queued' OR NEW.worker IS NOT NULL OR NEW.attempts <> 0) THEN
      RAISE EXCEPTION 'a new job is queued, with no worker' USING ERRCODE = 'insufficient_privilege',
        HINT = 'queue jobs with mln.infer, mln.learn_weights, mln.learn_rules_job or mln.problog_job';
    END IF;
    PERFORM set_config('pg_mln.jobs_this_transaction',
                       concat_ws(',', nullif(current_setting('pg_mln.jobs_this_transaction', true), ''), NEW.id), true);
    RETURN NEW;
  END IF;
  -- An update by a plain role (its own job: row-level security): what
  -- defines the job stays, and a job that ended stays ended.  Its
  -- command line's in-process worker runs the job as that role.
  IF NOT mln._is_worker() THEN
    IF NEW.program IS DISTINCT FROM OLD.program OR NEW.task <> OLD.task OR NEW.options <> OLD.options
       OR NEW.owner <> OLD.owner THEN
      RAISE EXCEPTION 'a job''s program, task, options and owner do not change' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF OLD.status IN ('done', 'failed', 'cancelled') AND (NEW.status <> OLD.status OR NEW.error IS DISTINCT FROM OLD.error
        OR NEW.best_cost IS DISTINCT FROM OLD.best_cost OR NEW.finished_at IS DISTINCT FROM OLD.finished_at) THEN
      RAISE EXCEPTION 'job % has ended (%): its outcome does not change', OLD.id, OLD.status
        USING ERRCODE = 'insufficient_privilege', HINT = 'queue a new job with mln.infer or mln.learn_weights';
    END IF;
  END IF;
  RETURN NEW;
END $$;
COMMENT ON FUNCTION mln._jobs_check() IS
  'internal: trigger on mln.jobs: a job is queued on a program its owner may act on, with valid options; '
  'a plain role does not change what defines a job or the outcome of one that ended';
CREATE TRIGGER jobs_check BEFORE INSERT OR UPDATE ON mln.jobs FOR EACH ROW EXECUTE FUNCTION mln._jobs_check();

-- The relative gap of a MAP answer, the one the solver stops on
-- (solver/core/base/gap.hpp): (cost - bound) / max(|cost|, 1), 0 once the
-- bound reaches the cost (issue #61).  tests/data/gap_cases.tsv pins both
-- sides.
CREATE FUNCTION mln._gap(best_cost float8, bound float8) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN best_cost IS NULL OR bound IS NULL THEN NULL
              WHEN best_cost <= bound THEN 0::float8
              ELSE (best_cost - bound) / greatest(abs(best_cost), 1) END
$$;
COMMENT ON FUNCTION mln._gap(float8, float8) IS
  'internal: the relative gap (best_cost - bound) / max(|best_cost|, 1) of a MAP answer, 0 once the bound reaches it';

-- Columns may only be appended to a view that is replaced: the columns
-- after warnings came with later versions, in this order.
CREATE OR REPLACE VIEW mln.job_progress WITH (security_invoker = true) AS
  SELECT id, program, task, status, worker, best_cost, hard_violated, flips, flips_per_s,
         seconds, device, gpu_memory_bytes, attempts, created_at, started_at, finished_at, error, warnings,
         samples, samples_total, samples_per_s, average_cost, iterations, iterations_total, objective,
         bound, mln._gap(best_cost, bound) AS gap, optimal, solver, j.parts, j.rounds,
         (SELECT jsonb_agg(jsonb_build_object('part', p.part, 'round', p.round, 'status', p.status,
                                              'worker', p.worker, 'device', p.device, 'flips_per_s', p.flips_per_s)
                           ORDER BY p.part)
            FROM mln.job_parts p
           WHERE p.job = j.id AND p.round = (SELECT max(round) FROM mln.job_parts q WHERE q.job = j.id)) AS part_workers,
         j.stop_reason, j.first_answer_seconds, j.bound_seconds, j.rule_depth, j.candidates,
         j.accepted, j.widest_interval
    FROM mln.jobs j;
COMMENT ON VIEW mln.job_progress IS
  'jobs with their progress (MAP: best cost so far, flips/s, and when done the bound, gap and whether proven optimal; '
  'a job spread over workers: parts, rounds done, and its latest round''s parts with worker, device and flips/s; '
  'marginal: samples drawn of samples_total, samples/s; learn: iterations of iterations_total and the objective; '
  'rules: the rule searched in iterations (of max_rules), its rule_depth and the candidates scored; '
  'problog: samples drawn of samples_total, samples/s, those accepted (evidence) and the widest_interval)';
GRANT SELECT ON mln.job_progress TO PUBLIC;

CREATE VIEW mln.part_progress WITH (security_invoker = true) AS
  SELECT job, round, part, status, worker, device, atoms, clauses, flips, flips_per_s, cost, seconds, attempts,
         started_at, finished_at
    FROM mln.job_parts;
GRANT SELECT ON mln.part_progress TO PUBLIC;
COMMENT ON VIEW mln.part_progress IS
  'the parts of MAP jobs spread over workers: which worker and device runs each part in each round, flips and flips/s';

-- The worker role (see the end of this script): the program's schema and
-- its network and result tables ('_'-prefixed; not the evidence tables) are
-- opened to it when the program is grounded (mln.ground, the learning
-- grounding, mln._reground); queueing a job grants nothing.  Runs as the
-- caller, the program's owner or a member of it; nothing happens when the
-- role does not exist.
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

CREATE FUNCTION mln.infer(name text, task text DEFAULT 'map', options jsonb DEFAULT '{}') RETURNS bigint
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE
  r mln.programs;
  st text;
  j bigint;
BEGIN
  r := mln._program(name);
  PERFORM mln._check_infer_options(task, options);
  st := mln.program_state(name);
  IF st = 'grounded for learning' THEN
    RAISE EXCEPTION 'program "%" is grounded for weight learning, not for inference', name
      USING ERRCODE = 'object_not_in_prerequisite_state',
      DETAIL = 'mln.learn_weights replaced its network with the learning network; a learning job that finishes marks '
               'the program for grounding, one that was cancelled or failed leaves that network in place',
      HINT = 'run mln.ground(name) first';
  ELSIF st <> 'grounded' THEN
    RAISE EXCEPTION 'program "%" is not grounded (or its evidence changed since)', name
      USING ERRCODE = 'object_not_in_prerequisite_state', HINT = 'run mln.ground(name) first';
  END IF;
  INSERT INTO mln.jobs(program, task, options, samples_total)
  VALUES (name, task, options,
          CASE WHEN task <> 'map' THEN coalesce(mln._infer_number(options, 'samples'), mln._option_default('samples', 'marginal')::numeric) END)
  RETURNING id INTO j;
  PERFORM pg_notify('mln_jobs', j::text);
  RETURN j;
END $$;
COMMENT ON FUNCTION mln.infer(text, text, jsonb) IS
  'queues an inference job for the worker; returns the job id.  task: map (default), marginal (MC-SAT) or dual (both from one job).  '
  'Options of every task: max_flips, timeout, seed, threads, device, random_step, skip_components_without_query, exact_max_atoms, '
  'partitions (parts for several workers: N > 1 cuts large components; 0, auto: whole components over the connected workers, for 10^6 clauses or more; marginal parts are whole components); '
  'map and dual: max_tries, dont_break, solver (auto | walksat | ilp), ilp_seconds, cpu_walk (walksat | weighted), rounds; '
  'marginal and dual: samples (default 100), burn_in, mcsat_param, sa_temperature';

CREATE FUNCTION mln._job_json(j mln.jobs) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('job', j.id, 'task', j.task, 'status', j.status, 'best_cost', j.best_cost,
                            'hard_violated', j.hard_violated, 'bound', j.bound, 'gap', mln._gap(j.best_cost, j.bound),
                            'optimal', j.optimal, 'solver', j.solver, 'stop_reason', j.stop_reason,
                            'first_answer_seconds', j.first_answer_seconds, 'bound_seconds', j.bound_seconds,
                            'flips', j.flips,
                            'seconds', coalesce(j.seconds, CASE WHEN j.status = 'running' AND j.started_at IS NOT NULL
                              THEN round(extract(epoch FROM clock_timestamp() - j.started_at)::numeric, 3)::float8 END),
                            'samples', j.samples, 'samples_total', j.samples_total,
                            'samples_per_s', j.samples_per_s, 'average_cost', j.average_cost,
                            'iterations', j.iterations, 'iterations_total', j.iterations_total, 'objective', j.objective,
                            'progress', CASE WHEN j.status = 'done' THEN 1.0::float8
                                             WHEN j.task = 'problog' AND coalesce((j.options->>'samples')::float8, 0) = 0
                                                  AND j.widest_interval > 0
                                             THEN least(1.0, greatest(coalesce(j.samples, 0)::float8 / j.samples_total,
                                                    (coalesce((j.options->>'delta')::float8, 0.01) / j.widest_interval) ^ 2))
                                             WHEN j.samples_total > 0
                                             THEN least(1.0, coalesce(j.samples, 0)::float8 / j.samples_total)
                                             WHEN j.iterations_total > 0
                                             THEN least(1.0, coalesce(j.iterations, 0)::float8 / j.iterations_total) END,
                            'device', j.device, 'gpu_memory_bytes', j.gpu_memory_bytes, 'error', j.error,
                            'warnings', to_jsonb(j.warnings))
      || CASE WHEN j.task = 'problog' THEN jsonb_build_object('accepted', j.accepted,
                                                               'widest_interval', j.widest_interval)
              ELSE '{}'::jsonb END
$$;
COMMENT ON FUNCTION mln._job_json(mln.jobs) IS
  'internal: the JSON that mln.wait returns for a job row (status, costs, flips, samples drawn of samples_total, '
  'learning iterations and objective, seconds, progress in [0, 1])';

-- The wait checks its client every second while it polls: a client that
-- went away (killed, timed out) ends it, as a cancel does, instead of
-- leaving a backend polling for a job nobody waits for.  It refuses at once
-- to wait for a job its own transaction queued (no worker can see it before
-- the commit), and says when no worker is connected.
CREATE FUNCTION mln.wait(job bigint, timeout interval DEFAULT NULL) RETURNS jsonb
LANGUAGE plpgsql VOLATILE SET client_connection_check_interval = 1000 AS $$
DECLARE
  j mln.jobs;
  started timestamptz := clock_timestamp();
  deadline timestamptz := clock_timestamp() + coalesce(timeout, interval '100 years');
  told boolean := false;
  polls int := 0;
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
    IF mln._queued_here(job) THEN
      RAISE EXCEPTION 'job % was queued by this transaction: no worker can see it before the transaction commits', job
        USING ERRCODE = 'object_not_in_prerequisite_state',
        HINT = 'queue and wait in one call with CALL mln.solve(name), or commit first: SELECT mln.infer(...) \gset, '
               'then SELECT mln.wait(:infer)';
    END IF;
    -- A job still queued after 2 s with no worker connected will wait forever: say so, once.
    IF NOT told AND j.status = 'queued' AND clock_timestamp() - started > interval '2 s'
       AND NOT EXISTS (SELECT 1 FROM pg_stat_activity
                        WHERE datname = current_database() AND application_name LIKE 'mln\_worker%') THEN
      RAISE NOTICE 'job % is queued and no mln_worker is connected to database "%"', job, current_database()
        USING HINT = format('start one: mln_worker --dsn "dbname=%s"', current_database());
      told := true;
    END IF;
    -- Every 2 ms for the first 100 ms, then every 20 ms: a job answered
    -- after a change takes some ten milliseconds (issue #62).
    PERFORM pg_sleep(CASE WHEN polls < 50 THEN 0.002 ELSE 0.02 END);
    polls := polls + 1;
  END LOOP;
  UPDATE mln.jobs SET wait_ok_at = clock_timestamp() WHERE id = job;
  RETURN mln._job_json(j);
END $$;
COMMENT ON FUNCTION mln.wait(bigint, interval) IS
  'waits for a job (up to timeout) and returns its status, task, best cost, hard clauses violated, flips, samples drawn and samples_total, '
  'average cost, seconds and progress; cancelling the wait cancels the job; refuses a job queued by the same transaction';

-- A job the caller may not see does not exist for it, as a program does not.
CREATE FUNCTION mln.cancel(job bigint) RETURNS boolean
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

-- One call that queues, commits and waits: a procedure may commit, so the
-- worker sees the job; it cannot run inside a transaction block.  A map,
-- marginal or dual job on a stale network grounds it again first, with the
-- last grounding's arguments (mln._reground).
CREATE PROCEDURE mln.solve(name text, task text DEFAULT 'map', options jsonb DEFAULT '{}',
                           timeout interval DEFAULT NULL, INOUT result jsonb DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE
  j bigint;
  r mln.programs;
BEGIN
  IF task = 'learn' THEN
    j := mln.learn_weights(name, options);
  ELSIF task = 'rules' THEN
    j := mln.learn_rules_job(name, options->>'target', options - 'target');
  ELSIF task = 'problog' THEN
    j := mln.problog_job(name, options);
  ELSE
    IF mln.program_state(name) = 'stale' THEN
      r := mln._program(name);
      RAISE NOTICE 'program "%" is stale: grounding it again first', name USING DETAIL = (mln._freshness(r)).detail;
      PERFORM mln._reground(r);
    END IF;
    j := mln.infer(name, task, options);
  END IF;
  COMMIT;
  result := mln.wait(j, timeout);
END $$;
COMMENT ON PROCEDURE mln.solve(text, text, jsonb, interval, jsonb) IS
  'queues a job (task map, marginal, dual, learn: mln.learn_weights, rules: mln.learn_rules_job with options'' '
  '"target", or problog: mln.problog_job with the ProbLog program as name), commits it and waits for it; returns '
  'what mln.wait returns.  A map, marginal or dual job on a stale network grounds it again first, with its last '
  'grounding''s arguments.  CALL it outside a transaction block';

-------------------------------------------------------------------------------
-- Answers: MAP and marginal inference (MC-SAT: task => 'marginal' | 'dual')
-------------------------------------------------------------------------------
-- One grounding, one job: 'dual' runs MAP and then MC-SAT on the network it
-- read once, and writes both answers.  The worker writes the true query
-- atoms into mln_<name>._map and P(atom true) into mln_<name>._marginal
-- (created with COPY when absent; mln.ground drops them with the rest of the
-- network, so no stale result survives a re-grounding) and calls
-- mln._materialize_map / mln._materialize_marginal.
-- mln_<name>.map_result and marginal_result are views over those answers,
-- decoded when they are read, so a job's write-back is the COPY of its
-- answer (RC at 565,000 papers: 5.6M rows, most of the 21 s write-back of a
-- 10^8-clause job when they were tables).  mln.ground drops the views with
-- the network they read.

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
COMMENT ON FUNCTION mln._map_sql(text, name) IS
  'internal: the query behind mln.map and map_result (query atoms with their MAP truth, plus true query evidence)';

-- A MAP answer exists once a MAP or dual job has written it since the
-- program was grounded: the worker makes map_result then, and grounding
-- drops it with the network.
CREATE FUNCTION mln.map(name text)
  RETURNS TABLE (predicate text, arguments text[], truth boolean, stale boolean)
LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
  r mln.programs;
  st boolean;
BEGIN
  r := mln._program(name);
  IF to_regclass(format('%I._atoms', r.schema_name)) IS NULL THEN
    RAISE EXCEPTION 'program "%" has not been grounded', name USING ERRCODE = 'object_not_in_prerequisite_state',
      HINT = 'run mln.ground(name), then CALL mln.solve(name)';
  END IF;
  IF to_regclass(format('%I._map', r.schema_name)) IS NULL
     OR to_regclass(format('%I.map_result', r.schema_name)) IS NULL THEN
    RAISE EXCEPTION 'program "%" has no MAP inference result', name USING ERRCODE = 'object_not_in_prerequisite_state',
      DETAIL = 'no MAP or dual job has finished since the program was last grounded',
      HINT = 'run CALL mln.solve(name)';
  END IF;
  st := mln._notice_freshness(r);
  RETURN QUERY EXECUTE 'SELECT q.*, $1 FROM (' || mln._map_sql(name, r.schema_name) || ') q ORDER BY 1, 2' USING st;
END $$;
COMMENT ON FUNCTION mln.map(text) IS
  'the MAP truth of the query atoms (and the true query evidence) from the last MAP or dual job since grounding; '
  'stale: true when the network changed since (a NOTICE says what), NULL when that is not known';

-- Replaces schema `sch`'s result relation `rel` by a view of `query`
-- unless it is one already (a view reads the new answer by itself).
CREATE FUNCTION mln._result_view(sch name, rel name, query text, note text) RETURNS void
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE k "char";
BEGIN
  SELECT c.relkind INTO k FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname = sch AND c.relname = rel;
  IF k = 'v' THEN RETURN; END IF;
  IF k IS NOT NULL THEN
    EXECUTE format('DROP TABLE %I.%I', sch, rel);
  END IF;
  EXECUTE format('CREATE VIEW %I.%I AS ', sch, rel) || query;
  EXECUTE format('COMMENT ON VIEW %I.%I IS %L', sch, rel, note);
END $$;
COMMENT ON FUNCTION mln._result_view(name, name, text, text) IS
  'internal: makes a program''s result relation a view of the given query (replacing a result table of 0.4.0 or older)';

-- Called by the worker after writing _map.
CREATE FUNCTION mln._materialize_map(name text) RETURNS void
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE r mln.programs;
BEGIN
  r := mln._program(name);
  PERFORM mln._result_view(r.schema_name, 'map_result', mln._map_sql(name, r.schema_name),
                           'MAP truth of the query atoms, decoded from the last MAP or dual job''s answer (see mln.map)');
END $$;
COMMENT ON FUNCTION mln._materialize_map(text) IS
  'internal: called by the worker after writing _map; makes the program''s map_result a view of the answer';

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

-- The program's row, checking that it was grounded and has a marginal
-- result; its hints cannot hang (mln.wait(mln.infer(...)) in one statement
-- waits for a job no worker can see).
CREATE FUNCTION mln._marginal_program(p_name text) RETURNS mln.programs
LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE r mln.programs;
BEGIN
  r := mln._program(p_name);
  IF to_regclass(format('%I._atoms', r.schema_name)) IS NULL THEN
    RAISE EXCEPTION 'program "%" has not been grounded', p_name USING ERRCODE = 'object_not_in_prerequisite_state',
      HINT = 'run mln.ground(name), then CALL mln.solve(name, ''marginal'')';
  END IF;
  IF to_regclass(format('%I._marginal', r.schema_name)) IS NULL THEN
    RAISE EXCEPTION 'program "%" has no marginal inference result', p_name
      USING ERRCODE = 'object_not_in_prerequisite_state',
      DETAIL = 'no marginal or dual job has finished since the program was last grounded',
      HINT = 'run CALL mln.solve(name, ''marginal'')';
  END IF;
  RETURN r;
END $$;
COMMENT ON FUNCTION mln._marginal_program(text) IS
  'internal: the catalog row of a program with a marginal result, or a clear error (unknown, not grounded, no result yet)';

CREATE FUNCTION mln.marginals(name text)
  RETURNS TABLE (predicate text, arguments text[], probability float8, stale boolean)
LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
  r mln.programs;
  st boolean;
BEGIN
  r := mln._marginal_program(name);
  st := mln._notice_freshness(r);
  RETURN QUERY EXECUTE 'SELECT q.*, $1 FROM (' || mln._marginal_sql(name, r.schema_name) || ') q '
                       'ORDER BY predicate COLLATE "C", probability DESC, arguments' USING st;
END $$;
COMMENT ON FUNCTION mln.marginals(text) IS
  'marginal probabilities P(true) of the active query atoms (hard evidence and inactive atoms are not listed), '
  'by predicate and then most probable first; from the last marginal or dual job since grounding; '
  'stale: true when the network changed since (a NOTICE says what), NULL when that is not known';

-- The data version each answer was computed on (issue #62): the grounding
-- its network came from (its transaction, and the snapshot it read the
-- tables under) and the job that wrote it (the worker keeps it in
-- _map_info and _marginal_info, since 0.17.0); stale as mln.map and
-- mln.marginals say it.  No row for an answer not written since the
-- network was grounded.
CREATE FUNCTION mln.answer_versions(name text)
  RETURNS TABLE (answer text, job bigint, grounded_at timestamptz, ground_xid xid8, ground_snapshot pg_snapshot,
                 stale boolean)
LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
  r mln.programs := mln._program(name);
  st boolean := (mln._freshness(r)).stale;
  k text;
  j bigint;
BEGIN
  FOREACH k IN ARRAY ARRAY['map', 'marginal'] LOOP
    j := NULL;
    IF to_regclass(format('%I._%s_info', r.schema_name, k)) IS NOT NULL THEN
      EXECUTE format('SELECT max(job) FROM %I.%I', r.schema_name, '_' || k || '_info') INTO j;
    END IF;
    CONTINUE WHEN j IS NULL;
    answer := k; job := j; grounded_at := r.grounded_at; ground_xid := r.ground_xid;
    ground_snapshot := r.ground_snapshot; stale := st;
    RETURN NEXT;
  END LOOP;
END $$;
COMMENT ON FUNCTION mln.answer_versions(text) IS
  'the data version of each answer (map, marginal) the worker wrote since the program was grounded: the job, the '
  'grounding''s time, transaction and snapshot (the rows of the tables it read), and whether it is stale';

-- Called by the worker after writing _marginal.
CREATE FUNCTION mln._materialize_marginal(name text) RETURNS void
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE r mln.programs;
BEGIN
  r := mln._marginal_program(name);
  PERFORM mln._result_view(r.schema_name, 'marginal_result', mln._marginal_sql(name, r.schema_name),
                           'marginal probabilities of the query atoms, written by the last marginal or dual job (see mln.marginals)');
END $$;
COMMENT ON FUNCTION mln._materialize_marginal(text) IS
  'internal: called by the worker after writing _marginal; makes the program''s marginal_result a view of the answer';

-- Result relations the worker made (it owns them) are the program owner's
-- to read (and, tables, to replace): the worker calls this after writing
-- them.
CREATE FUNCTION mln._share_results(name text) RETURNS void
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE
  r mln.programs;
  t record;
BEGIN
  r := mln._program(name);
  FOR t IN SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = r.schema_name AND c.relkind IN ('r', 'v')
              AND c.relname IN ('_marginal', 'map_result', 'marginal_result')
              AND c.relowner = current_user::regrole AND c.relowner <> r.owner
  LOOP
    IF t.relkind = 'v' THEN
      EXECUTE format('GRANT SELECT ON %I.%I TO %s', r.schema_name, t.relname, r.owner);
    ELSE
      EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON %I.%I TO %s', r.schema_name, t.relname, r.owner);
    END IF;
  END LOOP;
END $$;
COMMENT ON FUNCTION mln._share_results(text) IS
  'internal: grants the program''s owner the result tables and views the calling worker created';


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
CREATE TABLE mln.learn_iterations (
  job        bigint NOT NULL REFERENCES mln.jobs ON DELETE CASCADE,
  program    text NOT NULL REFERENCES mln.programs ON DELETE CASCADE,
  iteration  int NOT NULL,
  clauses    int[] NOT NULL,              -- mln.clauses.idx of each weight
  weights    float8[] NOT NULL,
  objective  float8,
  accepted   boolean NOT NULL DEFAULT true,  -- false: the trust region took the step back
  -- Why each learning step was taken or taken back (the trust region's
  -- verdict: the objective's actual change against the model's prediction).
  note       text,
  PRIMARY KEY (job, iteration)
);
COMMENT ON TABLE mln.learn_iterations IS 'weights after each iteration of each learning job (see mln.learning_trace)';
COMMENT ON COLUMN mln.learn_iterations.note IS
  'why the step was taken back (or its diagnosis), as the learner wrote it; NULL for a step taken as predicted';
ALTER TABLE mln.learn_iterations ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_learn_iterations ON mln.learn_iterations
  USING (EXISTS (SELECT 1 FROM mln.programs p WHERE p.name = program));
GRANT SELECT, INSERT, DELETE ON mln.learn_iterations TO PUBLIC;

CREATE TABLE mln.weight_history (
  program    text NOT NULL REFERENCES mln.programs ON DELETE CASCADE,
  version    int NOT NULL,
  idx        int NOT NULL,
  weight     float8 NOT NULL,
  source     text NOT NULL,            -- 'as written', 'learned', 'restored', 'rules'
  job        bigint,                   -- the learning job of a 'learned' version (a 'rules' version: the rules job)
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

CREATE OR REPLACE VIEW mln.learning_trace WITH (security_invoker = true) AS
  SELECT i.program, i.job, i.iteration, c.idx + 1 AS clause_no, c.clause, u.weight, i.objective, i.accepted, i.note
    FROM mln.learn_iterations i
   CROSS JOIN LATERAL unnest(i.clauses, i.weights) AS u(idx, weight)
    JOIN mln.clauses c ON c.program = i.program AND c.idx = u.idx;
COMMENT ON VIEW mln.learning_trace IS 'each learnable clause''s weight after each iteration of each learning job';
GRANT SELECT ON mln.learning_trace TO PUBLIC;

CREATE VIEW mln.weight_versions WITH (security_invoker = true) AS
  SELECT h.program, h.version, h.source, h.job, h.created_at, c.idx + 1 AS clause_no, c.clause, h.weight
    FROM mln.weight_history h JOIN mln.clauses c ON c.program = h.program AND c.idx = h.idx;
COMMENT ON VIEW mln.weight_versions IS 'the program''s weight versions, clause by clause (mln.restore_weights brings one back)';
GRANT SELECT ON mln.weight_versions TO PUBLIC;

CREATE FUNCTION mln._ground_learning(name text, device text DEFAULT 'auto') RETURNS jsonb
  AS 'MODULE_PATHNAME', 'mln_ground_learning' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION mln._ground_learning(text, text) IS
  'internal: grounds a program for weight learning (query predicates'' evidence as the training world, every unknown atom '
  'active, each ground clause''s learnable origins); raises when there is nothing to learn or no training data';

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
  INSERT INTO mln.jobs(program, task, options, iterations_total)
  VALUES (name, 'learn', options, coalesce(mln._infer_number(options, 'iterations'), mln._option_default('iterations', 'learn')::numeric))
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

-- A clause the version does not list (added after it by
-- mln.add_learned_rules) gets weight 0, which has no effect, until a
-- version that lists it is restored.
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
  -- Versions are 1 to the latest; one may list no clause (version 1 of a
  -- program that had no soft clause before mln.add_learned_rules).
  IF want IS NULL OR want < 1 OR want > coalesce((SELECT max(h.version) FROM mln.weight_history h WHERE h.program = name), 0) THEN
    RAISE EXCEPTION 'program "%" has no weight version %', name, coalesce(want::text, '(none)')
      USING ERRCODE = 'undefined_object', HINT = 'SELECT DISTINCT version, source FROM mln.weight_versions WHERE program = ...';
  END IF;
  UPDATE mln.clauses c SET weight = coalesce(h.weight, 0)
    FROM mln.clauses c2 LEFT JOIN mln.weight_history h ON h.program = c2.program AND h.version = want AND h.idx = c2.idx
   WHERE c.program = name AND NOT c.hard AND c2.program = c.program AND c2.idx = c.idx;
  SELECT max(h.version) + 1 INTO v FROM mln.weight_history h WHERE h.program = name;
  INSERT INTO mln.weight_history(program, version, idx, weight, source)
  SELECT name, v, c.idx, c.weight, 'restored' FROM mln.clauses c WHERE c.program = name AND NOT c.hard;
  UPDATE mln.programs SET grounded_at = NULL WHERE programs.name = restore_weights.name;
  RETURN v;
END $$;
COMMENT ON FUNCTION mln.restore_weights(text, int) IS
  'writes an earlier weight version back to mln.clauses (default: the one before the current), recorded as a new version; '
  'clauses added after it (mln.add_learned_rules) get weight 0; the program must be grounded again';

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

-------------------------------------------------------------------------------
-- Datalog over the caller's own tables (issue #41): docs/datalog.md
-------------------------------------------------------------------------------
-- * mln.datalog(program, target_schema, options) evaluates a Datalog
--   program (facts, rules, recursion, stratified negation, comparisons and
--   integer arithmetic) on the operator engine and writes every derived
--   relation as a table of target_schema, replacing a table of that name
--   in the caller's transaction.
-- * mln.datalog_query(program, relation, options) returns one derived
--   relation's rows under a column definition list.
-- * mln.datalog_explain(program) shows the strata and each rule's plan
--   without evaluating anything.
-- Input relations are the caller's tables and views, read with the caller's
-- privileges.  docs/datalog.md has the language and the options.
CREATE FUNCTION mln.datalog(program text, target_schema name, options jsonb DEFAULT '{}')
  RETURNS TABLE(relation text, "rows" bigint)
  AS 'MODULE_PATHNAME', 'mln_datalog' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION mln.datalog(text, name, jsonb) IS
  'evaluates a Datalog program over the caller''s tables and writes each derived relation as a table of '
  'target_schema (replacing one of that name); options: device (auto, cpu, gpu), max_rows (0: no limit), verbose, '
  'maintain (true: the tables follow the input tables'' changes; mln.datalog_stop ends it)';

CREATE FUNCTION mln.datalog_query(program text, relation text, options jsonb DEFAULT '{}')
  RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'mln_datalog_query' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION mln.datalog_query(text, text, jsonb) IS
  'evaluates a Datalog program over the caller''s tables and returns the rows of one derived relation: '
  'SELECT * FROM mln.datalog_query(program, ''tc'') AS t(a int, b int)';

CREATE FUNCTION mln.datalog_explain(program text)
  RETURNS TABLE(stratum int, relation text, recursive boolean, rule int, line int, est_rows bigint, plan text)
  AS 'MODULE_PATHNAME', 'mln_datalog_explain' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION mln.datalog_explain(text) IS
  'the strata of a Datalog program and each rule''s plan (join order, delta variants, anti-joins, filters, '
  'aggregates) from the input tables'' estimated sizes, one row per rule; checks the program as mln.datalog '
  'does and evaluates nothing';

-------------------------------------------------------------------------------
-- Rule learning (issue #42): docs/rules.md
-------------------------------------------------------------------------------
CREATE FUNCTION mln.learn_rules(target text, positives text, negatives text, background text[],
                                options jsonb DEFAULT '{}')
  RETURNS TABLE(rule text, positives bigint, negatives bigint, new_positives bigint, score float8, weight float8)
  AS 'MODULE_PATHNAME', 'mln_learn_rules' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION mln.learn_rules(text, text, text, text[], jsonb) IS
  'learns Datalog rules for target from the positive and negative example tables over the background tables '
  '(each a predicate named by its relation), coverage computed on the operator engine; score coverage: Datalog '
  'rules (Aleph), wpll: weighted MLN formulas; options: device, score, link (type, name), max_body, max_vars, beam, '
  'min_pos, noise, max_rules, recursion, max_constants, max_rows, min_gain, penalty, l2, negatives_per_positive, '
  'seed, verbose; negatives NULL: closed-world negatives sampled';

CREATE FUNCTION mln.learn_rules_from(program text, target text, options jsonb DEFAULT '{}')
  RETURNS TABLE(rule text, positives bigint, negatives bigint, new_positives bigint, score float8, weight float8)
  AS 'MODULE_PATHNAME', 'mln_learn_rules_from' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION mln.learn_rules_from(text, text, jsonb) IS
  'learns rules for one predicate of an MLN program from its evidence: the predicate''s true atoms are the '
  'positives, its false ones the negatives (closed-world ones sampled when there are none), the other '
  'predicates'' true atoms the background, linked by declared argument types; options as mln.learn_rules';

-- == Rule learning jobs: docs/rules.md ("Rule learning jobs") ==
-- * mln.learn_rules_job(program, target, options) queues what
--   mln.learn_rules_from runs in the calling backend as a job of task
--   'rules' for the worker (mln.wait, mln.cancel, mln.job_progress and
--   CALL mln.solve(program, 'rules', '{"target": ...}') as for any job).
--   Its options, mln.learn_rules's, and the target are checked when it is
--   queued, by the reader the worker reads them with.  What the job learns
--   from is read when it is queued (mln.rules_input, below).  The worker
--   builds the task the backend's function builds (one builder,
--   extension/rules/program_task.*), reports the rule, depth and candidates
--   as it searches, stops between depths when cancelled, and writes the
--   rules to mln.learned_rules with the job's final row in one transaction:
--   a failed or cancelled job writes none.
-- * mln.add_learned_rules(program, job) appends a finished job's rules to
--   the program as weighted MLN formulas (wpll: their learned weights;
--   coverage: the log-odds of their coverage) in one statement, recorded
--   as a weight version of source 'rules'; mln.restore_weights of a version
--   from before gives them weight 0.
-- * mln.learned_rule_coverage: each learned rule with its coverage, score,
--   precision, the weight it has in a program, and the version that added it.
CREATE TABLE mln.learned_rules (
  job           bigint NOT NULL REFERENCES mln.jobs ON DELETE CASCADE,
  program       text NOT NULL REFERENCES mln.programs ON DELETE CASCADE,
  target        text NOT NULL,
  rule_no       int NOT NULL,         -- 1, 2, ... in the order learned (wpll: the unit clause first)
  rule          text NOT NULL,        -- as mln.learn_rules returns it: Datalog (coverage), weighted formula (wpll)
  formula       text NOT NULL,        -- the rule as an MLN formula, without weight
  positives     bigint NOT NULL,      -- coverage over every example
  negatives     bigint NOT NULL,
  new_positives bigint,               -- coverage: positives no earlier rule covered
  score         float8,               -- coverage: P - N when chosen; wpll: log-likelihood gain
  weight        float8,               -- wpll: the formula's weight
  PRIMARY KEY (job, rule_no)
);
COMMENT ON TABLE mln.learned_rules IS
  'the rules of each finished rule learning job (mln.learn_rules_job), with their coverage and score; '
  'mln.add_learned_rules appends them to the program';
ALTER TABLE mln.learned_rules ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_learned_rules ON mln.learned_rules
  USING (EXISTS (SELECT 1 FROM mln.programs p WHERE p.name = program));
GRANT SELECT, INSERT, DELETE ON mln.learned_rules TO PUBLIC;

-- The weight a learned rule has in a program: wpll's, or for a coverage
-- rule the log-odds that its head holds where its body does, from its
-- coverage with one pseudo-count each side (P = 94, N = 0: ln 95 = 4.55).
-- That is the weight of `body => head` alone in an MLN (given the body,
-- P(head) = e^w / (1 + e^w)); with sampled negatives, the sample's odds.
CREATE FUNCTION mln._learned_rule_weight(weight float8, positives bigint, negatives bigint) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(weight, ln((positives + 1)::float8 / (negatives + 1)))
$$;
COMMENT ON FUNCTION mln._learned_rule_weight(float8, bigint, bigint) IS
  'internal: a learned rule''s weight in a program: its wpll weight, or ln((P + 1) / (N + 1)) from its coverage';

CREATE VIEW mln.learned_rule_coverage WITH (security_invoker = true) AS
  SELECT l.program, l.job, l.target, l.rule_no, l.rule, l.formula, l.positives, l.negatives, l.new_positives,
         l.score, l.positives::float8 / nullif(l.positives + l.negatives, 0) AS precision,
         mln._learned_rule_weight(l.weight, l.positives, l.negatives) AS program_weight,
         (SELECT min(h.version) FROM mln.weight_history h
           WHERE h.program = l.program AND h.source = 'rules' AND h.job = l.job) AS added_in_version
    FROM mln.learned_rules l;
COMMENT ON VIEW mln.learned_rule_coverage IS
  'learned rules with their coverage (positives, negatives, precision), score, the weight mln.add_learned_rules gives '
  'them and the weight version that added them (NULL: not added)';
GRANT SELECT ON mln.learned_rule_coverage TO PUBLIC;

CREATE FUNCTION mln._check_rules_job(program text, options jsonb) RETURNS void
  AS 'MODULE_PATHNAME', 'mln_check_rules_job' LANGUAGE C STABLE;
COMMENT ON FUNCTION mln._check_rules_job(text, jsonb) IS
  'internal: refuses a rule learning job whose options (mln.learn_rules''s, and "target") are bad or whose target is '
  'not one of the program''s predicates, with the messages the worker would fail it with';

-- A rules job's inputs are read when it is queued (issue #59):
-- mln.learn_rules_job reads what the job learns from (each predicate's
-- atoms, the symbols) in the queueing backend, with the caller's
-- privileges, and stores it here as bytes (extension/rules/
-- evidence_snapshot.hpp), as mln.problog_job stores its ground program.
-- The worker then reads no table of the program for a rules job, and
-- queueing one grants role mln_worker nothing.
CREATE TABLE mln.rules_input (
  job    bigint NOT NULL REFERENCES mln.jobs ON DELETE CASCADE,
  piece  int NOT NULL,
  data   bytea NOT NULL,
  PRIMARY KEY (job, piece)
);
ALTER TABLE mln.rules_input ALTER COLUMN data SET STORAGE EXTERNAL;
COMMENT ON TABLE mln.rules_input IS
  'internal: the evidence each rules job not yet ended learns from (mln.learn_rules_job writes it, the worker reads it)';
ALTER TABLE mln.rules_input ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rules_input ON mln.rules_input USING (EXISTS (SELECT 1 FROM mln.jobs j WHERE j.id = job));
GRANT SELECT, INSERT, DELETE ON mln.rules_input TO PUBLIC;

-- A rules job's input goes when the job ends, however it ends.
CREATE FUNCTION mln._rules_job_ended() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM mln.rules_input WHERE job = NEW.id;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION mln._rules_job_ended() IS
  'internal: trigger on mln.jobs: drops the input of a rules job that ended';
CREATE TRIGGER jobs_rules_ended AFTER UPDATE OF status ON mln.jobs FOR EACH ROW
  WHEN (NEW.task = 'rules' AND NEW.status IN ('done', 'failed', 'cancelled'))
  EXECUTE FUNCTION mln._rules_job_ended();

CREATE FUNCTION mln._store_rules_input(job bigint, program text, options jsonb) RETURNS void
  AS 'MODULE_PATHNAME', 'mln_store_rules_input' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION mln._store_rules_input(bigint, text, jsonb) IS
  'internal: reads what a queued rules job learns from (the program''s evidence, with the caller''s privileges) into '
  'mln.rules_input';

CREATE FUNCTION mln.learn_rules_job(program text, target text, options jsonb DEFAULT '{}') RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  r mln.programs;
  opts jsonb := coalesce(options, '{}');
  j bigint;
BEGIN
  IF program IS NULL OR target IS NULL THEN
    RAISE EXCEPTION 'mln.learn_rules_job: program and target must not be null' USING ERRCODE = 'null_value_not_allowed';
  END IF;
  r := mln._program(program);
  IF jsonb_typeof(opts) <> 'object' THEN
    RAISE EXCEPTION 'options must be a JSON object' USING ERRCODE = 'invalid_parameter_value',
      HINT = 'for example ''{"score": "wpll", "max_body": 2}''';
  END IF;
  opts := opts || jsonb_build_object('target', target);
  PERFORM mln._check_rules_job(program, opts);  -- the jobs trigger checks it again, on every path
  INSERT INTO mln.jobs(program, task, options, iterations_total)
  VALUES (program, 'rules', opts, coalesce((opts->>'max_rules')::int, 10))
  RETURNING id INTO j;
  PERFORM mln._store_rules_input(j, program, opts);
  PERFORM pg_notify('mln_jobs', j::text);
  RETURN j;
END $$;
COMMENT ON FUNCTION mln.learn_rules_job(text, text, jsonb) IS
  'queues a rule learning job: what mln.learn_rules_from(program, target, options) returns, learned by a worker and '
  'written to mln.learned_rules when done; returns the job id (mln.wait, mln.cancel, mln.job_progress: the rule '
  'searched in iterations, rule_depth, candidates).  Options and target are checked now, and the evidence is read '
  'now, with the caller''s privileges';

-- Appends a finished rule learning job's rules to the program, in one
-- statement: all of them or, when any fails to parse, none.  The program
-- is its source text (mln.ground parses it; mln.clauses holds the weights,
-- which win), so the formulas are appended to the source and the clauses
-- the parser makes of them to mln.clauses; a formula that normalises to a
-- clause the program has merges into it as the parser merges (the weights
-- add).  Recorded as a weight version (source 'rules', the job); the
-- program needs grounding again, as after any edit.
CREATE FUNCTION mln.add_learned_rules(name text, job bigint) RETURNS int
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE
  r mln.programs;
  j mln.jobs;
  added text;
  src text;
  cl_before jsonb;
  cl_after jsonb;
  v int;
BEGIN
  r := mln._program(name);
  PERFORM 1 FROM mln.programs p WHERE p.name = r.name FOR UPDATE;  -- one edit of the program at a time
  SELECT * INTO j FROM mln.jobs WHERE id = add_learned_rules.job;
  IF NOT FOUND OR j.program <> r.name OR j.task <> 'rules' THEN
    RAISE EXCEPTION 'job % is not a rule learning job of program "%"', job, name USING ERRCODE = 'undefined_object',
      HINT = 'queue one with mln.learn_rules_job(program, target, options)';
  ELSIF j.status <> 'done' THEN
    RAISE EXCEPTION 'job % is %, not done: it has no rules to add', job, j.status
      USING ERRCODE = 'object_not_in_prerequisite_state', HINT = 'wait for it with mln.wait(job)';
  ELSIF EXISTS (SELECT 1 FROM mln.weight_history h WHERE h.program = r.name AND h.source = 'rules' AND h.job = j.id) THEN
    RAISE EXCEPTION 'the rules of job % are in program "%" already', job, name USING ERRCODE = 'duplicate_object',
      HINT = 'mln.restore_weights(name, version) brings an earlier weight version back';
  END IF;
  SELECT string_agg(format('%s %s', mln._learned_rule_weight(l.weight, l.positives, l.negatives), l.formula), E'\n'
                    ORDER BY l.rule_no)
    INTO added FROM mln.learned_rules l WHERE l.job = j.id;
  IF added IS NULL THEN
    RAISE EXCEPTION 'job % learned no rule', job USING ERRCODE = 'object_not_in_prerequisite_state';
  END IF;
  src := r.source || format(E'\n// rules learned by job %s (mln.add_learned_rules)\n', job) || added || E'\n';
  cl_before := mln._parse_program(r.source)->'clauses';
  cl_after := mln._parse_program(src)->'clauses';  -- raises on a formula that does not parse: nothing is changed
  -- Appending text never reorders the clauses before it.
  IF EXISTS (SELECT 1 FROM jsonb_array_elements(cl_before) WITH ORDINALITY b(c, i)
               LEFT JOIN jsonb_array_elements(cl_after) WITH ORDINALITY a(c, i) USING (i)
              WHERE a.c IS NULL OR a.c->>'text' <> b.c->>'text') THEN
    RAISE EXCEPTION 'program "%": its clauses change when the rules are appended (internal)', name;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM mln.weight_history h WHERE h.program = r.name) THEN  -- keep the weights as written
    INSERT INTO mln.weight_history(program, version, idx, weight, source)
    SELECT r.name, 1, c.idx, c.weight, 'as written' FROM mln.clauses c WHERE c.program = r.name AND NOT c.hard;
  END IF;
  UPDATE mln.clauses c SET weight = c.weight + ((a.c->>'weight')::float8 - (b.c->>'weight')::float8)
    FROM jsonb_array_elements(cl_before) WITH ORDINALITY b(c, i) JOIN jsonb_array_elements(cl_after) WITH ORDINALITY a(c, i)
         USING (i)
   WHERE c.program = r.name AND c.idx = i - 1 AND NOT c.hard AND a.c->>'weight' <> b.c->>'weight';
  INSERT INTO mln.clauses(program, idx, weight, hard, clause, exist_vars, line)
  SELECT r.name, i - 1, (a.c->>'weight')::float8, (a.c->>'hard')::boolean, a.c->>'text',
         ARRAY(SELECT jsonb_array_elements_text(a.c->'exist_vars')), (a.c->>'line')::int
    FROM jsonb_array_elements(cl_after) WITH ORDINALITY a(c, i) WHERE i > jsonb_array_length(cl_before);
  UPDATE mln.programs p SET source = src, grounded_at = NULL WHERE p.name = r.name;
  -- Version 1 is the weights as written, even when there are none (no soft clause).
  SELECT coalesce(max(h.version), 1) + 1 INTO v FROM mln.weight_history h WHERE h.program = r.name;
  INSERT INTO mln.weight_history(program, version, idx, weight, source, job)
  SELECT r.name, v, c.idx, c.weight, 'rules', j.id FROM mln.clauses c WHERE c.program = r.name AND NOT c.hard;
  RETURN v;
END $$;
COMMENT ON FUNCTION mln.add_learned_rules(text, bigint) IS
  'appends the rules of a finished rule learning job to the program as weighted MLN formulas (wpll: their weights; '
  'coverage: ln((P + 1) / (N + 1))), all or none, as a new weight version (source rules); returns the version.  '
  'The program must be grounded again';

-------------------------------------------------------------------------------
-- Probabilistic logic programs (issue #43): docs/problog.md
-------------------------------------------------------------------------------
CREATE FUNCTION mln.problog(program text, options jsonb DEFAULT '{}')
  RETURNS TABLE(query text, probability float8, ci_low float8, ci_high float8, samples bigint)
  AS 'MODULE_PATHNAME', 'mln_problog' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION mln.problog(text, jsonb) IS
  'answers the queries of a ProbLog / CP-logic program (probabilistic facts, annotated disjunctions, stratified '
  'negation, evidence; relations no rule defines are the caller''s tables) by forward sampling: one row per ground '
  'query atom with its probability, 95% Wilson interval and the samples it rests on; options: device (auto, cpu, '
  'gpu), samples (0: the stopping rule), delta (0.01), max_samples, seed, threads, max_rows, verbose';

-- == ProbLog jobs: docs/problog.md ("Jobs") ==
-- * mln.problog_job(program, options) queues what mln.problog runs in the
--   calling backend as a job of task 'problog' for the worker (mln.wait,
--   mln.cancel, mln.job_progress as for any job; CALL mln.solve(program,
--   'problog', options)).  The program is parsed, checked and grounded when
--   it is queued, in the queueing backend (its tables are read with the
--   caller's privileges), and its options read by the reader mln.problog
--   and the worker read them with: a bad program or option is refused
--   before anything is queued, with mln.problog's messages.  The ground
--   program goes to the worker as bytes in mln.problog_ground.
-- * A problog job names no program of mln.programs (mln.jobs.program is
--   NULL for it, and only for it).
-- * The worker samples where the job's options' "device" says (without
--   one: the queueing session's mln.device), reports the samples drawn and
--   accepted and the widest interval in mln.job_progress, stops between
--   batches when cancelled, and writes mln.problog_results with the job's
--   final row in one transaction: a failed or cancelled job writes none.

-- The ground program of a queued problog job (mln/cp_payload.hpp's bytes,
-- in pieces of 64 MiB in order: a bytea holds at most 1 GB); its rows go
-- when the job ends.  Not compressed: arrays of numbers gain little from
-- it, and it would cost the queueing backend and the worker's read.
CREATE TABLE mln.problog_ground (
  job    bigint NOT NULL REFERENCES mln.jobs ON DELETE CASCADE,
  piece  int NOT NULL,
  data   bytea NOT NULL,
  PRIMARY KEY (job, piece)
);
ALTER TABLE mln.problog_ground ALTER COLUMN data SET STORAGE EXTERNAL;
COMMENT ON TABLE mln.problog_ground IS
  'internal: the ground program of each problog job not yet ended (mln.problog_job writes it, the worker reads it)';
ALTER TABLE mln.problog_ground ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_problog_ground ON mln.problog_ground USING (EXISTS (SELECT 1 FROM mln.jobs j WHERE j.id = job));
GRANT SELECT, INSERT, DELETE ON mln.problog_ground TO PUBLIC;

CREATE TABLE mln.problog_results (
  job         bigint NOT NULL REFERENCES mln.jobs ON DELETE CASCADE,
  query_no    int NOT NULL,     -- 1, 2, ...: the order of mln.problog's rows
  query       text NOT NULL,    -- as mln.problog returns them
  probability float8 NOT NULL,
  ci_low      float8 NOT NULL,
  ci_high     float8 NOT NULL,
  samples     bigint NOT NULL,  -- the samples it rests on (those that satisfy the evidence)
  PRIMARY KEY (job, query_no)
);
COMMENT ON TABLE mln.problog_results IS
  'the answers of each finished problog job (mln.problog_job): mln.problog''s rows, in its order';
ALTER TABLE mln.problog_results ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_problog_results ON mln.problog_results USING (EXISTS (SELECT 1 FROM mln.jobs j WHERE j.id = job));
GRANT SELECT, INSERT, DELETE ON mln.problog_results TO PUBLIC;

-- A problog job's ground program goes when the job ends, however it ends
-- (done, failed, cancelled while queued or running).
CREATE FUNCTION mln._problog_job_ended() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM mln.problog_ground WHERE job = NEW.id;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION mln._problog_job_ended() IS
  'internal: trigger on mln.jobs: drops the ground program of a problog job that ended';
CREATE TRIGGER jobs_problog_ended AFTER UPDATE OF status ON mln.jobs FOR EACH ROW
  WHEN (NEW.task = 'problog' AND NEW.status IN ('done', 'failed', 'cancelled'))
  EXECUTE FUNCTION mln._problog_job_ended();

CREATE FUNCTION mln._check_problog_job(options jsonb) RETURNS void
  AS 'MODULE_PATHNAME', 'mln_check_problog_job' LANGUAGE C STABLE;
COMMENT ON FUNCTION mln._check_problog_job(jsonb) IS
  'internal: refuses a problog job whose options (mln.problog''s) are bad, with the messages the worker would fail it with';

CREATE FUNCTION mln.problog_job(program text, options jsonb DEFAULT '{}') RETURNS bigint
  AS 'MODULE_PATHNAME', 'mln_problog_job' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION mln.problog_job(text, jsonb) IS
  'queues a ProbLog program for the worker: what mln.problog(program, options) returns, sampled by a worker and written '
  'to mln.problog_results when done; returns the job id (mln.wait, mln.cancel, mln.job_progress: samples drawn, '
  'accepted, the widest interval).  The program is checked and grounded over your tables now';

-------------------------------------------------------------------------------
-- Maintained Datalog outputs (issue #62): docs/datalog.md, "Maintained outputs"
-------------------------------------------------------------------------------
-- mln.datalog(program, target_schema, '{"maintain": true}') writes the
-- derived relations and registers the program here; statement-level
-- triggers on its input tables (mln._datalog_maintain) apply each change to
-- the target schema's tables in the writer's transaction, the program
-- running as its owner (extension/pg/datalog_maintain_fn.cpp).  version is
-- the state's tag: a value of mln.datalog_version, which a rollback never
-- hands out again.
CREATE SEQUENCE mln.datalog_version;
GRANT USAGE ON SEQUENCE mln.datalog_version TO PUBLIC;
COMMENT ON SEQUENCE mln.datalog_version IS 'internal: tags of maintained Datalog states (mln.datalog_maintained.version)';

CREATE TABLE mln.datalog_maintained (
  target_schema name PRIMARY KEY,
  owner         regrole NOT NULL DEFAULT current_user::regrole,
  program       text NOT NULL,
  options       jsonb NOT NULL DEFAULT '{}',
  inputs        oid[] NOT NULL,
  version       bigint NOT NULL DEFAULT nextval('mln.datalog_version'),
  changed_at    timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE mln.datalog_maintained IS
  'Datalog programs whose target schema''s tables follow their input tables (mln.datalog with maintain)';
COMMENT ON COLUMN mln.datalog_maintained.inputs IS
  'the table each input relation reads, in the program''s order (renames are followed; a dropped one is an error)';
COMMENT ON COLUMN mln.datalog_maintained.version IS
  'the maintained state''s tag: a new value of mln.datalog_version after each change applied';
ALTER TABLE mln.datalog_maintained ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_datalog_maintained ON mln.datalog_maintained USING (pg_has_role(owner, 'MEMBER'));
GRANT SELECT, INSERT, UPDATE, DELETE ON mln.datalog_maintained TO PUBLIC;

CREATE FUNCTION mln._datalog_changed() RETURNS trigger
  AS 'MODULE_PATHNAME', 'mln_datalog_changed' LANGUAGE C;
COMMENT ON FUNCTION mln._datalog_changed() IS
  'internal: the trigger of a maintained Datalog program''s input tables: applies a statement''s rows to its outputs';

-- The owner of target's row, only when relid is one of its inputs: the
-- trigger switches to that role, so a trigger someone else puts on their
-- own table gets nothing (the row is hidden from the writer by row-level
-- security; this reads it as the extension's owner and says no more).
CREATE FUNCTION mln._datalog_owner(target name, relid oid) RETURNS regrole
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT m.owner FROM mln.datalog_maintained m WHERE m.target_schema = target AND relid = ANY (m.inputs)
$$;
COMMENT ON FUNCTION mln._datalog_owner(name, oid) IS
  'internal: the owner of a maintained Datalog program, for a table it reads (its triggers run the program as that role)';

-- Registers target's program (mln.datalog calls it after writing the
-- tables): its row, and three triggers per input table (transition tables
-- need one event each) and one for TRUNCATE, replacing earlier ones.
CREATE FUNCTION mln._datalog_maintain(target name, program text, options jsonb, inputs oid[]) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  t oid;
  base text := 'mln_datalog_' || (SELECT oid FROM pg_namespace WHERE nspname = target)::text;
BEGIN
  FOREACH t IN ARRAY inputs LOOP
    IF (SELECT relkind FROM pg_class WHERE oid = t) NOT IN ('r', 'p') THEN
      RAISE EXCEPTION 'maintain: % is not a table', t::regclass
        USING HINT = 'a maintained program reads tables, whose changes triggers see; read a view''s tables instead',
              ERRCODE = 'wrong_object_type';
    END IF;
    IF NOT has_table_privilege(t, 'TRIGGER') THEN
      RAISE EXCEPTION 'maintain: permission denied to create triggers on %', t::regclass
        USING HINT = 'a maintained program''s triggers go on its input tables: their owner, or a role with the TRIGGER privilege, registers it',
              ERRCODE = 'insufficient_privilege';
    END IF;
  END LOOP;
  PERFORM mln.datalog_stop(target, quiet => true);
  INSERT INTO mln.datalog_maintained (target_schema, program, options, inputs)
    VALUES (target, program, coalesce(options, '{}') - 'maintain', inputs);
  FOR t IN SELECT DISTINCT u FROM unnest(inputs) u LOOP
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %s REFERENCING NEW TABLE AS pg_mln_new_rows '
                   'FOR EACH STATEMENT EXECUTE FUNCTION mln._datalog_changed(%L)', base || '_i', t::regclass, target);
    EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON %s REFERENCING OLD TABLE AS pg_mln_old_rows NEW TABLE AS '
                   'pg_mln_new_rows FOR EACH STATEMENT EXECUTE FUNCTION mln._datalog_changed(%L)', base || '_u',
                   t::regclass, target);
    EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON %s REFERENCING OLD TABLE AS pg_mln_old_rows '
                   'FOR EACH STATEMENT EXECUTE FUNCTION mln._datalog_changed(%L)', base || '_d', t::regclass, target);
    EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION mln._datalog_changed(%L)',
                   base || '_t', t::regclass, target);
  END LOOP;
END $$;
COMMENT ON FUNCTION mln._datalog_maintain(name, text, jsonb, oid[]) IS
  'internal: registers a maintained Datalog program and puts its triggers on its input tables';

CREATE FUNCTION mln.datalog_stop(target_schema name, quiet boolean DEFAULT false) RETURNS boolean
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  m mln.datalog_maintained;
  t oid;
  base text := 'mln_datalog_' || (SELECT oid FROM pg_namespace WHERE nspname = target_schema)::text;
  s text;
BEGIN
  SELECT * INTO m FROM mln.datalog_maintained d WHERE d.target_schema = datalog_stop.target_schema FOR UPDATE;
  IF NOT FOUND THEN
    IF NOT quiet THEN
      RAISE NOTICE 'no maintained Datalog program writes schema "%"', target_schema;
    END IF;
    RETURN false;
  END IF;
  FOR t IN SELECT DISTINCT u FROM unnest(m.inputs) u WHERE EXISTS (SELECT 1 FROM pg_class WHERE oid = u) LOOP
    FOREACH s IN ARRAY ARRAY['_i', '_u', '_d', '_t'] LOOP
      EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', base || s, t::regclass);
    END LOOP;
  END LOOP;
  DELETE FROM mln.datalog_maintained d WHERE d.target_schema = datalog_stop.target_schema;
  RETURN true;
END $$;
COMMENT ON FUNCTION mln.datalog_stop(name, boolean) IS
  'stops maintaining a target schema''s Datalog outputs (its tables stay as they are): drops the triggers on its '
  'input tables and its row of mln.datalog_maintained; false when none was maintained';

-------------------------------------------------------------------------------
-- The worker role
-------------------------------------------------------------------------------
-- A worker logged in as a member of mln_worker claims every program's jobs,
-- reads their networks and writes their answers (the policies below; program
-- schemas are opened to it by mln._grant_worker), and has no other right: no
-- superuser, no access to the users' own tables.  A role is global to the
-- cluster: it is created once, kept by DROP EXTENSION, and not made at all
-- when the installing role may not create roles (the worker must then be a
-- superuser or a member of the program owners).
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
  FOREACH t IN ARRAY ARRAY['programs', 'predicates', 'clauses', 'jobs', 'learn_iterations', 'weight_history',
                           'learned_rules', 'problog_ground', 'problog_results', 'rules_input'] LOOP
    EXECUTE format('CREATE POLICY worker_all ON mln.%I TO mln_worker USING (true) WITH CHECK (true)', t);
  END LOOP;
  GRANT SELECT, INSERT, UPDATE, DELETE ON mln.jobs TO mln_worker;
END $$;

-------------------------------------------------------------------------------
-- Follow mode (issue #62): docs/live.md, "Follow mode"
-------------------------------------------------------------------------------
-- mln.follow(name) starts a background process (extension/pg/follow.cpp)
-- that runs as the role calling it and keeps the program's answer current:
-- every `every` it grounds the program again where a table it was grounded
-- from changed (through the live state it keeps) and queues a job of `task`
-- with `options` for mln_worker.  Its row here is its configuration and
-- what it did last; deleting the row (mln.unfollow, mln.drop_program) ends
-- it.
CREATE TABLE mln.followers (
  program      text PRIMARY KEY REFERENCES mln.programs (name) ON DELETE CASCADE,
  owner        regrole NOT NULL DEFAULT current_user::regrole,
  task         text NOT NULL DEFAULT 'map' CHECK (task IN ('map', 'marginal', 'dual')),
  options      jsonb NOT NULL DEFAULT '{}',
  every        interval NOT NULL DEFAULT '100 ms',
  pid          int,
  started_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
  refreshed_at timestamptz,
  last_job     bigint,
  error        text
);
COMMENT ON TABLE mln.followers IS
  'programs whose answer a background process keeps current (mln.follow): its task, options and interval, its '
  'process, when it last grounded the program again, the job it queued, and the last error (it tries again)';
ALTER TABLE mln.followers ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_followers ON mln.followers USING (EXISTS (SELECT 1 FROM mln.programs p WHERE p.name = program));
GRANT SELECT, INSERT, UPDATE, DELETE ON mln.followers TO PUBLIC;

CREATE FUNCTION mln._follow_start(program text) RETURNS int
  AS 'MODULE_PATHNAME', 'mln_follow_start' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION mln._follow_start(text) IS
  'internal: called by mln.follow: starts the follower of a program (its row just inserted) as the current role';

CREATE FUNCTION mln.follow(name text, task text DEFAULT 'map', options jsonb DEFAULT '{}',
                           every interval DEFAULT '100 ms') RETURNS int
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE
  r mln.programs;
  f mln.followers;
  p int;
BEGIN
  IF NOT (SELECT rolcanlogin FROM pg_roles WHERE rolname = current_user) THEN
    RAISE EXCEPTION 'mln.follow: role "%" cannot log in, and the follower connects as it', current_user
      USING ERRCODE = 'insufficient_privilege', HINT = 'follow it as a role with LOGIN that may act on the program';
  END IF;
  r := mln._program(name);
  IF task NOT IN ('map', 'marginal', 'dual') THEN
    RAISE EXCEPTION 'mln.follow: task must be map, marginal or dual, not "%"', task USING ERRCODE = 'invalid_parameter_value';
  END IF;
  PERFORM mln._check_infer_options(task, options);
  IF every < interval '10 ms' OR every > interval '1 day' THEN
    RAISE EXCEPTION 'mln.follow: every must be from 10 ms to 1 day, not %', every USING ERRCODE = 'invalid_parameter_value';
  END IF;
  SELECT * INTO f FROM mln.followers x WHERE x.program = r.name;
  IF FOUND AND EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = f.pid AND a.backend_type = 'mln follow') THEN
    RAISE EXCEPTION 'program "%" is followed already (process %)', r.name, f.pid
      USING ERRCODE = 'object_in_use', HINT = 'mln.unfollow(name) ends it';
  END IF;
  DELETE FROM mln.followers x WHERE x.program = r.name;
  INSERT INTO mln.followers (program, task, options, every) VALUES (r.name, follow.task, follow.options, follow.every);
  p := mln._follow_start(r.name);
  UPDATE mln.followers x SET pid = p WHERE x.program = r.name;
  RETURN p;
END $$;
COMMENT ON FUNCTION mln.follow(text, text, jsonb, interval) IS
  'keeps a program''s answer current: a background process, running as the calling role, grounds it again after '
  'each committed change to a table it was grounded from and queues a job of task with options for mln_worker '
  '(every: how often it looks); returns the process id.  mln.unfollow ends it';

CREATE FUNCTION mln.unfollow(name text) RETURNS boolean
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE r mln.programs := mln._program(name);
BEGIN
  DELETE FROM mln.followers x WHERE x.program = r.name;
  RETURN FOUND;
END $$;
COMMENT ON FUNCTION mln.unfollow(text) IS
  'ends the follower of a program (at its next look, once this transaction commits); false when there was none';
