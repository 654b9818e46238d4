#!/usr/bin/env bash
# Maintained Datalog outputs against evaluation from scratch (issue #62),
# in one run, both paths side by side:
#  1. the engine alone: build/cmake/bench/mln_datalog_live (maintain() and
#     evaluate() after each single-row change; transitive closure over a
#     random graph of out-degree 0.9 and Andersen's points-to);
#  2. through SQL: a table of EDGES random edges, mln.datalog(tc, schema,
#     '{"maintain": true}'), then CHANGES single-row INSERTs and DELETEs, each
#     timed as the client sees it (the statement and its trigger, which
#     writes the closure's changed rows), against mln.datalog from scratch.
#
#   bash bench/datalog_live.sh [OUT.md]   (default bench/results/cpu-2core/datalog_live.md)
#   EDGES="10000 100000"  CHANGES=20  DEVICE=cpu  ENGINE_EDGES=10000 (both programs)
#   BIG_EDGES="100000 1000000" BIG_CHANGES=6 (the engine, transitive closure alone; empty: none)
# Needs `make install` and the cluster of `make cluster-start` (or PG* variables).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -z "${PGHOST:-}" ] && eval "$(bash scripts/cluster.sh env)"
OUT=${1:-bench/results/cpu-2core/datalog_live.md}
EDGES=${EDGES:-"10000 100000"}
ENGINE_EDGES=${ENGINE_EDGES:-10000}
BIG_EDGES=${BIG_EDGES-"100000 1000000"}
BIG_CHANGES=${BIG_CHANGES:-6}
CHANGES=${CHANGES:-20}
DEVICE=${DEVICE:-cpu}
BIN=${BIN:-build/cmake/bench/mln_datalog_live}
DB=${BENCH_DB:-mln_bench_live}
[ -x "$BIN" ] || { echo "datalog_live: $BIN is missing (make build)" >&2; exit 1; }
commit=${MLN_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
mkdir -p "$(dirname "$OUT")"
{
  echo "# Maintained Datalog outputs against evaluation from scratch"
  echo
  echo "- commit $commit, $(date -u +%Y-%m-%d), $(nproc) cores; command: \`bash bench/datalog_live.sh\` (EDGES=\"$EDGES\" ENGINE_EDGES=\"$ENGINE_EDGES\" BIG_EDGES=\"$BIG_EDGES\" CHANGES=$CHANGES BIG_CHANGES=$BIG_CHANGES DEVICE=$DEVICE)"
  echo
  echo "## The engine: maintain() against evaluate()"
  echo
  for n in $ENGINE_EDGES; do
    echo "### $n edges"
    echo
    "$BIN" "$n" changes="$CHANGES" engine="$([ "$DEVICE" = gpu ] && echo cuda || echo cpu)" | sed 1d
    echo
  done
  for n in $BIG_EDGES; do
    echo "### $n edges, transitive closure alone ($BIG_CHANGES changes)"
    echo
    "$BIN" "$n" changes="$BIG_CHANGES" programs=tc engine="$([ "$DEVICE" = gpu ] && echo cuda || echo cpu)" | sed 1d
    echo
  done
} >"$OUT.tmp"

dropdb --if-exists "$DB" && createdb "$DB"
q() { psql -d "$DB" -qXAt -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -c "$1"; }
q "CREATE EXTENSION pg_mln"
PROG='.input e(a int, b int) from e(src, dst)
tc(X, Y) :- e(X, Y).
tc(X, Y) :- tc(X, Z), e(Z, Y).'
# ms of one statement as the client sees it (psql's \timing).
timed() {
  psql -d "$DB" -qXAt -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -c "SET mln.device = '$DEVICE'" \
       -c '\timing on' -c "$1" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1
}
pct() { sort -g | awk -v q="$1" '{ v[NR] = $1 } END { i = int(q * NR); if (i < 1) i = 1; if (i > NR) i = NR; print v[i] }'; }
{
  echo "## Through SQL: one-row statements on a maintained closure"
  echo
  echo "| edges | closure rows | from scratch, ms (mln.datalog) | a session's first change, ms | insert p50 / p99, ms | delete p50 / p99, ms | speedup (p50) insert / delete | equal to WITH RECURSIVE |"
  echo "|---|---|---|---|---|---|---|---|"
} >>"$OUT.tmp"
for n in $EDGES; do
  nodes=$(awk -v n="$n" 'BEGIN { printf "%d", n / 0.9 }')
  q "DROP TABLE IF EXISTS e; DROP SCHEMA IF EXISTS live CASCADE; DROP SCHEMA IF EXISTS live_ref CASCADE;
     SELECT mln.datalog_stop('live', true);
     CREATE SCHEMA live; CREATE SCHEMA live_ref; SELECT setseed(0.5);
     CREATE TABLE e AS SELECT DISTINCT (random() * ($nodes - 1))::int AS src, (random() * ($nodes - 1))::int AS dst
       FROM generate_series(1, $n)"
  q "SELECT * FROM mln.datalog(\$\$$PROG\$\$, 'live', '{\"maintain\": true, \"device\": \"$DEVICE\"}')" >/dev/null
  # One session, as an application's connection: its first change builds
  # the session's state (an evaluation, timed on its own), the others are
  # maintained.  Each statement timed as psql sees it (\timing).
  {
    echo "SET client_min_messages = warning;"
    echo "SET mln.device = '$DEVICE';"
    echo '\timing on'
    echo "INSERT INTO e VALUES (-1, -2);"
    for k in $(seq 1 "$CHANGES"); do
      echo "INSERT INTO e VALUES ($(( (k * 7919) % nodes )), $(( (k * 104729) % nodes )));"
      echo "DELETE FROM e WHERE ctid = (SELECT ctid FROM e WHERE src >= 0 ORDER BY src, dst OFFSET $(( k * 13 % n )) LIMIT 1);"
    done
  } >"$OUT.sql"
  mapfile -t ms < <(psql -d "$DB" -qXAt -v ON_ERROR_STOP=1 -f "$OUT.sql" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')
  first=${ms[0]}
  ins=() del=()
  for ((k = 1; k < ${#ms[@]}; k += 2)); do ins+=("${ms[k]}"); del+=("${ms[k + 1]}"); done
  rm -f "$OUT.sql"
  scratch=$(timed "SELECT count(*) FROM mln.datalog(\$\$$PROG\$\$, 'live_ref', '{\"device\": \"$DEVICE\"}')")
  rows=$(q "SELECT count(*) FROM live.tc")
  same=$(q "WITH RECURSIVE t(a, b) AS (SELECT src, dst FROM e UNION SELECT t.a, e.dst FROM t JOIN e ON e.src = t.b)
            SELECT (SELECT count(*) FROM (SELECT * FROM t EXCEPT SELECT * FROM live.tc) x)
                 + (SELECT count(*) FROM (SELECT * FROM live.tc EXCEPT SELECT * FROM t) y) = 0")
  ip50=$(printf '%s\n' "${ins[@]}" | pct 0.5); ip99=$(printf '%s\n' "${ins[@]}" | pct 0.99)
  dp50=$(printf '%s\n' "${del[@]}" | pct 0.5); dp99=$(printf '%s\n' "${del[@]}" | pct 0.99)
  echo "| $n | $rows | $scratch | $first | $ip50 / $ip99 | $dp50 / $dp99 | $(awk -v s="$scratch" -v i="$ip50" -v d="$dp50" 'BEGIN { printf "%.0fx / %.0fx", s / i, s / d }') | $([ "$same" = t ] && echo yes || echo NO) |" >>"$OUT.tmp"
done
q "SELECT mln.datalog_stop('live', true)" >/dev/null
dropdb "$DB"
mv "$OUT.tmp" "$OUT"
cat "$OUT"
