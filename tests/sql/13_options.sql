-- The job options table (0.7.0): mln.options() lists every option the
-- worker reads, and the checks mln.infer and mln.learn_weights run refuse
-- each kind of bad value, naming the option and what it may be.
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_mln;
SELECT plan(30);

-- The error (message, or 'hint') that a check raises for a task and its
-- options, NULL when it accepts them; task 'learn' runs the learning check.
CREATE FUNCTION pg_temp.refusal(task text, options jsonb, part text DEFAULT 'message') RETURNS text
LANGUAGE plpgsql AS $$
DECLARE m text; h text;
BEGIN
  IF task = 'learn' THEN
    PERFORM mln._check_learn_options(options);
  ELSE
    PERFORM mln._check_infer_options(task, options);
  END IF;
  RETURN NULL;
EXCEPTION WHEN invalid_parameter_value THEN
  GET STACKED DIAGNOSTICS m = MESSAGE_TEXT, h = PG_EXCEPTION_HINT;
  RETURN CASE part WHEN 'hint' THEN h ELSE m END;
END $$;

-- The job options' rows (the functions' options follow them, task datalog,
-- problog or rules: checked at the end).
CREATE VIEW pg_temp.job_options AS
  SELECT * FROM mln.options() WHERE task IN ('map', 'marginal', 'infer', 'learn', 'all');

-- A task that takes a row's option: the row's own, dual for every inference task.
CREATE FUNCTION pg_temp.task_of(row_task text) RETURNS text LANGUAGE sql AS $$
  SELECT CASE row_task WHEN 'infer' THEN 'dual' WHEN 'all' THEN 'dual' ELSE row_task END
$$;

SELECT has_function('mln', 'options', 'mln.options() exists');
SELECT isnt(obj_description('mln.options()'::regprocedure, 'pg_proc'), NULL, 'mln.options has a comment');

-- What the worker reads (solver/worker/job_options.cpp), by kind of job.
SELECT set_eq($$SELECT name FROM pg_temp.job_options WHERE task IN ('map', 'marginal', 'infer', 'all')$$,
              ARRAY['max_flips', 'max_tries', 'timeout', 'seed', 'threads', 'dont_break', 'device', 'random_step',
                    'skip_components_without_query', 'exact_max_atoms', 'samples', 'burn_in', 'mcsat_param',
                    'sa_temperature', 'solver', 'ilp_seconds', 'cpu_walk', 'partitions', 'rounds', 'gap_tolerance'],
              'mln.options() lists each inference option the worker reads');
SELECT set_eq($$SELECT name FROM pg_temp.job_options WHERE task IN ('learn', 'all')$$,
              ARRAY['method', 'iterations', 'samples', 'prior_stddev', 'init', 'seed', 'timeout', 'threads',
                    'device', 'exact_max_atoms', 'learning_rate'],
              'and each learning option');
SELECT set_eq($$SELECT name FROM pg_temp.job_options WHERE task = 'map'$$,
              ARRAY['max_tries', 'dont_break', 'solver', 'ilp_seconds', 'cpu_walk', 'rounds', 'gap_tolerance'],
              'the MAP-only options');
SELECT is((SELECT count(*)::int FROM pg_temp.job_options
            WHERE type NOT IN ('integer', 'number', 'boolean', 'text') OR coalesce(doc, '') = ''
               OR coalesce("default", '') = '' OR coalesce(allowed, '') = ''), 0,
          'every option has a type, a default, what it allows and a line of doc');

-- Every default is accepted, and so is every option at once of its task.
SELECT is((SELECT string_agg(name, ', ') FROM pg_temp.job_options
            WHERE pg_temp.refusal(pg_temp.task_of(task), jsonb_build_object(name,
                    CASE type WHEN 'text' THEN to_jsonb("default") ELSE "default"::jsonb END)) IS NOT NULL),
          NULL, 'each option''s default is a value it accepts');
SELECT is(pg_temp.refusal('dual', '{"samples": "200", "seed": null, "dont_break": "true", "solver": null}'), NULL,
          'numeric strings, booleans as strings and JSON null (the default) are accepted');

-- Unknown key.
SELECT is(pg_temp.refusal('map', '{"bogus": 1}'), 'unknown inference option "bogus"', 'an unknown inference option');
SELECT alike(pg_temp.refusal('map', '{"bogus": 1}', 'hint'), 'options of task map: max_flips, %gap_tolerance',
             'its hint lists the task''s options');
SELECT is(pg_temp.refusal('learn', '{"solver": "ilp"}'), 'unknown learning option "solver"',
          'an inference option on a learning job');
