-- pg_mln 0.5.0 -> 0.6.0: jobs that only their program's owners can queue,
-- a quick start that cannot hang, and results that say when there are none.
--
-- * mln.jobs: a job is queued only on a program its role owns (or is a
--   member of the owner of), with options mln.infer / mln.learn_weights
--   accept, as that role; a plain role never changes what defines a job
--   (program, task, options, owner) or the outcome of one that ended.
--   Checked by a trigger on every path, a direct INSERT or UPDATE
--   included, and by column privileges.
-- * mln.wait refuses at once to wait for a job its own transaction queued
--   (no worker can see it before the commit), says when no worker is
--   connected, and ends when its client goes away.  CALL mln.solve(...) queues, commits and waits in one call.
-- * mln.map raises for a program with no MAP answer since its grounding,
--   as mln.marginals does.
-- * mln.infer refuses a network grounded for weight learning (a learning
--   job that was cancelled or failed leaves it in place).
-- * mln.create_program: two sessions creating one name at once get the
--   same "already exists" error; a rule of weight zero is dropped with a
--   NOTICE; mln.drop_program is quiet about the objects it drops with the
--   program's schema.
-- * mln.learn_iterations.note (and mln.learning_trace.note): why a
--   learning step was taken back.
\echo Use "ALTER EXTENSION pg_mln UPDATE TO '0.6.0'" to load this file. \quit

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

-- Every insert or update of mln.jobs, whoever makes it.
CREATE FUNCTION mln._jobs_check() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF NOT EXISTS (SELECT 1 FROM mln.programs p WHERE p.name = NEW.program AND pg_has_role(p.owner, 'MEMBER')) THEN
      RAISE EXCEPTION 'program "%" does not exist', NEW.program
        USING ERRCODE = 'undefined_object', HINT = 'create it with mln.create_program(name, program)';
    END IF;
    IF NOT pg_has_role(NEW.owner, 'MEMBER') THEN
      RAISE EXCEPTION 'a job''s owner is the role that queues it' USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NEW.task = 'learn' THEN
      PERFORM mln._check_learn_options(NEW.options);
    ELSE
      PERFORM mln._check_infer_options(NEW.task, NEW.options);
    END IF;
    IF NOT mln._is_worker() AND (NEW.status <> 'queued' OR NEW.worker IS NOT NULL OR NEW.attempts <> 0) THEN
      RAISE EXCEPTION 'a new job is queued, with no worker' USING ERRCODE = 'insufficient_privilege',
        HINT = 'queue jobs with mln.infer or mln.learn_weights';
    END IF;
    PERFORM set_config('pg_mln.jobs_this_transaction',
                       concat_ws(',', nullif(current_setting('pg_mln.jobs_this_transaction', true), ''), NEW.id), true);
    RETURN NEW;
  END IF;
  -- An update by a plain role (its own job: row-level security): what
  -- defines the job stays, and a job that ended stays ended.  Its
  -- command line's in-process worker runs the job as that role.
  IF NOT mln._is_worker() THEN
    IF NEW.program <> OLD.program OR NEW.task <> OLD.task OR NEW.options <> OLD.options OR NEW.owner <> OLD.owner THEN
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

-- Privileges: a queueing call names the program, task and options; an
-- update (a cancel, a wait, a command line's in-process worker) writes
-- anything but those and the owner.
REVOKE INSERT, UPDATE ON mln.jobs FROM PUBLIC;
GRANT INSERT (program, task, options, samples_total, iterations_total) ON mln.jobs TO PUBLIC;
DO $$
BEGIN
  EXECUTE (SELECT format('GRANT UPDATE (%s) ON mln.jobs TO PUBLIC', string_agg(quote_ident(attname), ', ' ORDER BY attnum))
             FROM pg_attribute
            WHERE attrelid = 'mln.jobs'::regclass AND attnum > 0 AND NOT attisdropped
              AND attname NOT IN ('id', 'program', 'task', 'options', 'owner', 'created_at'));
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'mln_worker') THEN
    GRANT SELECT, INSERT, UPDATE, DELETE ON mln.jobs TO mln_worker;
  END IF;
END $$;

