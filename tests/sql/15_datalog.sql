-- Datalog over the caller's tables (docs/datalog.md): mln.datalog against
-- WITH RECURSIVE on random graphs (transitive closure, linear and
-- non-linear; same generation), negation and text round trips,
-- mln.datalog_query, the options, every kind of error (syntax with line and
-- column, unknown relation, unsafe variable, unstratifiable negation naming
-- the cycle, no privilege on an input table, a target schema the caller may
-- not create in), aggregates against GROUP BY, and a failed call leaving
-- the target schema as it was; mln.datalog_explain (strata, join order,
-- delta variants, the same errors, nothing evaluated).
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_mln;
SELECT plan(51);

CREATE SCHEMA dl_in;
CREATE SCHEMA dl_out;
SELECT setseed(0.41);
-- Uniform random graphs: 300 edges over 200 nodes, and 150 over 60.
CREATE TABLE dl_in.g1 AS
  SELECT DISTINCT (random() * 199)::int AS src, (random() * 199)::int AS dst FROM generate_series(1, 300);
CREATE TABLE dl_in.g2 AS
  SELECT DISTINCT (random() * 59)::int AS src, (random() * 59)::int AS dst FROM generate_series(1, 150);

-- Transitive closure, linear.
SELECT is((SELECT rows FROM mln.datalog($$
  .input edge(a int, b int) from dl_in.g1(src, dst)
  tc(X, Y) :- edge(X, Y).
  tc(X, Y) :- tc(X, Z), edge(Z, Y).
$$, 'dl_out')), (WITH RECURSIVE tc(a, b) AS (SELECT src, dst FROM dl_in.g1
                  UNION SELECT tc.a, g.dst FROM tc JOIN dl_in.g1 g ON g.src = tc.b) SELECT count(*) FROM tc),
          'transitive closure: as many rows as WITH RECURSIVE');
SELECT set_eq('SELECT c1, c2 FROM dl_out.tc',
              $$WITH RECURSIVE tc(a, b) AS (SELECT src, dst FROM dl_in.g1
                UNION SELECT tc.a, g.dst FROM tc JOIN dl_in.g1 g ON g.src = tc.b) SELECT a, b FROM tc$$,
              'transitive closure (linear) equals WITH RECURSIVE');
-- Non-linear, input read from the catalog (all columns, in order), on the CPU backend.
SET search_path = dl_in, public;
SELECT lives_ok($$SELECT mln.datalog('tc2(X, Y) :- g1(X, Y). tc2(X, Y) :- tc2(X, Z), tc2(Z, Y).', 'dl_out',
                                     '{"device": "cpu"}')$$, 'non-linear closure over a table found by its name');
RESET search_path;
SELECT set_eq('SELECT c1, c2 FROM dl_out.tc2', 'SELECT c1, c2 FROM dl_out.tc',
              'transitive closure (non-linear) equals the linear one');

-- Same generation, lower-case variables.
SELECT lives_ok($$SELECT mln.datalog($dl$
  .input edge(a int, b int) from dl_in.g2
  sg(x, y) :- edge(p, x), edge(p, y), x != y.
  sg(x, y) :- edge(a, x), sg(a, b), edge(b, y), x != y.
$dl$, 'dl_out')$$, 'same generation runs');
SELECT set_eq('SELECT c1, c2 FROM dl_out.sg',
              $$WITH RECURSIVE sg(x, y) AS (
                  SELECT e1.dst, e2.dst FROM dl_in.g2 e1 JOIN dl_in.g2 e2 ON e1.src = e2.src WHERE e1.dst <> e2.dst
                  UNION
                  SELECT e1.dst, e2.dst FROM sg JOIN dl_in.g2 e1 ON e1.src = sg.x JOIN dl_in.g2 e2 ON e2.src = sg.y
                  WHERE e1.dst <> e2.dst)
                SELECT x, y FROM sg$$,
              'same generation equals WITH RECURSIVE');

