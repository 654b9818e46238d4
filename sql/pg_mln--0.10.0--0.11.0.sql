-- pg_mln 0.10.0 -> 0.11.0
\echo Use "ALTER EXTENSION pg_mln UPDATE TO '0.11.0'" to load this file. \quit

-- == ProbLog jobs (issue #43) ==
-- docs/problog.md ("Jobs").
--
-- * mln.problog_job(program, options) queues what mln.problog runs in the
--   calling backend as a job of task 'problog' for the worker (mln.wait,
--   mln.cancel, mln.job_progress as for any job; CALL mln.solve(program,
--   'problog', options)).  The program is parsed, checked and grounded when
--   it is queued, in the queueing backend (its tables are read with the
--   caller's privileges), and its options read by the reader mln.problog
--   and the worker read them with: a bad program or option is refused
--   before anything is queued, with mln.problog's messages.  The ground
--   program goes to the worker as bytes in mln.problog_ground.
-- * A problog job names no program of mln.programs: its program is its
--   ground program, so mln.jobs.program is NULL for it, and only for it.
-- * The worker samples where the job's options' "device" says (without
--   one: the queueing session's mln.device), reports the samples drawn and
--   accepted and the widest interval in mln.job_progress, stops between
--   batches when cancelled, and writes mln.problog_results with the job's
--   final row in one transaction: a failed or cancelled job writes none.

ALTER TABLE mln.jobs DROP CONSTRAINT jobs_task_check;
ALTER TABLE mln.jobs ADD CONSTRAINT jobs_task_check
  CHECK (task IN ('map', 'marginal', 'dual', 'learn', 'rules', 'problog'));
ALTER TABLE mln.jobs ALTER COLUMN program DROP NOT NULL;
ALTER TABLE mln.jobs ADD CONSTRAINT jobs_program_check CHECK ((program IS NULL) = (task = 'problog'));
COMMENT ON COLUMN mln.jobs.program IS 'the program the job runs on; NULL for a problog job (its program is its ground program)';
-- A problog job's progress: samples drawn in samples (of samples_total:
-- the fixed count or max_samples) and samples_per_s, and here the samples
-- that satisfy the evidence and the widest query interval.
ALTER TABLE mln.jobs ADD COLUMN accepted bigint, ADD COLUMN widest_interval float8;
COMMENT ON COLUMN mln.jobs.accepted IS 'problog jobs: samples drawn so far that satisfy the evidence';
COMMENT ON COLUMN mln.jobs.widest_interval IS
  'problog jobs: the widest 95% query interval so far (the stopping rule ends the job once it is at most delta)';
GRANT UPDATE (accepted, widest_interval) ON mln.jobs TO PUBLIC;

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
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'mln_worker') THEN
    CREATE POLICY worker_all ON mln.problog_ground TO mln_worker USING (true) WITH CHECK (true);
    CREATE POLICY worker_all ON mln.problog_results TO mln_worker USING (true) WITH CHECK (true);
  END IF;
END $$;

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

-- As in 0.10.0, and task 'problog': no program, options checked by
-- mln._check_problog_job; a program compared with IS DISTINCT FROM.
CREATE OR REPLACE FUNCTION mln._jobs_check() RETURNS trigger
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

-- As in 0.10.0, and task 'problog': `name` is the ProbLog program's text.
CREATE OR REPLACE PROCEDURE mln.solve(name text, task text DEFAULT 'map', options jsonb DEFAULT '{}',
                                      timeout interval DEFAULT NULL, INOUT result jsonb DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE j bigint;
BEGIN
  IF task = 'learn' THEN
    j := mln.learn_weights(name, options);
  ELSIF task = 'rules' THEN
    j := mln.learn_rules_job(name, options->>'target', options - 'target');
  ELSIF task = 'problog' THEN
    j := mln.problog_job(name, options);
  ELSE
    j := mln.infer(name, task, options);
  END IF;
  COMMIT;
  result := mln.wait(j, timeout);
END $$;
COMMENT ON PROCEDURE mln.solve(text, text, jsonb, interval, jsonb) IS
  'queues a job (task map, marginal, dual, learn: mln.learn_weights, rules: mln.learn_rules_job with options'' '
  '"target", or problog: mln.problog_job with the ProbLog program as name), commits it and waits for it; returns '
  'what mln.wait returns.  CALL it outside a transaction block';

-- As in 0.6.0, and a problog job's accepted samples and widest interval;
-- its progress is the larger of the samples drawn of samples_total and,
-- under the stopping rule, (delta / widest interval)^2: the width shrinks
-- as 1 / sqrt(samples).
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

-- As in 0.10.0, and a problog job's accepted samples and widest interval
-- (columns are appended).
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
