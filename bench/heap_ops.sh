#!/usr/bin/env bash
# Heap-to-heap operator benchmark: the pg_mln SQL operators (GPU when present,
# CPU backend) against PostgreSQL running the same query, on the same
# tables, in the same database.  Each measurement is a whole statement
# (scan, operator, write of a new table), timed by the server
# (clock_timestamp around the statement).  Writes heap_ops.md to the results
# folder.
#
#   bash bench/heap_ops.sh OUT_DIR [SIZES]     default SIZES="1000000 10000000"
#   MLN_HEAP_OPS="join distinct"                only these operators (default: all four)
#   MLN_HEAP_REPS=3                             runs of each statement; cells show the median
#   MLN_HEAP_WARM=1                             also the GPU in a session whose CUDA context exists
#
# Under the table, heap_ops.md lists where each pg_mln call spent its time
# (the DEBUG1 line of mln.gpu_*: scan, upload, operators, download, write).
set -uo pipefail
out=${1:?usage: heap_ops.sh OUT_DIR [SIZES]}
sizes=${2:-1000000 10000000}
mkdir -p "$out"
export PGDATABASE=mln_bench_ops
dropdb --if-exists "$PGDATABASE" >/dev/null 2>&1; createdb "$PGDATABASE"
psql -qX -c "CREATE EXTENSION pg_mln" >/dev/null
paths=cpu
if [ "$(psql -qXAt -c "SELECT (mln.device_info()->>'device_count')::int > 0")" = t ]; then
  paths="gpu cpu"
  # gpuw: the GPU in a session that has started CUDA already, as a session
  # running several operators has (MLN_HEAP_WARM=1).
  [ "${MLN_HEAP_WARM:-0}" = 1 ] && paths="gpu gpuw cpu"
fi

# Seconds a statement takes, measured inside the server.
timed() {  # statement [prelude, run first in the same session]
  psql -qXAt -v ON_ERROR_STOP=1 <<SQL
SET work_mem = '1GB';
${2:-}
SET client_min_messages = debug1;
DO \$\$ DECLARE t0 timestamptz := clock_timestamp(); BEGIN
  EXECUTE \$q\$ $1 \$q\$;
  RAISE NOTICE 'secs=%', extract(epoch FROM clock_timestamp() - t0);
END \$\$;
SQL
}
breakdown=$(mktemp)
secs() {
  local o
  local prelude= tag=${2:-}
  [ "$tag" != "${tag% gpuw}" ] && prelude="SELECT mln.device_info() IS NOT NULL AS cuda_started;"
  o=$(timed "$1" "$prelude" 2>&1)
  grep -o 'pg_mln: \(mln\.gpu_[a-z]*\|raw pages\): .*' <<<"$o" | sed "s/^/$tag /" >>"$breakdown"
  sed -n 's/.*secs=//p' <<<"$o"
}
ops=${MLN_HEAP_OPS:-join select distinct anti_join}
reps=${MLN_HEAP_REPS:-1}
runs=$(mktemp)
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
drop_results() {
  psql -qX -c "DROP TABLE IF EXISTS pj, ps, pd, pa; $(for p in $paths; do printf 'DROP TABLE IF EXISTS mj_%s, ms_%s, md_%s, ma_%s; ' $p $p $p $p; done)" >/dev/null
}
want() { case " $ops " in *" $1 "*) return 0 ;; esac; return 1; }

md=$out/heap_ops.md
{
  echo "# Heap-to-heap operators: pg_mln vs PostgreSQL"
  echo
  echo "- commit: \`${MLN_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}\`, date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- machine: $(nproc) cores; GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || echo none)"
  echo "- command: \`MLN_HEAP_OPS=\"$ops\" MLN_HEAP_REPS=$reps MLN_HEAP_WARM=${MLN_HEAP_WARM:-0} bash bench/heap_ops.sh ${out#"$PWD"/} \"$sizes\"\`"
  echo "- server: $(psql -qXAt -c "SELECT string_agg(name || '=' || current_setting(name), ', ' ORDER BY name) FROM pg_settings WHERE name IN ('shared_buffers', 'wal_buffers', 'max_parallel_workers_per_gather', 'fsync', 'wal_level')")"
  echo "- each cell: seconds for the whole statement (heap scan, operator, new table written), the median of $reps run(s)"
  echo "  (MLN_HEAP_REPS; each run in a new session, the paths taking turns; gpuw, with MLN_HEAP_WARM=1: the GPU in a"
  echo "  session that started CUDA first, with \`SELECT mln.device_info()\`); PostgreSQL runs"
  echo "  \`CREATE TABLE AS SELECT ...\` with work_mem = 1GB and default parallelism; ratio = PostgreSQL / pg_mln"
  echo
  echo "| operator | rows | PostgreSQL s | $(for p in $paths; do printf 'pg_mln %s s | ratio | ' "$p"; done)"
  echo "|---|---:|---:|$(for p in $paths; do printf -- '---:|---:|'; done)"
} >"$md"

