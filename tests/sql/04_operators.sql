-- Each SQL operator gives exactly the rows of the equivalent plain SQL
-- query (bag equality: both differences empty, duplicates counted).
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_mln;
SELECT plan(33);
SELECT setseed(0.42);
CREATE TABLE l AS SELECT (random() * 50)::int4 AS k, (random() * 5)::int4 AS k2, g::int4 AS v
                    FROM generate_series(1, 3000) g;
-- skew: a hot key
INSERT INTO l SELECT 7, 1, g FROM generate_series(1, 300) g;
CREATE TABLE r AS SELECT (random() * 60)::int4 AS k, (random() * 5)::int4 AS k2, (g * 10)::int4 AS w
                    FROM generate_series(1, 2000) g;
CREATE TABLE empty_t (k int4, w int4);
CREATE TABLE texty (k int4, name text);
CREATE TABLE withnull (k int4);
INSERT INTO withnull VALUES (1), (NULL);

SELECT is(mln.gpu_select('l', 'k >= 10 AND k2 <> 3', 'sel1'), (SELECT count(*) FROM l WHERE k >= 10 AND k2 <> 3),
          'gpu_select returns the row count');
SELECT bag_eq('SELECT k, k2, v FROM sel1', 'SELECT k, k2, v FROM l WHERE k >= 10 AND k2 <> 3', 'select: same rows');
SELECT mln.gpu_select('l', 'k = k2', 'sel2', ARRAY['v']);
SELECT bag_eq('SELECT v FROM sel2', 'SELECT v FROM l WHERE k = k2', 'select col = col with projection');
SELECT mln.gpu_select('l', 'k < 0', 'sel3');
SELECT is((SELECT count(*)::int FROM sel3), 0, 'select with no match gives an empty table');

SELECT mln.gpu_join('l', 'r', ARRAY['k'], ARRAY['k'], 'j1');
SELECT bag_eq('SELECT * FROM j1', 'SELECT l.k, l.k2, l.v, r.k AS rk, r.k2 AS rk2, r.w FROM l JOIN r ON l.k = r.k',
              'join on one key: same rows');
SELECT mln.gpu_join('l', 'r', ARRAY['k', 'k2'], ARRAY['k', 'k2'], 'j2');
SELECT bag_eq('SELECT * FROM j2', 'SELECT l.k, l.k2, l.v, r.k AS rk, r.k2 AS rk2, r.w FROM l JOIN r ON l.k = r.k AND l.k2 = r.k2',
              'join on two keys: same rows');
SELECT mln.gpu_join('l', 'r', ARRAY['k'], ARRAY['k'], 'a1', anti => true);
SELECT bag_eq('SELECT * FROM a1', 'SELECT * FROM l WHERE NOT EXISTS (SELECT 1 FROM r WHERE r.k = l.k)',
              'anti-join: same rows');
SELECT mln.gpu_join('l', 'empty_t', ARRAY['k'], ARRAY['k'], 'j3');
SELECT is((SELECT count(*)::int FROM j3), 0, 'join with an empty side is empty');

SELECT mln.gpu_distinct('l', 'd1', ARRAY['k', 'k2']);
SELECT bag_eq('SELECT * FROM d1', 'SELECT DISTINCT k, k2 FROM l', 'distinct: same rows');

SELECT mln.gpu_plan('l', ARRAY['select v > 100', 'join r on k = k, k2 = k2', 'project v, w', 'distinct'], 'p1');
SELECT bag_eq('SELECT * FROM p1',
              'SELECT DISTINCT l.v, r.w FROM l JOIN r ON l.k = r.k AND l.k2 = r.k2 WHERE l.v > 100',
              'a whole plan in one call: same rows');
SELECT mln.gpu_plan('l', ARRAY['antijoin r on k = k', 'project k'], 'p2');
SELECT bag_eq('SELECT * FROM p2', 'SELECT k FROM l WHERE NOT EXISTS (SELECT 1 FROM r WHERE r.k = l.k)',
              'plan with an anti-join');

