#!/usr/bin/env bash
# mln.datalog against WITH RECURSIVE (and Soufflé, when SOUFFLE names its
# binary) on transitive closure (TC) and same generation (SG) over three kinds
# of graph (uniform random, R-MAT power law, road-like grid), and on an
# Andersen-style points-to analysis of a generated program (PTA).  Each result
# is a table (CREATE TABLE AS for the SQL forms, as mln.datalog writes one);
# every pair is checked: equal contents (EXCEPT both ways) up to EXCEPT_EDGES
# edges, equal row counts above.  Seconds, best of RUNS (one run when the first
# takes over REPEAT_S seconds).
#
#   bash bench/datalog.sh [OUT.md]        (default bench/results/cpu-2core/datalog.md)
#   EDGES="10000 100000"   edge counts (facts for PTA)     GRAPHS="uniform rmat grid"
#   PROGRAMS="TC SG PTA"   workloads                       DEVICE=cpu (mln.datalog's device)
#   NODES_PER_EDGE=1.25    uniform: nodes = edges x this (out-degree 0.8)
#   RMAT_EXTRA=7           R-MAT: nodes = 2^(ceil(log2 edges) + this), at most 2^30
#   GRID_SIDE=16           grid: disjoint GRID_SIDE x GRID_SIDE tiles; SHORTCUTS=0.02 per grid edge
#   RUNS=2 REPEAT_S=60     EXCEPT_EDGES=100000     STMT_TIMEOUT=0 (seconds a statement may take; 0: none)
#   SOUFFLE=/path/to/souffle                        (absent: said so in the results)
#   SOUFFLE_MODE=compiled                            (or interpreted)
# bench/datalog_plot.py draws a results table as log-log scaling plots (gnuplot).
# Needs the cluster of `make cluster-start` (or PG* variables) and the extension installed.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -z "${PGHOST:-}" ] && eval "$(bash scripts/cluster.sh env)"
OUT=${1:-bench/results/cpu-2core/datalog.md}
EDGES=${EDGES:-"10000 100000"}
GRAPHS=${GRAPHS:-"uniform rmat grid"}
PROGRAMS=${PROGRAMS:-"TC SG PTA"}
NODES_PER_EDGE=${NODES_PER_EDGE:-1.25}
RMAT_EXTRA=${RMAT_EXTRA:-7}
GRID_SIDE=${GRID_SIDE:-16}
SHORTCUTS=${SHORTCUTS:-0.02}
DEVICE=${DEVICE:-cpu}
RUNS=${RUNS:-2}
REPEAT_S=${REPEAT_S:-60}
EXCEPT_EDGES=${EXCEPT_EDGES:-100000}
STMT_TIMEOUT=${STMT_TIMEOUT:-0}
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
PTA='.input new(v int, o int) from b.new(v, o)
.input assign(v int, w int) from b.assign(v, w)
.input load(v int, w int, f int) from b.load(v, w, f)
.input store(v int, f int, w int) from b.store(v, f, w)
pt(v, o) :- new(v, o).
pt(v, o) :- assign(v, w), pt(w, o).
hpt(o1, f, o2) :- store(v, f, w), pt(v, o1), pt(w, o2).
pt(v, o2) :- load(v, w, f), pt(w, o1), hpt(o1, f, o2).'
TC_SQL='CREATE TABLE b.tc_sql AS WITH RECURSIVE tc(a, b) AS (SELECT src, dst FROM b.edges
  UNION SELECT tc.a, e.dst FROM tc JOIN b.edges e ON e.src = tc.b) SELECT a, b FROM tc'
SG_SQL='CREATE TABLE b.sg_sql AS WITH RECURSIVE sg(x, y) AS (
  SELECT e1.dst, e2.dst FROM b.edges e1 JOIN b.edges e2 ON e1.src = e2.src WHERE e1.dst <> e2.dst
  UNION SELECT e1.dst, e2.dst FROM sg JOIN b.edges e1 ON e1.src = sg.x JOIN b.edges e2 ON e2.src = sg.y
  WHERE e1.dst <> e2.dst) SELECT x, y FROM sg'
