#!/usr/bin/env bash
# The benchmark suite: end-to-end runs of pg_mln on the Tuffy samples and on
# generated smokers / RC workloads, per path (GPU when present, CPU backend),
# plus the operator, WalkSAT and grounding micro-benchmarks.  Writes a
# Markdown report and PNG plots to bench/results/<machine>/.
#
#   bash bench/run.sh [BUILD_DIR]          (make bench runs it)
#   MLN_BENCH_SIZES="1000 10000 100000"     generated sizes (people / papers)
#   MLN_BENCH_MACHINE=name                  results folder name (default: derived)
#   MLN_BENCH_MICRO=0 / MLN_BENCH_HEAP=0 / MLN_BENCH_LOAD=0   skip the micro-benchmarks /
#                                           heap-to-heap operators / evidence loading
#   MLN_BENCH_SQL_MAX=10000                 largest generated size run on the plain-SQL path
#   MLN_BENCH_SQL_WORKLOADS="smokers rc"    generated workloads run on the plain-SQL path
#   MLN_BENCH_SQL_MAX_<workload>=N          MLN_BENCH_SQL_MAX for one workload
#   MLN_BENCH_WORKLOADS="smokers rc"        generated workloads to run
#   MLN_BENCH_SAMPLES=0                     skip the Tuffy samples
#   MLN_BENCH_APPEND=1                      add to (replace matching rows of) the existing runs.csv
#   MLN_BENCH_PATHS="gpu cpu"               engine paths (default: gpu and cpu with a GPU, else cpu)
#   MLN_BENCH_REPEAT=5                      runs per Tuffy sample (the median total is reported, with min and max)
#   MLN_BENCH_GEN_REPEAT=1                  runs per generated workload, path and size (median, as above)
#   MLN_BENCH_LOGS=DIR                      keep each run's command-line log (-verbose 1: grounding phases) in DIR
#
# Needs the extension installed and a database reachable through the PG*
# variables (make bench starts the private cluster and sets them).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/cli_log.sh"
build=${1:-$root/build/cmake}
case $build in /*) ;; *) build=$root/$build ;; esac
if [ -z "${PGHOST:-}" ]; then eval "$(bash "$root/scripts/cluster.sh" env)"; fi
export PGDATABASE=${PGDATABASE:-postgres}
DATA=${MLN_DATASETS:-$root/examples}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
machine=${MLN_BENCH_MACHINE:-$( [ -n "$gpu" ] && echo "gpu-$(echo "$gpu" | tr ' ' '-' | tr -cd 'A-Za-z0-9_-')" || echo "cpu-$(nproc)core")}
out=$root/bench/results/$machine
mkdir -p "$out"
work=$(mktemp -d /tmp/mln-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
sizes=${MLN_BENCH_SIZES:-1000 10000 100000}
paths="cpu"
[ -n "$gpu" ] && paths="gpu cpu"
paths=${MLN_BENCH_PATHS:-$paths}   # e.g. MLN_BENCH_PATHS=gpu
runs=$out/runs.csv
if [ "${MLN_BENCH_APPEND:-0}" = 1 ] && [ -s "$runs" ]; then
  # Add rows to an existing report (e.g. one more size); drop older rows of the same runs.
  :
else
  echo "workload,size,path,load_s,ground_s,search_s,total_s,atoms,clauses,cost,hard_violated,cli_rss_kb,backend_rss_kb,ground_engine_mb,search_gpu_mb,runs,total_min_s,total_max_s" >"$runs"
fi

# One end-to-end run; writes its CSV fields (without the repetition columns)
# to stdout and keeps the cost trace.  Fails when the command line failed.
run_once() {  # workload size path dir
  local w=$1 n=$2 p=$3 d=$4
  local log=$work/$w-$n-$p.log trace=$out/trace-$w-$n-$p.dat
  rm -f "$trace"
  MLN_TRACE_FILE=$trace /usr/bin/time -f "RSS %M" "$build/solver/pg_mln" -i "$d/prog.mln" -e "$d/evidence.db" \
    -queryFile "$d/query.db" -r "$work/out.txt" --device "$p" -timeout "${MLN_BENCH_TIMEOUT:-60}" -verbose 1 >"$log" 2>&1
  local rc=$?
  [ -n "${MLN_BENCH_LOGS:-}" ] && mkdir -p "$MLN_BENCH_LOGS" && cp "$log" "$MLN_BENCH_LOGS/"
  ph() { cli_phase "$log" "$1"; }  # the phase table
  local atoms clauses cost hard rss brss gmem smem
  atoms=$(cli_atoms "$log")
  clauses=$(cli_clauses "$log")
  cost=$(cli_cost "$log")
  hard=$(sed -n 's/### \([0-9]*\) hard clause(s) violated/\1/p' "$log"); hard=${hard:-0}
  rss=$(cli_rss_kb "$log")
  brss=$(sed -n 's/.*grounding backend peak RSS: \([0-9]*\) kB/\1/p' "$log")
  # Working memory of the operator engine at its peak (device memory on the GPU path).
  gmem=$(sed -n 's/.*"engine_peak_bytes": \([0-9]*\).*/\1/p' "$log" | awk '{ printf "%.1f", $1 / 1048576 }')
  smem=$(sed -n 's/.*search GPU memory peak: \([0-9]*\) kB/\1/p' "$log" | awk '{ printf "%.1f", $1 / 1024 }')
  if [ $rc -ne 0 ]; then echo "  $w $n $p: FAILED (see below)" >&2; tail -5 "$log" >&2; return 1; fi
  echo "$w,$n,$p,$(ph load),$(ph ground),$(ph search),$(ph total),$atoms,$clauses,$cost,$hard,$rss,$brss,$gmem,${smem:-0}"
}