for n in $sizes; do
  psql -qX -v ON_ERROR_STOP=1 >/dev/null <<SQL
DROP TABLE IF EXISTS l, r;
SELECT setseed(0.5);
CREATE TABLE l AS SELECT (random() * $n)::int4 AS k, g::int4 AS v FROM generate_series(1, $n) g;
CREATE TABLE r AS SELECT (random() * $n)::int4 AS k, g::int4 AS w FROM generate_series(1, $n) g;
VACUUM ANALYZE l; VACUUM ANALYZE r;
SQL
  declare -A pg mln  # each cell: the seconds of every run, space-separated
  for ((rep = 1; rep <= reps; rep++)); do
    [ "$rep" -gt 1 ] && drop_results
    want join && pg[join]+=" $(secs "CREATE TABLE pj AS SELECT l.k, l.v, r.k AS rk, r.w FROM l JOIN r ON l.k = r.k")"
    want select && pg[select]+=" $(secs "CREATE TABLE ps AS SELECT * FROM l WHERE k >= $((n / 2)) AND v <> 7")"
    want distinct && pg[distinct]+=" $(secs "CREATE TABLE pd AS SELECT DISTINCT k FROM l")"
    want anti_join && pg[anti_join]+=" $(secs "CREATE TABLE pa AS SELECT * FROM l WHERE NOT EXISTS (SELECT 1 FROM r WHERE r.k = l.k)")"
    for p in $paths; do
      d=${p%w}  # gpuw runs on the gpu
      want join && mln[join,$p]+=" $(secs "SELECT mln.gpu_join('l', 'r', ARRAY['k'], ARRAY['k'], 'mj_$p', device => '$d')" "$n $p")"
      want select && mln[select,$p]+=" $(secs "SELECT mln.gpu_select('l', 'k >= $((n / 2)) AND v <> 7', 'ms_$p', device => '$d')" "$n $p")"
      want distinct && mln[distinct,$p]+=" $(secs "SELECT mln.gpu_distinct('l', 'md_$p', ARRAY['k'], device => '$d')" "$n $p")"
      want anti_join && mln[anti_join,$p]+=" $(secs "SELECT mln.gpu_join('l', 'r', ARRAY['k'], ARRAY['k'], 'ma_$p', anti => true, device => '$d')" "$n $p")"
    done
  done
  # Same rows as PostgreSQL's (counts), or the benchmark is void.
  for p in $paths; do
    want join && { [ "$(psql -qXAt -c "SELECT (SELECT count(*) FROM mj_$p) = (SELECT count(*) FROM pj)")" = t ] || echo "WARNING: join row counts differ ($p)" >&2; }
  done
  for op in $ops; do
    a=$(median ${pg[$op]})
    row="| $op | $n | $a |"
    for p in $paths; do
      b=$(median ${mln[$op,$p]})
      row+=" $b | $(awk -v a="$a" -v b="$b" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "-" }') |"
    done
    echo "$row" >>"$md"
    [ "$reps" -gt 1 ] && echo "$op $n: PostgreSQL ${pg[$op]};$(for p in $paths; do printf ' %s%s;' "$p" "${mln[$op,$p]}"; done)" >>"$runs"
  done
  drop_results
  unset pg mln
done
{
  echo
  if [ -s "$runs" ]; then
    echo "Every run (seconds):"
    echo
    echo '```'
    cat "$runs"
    echo '```'
    echo
  fi
  echo "Where each pg_mln call spent its time (rows, path, DEBUG1 line):"
  echo
  echo '```'
  cat "$breakdown"
  echo '```'
} >>"$md"
rm -f "$breakdown" "$runs"
dropdb "$PGDATABASE"
cat "$md"
