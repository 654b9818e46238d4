-- ProbLog programs as worker jobs (mln.problog_job, docs/problog.md "Jobs"):
-- the worker (run here with \!, so the setup is committed, not rolled
-- back, and dropped at the end) answers what mln.problog answers in the
-- backend, row for row, for the same seed and options on device 'cpu',
-- under the stopping rule with evidence and for a fixed count over a
-- table; the job row carries its progress; a bad program or option is
-- refused before anything is queued, with mln.problog's messages; a
-- cancelled or failed job writes no row; bytes that are no ground program
-- fail their job; the ground program is gone once a job ends; another
-- role sees none of it.  The worker's running side
-- (progress while it samples, a cancel between batches):
-- tests/e2e/problog.sh.
SET client_min_messages = error;
CREATE EXTENSION IF NOT EXISTS pg_mln;
DROP SCHEMA IF EXISTS pj_in CASCADE;
DROP ROLE IF EXISTS pj_other;
-- The worker reaches this database as psql does.
\setenv PGDATABASE :DBNAME
\setenv PGHOST :HOST
\setenv PGPORT :PORT
SELECT plan(30);

CREATE TEMP TABLE progs(name text PRIMARY KEY, program text, options jsonb);
INSERT INTO progs VALUES
  -- Evidence by rejection, the stopping rule.
  ('wet', $$
    0.3::rain. 0.5::sprinkler.
    0.9::wet :- rain.
    0.8::wet :- sprinkler.
    evidence(wet).
    query(rain). query(sprinkler).
  $$, '{"seed": 7, "device": "cpu"}'),
  -- A table, a non-ground query, a query nothing can make true; a fixed count.
  ('paths', $$
    .input edge(src int, dst int) from pj_in.edge(src, dst)
    0.5::path(X, Y) :- edge(X, Y).
    path(X, Y) :- path(X, Z), path(Z, Y).
    query(path(1, _)). query(path(3, 1)).
  $$, '{"samples": 50000, "seed": 3, "device": "cpu"}');
CREATE SCHEMA pj_in;
CREATE TABLE pj_in.edge(src int, dst int);
INSERT INTO pj_in.edge VALUES (1, 2), (2, 3), (1, 3), (3, 4);

-- Queued: checked and grounded now, no program of mln.programs.
SELECT mln.problog_job(program, options) AS job FROM progs WHERE name = 'wet' \gset
SELECT mln.problog_job(program, options) AS tjob FROM progs WHERE name = 'paths' \gset
SET mln.device = 'cpu';
SELECT mln.problog_job('0.5::a. query(a).') AS djob \gset
RESET mln.device;
SELECT results_eq(format('SELECT task, status, program IS NULL, options->>''device'', samples_total FROM mln.jobs WHERE id = %s', :job),
                  $$VALUES ('problog', 'queued', true, 'cpu', 10000000::bigint)$$,
                  'a problog job is queued with no program, its device and max_samples as samples_total');
SELECT is((SELECT samples_total FROM mln.jobs WHERE id = :tjob), 50000::bigint, 'a fixed count is its samples_total');
SELECT is((SELECT options->>'device' FROM mln.jobs WHERE id = :djob), 'cpu',
          'without a device option the job samples where mln.device said when it was queued');
SELECT ok((SELECT count(*) > 0 AND bool_and(length(data) > 0) FROM mln.problog_ground WHERE job = :job),
          'its ground program waits in mln.problog_ground');

\! mln_worker --quiet --once >/dev/null 2>&1
SELECT is((mln.wait(:job, interval '60 s'))->>'status', 'done', 'the worker samples the program');
SELECT is((mln.wait(:tjob, interval '60 s'))->>'status', 'done', 'and the one over a table');
SELECT is((mln.wait(:djob, interval '60 s'))->>'status', 'done', 'and the one queued without options');

-- The worker's rows are the backend's.
SELECT results_eq(format('SELECT query, probability, ci_low, ci_high, samples FROM mln.problog_results '
                         'WHERE job = %s ORDER BY query_no', :job),
                  $$SELECT * FROM mln.problog((SELECT program FROM progs WHERE name = 'wet'), '{"seed": 7, "device": "cpu"}')$$,
                  'the stopping rule with evidence: mln.problog''s rows, to the last bit');
SELECT results_eq(format('SELECT query, probability, ci_low, ci_high, samples FROM mln.problog_results '
                         'WHERE job = %s ORDER BY query_no', :tjob),
                  $$SELECT * FROM mln.problog((SELECT program FROM progs WHERE name = 'paths'),
                                              '{"samples": 50000, "seed": 3, "device": "cpu"}')$$,
                  'a table and a fixed count: mln.problog''s rows, in its order');
SELECT is((SELECT array_agg(query ORDER BY query_no) FROM mln.problog_results WHERE job = :tjob),
          ARRAY['path(1,2)', 'path(1,3)', 'path(1,4)', 'path(3,1)'], 'one row per atom, and 0 for one nothing makes true');
-- P(wet) = 1 - (1 - 0.27) (1 - 0.4) = 0.562, P(rain, wet) = 0.3 (1 - 0.1 * 0.6) = 0.282.
SELECT ok((SELECT abs(probability - 0.282 / 0.562) < 0.015 FROM mln.problog_results WHERE job = :job AND query = 'rain'),
          'P(rain | wet) = 0.502');

