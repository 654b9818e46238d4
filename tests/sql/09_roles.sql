-- Several users in one database: a plain role sees none of another role's
-- programs, clauses, predicates, jobs or learning history through any view,
-- and every function that names them answers "does not exist"; a member of
-- the owner's role sees and acts on them; no function of the schema is
-- SECURITY DEFINER but the change log's three.
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_mln;
SELECT plan(38);

CREATE ROLE mln_t_alice NOLOGIN;
CREATE ROLE mln_t_bob NOLOGIN;
CREATE ROLE mln_t_carol NOLOGIN IN ROLE mln_t_alice;
DO $$ BEGIN
  EXECUTE format('GRANT CREATE ON DATABASE %I TO mln_t_alice, mln_t_bob', current_database());
END $$;

-- alice: a program, evidence, a grounding, a queued job.
SET ROLE mln_t_alice;
SELECT lives_ok($$SELECT mln.create_program('rp', E'*F(person, person)\nS(person)\n0.5 !S(a) v S(b) v !F(a, b)\n0.3 S(a)\n')$$,
                'alice creates a program');
SELECT mln.load_evidence('rp', E'F(A, B)\nF(B, C)\nS(A)\n');
SELECT mln.set_query('rp', 'S(x)');
SELECT mln.ground('rp', 'cpu');
SELECT set_config('mln_t.job', mln.infer('rp', 'map')::text, true);
SELECT is((SELECT count(*)::int FROM mln.program_clauses WHERE program = 'rp'), 2, 'alice sees her clauses');
RESET ROLE;

-- bob: nothing of alice's, anywhere.
SET ROLE mln_t_bob;
SELECT is((SELECT count(*)::int FROM mln.programs), 0, 'bob: mln.programs is empty');
SELECT is((SELECT count(*)::int FROM mln.program_clauses), 0, 'bob: mln.program_clauses is empty');
SELECT is((SELECT count(*)::int FROM mln.program_predicates), 0, 'bob: mln.program_predicates is empty');
SELECT is((SELECT count(*)::int FROM mln.jobs), 0, 'bob: mln.jobs is empty');
SELECT is((SELECT count(*)::int FROM mln.job_progress), 0, 'bob: mln.job_progress is empty');
SELECT is((SELECT count(*)::int FROM mln.learning_trace), 0, 'bob: mln.learning_trace is empty');
SELECT is((SELECT count(*)::int FROM mln.weight_versions), 0, 'bob: mln.weight_versions is empty');
SELECT throws_ok(format('SELECT mln.cancel(%s)', current_setting('mln_t.job')), '42704', NULL,
                 'bob: cancel of alice''s job: does not exist');
SELECT throws_ok(format('SELECT mln.wait(%s)', current_setting('mln_t.job')), '42704', NULL,
                 'bob: wait on alice''s job: does not exist');
SELECT throws_ok($$SELECT mln.ground('rp', 'cpu')$$, '42704', NULL, 'bob: ground: does not exist');
SELECT throws_ok($$SELECT mln.infer('rp', 'map')$$, '42704', NULL, 'bob: infer: does not exist');
SELECT throws_ok($$SELECT mln.learn_weights('rp')$$, '42704', NULL, 'bob: learn_weights: does not exist');
SELECT throws_ok($$SELECT mln.load_evidence('rp', 'S(B)')$$, '42704', NULL, 'bob: load_evidence: does not exist');
SELECT throws_ok($$SELECT mln.set_query('rp', 'S(x)')$$, '42704', NULL, 'bob: set_query: does not exist');
SELECT throws_ok($$SELECT mln.restore_weights('rp')$$, '42704', NULL, 'bob: restore_weights: does not exist');
SELECT throws_ok($$SELECT mln.drop_program('rp')$$, '42704', NULL, 'bob: drop_program: does not exist');
SELECT throws_ok($$SELECT * FROM mln.map('rp')$$, '42704', NULL, 'bob: map: does not exist');
SELECT throws_ok($$SELECT * FROM mln.marginals('rp')$$, '42704', NULL, 'bob: marginals: does not exist');
SELECT throws_ok($$SELECT * FROM mln.ground_atoms('rp')$$, '42704', NULL, 'bob: ground_atoms: does not exist');
SELECT throws_ok($$SELECT * FROM mln.ground_clauses('rp')$$, '42704', NULL, 'bob: ground_clauses: does not exist');
SELECT throws_ok($$SELECT mln.explain_ground('rp')$$, '42704', NULL, 'bob: explain_ground: does not exist');
SELECT throws_ok($$SELECT mln.evidence_staging('rp')$$, '42704', NULL, 'bob: evidence_staging: does not exist');
SELECT throws_ok($$SELECT mln.ingest_evidence('rp')$$, '42704', NULL, 'bob: ingest_evidence: does not exist');
SELECT throws_ok($$SELECT mln.bind_predicate('rp', 'S', 'pg_class'::regclass, ARRAY['relname'])$$, '42704', NULL,
                 'bob: bind_predicate: does not exist');