# `reps` end-to-end runs (default 1); appends the run with the median total
# to runs.csv, with the number of runs and the smallest and largest total.
run_one() {  # workload size path dir [reps]
  local w=$1 n=$2 p=$3 d=$4 reps=${5:-1} rows=$work/rows.csv
  : >"$rows"
  for _ in $(seq "$reps"); do run_once "$w" "$n" "$p" "$d" >>"$rows" || return; done
  local med min max
  med=$(sort -t, -k7,7g "$rows" | sed -n "$(( (reps + 1) / 2 ))p")
  min=$(cut -d, -f7 "$rows" | sort -g | head -1)
  max=$(cut -d, -f7 "$rows" | sort -g | tail -1)
  sed -i "/^$w,$n,$p,/d" "$runs"
  echo "$med,$reps,$min,$max" >>"$runs"
  IFS=, read -r _ _ _ _ g s t a c cost _ <<<"$med"
  echo "  $w n=$n $p: ground $g s, search $s s, total $t s (median of $reps; $min-$max), $a atoms, $c clauses, cost $cost"
}

sql_max=${MLN_BENCH_SQL_MAX:-10000}   # the plain-SQL path is slow: only up to this size
echo "== end to end ($machine)"
if [ "${MLN_BENCH_SAMPLES:-1}" != 0 ]; then
  for p in $paths sql; do
    run_one smoke 0 "$p" "$DATA/smoke" "${MLN_BENCH_REPEAT:-5}"
    run_one class 0 "$p" "$DATA/class" "${MLN_BENCH_REPEAT:-5}"
  done
fi
if [ -x "$build/bench/gen/mln_gen" ]; then
  for n in $sizes; do
    for w in ${MLN_BENCH_WORKLOADS:-smokers rc}; do
      "$build/bench/gen/mln_gen" "$w" "$n" "$work/$w-$n" >/dev/null || continue
      for p in $paths; do run_one "$w" "$n" "$p" "$work/$w-$n" "${MLN_BENCH_GEN_REPEAT:-1}"; done
      lim=MLN_BENCH_SQL_MAX_$w   # e.g. MLN_BENCH_SQL_MAX_smokers=100000: a larger limit for one workload
      case " ${MLN_BENCH_SQL_WORKLOADS:-smokers rc} " in
        *" $w "*) [ "$n" -le "${!lim:-$sql_max}" ] && run_one "$w" "$n" sql "$work/$w-$n" "${MLN_BENCH_GEN_REPEAT:-1}" ;;
      esac
    done
  done
else
  echo "  (no workload generator built: skipping generated workloads)"
fi

if [ "${MLN_BENCH_LOAD:-1}" != 0 ]; then
  echo "== evidence loading"
  bash "$root/bench/load_evidence.sh" "$out" "${MLN_BENCH_LOAD_ATOMS:-10000000}" "$build" >/dev/null 2>"$work/load.err" \
    || echo "  load_evidence failed: $(tail -3 "$work/load.err")"
fi

if [ "${MLN_BENCH_HEAP:-1}" != 0 ]; then
  echo "== heap-to-heap operators vs PostgreSQL"
  bash "$root/bench/heap_ops.sh" "$out" "${MLN_BENCH_OPS_SIZES:-1000000 10000000}" >/dev/null 2>"$work/heap_ops.err" \
    || echo "  heap_ops failed: $(tail -3 "$work/heap_ops.err")"
fi

if [ "${MLN_BENCH_MICRO:-1}" != 0 ]; then
  echo "== micro-benchmarks"
  for b in bench_ops bench_walksat bench_ground; do
    [ -x "$build/bench/$b" ] || continue
    timeout 600 "$build/bench/$b" --benchmark_out="$out/$b.json" --benchmark_out_format=json \
      --benchmark_min_time=0.1 >/dev/null 2>"$work/$b.err" || echo "  $b failed: $(tail -2 "$work/$b.err")"
    # Record the program relative to the repository (no machine's paths in results).
    [ -f "$out/$b.json" ] && sed -i "s#\"$root/#\"#" "$out/$b.json"
  done
fi

{
  echo "commit=${MLN_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null)}"
  echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine=$machine"
  echo "cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//') ($(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB)"
  echo "gpu=${gpu:-none}"
  echo "command=MLN_BENCH_SIZES=\"$sizes\" bash bench/run.sh"
} >"$out/meta.txt"
python3 "$root/bench/report.py" "$out"
echo "report: $out/README.md"
