-- pg_mln 0.12.0 -> 0.13.0
\echo Use "ALTER EXTENSION pg_mln UPDATE TO '0.13.0'" to load this file. \quit

-- == A rules job's inputs are read when it is queued (issue #59) ==
-- mln.learn_rules_job reads what the job learns from (each predicate's
-- atoms, the symbols) in the queueing backend, with the caller's
-- privileges, and stores it here as bytes (extension/rules/
-- evidence_snapshot.hpp), as mln.problog_job stores its ground program.
-- The worker then reads no table of the program for a rules job, and
-- queueing one grants role mln_worker nothing (it granted SELECT on every
-- evidence table, whatever a role had put under that name).
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
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'mln_worker') THEN
    CREATE POLICY worker_all ON mln.rules_input TO mln_worker USING (true) WITH CHECK (true);
  END IF;
END $$;

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

CREATE OR REPLACE FUNCTION mln.learn_rules_job(program text, target text, options jsonb DEFAULT '{}') RETURNS bigint
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

-- The grants earlier versions made for rules jobs are taken back: the
-- evidence tables of every program (the worker keeps its grants on the
-- network and result tables, which it checks before each read or write).
DO $$
DECLARE t record;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'mln_worker') THEN
    RETURN;
  END IF;
  FOR t IN SELECT p.schema_name, d.name FROM mln.programs p JOIN mln.predicates d ON d.program = p.name
            WHERE to_regclass(format('%I.%I', p.schema_name, d.name)) IS NOT NULL LOOP
    BEGIN
      EXECUTE format('REVOKE SELECT ON %I.%I FROM mln_worker', t.schema_name, t.name);
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE WARNING 'pg_mln: could not revoke mln_worker''s SELECT on %.%: %', t.schema_name, t.name, SQLERRM;
    END;
  END LOOP;
END $$;

-- == Queueing a job grants nothing ==
-- mln.ground (and the learning grounding) opens the network and result
-- tables it makes to role mln_worker (mln._grant_worker, as it has since
-- 0.2.0); mln.infer and mln.learn_weights no longer do it when a job is
-- queued.  Their bodies are 0.6.0's otherwise.
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
          CASE WHEN task <> 'map' THEN coalesce(mln._infer_number(options, 'samples'), 100) END)
  RETURNING id INTO j;
  PERFORM pg_notify('mln_jobs', j::text);
  RETURN j;
END $$;

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
  VALUES (name, 'learn', options, coalesce(mln._infer_number(options, 'iterations'), 100))
  RETURNING id INTO j;
  PERFORM pg_notify('mln_jobs', j::text);
  RETURN j;
END $$;
