-- pg_mln 0.14.0 -> 0.15.0
\echo Use "ALTER EXTENSION pg_mln UPDATE TO '0.15.0'" to load this file. \quit

-- == One relative gap (issue #61) ==
-- The gap the job tables show is the one the solver stops on
-- (solver/core/base/gap.hpp): (cost - bound) / max(|cost|, 1), 0 once the
-- bound reaches the cost.  It was (cost - bound) / |cost|: a cost of 0.5
-- with a bound of 0.4 showed 20% where the solver reasoned with 10%.
-- tests/data/gap_cases.tsv pins both sides.
CREATE OR REPLACE FUNCTION mln._gap(best_cost float8, bound float8) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN best_cost IS NULL OR bound IS NULL THEN NULL
              WHEN best_cost <= bound THEN 0::float8
              ELSE (best_cost - bound) / greatest(abs(best_cost), 1) END
$$;
COMMENT ON FUNCTION mln._gap(float8, float8) IS
  'internal: the relative gap (best_cost - bound) / max(|best_cost|, 1) of a MAP answer, 0 once the bound reaches it';

-- == Bringing a network up to date (issue #62, first step) ==
-- mln.refresh(name) brings a stale network up to date without solving it;
-- CALL mln.solve does the same before it queues the job.  Today both ground
-- the program again, with its last grounding's arguments: the grounding of
-- only what a change touches (issue #62) will take its place here.
-- The MAP job that follows starts from the previous answer (issue #62):
-- before grounding again, the true query atoms of the last MAP answer are
-- kept by predicate and arguments; after it, their new ids go to
-- <schema>._warm, which the worker reads as the walk's starting state (the
-- atoms a change left alone start where they were).  Every grounding drops
-- _warm first (mln._begin_ground), so it never outlives its network.
CREATE FUNCTION mln._reground(r mln.programs) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE prev jsonb;
BEGIN
  IF to_regclass(format('%I._map', r.schema_name)) IS NOT NULL
     AND to_regclass(format('%I.map_result', r.schema_name)) IS NOT NULL THEN
    EXECUTE 'SELECT jsonb_agg(jsonb_build_array(q.predicate, q.arguments)) FROM (' || mln._map_sql(r.name, r.schema_name)
            || ') q WHERE q.truth' INTO prev;
  END IF;
  PERFORM mln.ground(r.name, coalesce(r.ground_args->>'device', 'auto'),
                     coalesce((r.ground_args->>'activate_all')::boolean, false),
                     ARRAY(SELECT jsonb_array_elements_text(coalesce(r.ground_args->'closed_world', '[]'))));
  IF prev IS NOT NULL THEN
    EXECUTE format('CREATE TABLE %I._warm (atom int4 PRIMARY KEY)', r.schema_name);
    EXECUTE format('INSERT INTO %I._warm SELECT DISTINCT a.id FROM mln.ground_atoms($1) a '
                   'JOIN jsonb_array_elements($2) p(x) ON a.predicate = p.x->>0 '
                   'AND a.arguments = ARRAY(SELECT jsonb_array_elements_text(p.x->1))', r.schema_name)
      USING r.name, prev;
    PERFORM mln._grant_worker(r.schema_name);
  END IF;
END $$;
COMMENT ON FUNCTION mln._reground(mln.programs) IS
  'internal: grounds a program again with its last grounding''s arguments (mln.refresh, CALL mln.solve), the last '
  'MAP answer''s true atoms kept in <schema>._warm as the next MAP job''s start';

-- As in 0.14.0, and a grounding drops the warm start of the network it replaces.
CREATE OR REPLACE FUNCTION mln._begin_ground(prog text) RETURNS text
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

-- As in 0.14.0, and `changes`: how many committed transactions wrote the
-- table since the grounding (NULL when its changes are not tracked).
DROP FUNCTION mln.sources(text);
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

-- As in 0.14.0, through mln._reground.
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
      PERFORM mln._reground(r);
    END IF;
    j := mln.infer(name, task, options);
  END IF;
  COMMIT;
  result := mln.wait(j, timeout);
END $$;


-- == One default per option (issue #61) ==
-- A marginal job's samples_total came from a 100 written here; now from the
-- options table (mln/options.hpp, through mln.options()).
CREATE FUNCTION mln._option_default(option text, for_task text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT o."default" FROM mln.options() o WHERE o.name = option AND o.task = for_task
$$;
COMMENT ON FUNCTION mln._option_default(text, text) IS
  'internal: the default of an option of a task, from the options table (mln.options())';

-- As in 0.13.0, with the iterations default from the table (it was a 100
-- written here).
CREATE OR REPLACE FUNCTION mln.learn_weights(name text, options jsonb DEFAULT '{}', device text DEFAULT 'auto') RETURNS bigint
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

-- As in 0.13.0, with the samples default from the table.
CREATE OR REPLACE FUNCTION mln.infer(name text, task text DEFAULT 'map', options jsonb DEFAULT '{}') RETURNS bigint
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
