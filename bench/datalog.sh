#!/usr/bin/env bash
# mln.datalog against WITH RECURSIVE (and Soufflé, when SOUFFLE names its
# binary) on transitive closure and same generation over uniform random
# graphs.  Each result is a table (CREATE TABLE AS for the SQL forms, as
# mln.datalog writes one); both row counts are checked equal.  Best of RUNS.
#
#   bash bench/datalog.sh [OUT.md]        (default bench/results/cpu-2core/datalog.md)
#   EDGES="10000 100000"   edge counts      NODES_PER_EDGE=1   nodes = edges x this
#   DEVICE=cpu             mln.datalog's device option          RUNS=2
#   SOUFFLE=/path/to/souffle                                    (absent: said so in the results)
# Needs the cluster of `make cluster-start` (or PG* variables) and the extension installed.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -z "${PGHOST:-}" ] && eval "$(bash scripts/cluster.sh env)"
OUT=${1:-bench/results/cpu-2core/datalog.md}
EDGES=${EDGES:-"10000 100000"}
NODES_PER_EDGE=${NODES_PER_EDGE:-1}
DEVICE=${DEVICE:-cpu}
RUNS=${RUNS:-2}
DB=${BENCH_DB:-mln_bench_datalog}
dropdb --if-exists "$DB" && createdb "$DB"
q() { psql -d "$DB" -qXAt -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -c "$1"; }
q "CREATE EXTENSION pg_mln; CREATE SCHEMA b"
# t(sql): seconds one statement takes.
q "CREATE FUNCTION t(sql text) RETURNS float8 LANGUAGE plpgsql AS
   \$\$ DECLARE t0 timestamptz := clock_timestamp(); BEGIN EXECUTE sql;
        RETURN extract(epoch FROM clock_timestamp() - t0); END \$\$"

TC='.input edge(a int, b int) from b.edges(src, dst)
tc(X, Y) :- edge(X, Y).
tc(X, Y) :- tc(X, Z), edge(Z, Y).'
SG='.input edge(a int, b int) from b.edges(src, dst)
sg(x, y) :- edge(p, x), edge(p, y), x != y.
sg(x, y) :- edge(a, x), sg(a, b), edge(b, y), x != y.'
TC_SQL='WITH RECURSIVE tc(a, b) AS (SELECT src, dst FROM b.edges
  UNION SELECT tc.a, e.dst FROM tc JOIN b.edges e ON e.src = tc.b) SELECT a, b FROM tc'
SG_SQL='WITH RECURSIVE sg(x, y) AS (
  SELECT e1.dst, e2.dst FROM b.edges e1 JOIN b.edges e2 ON e1.src = e2.src WHERE e1.dst <> e2.dst
  UNION SELECT e1.dst, e2.dst FROM sg JOIN b.edges e1 ON e1.src = sg.x JOIN b.edges e2 ON e2.src = sg.y
  WHERE e1.dst <> e2.dst) SELECT x, y FROM sg'

# best SQL...: the smallest of RUNS timings of a statement (tables dropped between runs).
best() {
  local b=""
  for _ in $(seq "$RUNS"); do
    q "DROP TABLE IF EXISTS b.tc, b.sg, b.tc_sql, b.sg_sql"
    local s; s=$(q "SELECT t(\$q\$$1\$q\$)")
    b=$(python3 -c "print(min(float('$s'), float('${b:-inf}')))")
  done
  printf '%.3f' "$b"
}

souffle_time() {  # $1 program, $2 relation: seconds, or "-"
  [ -n "${SOUFFLE:-}" ] && [ -x "$SOUFFLE" ] || { echo "-"; return; }
  local d; d=$(mktemp -d)
  q "COPY b.edges TO STDOUT" >"$d/edge.facts"
  printf '.decl edge(a: number, b: number)\n.input edge\n.decl %s(a: number, b: number)\n.output %s\n%s\n' \
    "$2" "$2" "$(echo "$1" | grep -v '^\.input')" >"$d/p.dl"
  local t0 t1; t0=$(date +%s.%N); "$SOUFFLE" -F "$d" -D "$d" "$d/p.dl"; t1=$(date +%s.%N)
  rm -rf "$d"; python3 -c "print(f'{$t1 - $t0:.3f}')"
}

rows=()
for m in $EDGES; do
  n=$(python3 -c "print(max(1, int($m * $NODES_PER_EDGE)))")
  q "DROP TABLE IF EXISTS b.edges; SELECT setseed(0.5);
     CREATE TABLE b.edges AS SELECT DISTINCT (random() * ($n - 1))::int AS src, (random() * ($n - 1))::int AS dst
     FROM generate_series(1, $m); ANALYZE b.edges"
  for prog in TC SG; do
    rel=$(echo "$prog" | tr A-Z a-z)
    dl=${!prog}; sql_var=${prog}_SQL; sql=${!sql_var}
    t_dl=$(best "SELECT mln.datalog('$dl', 'b', '{\"device\": \"$DEVICE\", \"max_rows\": 0}')")
    n_dl=$(q "SELECT count(*) FROM b.$rel")
    t_sql=$(best "CREATE TABLE b.${rel}_sql AS $sql")
    n_sql=$(q "SELECT count(*) FROM b.${rel}_sql")
    [ "$n_dl" = "$n_sql" ] || { echo "datalog.sh: $prog at $m edges: mln.datalog $n_dl rows, SQL $n_sql" >&2; exit 1; }
    t_sf=$(souffle_time "$dl" "$rel")
    rows+=("| $prog | $m | $n | $n_dl | $t_dl | $t_sql | $t_sf |")
    echo "$prog $m edges: $n_dl rows; mln.datalog $t_dl s, WITH RECURSIVE $t_sql s, Soufflé $t_sf"
  done
done
dropdb "$DB"

mkdir -p "$(dirname "$OUT")"
{
  echo "# mln.datalog against WITH RECURSIVE"
  echo
  echo "Command: \`EDGES=\"$EDGES\" NODES_PER_EDGE=$NODES_PER_EDGE DEVICE=$DEVICE RUNS=$RUNS bash bench/datalog.sh\`"
  echo "($(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD), $(nproc) cores, PostgreSQL $(q_v=$(psql -d postgres -qXAt -c 'SHOW server_version'); echo "$q_v"))."
  echo
  echo "Uniform random graphs (\`random()\` with \`setseed(0.5)\`, duplicate edges dropped); each result written as a"
  echo "table (mln.datalog's tables; \`CREATE TABLE AS\` for the SQL); seconds, best of $RUNS; both row counts checked equal."
  [ -n "${SOUFFLE:-}" ] && [ -x "${SOUFFLE:-}" ] || echo "Soufflé: not measured (no SOUFFLE binary given; set SOUFFLE=/path/to/souffle)."
  echo
  echo "| program | edges | nodes | rows | mln.datalog ($DEVICE) s | WITH RECURSIVE s | Soufflé s |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${rows[@]}"
} >"$OUT"
echo "wrote $OUT"