SELECT is(pg_temp.refusal('marginal', '{"dont_break": true}'),
          'inference option "dont_break" applies to MAP inference, not to task "marginal"', 'a MAP option on a marginal job');

-- Wrong type: a number, a boolean, a choice given something else.
SELECT is((SELECT string_agg(name, ', ') FROM pg_temp.job_options
            WHERE type IN ('integer', 'number')
              AND coalesce(pg_temp.refusal(pg_temp.task_of(task), jsonb_build_object(name, 'many')), '')
                  NOT LIKE '%option "' || name || '" must be a number, not "many"'),
          NULL, 'each numeric option refuses a string that is not a number, naming the option');
SELECT is((SELECT string_agg(name, ', ') FROM pg_temp.job_options
            WHERE type = 'boolean'
              AND coalesce(pg_temp.refusal(pg_temp.task_of(task), jsonb_build_object(name, 1)), '')
                  <> format('inference option "%s" must be true or false, not 1', name)),
          NULL, 'each boolean option refuses a number, naming the option');
SELECT is((SELECT string_agg(name, ', ') FROM pg_temp.job_options
            WHERE type = 'text'
              AND coalesce(pg_temp.refusal(pg_temp.task_of(task), jsonb_build_object(name, 3)), '')
                  NOT LIKE 'invalid %' || name || ' 3'),
          NULL, 'each text option refuses a number, naming the option');
SELECT is(pg_temp.refusal('map', '{"max_tries": [3]}'), 'inference option "max_tries" must be a number, not [3]',
          'an array where a number belongs');
SELECT is(pg_temp.refusal('map', '[1, 2]'), 'options must be a JSON object', 'options that are not an object');
SELECT is(pg_temp.refusal('learn', NULL), 'options must be a JSON object', 'NULL options');

-- Out of range.
SELECT is(pg_temp.refusal('map', '{"threads": 5000}'), 'invalid value 5000 for inference option "threads"',
          'threads beyond 4096');
SELECT is(pg_temp.refusal('map', '{"threads": 5000}', 'hint'), 'threads must be an integer from 0 (all cores) to 4096',
          'its hint gives the range');
SELECT is(pg_temp.refusal('map', '{"seed": 9223372036854775808}'),
          'invalid value 9223372036854775808 for inference option "seed"', 'a seed beyond bigint');
SELECT is(pg_temp.refusal('marginal', '{"burn_in": 1.5}'), 'invalid value 1.5 for inference option "burn_in"',
          'a fraction where an integer belongs');
SELECT is(pg_temp.refusal('learn', '{"learning_rate": 0}'), 'invalid value 0 for learning option "learning_rate"',
          'an open lower bound');

-- Not in the allowed set.
SELECT is((SELECT string_agg(name, ', ') FROM pg_temp.job_options
            WHERE type = 'text'
              AND coalesce(pg_temp.refusal(pg_temp.task_of(task), jsonb_build_object(name, 'tabu'), 'hint'), '')
                  NOT LIKE name || ' must be ' || allowed || ': %'),
          NULL, 'each text option refuses a value not among its choices, its hint naming them');
SELECT is(pg_temp.refusal('map', '{"cpu_walk": "tabu"}'), 'invalid cpu_walk "tabu"', 'an unknown cpu_walk');
SELECT is(pg_temp.refusal('learn', '{"init": "random"}'), 'invalid learning init "random"', 'an unknown init');
SELECT is(pg_temp.refusal('bogus', '{}'), 'unknown inference task "bogus"', 'an unknown task');

-- The functions' options (0.15.0; maintain: 0.16.0): one table for mln.datalog, mln.problog
-- (and its jobs) and rule learning, listed beside the job options.
SELECT set_eq($$SELECT name FROM mln.options() WHERE task ~ 'datalog'$$, ARRAY['device', 'max_rows', 'verbose', 'maintain'],
              'mln.options() lists mln.datalog''s options');
SELECT set_eq($$SELECT name FROM mln.options() WHERE task ~ 'problog'$$,
              ARRAY['device', 'max_rows', 'samples', 'delta', 'max_samples', 'seed', 'threads', 'verbose'],
              'and mln.problog''s');
SELECT is((SELECT count(*)::int FROM mln.options()
            WHERE task !~ '^(map|marginal|infer|learn|all)$'
              AND (type NOT IN ('integer', 'number', 'boolean', 'text') OR coalesce(doc, '') = ''
                   OR coalesce(allowed, '') = '' OR ("default" IS NULL AND name <> 'device'))), 0,
          'every function option has a type, what it allows, a line of doc and a default (device: the mln.device setting)');

SELECT * FROM finish();
ROLLBACK;