-- The job row: samples drawn, those accepted, the widest interval.
SELECT ok((SELECT samples > 30000 AND accepted > 30000 AND accepted < samples AND samples_per_s > 0
                  AND widest_interval <= 0.01 AND device = 'cpu' AND seconds > 0 AND warnings = '{}'
             FROM mln.job_progress WHERE id = :job),
          'the job row: samples drawn, fewer accepted (evidence), the widest interval within delta, device, seconds');
SELECT is((SELECT accepted FROM mln.jobs WHERE id = :job), (SELECT max(samples) FROM mln.problog_results WHERE job = :job),
          'accepted is the samples the answers rest on');
SELECT results_eq(format('SELECT samples, accepted FROM mln.jobs WHERE id = %s', :tjob), $$VALUES (50000::bigint, 50000::bigint)$$,
                  'a fixed count: drawn, all accepted (no evidence)');
SELECT ok((SELECT (w->>'progress')::float8 = 1 AND (w->>'accepted')::bigint > 0 AND (w->>'widest_interval')::float8 > 0
             FROM mln.wait(:job, interval '0 s') w), 'mln.wait''s answer carries them');
SELECT is((SELECT count(*) FROM mln.problog_ground WHERE job IN (:job, :tjob, :djob)), 0::bigint,
          'a job that ended leaves no ground program behind');

-- Refused before anything is queued, with mln.problog's messages.
CREATE TEMP TABLE jobs_before AS SELECT count(*) AS n FROM mln.jobs;
SELECT throws_ok($$SELECT mln.problog_job(E'0.5::a.\n0.5:b. query(a).')$$, '42601',
                 'line 2, column 4: syntax error at or near ":": expected ''::'' after a probability',
                 'a syntax error with its line and column');
SELECT throws_ok($$SELECT mln.problog_job('0.5::a(1). evidence(a(2)). query(a(1)).')$$, '22023',
                 'line 1, column 21: evidence a(2) = true cannot hold: no rule can make it true',
                 'evidence the grounding finds impossible');
SELECT throws_ok($$SELECT mln.problog_job('p(X) :- nowhere_pj(X). query(p(1)).')$$, '42P01', NULL,
                 'an input relation that is no table');
SELECT throws_ok($$SELECT mln.problog_job('0.5::a. query(a).', '{"delta": 2}')$$, '22023',
                 'option "delta" of mln.problog_job must be a number in (0, 1): the width of the 95% interval the stopping rule reaches',
                 'a bad option value');
SELECT throws_ok($$SELECT mln.problog_job('0.5::a. query(a).', '{"sample": 10}')$$, '22023',
                 'unknown option "sample" of mln.problog_job', 'an unknown option');
SELECT throws_ok($$SELECT mln.problog_job(NULL)$$, '22004', 'mln.problog_job: program must not be null', 'no program');
SELECT throws_ok($$INSERT INTO mln.jobs(task, options) VALUES ('problog', '{"seed": -1}')$$, '22023',
                 'option "seed" of mln.problog_job must be a whole number >= 0',
                 'a direct insert with a bad option is refused by the jobs trigger');
SELECT is((SELECT count(*) FROM mln.jobs), (SELECT n FROM jobs_before), 'nothing refused was queued');

-- Cancelled, or failed: no rows.
SELECT mln.problog_job('0.5::a. query(a).', '{"device": "cpu"}') AS cjob \gset
SELECT ok(mln.cancel(:cjob), 'a queued problog job is cancelled');
-- Evidence no sample satisfies within max_samples: the job fails.
SELECT mln.problog_job('0.001::a. b :- a. evidence(b). query(a).', '{"max_samples": 100, "device": "cpu"}') AS fjob \gset
-- Bytes that are no ground program (written around mln.problog_job): the
-- worker checks them and fails the job, with the reason.
SELECT mln.problog_job('0.5::a. query(a).', '{"device": "cpu"}') AS bjob \gset
UPDATE mln.problog_ground SET data = substr(data, 1, 40) WHERE job = :bjob;
\! mln_worker --quiet --once >/dev/null 2>&1
SELECT results_eq(format('SELECT status, error FROM mln.jobs WHERE id = %s', :bjob),
                  $$VALUES ('failed', 'corrupt ground program: an array longer than the bytes left')$$,
                  'a ground program cut short fails its job, with the reason');
SELECT results_eq(format('SELECT id, status FROM mln.jobs WHERE id IN (%s, %s) ORDER BY id', :cjob, :fjob),
                  format($$VALUES (%s::bigint, 'cancelled'), (%s, 'failed')$$, :cjob, :fjob),
                  'the cancelled job stays cancelled; the other fails');
SELECT is((SELECT error FROM mln.jobs WHERE id = :fjob),
          'mln.problog_job: no sample satisfied the evidence (100 drawn); the evidence is very unlikely or impossible: '
          'check it, or raise max_samples', 'with mln.problog''s error');
SELECT is((SELECT count(*) FROM mln.problog_results WHERE job IN (:cjob, :fjob))
          + (SELECT count(*) FROM mln.problog_ground WHERE job IN (:cjob, :fjob)), 0::bigint,
          'neither wrote a row, and their ground programs are gone');

-- Row-level security: another role sees none of it.
CREATE ROLE pj_other;
SET ROLE pj_other;
SELECT is((SELECT count(*) FROM mln.problog_results) + (SELECT count(*) FROM mln.jobs WHERE task = 'problog'), 0::bigint,
          'another role sees no problog job and no answer');
RESET ROLE;

SELECT * FROM finish();
DROP SCHEMA pj_in CASCADE;
DROP ROLE pj_other;
