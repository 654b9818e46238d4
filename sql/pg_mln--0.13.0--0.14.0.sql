-- pg_mln 0.13.0 -> 0.14.0
\echo Use "ALTER EXTENSION pg_mln UPDATE TO '0.14.0'" to load this file. \quit

-- == An answer knows whether it follows its tables (issue #60) ==
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
ALTER TABLE mln.programs ADD COLUMN ground_snapshot pg_snapshot,
                         ADD COLUMN ground_xid xid8,
                         ADD COLUMN ground_args jsonb;
COMMENT ON COLUMN mln.programs.ground_snapshot IS
  'the snapshot the last grounding read its tables under (a change it does not see makes the network stale)';
COMMENT ON COLUMN mln.programs.ground_args IS 'the last grounding''s arguments (CALL mln.solve grounds a stale network again with them)';

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
-- not seen.  Returns that snapshot.
CREATE FUNCTION mln._begin_ground(prog text) RETURNS text
LANGUAGE plpgsql VOLATILE STRICT AS $$
BEGIN
  PERFORM pg_advisory_xact_lock_shared(20261202, 0);
  PERFORM mln._track_sources(prog);
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

CREATE FUNCTION mln.sources(name text)
  RETURNS TABLE (relation regclass, tracked boolean, changed boolean, why text)
LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
  r mln.programs := mln._program(name);
  ch oid[];
BEGIN
  ch := CASE WHEN r.ground_snapshot IS NOT NULL
             THEN mln._changed_tables(ARRAY(SELECT s.relid FROM mln.program_sources s WHERE s.program = r.name),
                                      r.ground_snapshot, r.ground_xid)
        END;
  RETURN QUERY SELECT s.relid::regclass, s.tracked,
                      CASE WHEN s.tracked THEN s.relid = ANY(ch) OR NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = s.relid) END,
                      s.why
                 FROM mln.program_sources s WHERE s.program = r.name ORDER BY s.relid::regclass::text;
END $$;
COMMENT ON FUNCTION mln.sources(text) IS
  'the tables a program''s last grounding read its evidence from: whether their changes are tracked (why not), '
  'and whether one changed since (NULL when not tracked)';

CREATE OR REPLACE FUNCTION mln.program_state(name text) RETURNS text
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

DROP FUNCTION mln.map(text);
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

DROP FUNCTION mln.marginals(text);
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

-- As in 0.11.0; a map, marginal or dual job on a stale network grounds it
-- again first, with the last grounding's arguments.
CREATE OR REPLACE PROCEDURE mln.solve(name text, task text DEFAULT 'map', options jsonb DEFAULT '{}',
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
      PERFORM mln.ground(name, coalesce(r.ground_args->>'device', 'auto'),
                         coalesce((r.ground_args->>'activate_all')::boolean, false),
                         ARRAY(SELECT jsonb_array_elements_text(coalesce(r.ground_args->'closed_world', '[]'))));
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

-- As in 0.1.0; and the relation's tables get the change trigger.
CREATE OR REPLACE FUNCTION mln.bind_predicate(name text, predicate text, relation regclass, columns text[],
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