SELECT lives_ok($$SELECT mln.create_program('rp2', E'S(person)\n0.3 S(a)\n')$$, 'bob has programs of his own');
SELECT is((SELECT string_agg(name, ',') FROM mln.programs), 'rp2', 'bob: mln.programs lists only his');
RESET ROLE;

-- carol, a member of alice's role: sees and acts.
SET ROLE mln_t_carol;
SELECT is((SELECT count(*)::int FROM mln.program_clauses WHERE program = 'rp'), 2, 'carol (member): alice''s clauses');
SELECT is((SELECT count(*)::int FROM mln.job_progress WHERE program = 'rp'), 1, 'carol (member): alice''s job');
SELECT is((SELECT count(*)::int FROM mln.program_clauses WHERE program = 'rp2'), 0, 'carol: not bob''s clauses');
SELECT ok(mln.cancel(current_setting('mln_t.job')::bigint), 'carol (member): cancels alice''s job');
SELECT is(mln.cancel(current_setting('mln_t.job')::bigint), false, 'cancel of an ended job: false');
RESET ROLE;

-- The alice program is untouched by bob's attempts.
SELECT is((SELECT count(*)::int FROM mln.program_clauses WHERE program = 'rp'), 2, 'alice''s program is intact');

-- A weight that would swamp the hard clauses is refused where it stands.
SELECT throws_like($$SELECT mln.create_program('big', E'P(t)\n1e300 P(x)\n')$$, '%line 2%column 1%out of range%',
                   'a weight beyond 1e15: an error naming line and column');

-- No function of the schema runs with its owner's rights but the change
-- log's four (0.14.0, 0.15.0): the trigger that logs a write to a source
-- table (the writer may not read pg_mln's catalog), the two reads of the log
-- (which tables changed, how many transactions wrote each) and the removal
-- of the changes every program has seen (no role may write or trim it); and
-- (0.16.0) the owner of a maintained Datalog program, for a table it reads
-- (its trigger fires for a writer whom row-level security hides the row
-- from).  Each runs with its search path pinned.
SELECT is((SELECT string_agg(p.oid::regprocedure::text, ', ' ORDER BY p.oid::regprocedure::text)
             FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = 'mln' AND p.prosecdef
              AND NOT coalesce(p.proconfig = ARRAY['search_path=pg_catalog, pg_temp'], false)), NULL,
          'every SECURITY DEFINER function in schema mln pins its search path');
SELECT is((SELECT string_agg(p.oid::regprocedure::text, ', ' ORDER BY p.oid::regprocedure::text)
             FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = 'mln' AND p.prosecdef),
          'mln._changed_tables(oid[],pg_snapshot,xid8), mln._datalog_owner(name,oid), mln._forget_changes(oid[]), '
          'mln._note_change(), mln._pending_changes(oid[],pg_snapshot,xid8)',
          'the SECURITY DEFINER functions of schema mln are the change log''s four and _datalog_owner');
SELECT is((SELECT string_agg(c.relname, ', ' ORDER BY c.relname)
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'mln' AND c.relkind = 'v'
              AND NOT coalesce('security_invoker=true' = ANY (c.reloptions), false)), NULL,
          'every view of schema mln runs as its caller (security_invoker)');

SELECT * FROM finish();
ROLLBACK;