-- Text through the symbol dictionary, negation, constants, arithmetic, declared column names.
CREATE TABLE dl_in.boss(person text, boss text, since int);
INSERT INTO dl_in.boss VALUES ('ann', 'bob', 2019), ('bob', 'cy', 2015), ('cy', 'dee', 2010), ('eve', 'bob', 2021),
                              ('zoë', NULL, 2000), ('it''s', 'cy', 2012);
SELECT results_eq($$SELECT relation, rows FROM mln.datalog($dl$
  .input boss(p text, b text, y int) from dl_in.boss(person, boss, since)
  .decl above(lo text, hi text)
  above(X, Y) :- boss(X, Y, _).
  above(X, Y) :- above(X, Z), boss(Z, Y, _).
  top(X) :- boss(_, X, _), !boss(X, _, _).
  not_under_cy(X) :- boss(X, _, _), not above(X, "cy").
  tenure(X, N) :- boss(X, "bob", Y), N = 2024 - Y, N >= 4.
$dl$, 'dl_out') ORDER BY 1$$,
  $$VALUES ('above', 11::bigint), ('not_under_cy', 1::bigint), ('tenure', 1::bigint), ('top', 1::bigint)$$,
  'mln.datalog reports each derived relation and its rows');
SELECT set_eq('SELECT lo, hi FROM dl_out.above WHERE lo IN (''ann'', ''it''''s'')',
              $$VALUES ('ann', 'bob'), ('ann', 'cy'), ('ann', 'dee'), ('it''s', 'cy'), ('it''s', 'dee')$$,
              'text round-trips (quotes included), recursion over text');
SELECT is((SELECT c1 FROM dl_out.top), 'dee', 'negation: the boss with no boss');
SELECT is((SELECT c1 FROM dl_out.not_under_cy), 'cy', 'negation of a derived relation with a text constant');
SELECT is((SELECT c1 || ':' || c2 FROM dl_out.tenure), 'ann:5', 'integer arithmetic and a comparison');
SELECT is((SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum)
           FROM pg_attribute WHERE attrelid = 'dl_out.above'::regclass AND attnum > 0),
          'lo text, hi text', 'declared column names and types');

-- mln.datalog_query: ad hoc, nothing written.
SELECT results_eq($$SELECT * FROM mln.datalog_query('n(1). n(Y) :- n(X), Y = X * 2, Y < 100.', 'n') AS t(v bigint)
                    ORDER BY 1$$,
                  $$VALUES (1::bigint), (2), (4), (8), (16), (32), (64)$$, 'mln.datalog_query returns a relation');
SELECT results_eq($$SELECT * FROM mln.datalog_query('p("x y", 3). p("é", -4).', 'p') AS t(s text, i int) ORDER BY 2$$,
                  $$VALUES ('é', -4), ('x y', 3)$$, 'facts with text and negative integers');
SELECT throws_ok($$SELECT * FROM mln.datalog_query('p(1).', 'p') AS t(s text)$$, '42804',
                 'column 1 of relation "p" is integer, not the type of the column definition list',
                 'datalog_query checks the column definition list');

-- Errors.
SELECT throws_ok($$SELECT mln.datalog(E'tc(X, Y) :- e(X, Y).\ntc(X, Y) :- tc(X, Z) e(Z, Y).', 'dl_out')$$, '42601',
                 'line 2, column 22: syntax error at or near "e": expected "." at the end of the rule',
                 'syntax error with line and column');
SELECT throws_ok($$SELECT mln.datalog('p(X) :- no_such_table(X).', 'dl_out')$$, '42P01',
                 'relation no_such_table does not exist (read for Datalog relation "no_such_table", line 1, column 9)',
                 'unknown input relation');
SELECT throws_ok($$SELECT mln.datalog(E'.input e(a int) from dl_in.g1\np(X) :- e(X).', 'dl_out')$$, '42804',
                 'Datalog relation "e" (line 1, column 8) has 1 column(s) but dl_in.g1 has 2',
                 'arity against the table');
SELECT throws_ok($$SELECT mln.datalog(E'.input e(a int, b int) from dl_in.g1\np(X, W) :- e(X, Y).', 'dl_out')$$,
                 '22023', 'line 2, column 6: variable "W" in the head is not bound by a positive body atom',
                 'unsafe variable');
SELECT throws_ok($$SELECT mln.datalog(E'.input e(a int, b int) from dl_in.g1\n'
                                      'a(X) :- e(X, _), !b(X).\nb(X) :- c(X).\nc(X) :- a(X).', 'dl_out')$$,
                 '22023', 'line 2, column 19: the program is not stratifiable: "b" is negated inside its own recursion (cycle a -> !b -> c -> a)',
                 'unstratifiable negation names the cycle');
SELECT throws_ok($$SELECT mln.datalog('n(0). n(Y) :- n(X), Y = X + 1.', 'dl_out', '{"max_rows": 500}')$$, '54000',
                 'datalog: the derived relations hold 501 rows, above max_rows (500)', 'a recursion without end stops at max_rows');
SELECT throws_ok($$SELECT mln.datalog('n(0).', 'dl_out', '{"device": "tpu"}')$$, '22023',
                 'option "device" of mln.datalog must be ''auto'', ''cpu'' or ''gpu''', 'bad option value');

