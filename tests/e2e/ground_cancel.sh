#!/usr/bin/env bash
# A cancelled mln.ground (here statement_timeout) leaves the program's
# network exactly as it was, wherever the cancel lands: the grounding, the
# consolidation with the clauses' store beside it, or the store after.  The
# new tables are made before the grounding (its clauses go in as they are
# consolidated), so only the transaction's rollback keeps the old ones.  Each
# call either finishes (its network is then the one to keep) or fails with
# query_canceled; at least one must be cancelled, or the test proves nothing.
source "$(dirname "$0")/lib.sh"
export PGDATABASE=mln_e2e_ground_cancel
dropdb --if-exists "$PGDATABASE" 2>/dev/null; createdb "$PGDATABASE"
q() { psql -qXAt -c "$1"; }
digest() {
  q "SELECT md5(string_agg(c, ',' ORDER BY c)) || ' ' || count(*) FROM (SELECT array_to_string(literals, ' ') || ':' ||
     weight AS c FROM mln.ground_clauses('gc')) t"
}
psql -qX -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
CREATE EXTENSION pg_mln;
SELECT mln.create_program('gc', E'Person(person)\nAnc(person, person)\n' ||
                                E'1 Person(x), Person(y) => Anc(x, y) v Anc(y, x)\n');
SELECT mln.load_evidence('gc', (SELECT string_agg(format('Person(P%s)', i), E'\n') FROM generate_series(1, 30) i));
SELECT mln.set_query('gc', 'Anc(x, y)');
SELECT mln.ground('gc', 'cpu');
SELECT mln.load_evidence('gc', (SELECT string_agg(format('Person(P%s)', i), E'\n') FROM generate_series(31, 1400) i));
SQL
check "setup" test $? -eq 0
want=$(digest)
stats=$(q "SELECT md5(ground_stats::text) FROM mln.programs WHERE name = 'gc'")
check "the small network has 465 clauses" test "${want#* }" = 465
cancelled=0
for ms in 200 600 1000 1500 2200 3000 5000; do
  out=$(psql -qXAt -v ON_ERROR_STOP=1 2>&1 <<SQL
SET client_min_messages = warning;
SET statement_timeout = '${ms}ms';
SELECT mln.ground('gc', 'cpu') IS NOT NULL;
SQL
  )
  if grep -q "canceling statement due to statement timeout" <<<"$out"; then
    cancelled=$((cancelled + 1))
    check "cancelled after ${ms} ms: the network is the one before" test "$(digest)" = "$want"
    check "cancelled after ${ms} ms: and so are its statistics" \
      test "$(q "SELECT md5(ground_stats::text) FROM mln.programs WHERE name = 'gc'")" = "$stats"
  else
    check "finished within ${ms} ms ($out)" test "$out" = t
    want=$(digest)
    stats=$(q "SELECT md5(ground_stats::text) FROM mln.programs WHERE name = 'gc'")
    check "the finished network has every pair's clause" test "${want#* }" = $((1400 * 1401 / 2))
  fi
  check "the server answers after the ${ms} ms call" test "$(q "SELECT 1")" = 1
done
check "at least one call was cancelled ($cancelled of 7)" test "$cancelled" -gt 0
dropdb "$PGDATABASE"
finish