-- The page reader sees what the query's snapshot sees: rows updated and
-- deleted earlier in this transaction, and not the dead versions.
CREATE TABLE churn AS SELECT g % 40 AS k, g AS v FROM generate_series(1, 5000) g;
UPDATE churn SET v = -v WHERE k = 3;
DELETE FROM churn WHERE k = 4;
SELECT mln.gpu_select('churn', 'k < 10', 'churn_sel');
SELECT bag_eq('SELECT * FROM churn_sel', 'SELECT * FROM churn WHERE k < 10', 'scan after update and delete: same rows');
SELECT mln.gpu_join('churn', 'r', ARRAY['k'], ARRAY['k'], 'churn_j', anti => true);
SELECT bag_eq('SELECT * FROM churn_j', 'SELECT * FROM churn WHERE NOT EXISTS (SELECT 1 FROM r WHERE r.k = churn.k)',
              'anti-join after update and delete: same rows');
-- Tuples the parallel page decoder cannot read at fixed offsets go through
-- heap_getattr: rows with a NULL elsewhere in the row, rows older than an
-- added column (its default is "missing" in them), a dropped column's
-- space.  A variable-width column before the requested ones makes the
-- whole scan take the row-at-a-time path.
CREATE TABLE shapes (a int4, dropme int8, b int2, n int4);
INSERT INTO shapes SELECT g, g, (g % 100)::int2, CASE WHEN g % 3 = 0 THEN NULL ELSE g END
                     FROM generate_series(1, 3000) g;
ALTER TABLE shapes DROP COLUMN dropme;
ALTER TABLE shapes ADD COLUMN c int4 NOT NULL DEFAULT 5;
INSERT INTO shapes SELECT -g, (g % 7)::int2, g, g % 4 FROM generate_series(1, 3000) g;
SELECT mln.gpu_distinct('shapes', 'sh1', ARRAY['b', 'c']);
SELECT bag_eq('SELECT * FROM sh1', 'SELECT DISTINCT b, c FROM shapes', 'scan of NULL-bearing, pre-ALTER and post-ALTER rows');
SELECT throws_ok($$SELECT mln.gpu_distinct('shapes', 'sh3', ARRAY['a', 'n'])$$, '22004', NULL,
                 'a NULL in a requested column is refused on the parallel scan path');
-- All-visible pages (COPY FREEZE sets the bit) are read from a copy of
-- their line pointers taken under the page lock; pages a DELETE touched
-- since are listed tuple by tuple.  Both, in one scan, with NULLs in an
-- unrequested column and rows older than an added column.
CREATE EXTENSION IF NOT EXISTS pg_visibility;
CREATE TABLE frozen (k int4, v int4, n int4);
COPY frozen FROM PROGRAM 'awk ''BEGIN { for (i = 1; i <= 40000; i++) print i % 1000 "\t" i "\t" (i % 7 ? i : "\\N") }'''
  WITH (FREEZE);
DELETE FROM frozen WHERE v % 5000 = 0;
SELECT ok((SELECT count(*) FILTER (WHERE pd_all_visible) > 150 AND count(*) FILTER (WHERE NOT pd_all_visible) > 0
             FROM pg_visibility('frozen')),
          'frozen: mostly all-visible pages, and some that are not');
SELECT mln.gpu_distinct('frozen', 'fz1', ARRAY['k', 'v']);
SELECT bag_eq('SELECT * FROM fz1', 'SELECT k, v FROM frozen', 'scan of all-visible and listed pages: same rows');
ALTER TABLE frozen ADD COLUMN c int4 NOT NULL DEFAULT 5;
INSERT INTO frozen VALUES (1, -1, 1, 6), (2, -2, NULL, 7);
SELECT mln.gpu_distinct('frozen', 'fz2', ARRAY['v', 'c']);
SELECT bag_eq('SELECT * FROM fz2', 'SELECT DISTINCT v, c FROM frozen', 'all-visible rows older than an added column');
SELECT throws_ok($$SELECT mln.gpu_distinct('frozen', 'fz3', ARRAY['n'])$$, '22004', NULL,
                 'a NULL in a requested column on an all-visible page is refused');