# PTA in SQL.  One WITH RECURSIVE cannot say it: PostgreSQL refuses mutual
# recursion between WITH items (pt <-> hpt), a recursive term may name its CTE
# only once (the store rule joins pt twice), and the recursive term sees only
# the last iteration's rows (linear recursion), so a rule joining two recursive
# atoms would miss pairs.  The SQL side is therefore a PL/pgSQL fixpoint: each
# round closes pt over assign with WITH RECURSIVE (seeded with new and the loads
# through the current hpt), then recomputes hpt from store; until nothing grows.
q "CREATE FUNCTION pta_sql() RETURNS void LANGUAGE plpgsql AS \$\$
DECLARE n bigint := -1; n2 bigint;
BEGIN
  CREATE TABLE b.pt_sql(v int, o int); CREATE TABLE b.hpt_sql(o1 int, f int, o2 int);
  LOOP
    CREATE TEMP TABLE pt_next ON COMMIT DROP AS WITH RECURSIVE p(v, o) AS (
        SELECT v, o FROM b.new
        UNION SELECT l.v, h.o2 FROM b.load l JOIN b.pt_sql p ON p.v = l.w JOIN b.hpt_sql h ON h.o1 = p.o AND h.f = l.f
        UNION SELECT a.v, p.o FROM p JOIN b.assign a ON a.w = p.v)
      SELECT v, o FROM p;
    TRUNCATE b.pt_sql; INSERT INTO b.pt_sql SELECT v, o FROM pt_next; DROP TABLE pt_next; ANALYZE b.pt_sql;
    TRUNCATE b.hpt_sql;
    INSERT INTO b.hpt_sql SELECT DISTINCT p1.o, s.f, p2.o FROM b.store s
      JOIN b.pt_sql p1 ON p1.v = s.v JOIN b.pt_sql p2 ON p2.v = s.w;
    ANALYZE b.hpt_sql;
    n2 := (SELECT count(*) FROM b.pt_sql) + (SELECT count(*) FROM b.hpt_sql);
    EXIT WHEN n2 = n; n := n2;
  END LOOP;
END \$\$"

# best SQL: the smallest of RUNS timings of a statement (result tables dropped
# before each run); ">T" when it ran past STMT_TIMEOUT.
# With WARM=1, each run's session first makes one small mln.datalog call
# (what a pooled connection has done before): the timed call then finds
# the backend's engine started (on the GPU, ~0.3 s of CUDA start-up).
best() {
  local b="" s err warm=()
  [ "${WARM:-0}" = 1 ] && warm=(-c "SELECT mln.datalog('warm(1).', 'b', '{\"device\": \"$DEVICE\"}')")
  for _ in $(seq "$RUNS"); do
    q "DROP TABLE IF EXISTS b.tc, b.sg, b.pt, b.hpt, b.tc_sql, b.sg_sql, b.pt_sql, b.hpt_sql"
    if ! s=$(psql -d "$DB" -qXAt -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" "${warm[@]}" \
               -c "SET statement_timeout = '${STMT_TIMEOUT}s'" -c "SELECT t(\$q\$$1\$q\$)" 2>/tmp/datalog_bench.$$ | tail -1); then
      err=$(cat /tmp/datalog_bench.$$); rm -f /tmp/datalog_bench.$$
      case "$err" in *"statement timeout"*) echo ">$STMT_TIMEOUT"; return ;; esac
      # Any other error (a GPU out of memory, a row limit) is a result too:
      # the row says "failed", the log has the message, the run goes on.
      echo "datalog.sh: $err" >&2; echo "failed"; return
    fi
    b=$(python3 -c "print(min(float('$s'), float('${b:-inf}')))")
    python3 -c "import sys; sys.exit(0 if float('$s') > $REPEAT_S else 1)" && break
  done
  rm -f /tmp/datalog_bench.$$
  printf '%.3f' "$b"
}

