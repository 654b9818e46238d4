-- pg_mln 0.16.0 -> 0.17.0
\echo Use "ALTER EXTENSION pg_mln UPDATE TO '0.17.0'" to load this file. \quit

-- The MAP job after a change (issue #62): mln.ground carries the last MAP
-- answer to the new network itself (<schema>._carried, with its cost and
-- bound in ground_stats' carried), and after a live update the atoms the
-- change touched, so that the job searches only their components.  The
-- warm start 0.16.0 made here (<schema>._warm, the true query atoms by
-- predicate and arguments) goes; a worker still reads a _warm left by a
-- grounding under 0.16.0.
-- The MAP job that follows starts from the previous answer (issue #62):
-- mln.ground itself carries the last MAP answer to the new network
-- (<schema>._carried, with its cost and bound in ground_stats' carried;
-- extension/pg/live_ground.hpp), and where the live state was updated,
-- the atoms the change touched, so that the job searches only their
-- components.
CREATE OR REPLACE FUNCTION mln._reground(r mln.programs) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM mln.ground(r.name, coalesce(r.ground_args->>'device', 'auto'),
                     coalesce((r.ground_args->>'activate_all')::boolean, false),
                     ARRAY(SELECT jsonb_array_elements_text(coalesce(r.ground_args->'closed_world', '[]'))));
END $$;
COMMENT ON FUNCTION mln._reground(mln.programs) IS
  'internal: grounds a program again with its last grounding''s arguments (mln.refresh, CALL mln.solve); mln.ground '
  'carries the last MAP answer to the next MAP job';


-- mln.wait looks at the job every 2 ms for the first 100 ms, then every
-- 20 ms (it looked every 20 ms).
CREATE OR REPLACE FUNCTION mln.wait(job bigint, timeout interval DEFAULT NULL) RETURNS jsonb
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