CREATE TABLE mixed (name text, k int4);
INSERT INTO mixed SELECT 'n' || g, g % 13 FROM generate_series(1, 2000) g;
SELECT mln.gpu_distinct('mixed', 'mx1', ARRAY['k']);
SELECT bag_eq('SELECT * FROM mx1', 'SELECT DISTINCT k FROM mixed', 'a text column first: row-at-a-time scan');
-- A result of several pieces of write_table's stream (1,024 pages each).
CREATE TABLE wide_l AS SELECT (g % 2)::int4 AS k, g::int4 AS v FROM generate_series(1, 1000) g;
CREATE TABLE wide_r AS SELECT (g % 2)::int4 AS k, g::int4 AS w FROM generate_series(1, 1000) g;
SELECT mln.gpu_join('wide_l', 'wide_r', ARRAY['k'], ARRAY['k'], 'wide_j');
SELECT ok(pg_relation_size('wide_j') > 2 * 1024 * current_setting('block_size')::int8, 'wide_j spans more than two pieces');
SELECT results_eq('SELECT count(*), sum(k::int8 * 1000003 + v * 7919 + k_3 * 31 + w) FROM wide_j',
                  'SELECT count(*), sum(l.k::int8 * 1000003 + l.v * 7919 + r.k * 31 + r.w) FROM wide_l l JOIN wide_r r ON l.k = r.k',
                  'a result of several pieces: the same count and checksum as SQL');
-- A result table written as raw pages goes away with its subtransaction.
SAVEPOINT before_raw;
SELECT mln.gpu_join('l', 'r', ARRAY['k'], ARRAY['k'], 'j_sp');
ROLLBACK TO SAVEPOINT before_raw;
SELECT ok(to_regclass('j_sp') IS NULL, 'a result table rolled back with its savepoint');
SELECT is((SELECT count(*) FROM j1), (SELECT count(*) FROM l JOIN r ON l.k = r.k),
          'earlier result tables are untouched by the rollback');

-- Errors: clear, never a crash.
SELECT throws_ok($$SELECT mln.gpu_select('nosuch', 'k = 1', 'x1')$$, '42P01', NULL, 'unknown table');
SELECT throws_ok($$SELECT mln.gpu_select('l', 'nope = 1', 'x2')$$, '42703', NULL, 'unknown column');
SELECT throws_ok($$SELECT mln.gpu_distinct('texty', 'x3')$$, '42804', NULL, 'non-integer column');
SELECT throws_ok($$SELECT mln.gpu_join('l', 'r', ARRAY['k', 'k2'], ARRAY['k'], 'x4')$$, '22023', NULL,
                 'mismatched key counts');
SELECT throws_ok($$SELECT mln.gpu_select('l', 'k = 1', 'sel1')$$, '42P07', NULL, 'an existing target is never overwritten');
SELECT throws_ok($$SELECT mln.gpu_select('withnull', 'k = 1', 'x5')$$, '22004', NULL, 'NULL values are refused');
SELECT throws_ok($$SELECT mln.gpu_plan('l', ARRAY['explode'], 'x6')$$, '42601', NULL, 'unknown plan step');
SELECT throws_ok($$SELECT mln.gpu_select('l', 'k = 1', 'x7', device => 'tpu')$$, '22023', NULL, 'unknown device');
SELECT ok(to_regclass('x1') IS NULL AND to_regclass('x4') IS NULL, 'failed calls leave no table behind');

SELECT * FROM finish();
ROLLBACK;