souffle_cache=$(mktemp -d)
trap 'rm -rf "$souffle_cache"' EXIT
# souffle_time PROGRAM "rel/arity ..." "input/table/arity ...": seconds, or "-".
souffle_time() {
  [ -n "${SOUFFLE:-}" ] && [ -x "$SOUFFLE" ] || { echo "-"; return; }
  local d decl="" r n t a cols; d=$(mktemp -d)
  for r in $3; do
    IFS=/ read -r n t a <<<"$r"
    q "COPY $t TO STDOUT" >"$d/$n.facts"
    cols=$(python3 -c "print(', '.join(f'c{i}: number' for i in range($a)))")
    decl+=".decl $n($cols)"$'\n'".input $n"$'\n'
  done
  for r in $2; do
    IFS=/ read -r n a <<<"$r"
    cols=$(python3 -c "print(', '.join(f'c{i}: number' for i in range($a)))")
    decl+=".decl $n($cols)"$'\n'".output $n"$'\n'
  done
  printf '%s%s\n' "$decl" "$(echo "$1" | grep -v '^\.input')" >"$d/p.dl"
  local t0 t1 j; j=$(nproc)
  if [ "${SOUFFLE_MODE:-compiled}" = compiled ]; then
    # Compiled to C++ first (not timed, as a user compiles once), then the
    # executable's run on every core: reading the facts, evaluating, writing.
    # One build per program text (the data differ, the program does not).
    local key bin; key=$(md5sum <"$d/p.dl" | cut -c1-16); bin="$souffle_cache/$key"
    [ -x "$bin" ] || "$SOUFFLE" -j "$j" -o "$bin" "$d/p.dl" >/dev/null 2>&1 || { rm -rf "$d"; echo "-"; return; }
    t0=$(date +%s.%N); "$bin" -j "$j" -F "$d" -D "$d" >/dev/null; t1=$(date +%s.%N)
  else
    t0=$(date +%s.%N); "$SOUFFLE" -j "$j" -F "$d" -D "$d" "$d/p.dl" >/dev/null; t1=$(date +%s.%N)
  fi
  rm -rf "$d"; python3 -c "print(f'{$t1 - $t0:.3f}')"
}

# same A B: "contents" when the tables hold the same rows, "count" when only
# the counts were compared (large sizes); exits on a difference.
same() {
  local na nb; na=$(q "SELECT count(*) FROM $1"); nb=$(q "SELECT count(*) FROM $2")
  [ "$na" = "$nb" ] || { echo "datalog.sh: $1 has $na rows, $2 $nb" >&2; exit 1; }
  if [ "$m" -le "$EXCEPT_EDGES" ]; then
    local d; d=$(q "SELECT (SELECT count(*) FROM (TABLE $1 EXCEPT TABLE $2) x) + (SELECT count(*) FROM (TABLE $2 EXCEPT TABLE $1) y)")
    [ "$d" = 0 ] || { echo "datalog.sh: $1 and $2 differ in $d rows" >&2; exit 1; }
    echo contents
  else echo count; fi
}

ratio() { python3 -c "
a, b = '$1', '$2'
print('-' if '>' in a + b or 'failed' in a + b else f'{float(a) / max(float(b), 1e-9):.2f}')"; }

# gen_graph KIND M: fills b.edges (src, dst); prints the node space.
gen_graph() {
  local m=$2 n
  case $1 in
  uniform)
    n=$(python3 -c "print(max(1, int($m * $NODES_PER_EDGE)))")
    q "DROP TABLE IF EXISTS b.edges; SELECT setseed(0.5);
       CREATE TABLE b.edges AS SELECT DISTINCT (random() * ($n - 1))::int AS src, (random() * ($n - 1))::int AS dst
       FROM generate_series(1, $m)" >/dev/null ;;
  rmat)  # R-MAT (a, b, c, d) = (0.57, 0.19, 0.19, 0.05); each edge oriented low id -> high id
    local k; k=$(python3 -c "import math; print(min(30, math.ceil(math.log2($m)) + $RMAT_EXTRA))")
    n=$((1 << k))
    q "DROP TABLE IF EXISTS b.edges; SELECT setseed(0.5);
       CREATE TABLE b.edges AS SELECT DISTINCT least(src, dst) AS src, greatest(src, dst) AS dst FROM (
         SELECT e, sum(CASE WHEN r >= 0.76 THEN 1 << l ELSE 0 END)::int AS src,
                   sum(CASE WHEN (r >= 0.57 AND r < 0.76) OR r >= 0.95 THEN 1 << l ELSE 0 END)::int AS dst
         FROM (SELECT e, l, random() AS r FROM generate_series(1, $m) e, generate_series(0, $k - 1) l) x
         GROUP BY e) s WHERE src <> dst" >/dev/null ;;
  grid)  # tiles of S x S nodes, each linked to its right and down neighbour, plus
         # forward shortcuts (to a later node of the same tile, row-major order)
    local s=$GRID_SIDE tiles
    tiles=$(python3 -c "import math; print(max(1, math.ceil($m / (2 * $s * ($s - 1)))))")
    n=$((tiles * s * s))
    q "DROP TABLE IF EXISTS b.edges; SELECT setseed(0.5);
       CREATE TABLE b.edges AS SELECT DISTINCT src, dst FROM (
         SELECT t * $s * $s + r * $s + c AS src, t * $s * $s + r * $s + c + 1 AS dst
           FROM generate_series(0, $tiles - 1) t, generate_series(0, $s - 1) r, generate_series(0, $s - 2) c
         UNION ALL SELECT t * $s * $s + r * $s + c, t * $s * $s + (r + 1) * $s + c
           FROM generate_series(0, $tiles - 1) t, generate_series(0, $s - 2) r, generate_series(0, $s - 1) c
         UNION ALL SELECT t * $s * $s + a, t * $s * $s + a + 1 + floor(random() * ($s * $s - 1 - a))::int
           FROM (SELECT t, floor(random() * ($s * $s - 1))::int AS a
                 FROM generate_series(0, $tiles - 1) t, generate_series(1, round(2 * $s * ($s - 1) * $SHORTCUTS)::int) i) z
       ) e" >/dev/null ;;
  *) echo "datalog.sh: unknown graph kind $1" >&2; exit 1 ;;
  esac
  q "ANALYZE b.edges" >/dev/null
  echo "$n"
}