-- Aggregates against GROUP BY on a random table (k a key, so each row is one binding).
CREATE TABLE dl_in.nums AS
  SELECT i AS k, (random() * 9)::int AS g, (random() * 2000)::int - 1000 AS v FROM generate_series(1, 500) i;
SELECT lives_ok($$SELECT mln.datalog($dl$
  .input nums(k int, g int, v int) from dl_in.nums
  .decl per_g(g int, n int, s int, lo int, hi int)
  per_g(G, count(K), sum(V), min(V), max(V)) :- nums(K, G, V).
  total(sum(V), count(K)) :- nums(K, _, V).
  distinct_v(G, count(V)) :- nums(_, G, V).
  none(count(K)) :- nums(K, G, _), G > 1000.
  big(G) :- per_g(G, N, _, _, _), N >= 50.
$dl$, 'dl_out')$$, 'count, sum, min, max run');
SELECT set_eq('SELECT g, n, s, lo, hi FROM dl_out.per_g',
              'SELECT g, count(*)::int, sum(v)::int, min(v), max(v) FROM dl_in.nums GROUP BY g',
              'count, sum, min and max per group equal GROUP BY');
SELECT set_eq('SELECT c1, c2 FROM dl_out.total', 'SELECT sum(v)::int, count(*)::int FROM dl_in.nums',
              'an aggregate without a group: one row');
SELECT set_eq('SELECT c1, c2 FROM dl_out.distinct_v', 'SELECT g, count(DISTINCT v)::int FROM dl_in.nums GROUP BY g',
              'the distinct bindings: count(V) without the key counts distinct values');
SELECT is((SELECT count(*) FROM dl_out.none), 0::bigint, 'no binding: no row (count is never 0)');
SELECT throws_ok($$SELECT mln.datalog(E'.input e(a int, b int) from dl_in.g1\n'
                                      'p(X, count(Y)) :- e(X, Y), q(Y).\nq(Y) :- p(_, Y).', 'dl_out')$$,
                 '22023', 'line 2, column 28: the program is not stratifiable: "q" is aggregated (count) inside its own recursion (cycle p -> count(q) -> p)',
                 'an aggregate through recursion names the cycle');
SELECT throws_ok($$SELECT mln.datalog('n(''a'', 1). s(sum(X)) :- n(X, _).', 'dl_out')$$, '42804',
                 'line 1, column 14: sum(X) over text: sum, min and max take integers (count takes any)',
                 'sum over text');

-- Privileges: an input table the caller may not read, a schema it may not create in.
CREATE ROLE mln_dl_bob NOLOGIN;
CREATE TABLE dl_in.secret(a int, b int);
GRANT USAGE ON SCHEMA dl_in TO mln_dl_bob;
CREATE SCHEMA dl_bob AUTHORIZATION mln_dl_bob;
SET ROLE mln_dl_bob;
SELECT throws_ok($$SELECT mln.datalog('p(X) :- e(X, _). .input e(a int, b int) from dl_in.secret', 'dl_bob')$$,
                 '42501', 'permission denied for table secret', 'no SELECT privilege on the input table');
