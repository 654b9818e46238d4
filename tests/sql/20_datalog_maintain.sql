-- Maintained Datalog outputs (docs/datalog.md, "Maintained outputs"):
-- mln.datalog with maintain keeps the target schema's tables equal to
-- WITH RECURSIVE over the changed inputs, after every one of 80 random
-- INSERT, UPDATE and DELETE statements, for a recursive program and for a
-- recursive one with negation over two tables; a savepoint rolled back,
-- TRUNCATE, a writer without rights on the outputs (the program runs as
-- its owner), a trigger someone puts on their own table (refused),
-- mln.datalog_stop, and the errors before any work.
BEGIN;
SET client_min_messages = warning;
SET check_function_bodies = off;  -- the references read tables mln.datalog makes below
CREATE EXTENSION IF NOT EXISTS pg_mln;
SELECT plan(22);

CREATE ROLE mln_t_dl_owner NOLOGIN;
CREATE ROLE mln_t_dl_writer NOLOGIN;
CREATE SCHEMA lv_in AUTHORIZATION mln_t_dl_owner;
CREATE SCHEMA lv_out AUTHORIZATION mln_t_dl_owner;
CREATE SCHEMA lv_neg AUTHORIZATION mln_t_dl_owner;
GRANT USAGE ON SCHEMA lv_in TO mln_t_dl_writer;
SET ROLE mln_t_dl_owner;
SELECT setseed(0.62);
CREATE TABLE lv_in.e AS
  SELECT DISTINCT (random() * 39)::int AS src, (random() * 39)::int AS dst FROM generate_series(1, 45);
CREATE TABLE lv_in.blocked AS SELECT DISTINCT (random() * 39)::int AS n FROM generate_series(1, 4);
CREATE TABLE lv_in.start (n int);
INSERT INTO lv_in.start VALUES (0), (7);
GRANT INSERT, UPDATE, DELETE, SELECT ON lv_in.e TO mln_t_dl_writer;

-- The references: the closure and the reachable, unblocked nodes.
CREATE FUNCTION lv_in.tc_diff() RETURNS bigint LANGUAGE sql AS $$
  WITH RECURSIVE tc(a, b) AS (SELECT src, dst FROM lv_in.e UNION SELECT tc.a, e.dst FROM tc JOIN lv_in.e e ON e.src = tc.b)
  SELECT (SELECT count(*) FROM (SELECT * FROM tc EXCEPT SELECT * FROM lv_out.tc) x)
       + (SELECT count(*) FROM (SELECT * FROM lv_out.tc EXCEPT SELECT * FROM tc) y)
       + (SELECT count(*) - count(DISTINCT (c1, c2)) FROM lv_out.tc)
$$;
CREATE FUNCTION lv_in.reach_diff() RETURNS bigint LANGUAGE sql AS $$
  WITH RECURSIVE r(n) AS (SELECT n FROM lv_in.start WHERE n NOT IN (SELECT n FROM lv_in.blocked)
                          UNION SELECT e.dst FROM r JOIN lv_in.e e ON e.src = r.n
                                WHERE e.dst NOT IN (SELECT n FROM lv_in.blocked))
  SELECT (SELECT count(*) FROM (SELECT n FROM r EXCEPT SELECT c1 FROM lv_neg.reach) x)
       + (SELECT count(*) FROM (SELECT c1 FROM lv_neg.reach EXCEPT SELECT n FROM r) y)
       + (SELECT count(*) FROM (SELECT c1 FROM lv_neg.cut EXCEPT
                                SELECT DISTINCT e.src FROM lv_in.e e JOIN r ON r.n = e.src
                                WHERE e.dst IN (SELECT n FROM lv_in.blocked)) z)
$$;

SELECT ok((SELECT rows FROM mln.datalog($$
  .input e(a int, b int) from lv_in.e(src, dst)
  tc(X, Y) :- e(X, Y).
  tc(X, Y) :- tc(X, Z), e(Z, Y).
$$, 'lv_out', '{"maintain": true}')) > 0, 'mln.datalog with maintain writes the closure');
SELECT is(lv_in.tc_diff(), 0::bigint, 'the closure equals WITH RECURSIVE');
SELECT is((SELECT count(*) FROM mln.datalog_maintained WHERE target_schema = 'lv_out'), 1::bigint,
          'its program is registered in mln.datalog_maintained');
SELECT is((SELECT count(*) FROM pg_trigger WHERE tgrelid = 'lv_in.e'::regclass AND tgname LIKE 'mln_datalog_%'),
          4::bigint, 'four triggers on its input table (insert, update, delete, truncate)');
SELECT lives_ok($q$SELECT * FROM mln.datalog($$
  .input e(a int, b int) from lv_in.e(src, dst)
  .input blocked(n int) from lv_in.blocked(n)
  .input start(n int) from lv_in.start(n)
  reach(X) :- start(X), !blocked(X).
  reach(Y) :- reach(X), e(X, Y), !blocked(Y).
  cut(X) :- reach(X), e(X, Y), blocked(Y).
$$, 'lv_neg', '{"maintain": true}')$q$, 'a second program, with negation, over three tables');
SELECT is(lv_in.reach_diff(), 0::bigint, 'its tables equal the reference');