# gen_pta M: a program of M facts (about): methods of 32 variables, each with 8
# new (a fresh object each), 12 assign, 6 load and 6 store over 4 fields, all
# inside the method except one assign in 10, which reads a variable of a
# random earlier method (a call).  Prints the variable count.
gen_pta() {
  local nb; nb=$(python3 -c "print(max(1, $1 // 32))")
  q "DROP TABLE IF EXISTS b.new, b.assign, b.load, b.store; SELECT setseed(0.25);
     CREATE TABLE b.new AS SELECT DISTINCT m * 32 + floor(random() * 32)::int AS v, m * 8 + i AS o
       FROM generate_series(0, $nb - 1) m, generate_series(0, 7) i;
     CREATE TABLE b.assign AS SELECT DISTINCT m * 32 + floor(random() * 32)::int AS v,
       CASE WHEN random() < 0.1 THEN floor(random() * m)::int * 32 + floor(random() * 32)::int
            ELSE m * 32 + floor(random() * 32)::int END AS w
       FROM generate_series(0, $nb - 1) m, generate_series(1, 12) i;
     CREATE TABLE b.load AS SELECT DISTINCT m * 32 + floor(random() * 32)::int AS v,
       m * 32 + floor(random() * 32)::int AS w, floor(random() * 4)::int AS f
       FROM generate_series(0, $nb - 1) m, generate_series(1, 6) i;
     CREATE TABLE b.store AS SELECT DISTINCT m * 32 + floor(random() * 32)::int AS v,
       floor(random() * 4)::int AS f, m * 32 + floor(random() * 32)::int AS w
       FROM generate_series(0, $nb - 1) m, generate_series(1, 6) i;
     ANALYZE b.new; ANALYZE b.assign; ANALYZE b.load; ANALYZE b.store" >/dev/null
  echo $((nb * 32))
}