-- The state of a program's network: what mln.infer and mln.learn_weights check.
CREATE FUNCTION mln.program_state(name text) RETURNS text
LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE r mln.programs;
BEGIN
  r := mln._program(name);
  IF to_regclass(format('%I._clauses', r.schema_name)) IS NULL THEN
    RETURN 'not grounded';
  ELSIF r.grounded_at IS NULL THEN
    RETURN 'stale';
  ELSIF coalesce((r.ground_stats->>'learning')::boolean, false) THEN
    RETURN 'grounded for learning';
  END IF;
  RETURN 'grounded';
END $$;
COMMENT ON FUNCTION mln.program_state(text) IS
  'the state of a program''s ground network: not grounded; grounded (for inference); grounded for learning '
  '(by mln.learn_weights; mln.ground grounds it for inference again); stale (evidence, bindings or weights changed since)';

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
  PERFORM mln._grant_worker(r.schema_name);
  INSERT INTO mln.jobs(program, task, options, samples_total)
  VALUES (name, task, options,
          CASE WHEN task <> 'map' THEN coalesce(mln._infer_number(options, 'samples'), 100) END)
  RETURNING id INTO j;
  PERFORM pg_notify('mln_jobs', j::text);
  RETURN j;
END $$;

-- The wait checks its client every second while it polls: a client that
-- went away (killed, timed out) ends it, as a cancel does, instead of
-- leaving a backend polling for a job nobody waits for.
CREATE OR REPLACE FUNCTION mln.wait(job bigint, timeout interval DEFAULT NULL) RETURNS jsonb
LANGUAGE plpgsql VOLATILE SET client_connection_check_interval = 1000 AS $$
DECLARE
  j mln.jobs;
  started timestamptz := clock_timestamp();
  deadline timestamptz := clock_timestamp() + coalesce(timeout, interval '100 years');
  told boolean := false;
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
    PERFORM pg_sleep(0.02);
  END LOOP;
  UPDATE mln.jobs SET wait_ok_at = clock_timestamp() WHERE id = job;
  RETURN mln._job_json(j);
END $$;
COMMENT ON FUNCTION mln.wait(bigint, interval) IS
  'waits for a job (up to timeout) and returns its status, task, best cost, hard clauses violated, flips, samples drawn and samples_total, '
  'average cost, seconds and progress; cancelling the wait cancels the job; refuses a job queued by the same transaction';