-- 80 random statements on the inputs; after each, both targets are compared.
CREATE TABLE lv_in.failures (step int, what text);
CREATE TABLE lv_in.v0 AS SELECT version FROM mln.datalog_maintained WHERE target_schema = 'lv_out';
DO $$
DECLARE k int; r int := 0;
BEGIN
  FOR k IN 1..80 LOOP
    r := (random() * 5)::int;
    IF r <= 1 THEN
      INSERT INTO lv_in.e SELECT (random() * 39)::int, (random() * 39)::int FROM generate_series(1, 1 + (random() * 3)::int)
        ON CONFLICT DO NOTHING;
    ELSIF r = 2 THEN
      DELETE FROM lv_in.e WHERE ctid IN (SELECT ctid FROM lv_in.e ORDER BY random() LIMIT 1 + (random() * 2)::int);
    ELSIF r = 3 THEN
      UPDATE lv_in.e SET dst = (random() * 39)::int WHERE ctid IN (SELECT ctid FROM lv_in.e ORDER BY random() LIMIT 1);
    ELSIF r = 4 THEN
      INSERT INTO lv_in.blocked VALUES ((random() * 39)::int);
    ELSE
      DELETE FROM lv_in.blocked WHERE ctid IN (SELECT ctid FROM lv_in.blocked ORDER BY random() LIMIT 1);
    END IF;
    IF lv_in.tc_diff() <> 0 THEN INSERT INTO lv_in.failures VALUES (k, 'tc after kind ' || r); END IF;
    IF lv_in.reach_diff() <> 0 THEN INSERT INTO lv_in.failures VALUES (k, 'reach after kind ' || r); END IF;
  END LOOP;
END $$;
SELECT is((SELECT string_agg(step || ': ' || what, ', ') FROM lv_in.failures), NULL,
          'after each of 80 random inserts, updates and deletes, both targets equal their references');
SELECT ok((SELECT version FROM mln.datalog_maintained WHERE target_schema = 'lv_out') >=
          (SELECT version + 80 FROM lv_in.v0), 'each change gave the state a new version');

-- A savepoint rolled back: the tables go back with it, and the next change
-- (whose row version this backend did not write) evaluates again.
SAVEPOINT s;
INSERT INTO lv_in.e VALUES (100, 101), (101, 102);
SELECT is((SELECT count(*) FROM lv_out.tc WHERE c1 = 100), 2::bigint, 'an insert reaches the closure');
ROLLBACK TO SAVEPOINT s;
SELECT is(lv_in.tc_diff(), 0::bigint, 'a savepoint rolled back takes the change back');
INSERT INTO lv_in.e VALUES (102, 103);
SELECT is(lv_in.tc_diff(), 0::bigint, 'and the next change after it is right');
TRUNCATE lv_in.blocked;
SELECT is(lv_in.reach_diff(), 0::bigint, 'TRUNCATE of an input: the outputs evaluated again');

-- A writer who may change the input but not read or write the outputs:
-- the program runs as its owner.
RESET ROLE;
SET ROLE mln_t_dl_writer;
SELECT lives_ok($$INSERT INTO lv_in.e VALUES (200, 201), (201, 202)$$, 'another role''s insert into an input');
SELECT throws_ok($$SELECT count(*) FROM lv_out.tc$$, '42501', NULL, 'which cannot read the outputs itself');
CREATE TEMP TABLE mine (src int, dst int);
CREATE TRIGGER steal AFTER INSERT ON mine REFERENCING NEW TABLE AS pg_mln_new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION mln._datalog_changed('lv_out');
SELECT throws_ok($$INSERT INTO mine VALUES (1, 2)$$, '42501', NULL,
                 'a trigger on a table the program does not read is refused (it never runs as the owner)');
RESET ROLE;
SET ROLE mln_t_dl_owner;
SELECT is((SELECT count(*) FROM lv_out.tc WHERE c1 = 200), 2::bigint, 'the writer''s rows reached the closure');
SELECT is(lv_in.tc_diff(), 0::bigint, 'which still equals WITH RECURSIVE');

-- Stopping: the triggers go, the tables stay.
SELECT ok(mln.datalog_stop('lv_out'), 'mln.datalog_stop ends maintenance');
SELECT is((SELECT count(*) FROM pg_trigger WHERE tgrelid = 'lv_in.e'::regclass AND tgname LIKE
          'mln_datalog_' || 'lv_out'::regnamespace::oid || '%'), 0::bigint, 'and drops its triggers');
INSERT INTO lv_in.e VALUES (300, 301);
SELECT is((SELECT count(*) FROM lv_out.tc WHERE c1 = 300), 0::bigint, 'later changes leave its tables as they are');

-- Errors before any work.
CREATE VIEW lv_in.ev AS SELECT * FROM lv_in.e;
SELECT throws_ok($$SELECT * FROM mln.datalog('.input e(a int, b int) from lv_in.ev(src, dst) t(X) :- e(X, _).',
                  'lv_out', '{"maintain": true}')$$, '42809', NULL, 'an input that is a view is refused');
SELECT throws_ok($$SELECT * FROM mln.datalog_query('t(X) :- e(X, _).', 't', '{"maintain": true}') AS t(a int)$$,
                 '22023', 'option "maintain" applies to mln.datalog, not to mln.datalog_query',
                 'mln.datalog_query refuses maintain');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
