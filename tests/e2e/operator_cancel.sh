#!/usr/bin/env bash
# A long operator call honours a cancel (here statement_timeout) wherever
# it lands: in the heap scan (its helper thread decoding), the operators, or
# the result's write (its helper thread downloading and building pages).
# Each call either finishes with SQL's rows or fails with query_canceled,
# leaving no result table; the session goes on.  At least one call must be
# cancelled, or the test proves nothing.
source "$(dirname "$0")/lib.sh"
export PGDATABASE=mln_e2e_cancel
dropdb --if-exists "$PGDATABASE" 2>/dev/null; createdb "$PGDATABASE"
q() { psql -qXAt -c "$1"; }
psql -qX -v ON_ERROR_STOP=1 >/dev/null <<SQL
CREATE EXTENSION pg_mln;
SELECT setseed(0.75);
CREATE TABLE l AS SELECT (random() * 2000000)::int4 AS k, g::int4 AS v FROM generate_series(1, 2000000) g;
CREATE TABLE r AS SELECT (random() * 2000000)::int4 AS k, g::int4 AS w FROM generate_series(1, 2000000) g;
VACUUM ANALYZE l, r;
SQL
check "setup" test $? -eq 0
expect=$(q "SELECT count(*) FROM l JOIN r ON l.k = r.k")
cancelled=0
for ms in 20 60 150 300 400 500 700 1200; do
  out=$(psql -qXAt -v ON_ERROR_STOP=1 2>&1 <<SQL
SET statement_timeout = '${ms}ms';
SELECT mln.gpu_join('l', 'r', ARRAY['k'], ARRAY['k'], 'j_$ms', device => 'cpu');
SQL
  )
  if grep -q "canceling statement due to statement timeout" <<<"$out"; then
    cancelled=$((cancelled + 1))
    check "cancelled after ${ms} ms: no table left" test "$(q "SELECT to_regclass('j_$ms') IS NULL")" = t
  else
    check "finished within ${ms} ms: SQL's row count ($out)" test "$(q "SELECT count(*) FROM j_$ms")" = "$expect"
  fi
  check "the server answers after the ${ms} ms call" test "$(q "SELECT 1")" = 1
done
check "at least one call was cancelled ($cancelled of 8)" test "$cancelled" -gt 0
dropdb "$PGDATABASE"
finish