# split LABEL PROGRAM: runs mln.datalog once more (its tables for the check)
# with verbose on, and keeps the split of its time from the NOTICEs.
splits=()
split() {
  local n
  n=$(psql -d "$DB" -qXAt -v ON_ERROR_STOP=1 -c "SET client_min_messages = notice" \
        -c "SELECT mln.datalog(\$q\$$2\$q\$, 'b', '{\"device\": \"$DEVICE\", \"max_rows\": 0, \"verbose\": true}')" 2>&1 >/dev/null |
      sed -n 's/.*datalog on [^:]*: \(.*\)$/\1/p; s/.*results \(written in .*\)$/\1/p' | paste -sd ' ' -)
  splits+=("- $1: $n")
}
has_prog() { case " $PROGRAMS " in *" $1 "*) return 0 ;; esac; return 1; }
rows=()
row() {  # workload edges nodes rows t_dl t_sql t_sf check (t_warm from the caller)
  rows+=("| $1 | $2 | $3 | $4 | $5 | $t_warm | $6 | $(ratio "$6" "$5") | $(ratio "$6" "$t_warm") | $7 | $8 |")
  echo "$1 $2: $4 rows; mln.datalog $5 s (warm backend $t_warm s), SQL $6 s, Soufflé $7; checked $8"
}
for m in $EDGES; do
  for g in $GRAPHS; do
    has_prog TC || has_prog SG || continue
    n=$(gen_graph "$g" "$m")
    ne=$(q "SELECT count(*) FROM b.edges")
    for prog in TC SG; do
      has_prog $prog || continue
      rel=$(echo "$prog" | tr A-Z a-z)
      dl=${!prog}; sql_var=${prog}_SQL; sql=${!sql_var}
      t_dl=$(best "SELECT mln.datalog('$dl', 'b', '{\"device\": \"$DEVICE\", \"max_rows\": 0}')")
      t_warm=$(WARM=1 best "SELECT mln.datalog('$dl', 'b', '{\"device\": \"$DEVICE\", \"max_rows\": 0}')")
      t_sql=$(best "$sql")
      # the last run of each left its table; a timed-out one left none
      if [[ $t_dl == \>* || $t_sql == \>* || $t_dl == failed || $t_sql == failed ]]; then nr="-"; chk="-"
      else
        split "$prog $g $ne" "$dl"  # best dropped it
        nr=$(q "SELECT count(*) FROM b.$rel"); chk=$(same "b.$rel" "b.${rel}_sql"); fi
      t_sf=$(souffle_time "$dl" "$rel/2" "edge/b.edges/2")
      row "$prog $g" "$ne" "$n" "$nr" "$t_dl" "$t_sql" "$t_sf" "$chk"
    done
  done
  if has_prog PTA; then
    n=$(gen_pta "$m")
    ne=$(q "SELECT (SELECT count(*) FROM b.new) + (SELECT count(*) FROM b.assign) + (SELECT count(*) FROM b.load) + (SELECT count(*) FROM b.store)")
    t_dl=$(best "SELECT mln.datalog('$PTA', 'b', '{\"device\": \"$DEVICE\", \"max_rows\": 0}')")
    t_warm=$(WARM=1 best "SELECT mln.datalog('$PTA', 'b', '{\"device\": \"$DEVICE\", \"max_rows\": 0}')")
    t_sql=$(best "SELECT pta_sql()")
    if [[ $t_dl == \>* || $t_sql == \>* || $t_dl == failed || $t_sql == failed ]]; then nr="-"; chk="-"
    else
      split "PTA $ne" "$PTA"
      nr="pt $(q "SELECT count(*) FROM b.pt"), hpt $(q "SELECT count(*) FROM b.hpt")"
      chk=$(same b.pt b.pt_sql); chk=$(same b.hpt b.hpt_sql); fi
    t_sf=$(souffle_time "$PTA" "pt/2 hpt/3" "new/b.new/2 assign/b.assign/2 load/b.load/3 store/b.store/3")
    row "PTA" "$ne" "$n" "$nr" "$t_dl" "$t_sql" "$t_sf" "$chk"
  fi
done
dropdb "$DB"