SELECT throws_ok($$SELECT mln.datalog('p(1).', 'dl_out')$$, '42501',
                 'permission denied to create tables in schema "dl_out"', 'a target schema the caller may not create in');
SELECT lives_ok($$SELECT mln.datalog('p(1).', 'dl_bob')$$, 'its own schema is fine');
RESET ROLE;
SELECT is((SELECT tableowner FROM pg_tables WHERE schemaname = 'dl_bob' AND tablename = 'p'), 'mln_dl_bob',
          'the derived table belongs to the caller');

-- Integer tables are read from their pages where that gives what SQL would
-- (datalog_run.cpp's scan_input), by SQL elsewhere: row-level security,
-- column privileges, NULLs and casts read the same rows either way.
CREATE TABLE dl_in.guarded(a int, b int);
INSERT INTO dl_in.guarded VALUES (1, 2), (2, 3), (5, 6);
ALTER TABLE dl_in.guarded ENABLE ROW LEVEL SECURITY;
CREATE POLICY small ON dl_in.guarded USING (a < 3);
GRANT SELECT ON dl_in.guarded TO mln_dl_bob;
CREATE TABLE dl_in.colpriv(a int, b int);
INSERT INTO dl_in.colpriv VALUES (1, 10), (2, 20);
GRANT SELECT (a) ON dl_in.colpriv TO mln_dl_bob;
CREATE TABLE dl_in.holes(a int, b int2, c bigint);
INSERT INTO dl_in.holes VALUES (1, 2, 3), (NULL, 4, 5), (6, NULL, 7), (8, 9, 10);
SET ROLE mln_dl_bob;
SELECT results_eq($$SELECT * FROM mln.datalog_query('tc(X, Y) :- g(X, Y). tc(X, Y) :- tc(X, Z), g(Z, Y).
                                                     .input g from dl_in.guarded', 'tc') AS t(a int, b int) ORDER BY 1, 2$$,
                  $$VALUES (1, 2), (1, 3), (2, 3)$$, 'row-level security applies to the rows read');
SELECT results_eq($$SELECT * FROM mln.datalog_query('p(X) :- c(X). .input c(a int) from dl_in.colpriv(a)', 'p')
                    AS t(a int) ORDER BY 1$$,
                  $$VALUES (1), (2)$$, 'a column the caller may read, without SELECT on the table');
RESET ROLE;
SELECT results_eq($$SELECT * FROM mln.datalog_query('p(X, Y) :- h(X, Y, _). .input h(a int, b int, c int) from dl_in.holes',
                                                    'p') AS t(a int, b int) ORDER BY 1$$,
                  $$VALUES (1, 2), (8, 9)$$, 'rows with a NULL are left out (int4 and int2 columns)');
SELECT results_eq($$SELECT * FROM mln.datalog_query('q(X, Z) :- h(X, _, Z). .input h(a int, b int, c int) from dl_in.holes',
                                                    'q') AS t(a int, c int) ORDER BY 1$$,
                  $$VALUES (1, 3), (8, 10)$$, 'a bigint column is read with its cast');
DELETE FROM dl_in.holes WHERE a IS NULL OR b IS NULL;
SELECT results_eq($$SELECT * FROM mln.datalog_query('p(X, Y) :- h(X, Y). .input h(a int, b int) from dl_in.holes(a, b)',
                                                    'p') AS t(a int, b int) ORDER BY 1$$,
                  $$VALUES (1, 2), (8, 9)$$, 'a table without NULLs: the same rows');

-- Replacing and failing: an existing table is replaced; a call that fails
-- (here on a view named like its second relation, after the first was
-- written) leaves the schema as it was.
CREATE TABLE dl_out.r1(x int);
INSERT INTO dl_out.r1 VALUES (42);
CREATE VIEW dl_out.r2 AS SELECT 1 AS x;
SELECT throws_ok($$SELECT mln.datalog('r1(7). r2(8).', 'dl_out')$$, '42809', NULL, 'a view in the way fails the call');
SELECT results_eq('SELECT x FROM dl_out.r1', 'VALUES (42)', 'after the failure the old table is still there, unchanged');
SELECT is((SELECT relkind::text FROM pg_class WHERE oid = 'dl_out.r2'::regclass), 'v', 'and the view too');
DROP VIEW dl_out.r2;
SELECT lives_ok($$SELECT mln.datalog('r1(7). r2(8).', 'dl_out')$$, 'with the view gone it runs');
SELECT results_eq('SELECT c1 FROM dl_out.r1', 'VALUES (7)', 'and replaces the existing table');

-- mln.datalog_explain: the plans, nothing evaluated or written.
CREATE TEMP TABLE dl_before AS SELECT oid FROM pg_class;  -- temporary: not counted below
CREATE TEMP TABLE dl_tc_explain AS SELECT * FROM mln.datalog_explain($$
  .input edge(a int, b int) from dl_in.g1(src, dst)
  tc(X, Y) :- edge(X, Y).
  tc(X, Y) :- tc(X, Z), edge(Z, Y).
$$);
SELECT results_eq('SELECT stratum, relation, recursive, rule, line FROM dl_tc_explain',
                  $$VALUES (1, 'tc', false, 1, 3), (1, 'tc', true, 2, 4)$$,
                  'explain of transitive closure: one stratum, the base rule then the recursive one');
SELECT matches((SELECT plan FROM dl_tc_explain WHERE recursive),
               E'^each iteration, delta on tc\\(X, Z\\) \\(atom 1\\):\n'
               '  -> scan delta tc\\(X, Z\\) \\(~[0-9]+ rows, estimated\\)\n'
               '  -> join edge\\(Z, Y\\) \\(~[0-9]+ rows, count\\(\\*\\)\\) on Z\n'
               '  -> project -> tc\\(X, Y\\)$',
               'the recursive rule: its delta variant, the join order, the sizes and where they come from');
SELECT is((SELECT est_rows FROM dl_tc_explain WHERE NOT recursive), (SELECT count(*) FROM dl_in.g1),
          'the base rule is estimated from count(*) of a table never analyzed');
ANALYZE dl_in.g2;
SELECT matches((SELECT string_agg(plan, E'\n') FROM mln.datalog_explain($dl$
  .input edge(a int, b int) from dl_in.g2
  sg(x, y) :- edge(p, x), edge(p, y), x != y.
  sg(x, y) :- edge(a, x), sg(a, b), edge(b, y), x != y.
$dl$)), 'delta on sg\(a, b\) \(atom 2\):\n  -> scan edge\(a, x\) \(~[0-9]+ rows, reltuples\)',
               'same generation explains (an analyzed table: reltuples)');
SELECT throws_ok($$SELECT * FROM mln.datalog_explain(E'.input e(a int, b int) from dl_in.g1\n'
                                      'a(X) :- e(X, _), !b(X).\nb(X) :- c(X).\nc(X) :- a(X).')$$,
                 '22023', 'line 2, column 19: the program is not stratifiable: "b" is negated inside its own recursion (cycle a -> !b -> c -> a)',
                 'explain: an unstratifiable program, the error of mln.datalog');
SELECT throws_ok($$SELECT * FROM mln.datalog_explain('p(X) :- no_such_table(X).')$$, '42P01', NULL,
                 'explain: an unknown input relation');
SELECT matches((SELECT plan FROM mln.datalog_explain($dl$
  .input nums(k int, g int, v int) from dl_in.nums
  per_g(G, count(K), sum(V)) :- nums(K, G, V), V > 0, W = V * 2, W < 1000, !nums(_, W, _).
$dl$)), E'filter V > 0\n.*compute W = V \\* 2 \\(host\\)\n.*filter W < 1000\n.*anti-join nums\\(_, W, _\\) on W\n'
        '.*aggregate per_g[(]G, count[(]K[)], sum[(]V[)][)] over the distinct bindings, grouped by G',
               'an aggregate explains: filters, arithmetic, anti-join, grouping');
SELECT is((SELECT count(*) FROM pg_class WHERE oid NOT IN (SELECT oid FROM dl_before)
             AND relpersistence <> 't'), 0::bigint,
          'explain evaluates nothing: no table is created in any schema');

SELECT * FROM finish();
ROLLBACK;
