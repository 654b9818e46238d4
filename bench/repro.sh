#!/usr/bin/env bash
# Reproducibility of the default (issue #60): the default command line (no
# flag but --seed 1, no time cap) twice on each workload.  The two answers
# must be the same file byte for byte, at the same cost, bound and flips;
# the table shows both runs' seconds and what they printed.  Writes
# OUT_DIR/repro.md (logs: OUT_DIR/repro.log); exits 1 when a pair differs.
#   bash bench/repro.sh OUT_DIR [BUILD_DIR]
#   MLN_REPRO_LOADS="class rc-1000 rc-10000" (class: the sample; rc-N: mln_gen rc N, seed 1)
#   MLN_REPRO_FLAGS="--search-device gpu" (added to both runs; default none)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/cli_log.sh"
bench_start repro "$@"
loads=${MLN_REPRO_LOADS:-class rc-1000 rc-10000}
flags=${MLN_REPRO_FLAGS:-}
exec 3>"$out/repro.log"
differ=0

prepare() {  # load: $work/LOAD holds prog.mln, evidence.db, query.db
  local d=$work/$1
  mkdir -p "$d"
  case $1 in
    smoke | class) cp "$DATA/$1"/{prog.mln,evidence.db,query.db} "$d/" ;;
    rc-*) "$GEN" rc "${1##*-}" "$d" 1 >/dev/null ;;
    *) echo "unknown workload $1" >&2 && return 1 ;;
  esac
}

# One run: prints "seconds cost bound flips stop" (the job's row in mln.jobs).
run() {  # load k
  local d=$work/$1 log=$work/$1-$2.log t0 t1 rc
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$PGMLN" --dsn "dbname=$PGDATABASE" -i "$d/prog.mln" -e "$d/evidence.db" -queryFile "$d/query.db" -r "$d/out$2" \
    --seed 1 -keepData $flags >"$log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  { echo "== $1 run $2: pg_mln --seed 1 $flags (exit $rc)"; grep -v '^>>>' "$log"; } >&3
  [ $rc = 0 ] || { echo "FAILED"; return; }
  # The job's own figures, in full (the command line prints them rounded).
  local j
  # (-keepData keeps the run's program, and with it its job, until here.)
  j=$(psql -qXAt -F ' ' -c "SELECT best_cost, coalesce(bound::text, '-'), flips, replace(coalesce(stop_reason, '-'), ' ', '_')
                            FROM mln.jobs WHERE task = 'map' ORDER BY id DESC LIMIT 1")
  psql -qXAt -c "SELECT mln.drop_program(name) FROM mln.programs WHERE name LIKE 'tuffy\_%'" >/dev/null
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') $j"
}

{
  echo "# Reproducibility of the default (issue #60)"
  echo
  echo "- command: \`MLN_REPRO_LOADS=\"$loads\" MLN_REPRO_FLAGS=\"$flags\" bash bench/repro.sh ${out#$root/}\`"
  echo "- commit: \`${MLN_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null)}\`, date: $(date -u +%Y-%m-%dT%H:%M:%SZ)," \
    "machine: $(nproc) cores, GPU: $(nvidia-smi -L 2>/dev/null | head -1 | cut -d'(' -f1 || echo none)"
  echo "- each workload: \`pg_mln -i prog.mln -e evidence.db -queryFile query.db -r OUT --seed 1 $flags\` twice;"
  echo "  same: the two answer files are byte-identical (cmp) and the runs printed the same cost, bound and flips"
  echo
  echo "| workload | clauses | run 1: s, cost, bound, flips, stop | run 2: s, cost, bound, flips, stop | same |"
  echo "|---|---:|---|---|---|"
} >"$out/repro.md"
for l in $loads; do
  prepare "$l" || continue
  r1=$(run "$l" 1)
  r2=$(run "$l" 2)
  n=$(cli_clauses "$work/$l-1.log")
  same=no
  if [ "$r1" != FAILED ] && cmp -s "$work/$l/out1" "$work/$l/out2" && [ "${r1#* }" = "${r2#* }" ]; then same=yes; fi
  [ $same = yes ] || differ=1
  echo "| $l | ${n:--} | ${r1// /, } | ${r2// /, } | $same |" >>"$out/repro.md"
  rm -rf "${work:?}/$l"
done
cat "$out/repro.md"
exit $differ
