#!/usr/bin/env bash
# CP-logic forward sampling (issue #43, docs/problog.md): the BLOODTYPE,
# GROWINGHEAD and GROWINGBODY benchmarks of Van Ranst and Vennekens, rebuilt
# by bench/gen/cplogic_gen.py, through mln.problog.  Per program and size:
# the ground program (relevant rules and atoms), the estimate, the time to
# the stopping rule (delta 0.01: grounding and sampling, the function's
# whole run) and the sampling rate at a fixed sample count, on each device:
# gpu (the CUDA sampler), cpu (the CPU backend, every core), cpu1 (the CPU
# backend on one thread).
#
#   bash bench/cplogic.sh [OUT.md]      (default bench/results/cpu-2core/cplogic.md)
#   DEVICES="cpu cpu1"                  add gpu on a GPU host
#   BLOODTYPE="10 100 1000 10000"  GROWINGHEAD="10 20 50 100 200"  GROWINGBODY="10 20 50 100"
#   FIXED=1000000                       samples of the rate run (FIXED_CPU: on cpu and cpu1, default FIXED)
#   STMT_TIMEOUT=300                    seconds one call may take (0: none); a cell past it reads "timeout"
#   PROBLOG=DIR                         ProbLog's source (ML-KULeuven/problog, pure Python: DIR/problog-cli.py)
#                                       run beside, on one core: its sampling (problog sample --estimate -N)
#                                       and its exact inference (d-DNNF through the dsharp binary it ships);
#                                       unset or absent: the report says so. Its commit: git, else DIR/COMMIT
#   PROBLOG_N=1000 PROBLOG_TIMEOUT=60   ProbLog's samples, and seconds per ProbLog run (a cut run's samples
#                                       still count); a program's larger sizes are skipped after a timeout
# Needs the cluster of `make cluster-start` (or PG* variables) and the extension installed.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -z "${PGHOST:-}" ] && eval "$(bash scripts/cluster.sh env)"
OUT=${1:-bench/results/cpu-2core/cplogic.md}
DEVICES=${DEVICES:-"cpu cpu1"}
BLOODTYPE=${BLOODTYPE:-"10 100 1000 10000"}
GROWINGHEAD=${GROWINGHEAD:-"10 20 50 100 200"}
GROWINGBODY=${GROWINGBODY:-"10 20 50 100"}
FIXED=${FIXED:-1000000}
FIXED_CPU=${FIXED_CPU:-$FIXED}
STMT_TIMEOUT=${STMT_TIMEOUT:-300}
PROBLOG=${PROBLOG:-}
PROBLOG_N=${PROBLOG_N:-1000}
PROBLOG_TIMEOUT=${PROBLOG_TIMEOUT:-60}
DB=${BENCH_DB:-mln_bench_cplogic}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dropdb --if-exists "$DB" && createdb "$DB"
psql -d "$DB" -qXAt -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -c "CREATE EXTENSION pg_mln"

# call FILE OPTIONS: mln.problog's row (probability|ci_low|ci_high|samples)
# and its NOTICE lines, in $tmp/out; false when it failed.
call() {
  {
    echo "SET client_min_messages = notice; SET statement_timeout = '${STMT_TIMEOUT}s';"
    echo "\\set prog \`cat $1\`"
    echo "SELECT probability, ci_low, ci_high, samples FROM mln.problog(:'prog', '$2');"
  } | psql -d "$DB" -qXAt -v ON_ERROR_STOP=1 >"$tmp/out" 2>&1
}
# field REGEX: the first capture of REGEX in the last call's output.
field() { sed -nE "s#.*$1.*#\\1#p" "$tmp/out" | tail -1; }
opts() {
  case $1 in
    gpu) echo "\"device\": \"gpu\"" ;;
    cpu) echo "\"device\": \"cpu\"" ;;
    cpu1) echo "\"device\": \"cpu\", \"threads\": 1" ;;
  esac
}

source bench/cplogic_problog.sh  # problog_header, problog_cells
have_problog=false
[ -n "$PROBLOG" ] && [ -f "$PROBLOG/problog-cli.py" ] && have_problog=true

{
  echo "# CP-logic forward sampling: BLOODTYPE, GROWINGHEAD, GROWINGBODY"
  echo
  echo "- command: \`DEVICES=\"$DEVICES\" BLOODTYPE=\"$BLOODTYPE\" GROWINGHEAD=\"$GROWINGHEAD\" GROWINGBODY=\"$GROWINGBODY\" FIXED=$FIXED FIXED_CPU=$FIXED_CPU bash bench/cplogic.sh\`"
  echo "- host: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(free -g | awk '/Mem:/{print $2}') GiB; OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-unset}"
  if nvidia-smi >/dev/null 2>&1; then echo "- GPU: $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | head -1)"; fi
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "- each cell: seconds to the stopping rule (95% interval of width 0.01; the whole call: parse, grounding"
  echo "  on the operator engine, sampling) / samples per second over $FIXED samples ($FIXED_CPU on cpu and cpu1;"
  echo "  sampling alone)"
  problog_header
  echo
  printf "| program | N | relevant rules | atoms | strata | P(query) | samples to stop | grounding s |"
  for d in $DEVICES; do printf " %s |" "$d"; done
  $have_problog && printf " ProbLog sample: s / samples/s | ProbLog P | ProbLog exact: P, s |"
  echo
  printf "|---|---:|---:|---:|---:|---:|---:|---:|"
  for d in $DEVICES; do printf -- "---:|"; done
  $have_problog && printf -- "---:|---:|---:|"
  echo
} >"$OUT"

for prog in bloodtype growinghead growingbody; do
  sizes=$(eval echo "\${${prog^^}}")
  for n in $sizes; do
    python3 bench/gen/cplogic_gen.py "$prog" "$n" >"$tmp/prog.pl"
    row="" ground="" p="" lo="" hi=""
    for d in $DEVICES; do
      if call "$tmp/prog.pl" "{$(opts "$d"), \"verbose\": true}"; then
        total=$(field 'total ([0-9.]+) s')
        if [ -z "$ground" ]; then
          rules=$(field 'instances, ([0-9]+) relevant rules')
          atoms=$(field 'relevant rules over ([0-9]+) atoms')
          strata=$(field 'atoms in ([0-9]+) strata')
          ground=$(field 'grounded in ([0-9.]+) s')
          read -r p lo hi samples < <(grep -E '^[0-9.e-]+\|' "$tmp/out" | tail -1 | tr '|' ' ')
          est=$(python3 -c "print('%.4f ± %.4f' % ($p, ($hi - $lo) / 2))")
        fi
        fixed=$FIXED
        [ "$d" = gpu ] || fixed=$FIXED_CPU
        if call "$tmp/prog.pl" "{$(opts "$d"), \"samples\": $fixed, \"verbose\": true}"; then
          rate=$(field '\(([0-9]+) samples/s\)')
        else
          rate=$(grep -q 'statement timeout' "$tmp/out" && echo timeout || echo failed)
        fi
        row="$row $total / $rate |"
      else
        row="$row $(grep -q 'statement timeout' "$tmp/out" && echo timeout || echo failed) |"
        tail -3 "$tmp/out" >&2
      fi
    done
    $have_problog && row="$row $(problog_cells "$prog" "$tmp/prog.pl" "$p" "$lo" "$hi")"
    echo "| $prog | $n | ${rules:-} | ${atoms:-} | ${strata:-} | ${est:-} | ${samples:-} | ${ground:-} |$row" | tee -a "$OUT"
  done
done
dropdb --if-exists "$DB"