-- One call that queues, commits and waits: a procedure may commit, so the
-- worker sees the job; it cannot run inside a transaction block.
CREATE PROCEDURE mln.solve(name text, task text DEFAULT 'map', options jsonb DEFAULT '{}',
                           timeout interval DEFAULT NULL, INOUT result jsonb DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE j bigint;
BEGIN
  IF task = 'learn' THEN
    j := mln.learn_weights(name, options);
  ELSE
    j := mln.infer(name, task, options);
  END IF;
  COMMIT;
  result := mln.wait(j, timeout);
END $$;
COMMENT ON PROCEDURE mln.solve(text, text, jsonb, interval, jsonb) IS
  'queues a job (task map, marginal, dual, or learn: mln.learn_weights), commits it and waits for it; returns what '
  'mln.wait returns.  CALL it outside a transaction block';

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
  PERFORM mln._grant_worker(r.schema_name);
  INSERT INTO mln.jobs(program, task, options, iterations_total)
  VALUES (name, 'learn', options, coalesce(mln._infer_number(options, 'iterations'), 100))
  RETURNING id INTO j;
  PERFORM pg_notify('mln_jobs', j::text);
  RETURN j;
END $$;

-- A MAP answer exists once a MAP or dual job has written it since the
-- program was grounded: the worker makes map_result then, and grounding
-- drops it with the network.
CREATE OR REPLACE FUNCTION mln.map(name text)
  RETURNS TABLE (predicate text, arguments text[], truth boolean)
LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE r mln.programs;
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
  RETURN QUERY EXECUTE mln._map_sql(name, r.schema_name) || ' ORDER BY 1, 2';
END $$;
COMMENT ON FUNCTION mln.map(text) IS
  'MAP truth of the query atoms (true query evidence included), from the last MAP or dual job since grounding; '
  'an error when there is none';

-- Quiet: the schema's objects go with it, as the function's comment says.
ALTER FUNCTION mln.drop_program(text) SET client_min_messages = warning;

-- As in 0.2.0, and two sessions creating one name at once: the second
-- waits for the first and then gets the same error as if it came after.
CREATE OR REPLACE FUNCTION mln.create_program(name text, program text) RETURNS void
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

-- As in 0.2.0, with hints that cannot hang (mln.wait(mln.infer(...)) in one
-- statement waits for a job no worker can see).
CREATE OR REPLACE FUNCTION mln._marginal_program(p_name text) RETURNS mln.programs
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

-- Why each learning step was taken or taken back (the trust region's
-- verdict: the objective's actual change against the model's prediction).
ALTER TABLE mln.learn_iterations ADD COLUMN note text;
COMMENT ON COLUMN mln.learn_iterations.note IS
  'why the step was taken back (or its diagnosis), as the learner wrote it; NULL for a step taken as predicted';
CREATE OR REPLACE VIEW mln.learning_trace WITH (security_invoker = true) AS
  SELECT i.program, i.job, i.iteration, c.idx + 1 AS clause_no, c.clause, u.weight, i.objective, i.accepted, i.note
    FROM mln.learn_iterations i
   CROSS JOIN LATERAL unnest(i.clauses, i.weights) AS u(idx, weight)
    JOIN mln.clauses c ON c.program = i.program AND c.idx = u.idx;

-- How a MAP answer was reached: seconds to the first whole answer and to
-- the final bound, and why the search ended.
ALTER TABLE mln.jobs ADD COLUMN first_answer_seconds float8, ADD COLUMN bound_seconds float8, ADD COLUMN stop_reason text;
COMMENT ON COLUMN mln.jobs.stop_reason IS
  'MAP: why the search ended: proven optimal, within the gap tolerance, exact path budget spent, timeout, cancelled, search finished';
GRANT UPDATE (first_answer_seconds, bound_seconds, stop_reason) ON mln.jobs TO PUBLIC;

CREATE OR REPLACE FUNCTION mln._job_json(j mln.jobs) RETURNS jsonb LANGUAGE sql STABLE AS $$
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
                                             WHEN j.samples_total > 0
                                             THEN least(1.0, coalesce(j.samples, 0)::float8 / j.samples_total)
                                             WHEN j.iterations_total > 0
                                             THEN least(1.0, coalesce(j.iterations, 0)::float8 / j.iterations_total) END,
                            'device', j.device, 'gpu_memory_bytes', j.gpu_memory_bytes, 'error', j.error,
                            'warnings', to_jsonb(j.warnings))
$$;

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
         j.stop_reason, j.first_answer_seconds, j.bound_seconds
    FROM mln.jobs j;

-- As in 0.4.0, and gap_tolerance (solver auto: the exact path runs only
-- while the answer's gap to its bound is above it) and cpu_walk auto.
CREATE OR REPLACE FUNCTION mln._check_infer_options(task text, options jsonb) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  common   text[] := ARRAY['max_flips', 'timeout', 'seed', 'threads', 'device', 'random_step',
                           'skip_components_without_query', 'exact_max_atoms', 'partitions'];
  map_only text[] := ARRAY['max_tries', 'dont_break', 'solver', 'ilp_seconds', 'cpu_walk', 'rounds', 'gap_tolerance'];
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
     AND (jsonb_typeof(options->'cpu_walk') <> 'string' OR options->>'cpu_walk' NOT IN ('auto', 'walksat', 'weighted')) THEN
    RAISE EXCEPTION 'invalid cpu_walk %', options->'cpu_walk' USING ERRCODE = 'invalid_parameter_value',
      HINT = 'CPU walks are auto (the default: weighted for components of 50,000 atoms or more, walksat below), '
             'walksat (Tuffy''s MaxWalkSAT) and weighted (the GPU''s weighted walk on CPU threads)';
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
      ('rounds',         true,  1,           true,  1000,                'an integer from 1 to 1000 (rounds over the parts that share clauses)'),
      ('gap_tolerance',  false, 0,           true,  1,                   'a fraction within [0, 1]: solver auto stops at an answer proven within it (default 0.005)')
    ) t(name, integral, lo, lo_incl, hi, what) LOOP
    PERFORM mln._check_option_range(options, 'inference', lim.name, lim.integral, lim.lo, lim.lo_incl, lim.hi, lim.what);
  END LOOP;
END $$;