mkdir -p "$(dirname "$OUT")"
{
  echo "# mln.datalog against WITH RECURSIVE"
  echo
  echo "Command: \`EDGES=\"$EDGES\" GRAPHS=\"$GRAPHS\" PROGRAMS=\"$PROGRAMS\" NODES_PER_EDGE=$NODES_PER_EDGE RMAT_EXTRA=$RMAT_EXTRA GRID_SIDE=$GRID_SIDE SHORTCUTS=$SHORTCUTS DEVICE=$DEVICE RUNS=$RUNS STMT_TIMEOUT=$STMT_TIMEOUT bash bench/datalog.sh\`"
  echo "($(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD 2>/dev/null || echo "${MLN_COMMIT:-unknown}")$(git rev-parse -q HEAD >/dev/null 2>&1 && ! git diff --quiet HEAD -- 2>/dev/null && echo ' + uncommitted changes'), $(uname -m), $(nproc) cores$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: / /'), PostgreSQL $(psql -d postgres -qXAt -c 'SHOW server_version'))."
  echo
  echo "Each result is written as a table (mln.datalog's tables; \`CREATE TABLE AS\` for the SQL); seconds, best of"
  echo "$RUNS (one run when the first took over $REPEAT_S s), each in a new session (a new backend, whose first GPU"
  echo "call starts the engine); warm backend: the session made one small mln.datalog call first, as a pooled"
  echo "connection has; ratio = WITH RECURSIVE s / mln.datalog s. Check: \`contents\`"
  echo "= both tables hold the same rows (EXCEPT both ways, up to $EXCEPT_EDGES edges), \`count\` = equal row counts."
  [ "$STMT_TIMEOUT" != 0 ] && echo "\`>$STMT_TIMEOUT\`: the statement was cancelled at STMT_TIMEOUT."
  [ -n "${SOUFFLE:-}" ] && [ -x "${SOUFFLE:-}" ] && echo "Soufflé: \`$(basename "$SOUFFLE")\` ($("$SOUFFLE" --version 2>&1 | grep -m1 -i version)), ${SOUFFLE_MODE:-compiled} mode (compiled: the program built once with \`souffle -o\`, not timed), -j $(nproc); time includes reading the facts and writing the output." \
    || echo "Soufflé: not measured (no SOUFFLE binary given; set SOUFFLE=/path/to/souffle)."
  echo
  echo "| workload | edges (facts) | nodes (variables) | rows | mln.datalog ($DEVICE) s | warm backend s | WITH RECURSIVE s | ratio | ratio, warm | Soufflé s | check |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
  printf '%s\n' "${rows[@]}"
  cat <<NOTES

How the inputs are made (all deterministic: \`setseed\` then \`random()\` in SQL):

- **uniform**: EDGES pairs drawn uniformly over nodes = edges x NODES_PER_EDGE ($NODES_PER_EDGE, average out-degree
  $(python3 -c "print(round(1 / $NODES_PER_EDGE, 2))")), duplicates dropped. Below the critical degree 1 the closure stays near linear in the edges.
- **rmat**: R-MAT with (a, b, c, d) = (0.57, 0.19, 0.19, 0.05) over 2^k nodes, k = ceil(log2 edges) + $RMAT_EXTRA
  (at most 30); self-loops and duplicates dropped and each edge oriented from the lower id to the higher, so the
  graph is a DAG. Without that orientation the hubs form a giant strongly connected component and TC is
  quadratic (at 10^5 edges and k = 17, 20 or 24 the closure passed 3 x 10^7 rows); on the DAG the hubs still
  give SG its squared sibling sets.
- **grid**: road-like tiles of GRID_SIDE x GRID_SIDE ($GRID_SIDE x $GRID_SIDE) nodes, each linked to its right and down neighbour,
  plus SHORTCUTS ($SHORTCUTS) x the tile's grid edges random forward shortcuts inside the tile; as many disjoint tiles
  as make EDGES grid edges. One grid of the whole size would make TC quartic in its side (each node
  reaches the rectangle below-right of it: about side^4 / 4 rows), so the tile bounds it at about side^2 / 8
  rows per edge.
- **PTA** (Andersen points-to): methods of 32 variables with 8 \`new\` (each a fresh object), 12 \`assign\`,
  6 \`load\` and 6 \`store\` (4 fields) inside the method, one \`assign\` in 10 reading a variable of a random
  earlier method; EDGES facts in all (before duplicates are dropped). Not expressible as one WITH RECURSIVE
  in PostgreSQL: mutual recursion between WITH items (pt <-> hpt) is refused, a recursive term may name its
  CTE only once (the store rule joins pt twice), and the recursive term sees only the previous iteration's
  rows. The SQL column is a PL/pgSQL fixpoint instead: each round closes pt over \`assign\` with WITH
  RECURSIVE (seeded with \`new\` and the loads through the current hpt), recomputes hpt from \`store\`, and
  stops when neither grows.

The time of mln.datalog includes reading the inputs (integer tables from their pages, others through
SPI) and writing the result tables. Its split, from one more run with \`verbose\` (the check's):
NOTES
  printf '%s\n' "${splits[@]}"
} >"$OUT"
echo "wrote $OUT"
