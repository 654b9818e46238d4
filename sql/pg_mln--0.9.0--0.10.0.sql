-- pg_mln 0.9.0 -> 0.10.0
\echo Use "ALTER EXTENSION pg_mln UPDATE TO '0.10.0'" to load this file. \quit

-- == Rule learning jobs (issue #42) ==
-- docs/rules.md ("Rule learning jobs").
--
-- * mln.learn_rules_job(program, target, options) queues what
--   mln.learn_rules_from runs in the calling backend as a job of task
--   'rules' for the worker (mln.wait, mln.cancel, mln.job_progress and
--   CALL mln.solve(program, 'rules', '{"target": ...}') as for any job).
--   Its options, mln.learn_rules's, and the target are checked when it is
--   queued, by the reader the worker reads them with.  The worker reads the
--   program's evidence and builds the task the backend's function builds
--   (one builder, extension/rules/program_task.*), reports the rule, depth
--   and candidates as it searches, stops between depths when cancelled,
--   and writes the rules to mln.learned_rules with the job's final row in
--   one transaction: a failed or cancelled job writes none.
-- * mln.add_learned_rules(program, job) appends a finished job's rules to
--   the program as weighted MLN formulas (wpll: their learned weights;
--   coverage: the log-odds of their coverage) in one statement, recorded
--   as a weight version of source 'rules'; mln.restore_weights of a version
--   from before gives them weight 0.
-- * mln.learned_rule_coverage: each learned rule with its coverage, score,
--   precision, the weight it has in a program, and the version that added it.

ALTER TABLE mln.jobs DROP CONSTRAINT jobs_task_check;
ALTER TABLE mln.jobs ADD CONSTRAINT jobs_task_check CHECK (task IN ('map', 'marginal', 'dual', 'learn', 'rules'));
-- A rule learning job's progress: the rule searched is in iterations (of
-- max_rules, in iterations_total), the refinement depth and candidates here.
ALTER TABLE mln.jobs ADD COLUMN rule_depth int, ADD COLUMN candidates bigint;
COMMENT ON COLUMN mln.jobs.rule_depth IS 'rules jobs: the refinement depth of the rule searched (iterations: that rule)';
COMMENT ON COLUMN mln.jobs.candidates IS 'rules jobs: candidate rules scored so far';
GRANT UPDATE (rule_depth, candidates) ON mln.jobs TO PUBLIC;

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
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'mln_worker') THEN
    CREATE POLICY worker_all ON mln.learned_rules TO mln_worker USING (true) WITH CHECK (true);
  END IF;
END $$;

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

CREATE FUNCTION mln.learn_rules_job(program text, target text, options jsonb DEFAULT '{}') RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  r mln.programs;
  opts jsonb := coalesce(options, '{}');
  t text;
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
  PERFORM mln._grant_worker(r.schema_name);
  -- The worker reads the program's evidence tables for this job.
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'mln_worker') THEN
    FOR t IN SELECT p.name FROM mln.predicates p WHERE p.program = r.name LOOP
      EXECUTE format('GRANT SELECT ON %I.%I TO mln_worker', r.schema_name, t);
    END LOOP;
  END IF;
  INSERT INTO mln.jobs(program, task, options, iterations_total)
  VALUES (program, 'rules', opts, coalesce((opts->>'max_rules')::int, 10))
  RETURNING id INTO j;
  PERFORM pg_notify('mln_jobs', j::text);
  RETURN j;
END $$;
COMMENT ON FUNCTION mln.learn_rules_job(text, text, jsonb) IS
  'queues a rule learning job: what mln.learn_rules_from(program, target, options) returns, learned by a worker and '
  'written to mln.learned_rules when done; returns the job id (mln.wait, mln.cancel, mln.job_progress: the rule '
  'searched in iterations, rule_depth, candidates).  Options and target are checked now';

-- As in 0.6.0, and task 'rules' checked by mln._check_rules_job.
CREATE OR REPLACE FUNCTION mln._jobs_check() RETURNS trigger
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
    ELSIF NEW.task = 'rules' THEN
      PERFORM mln._check_rules_job(NEW.program, NEW.options);
    ELSE
      PERFORM mln._check_infer_options(NEW.task, NEW.options);
    END IF;
    IF NOT mln._is_worker() AND (NEW.status <> 'queued' OR NEW.worker IS NOT NULL OR NEW.attempts <> 0) THEN
      RAISE EXCEPTION 'a new job is queued, with no worker' USING ERRCODE = 'insufficient_privilege',
        HINT = 'queue jobs with mln.infer, mln.learn_weights or mln.learn_rules_job';
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

-- As in 0.6.0, and task 'rules': the target is options' "target".
CREATE OR REPLACE PROCEDURE mln.solve(name text, task text DEFAULT 'map', options jsonb DEFAULT '{}',
                                      timeout interval DEFAULT NULL, INOUT result jsonb DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE j bigint;
BEGIN
  IF task = 'learn' THEN
    j := mln.learn_weights(name, options);
  ELSIF task = 'rules' THEN
    j := mln.learn_rules_job(name, options->>'target', options - 'target');
  ELSE
    j := mln.infer(name, task, options);
  END IF;
  COMMIT;
  result := mln.wait(j, timeout);
END $$;
COMMENT ON PROCEDURE mln.solve(text, text, jsonb, interval, jsonb) IS
  'queues a job (task map, marginal, dual, learn: mln.learn_weights, or rules: mln.learn_rules_job with options'' '
  '"target"), commits it and waits for it; returns what mln.wait returns.  CALL it outside a transaction block';

-- As in 0.6.0, and a rules job's depth and candidates (columns are appended).
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
         j.stop_reason, j.first_answer_seconds, j.bound_seconds, j.rule_depth, j.candidates
    FROM mln.jobs j;
COMMENT ON VIEW mln.job_progress IS
  'jobs with their progress (MAP: best cost so far, flips/s, and when done the bound, gap and whether proven optimal; '
  'a job spread over workers: parts, rounds done, and its latest round''s parts with worker, device and flips/s; '
  'marginal: samples drawn of samples_total, samples/s; learn: iterations of iterations_total and the objective; '
  'rules: the rule searched in iterations (of max_rules), its rule_depth and the candidates scored)';

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

-- As in 0.2.0, and a clause the version does not list (added after it by
-- mln.add_learned_rules) gets weight 0, which has no effect, until a
-- version that lists it is restored.
CREATE OR REPLACE FUNCTION mln.restore_weights(name text, version int DEFAULT NULL) RETURNS int
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
