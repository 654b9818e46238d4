-- Jobs you can trust (0.6.0): a job is queued only on a program its role
-- may act on, with valid options, whatever the path; a plain role does not
-- rewrite what defines a job or the outcome of one that ended; mln.wait
-- refuses a job of its own transaction; mln.map raises before there is an
-- answer; a network grounded for learning is refused by mln.infer.
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_mln;
SELECT plan(26);

CREATE ROLE mln_t12_alice NOLOGIN;
CREATE ROLE mln_t12_bob NOLOGIN;
DO $$ BEGIN
  EXECUTE format('GRANT CREATE ON DATABASE %I TO mln_t12_alice, mln_t12_bob', current_database());
END $$;

SET ROLE mln_t12_alice;
SELECT mln.create_program('ap', E'*F(person, person)\nS(person)\n0.5 !S(a) v S(b) v !F(a, b)\n0.3 S(a)\n');
SELECT mln.load_evidence('ap', E'F(A, B)\nS(A)\n');
SELECT mln.set_query('ap', 'S(x)');
SELECT mln.ground('ap', 'cpu');
SELECT is(mln.program_state('ap'), 'grounded', 'a grounded program''s state');
SELECT throws_like($$SELECT * FROM mln.map('ap')$$, '%has no MAP inference result%',
                   'mln.map before any MAP job has finished: an error, not every atom false');
SELECT set_config('mln_t12.job', mln.infer('ap')::text, true);
SELECT throws_like(format('SELECT mln.wait(%s)', current_setting('mln_t12.job')),
                   '%queued by this transaction%', 'mln.wait refuses a job its own transaction queued');
RESET ROLE;

-- bob, every way in.
SET ROLE mln_t12_bob;
SELECT mln.create_program('bp', E'S(person)\n0.3 S(a)\n');
SELECT mln.load_evidence('bp', 'S(A)');
SELECT mln.set_query('bp', 'S(x)');
SELECT mln.ground('bp', 'cpu');
SELECT throws_ok($$INSERT INTO mln.jobs(program, task) VALUES ('ap', 'map')$$, '42704', NULL,
                 'bob: a direct insert of a job on alice''s program: does not exist');
SELECT throws_ok($$INSERT INTO mln.jobs(program, task, owner) VALUES ('bp', 'map', 'mln_t12_alice')$$, '42501', NULL,
                 'bob: a job with a forged owner: permission denied');
SELECT throws_ok($$INSERT INTO mln.jobs(program, task, status) VALUES ('bp', 'map', 'done')$$, '42501', NULL,
                 'bob: a job inserted as done: permission denied');
SELECT throws_like($$INSERT INTO mln.jobs(program, task, options) VALUES ('bp', 'map', '{"threads": 100000}')$$,
                   '%threads%', 'bob: a direct insert with options mln.infer refuses is refused the same way');
SELECT throws_like($$INSERT INTO mln.jobs(program, task, options) VALUES ('bp', 'map', '{"partitions": 1000000}')$$,
                   '%partitions%', 'bob: partitions beyond the limit, directly: refused');
SELECT throws_like($$INSERT INTO mln.jobs(program, task, options) VALUES ('bp', 'learn', '{"methd": "dn"}')$$,
                   '%unknown learning option%', 'bob: a learning job with an unknown option, directly: refused');
SELECT lives_ok($$INSERT INTO mln.jobs(program, task) VALUES ('bp', 'map')$$,
                'bob: a direct insert of a valid job on his own program is checked like mln.infer and accepted');
SELECT is((SELECT owner::text FROM mln.jobs WHERE program = 'bp'), 'mln_t12_bob', 'its owner is bob');
SELECT throws_ok(format($$UPDATE mln.jobs SET program = 'ap' WHERE id = %s$$, (SELECT id FROM mln.jobs WHERE program = 'bp')),
                 '42501', NULL, 'bob: moving his job to alice''s program: permission denied');
SELECT is((SELECT count(*)::int FROM mln.jobs WHERE program = 'ap'), 0, 'bob sees no job of alice''s');
SELECT lives_ok(format($$UPDATE mln.jobs SET status = 'done', best_cost = 0 WHERE id = %s$$, current_setting('mln_t12.job')),
                'bob: an update of alice''s job touches nothing (row-level security) ...');
SELECT ok(mln.cancel((SELECT id FROM mln.jobs WHERE program = 'bp')), 'bob cancels his own job');
SELECT throws_like(format($$UPDATE mln.jobs SET status = 'queued' WHERE id = %s$$, (SELECT id FROM mln.jobs WHERE program = 'bp')),
                   '%has ended%', 'bob: a cancelled job does not come back to the queue');
SELECT throws_like(format($$UPDATE mln.jobs SET best_cost = 1 WHERE id = %s$$, (SELECT id FROM mln.jobs WHERE program = 'bp')),
                   '%has ended%', 'bob: an ended job''s outcome does not change');
RESET ROLE;
SELECT is((SELECT status || ':' || coalesce(best_cost::text, '-') FROM mln.jobs WHERE id = current_setting('mln_t12.job')::bigint),
          'queued:-', '... alice''s job is still queued, with no cost');

-- A job's program dropped and re-created by another role: the job went with it.
SET ROLE mln_t12_alice;
SELECT mln.drop_program('ap');
RESET ROLE;
SET ROLE mln_t12_bob;
SELECT mln.create_program('ap', E'S(person)\n0.3 S(a)\n');
SELECT is((SELECT count(*)::int FROM mln.jobs WHERE program = 'ap'), 0, 'bob''s new "ap" has no job of alice''s');
RESET ROLE;
SELECT is((SELECT count(*)::int FROM mln.jobs WHERE id = current_setting('mln_t12.job')::bigint), 0,
          'alice''s job on her dropped program is gone (nothing for a worker to run on bob''s program)');

-- The worker role (a superuser here) does the worker's part.
SELECT ok(mln._is_worker(), 'a superuser does a worker''s part');
SET ROLE mln_t12_bob;
SELECT ok(NOT mln._is_worker(), 'a plain role does not');
RESET ROLE;

-- Learning: the network it grounds is not an inference network.
SELECT mln.create_program('lp', E'S(person)\nC(person)\n0.5 !S(a) v C(a)\n');
SELECT mln.load_evidence('lp', E'S(A)\nS(B)\nC(A)\n');
SELECT mln.set_query('lp', 'C(x)');
SELECT mln.ground('lp', 'cpu');
SELECT set_config('mln_t12.learn', mln.learn_weights('lp', '{"iterations": 2}', 'cpu')::text, true);
SELECT is(mln.program_state('lp'), 'grounded for learning', 'after mln.learn_weights: grounded for learning');
SELECT mln.cancel(current_setting('mln_t12.learn')::bigint);
SELECT throws_like($$SELECT mln.infer('lp')$$, '%grounded for weight learning%',
                   'mln.infer refuses the learning network a cancelled learning job left');
SELECT mln.ground('lp', 'cpu');
SELECT lives_ok($$SELECT mln.infer('lp')$$, 'grounded again: mln.infer accepts it');

-- mln.solve is a procedure (it commits): not in a transaction block.
SELECT has_function('mln', 'solve', ARRAY['text', 'text', 'jsonb', 'interval', 'jsonb'], 'procedure mln.solve exists');

SELECT * FROM finish();
ROLLBACK;
