#!/usr/bin/env bash
# One MAP job on one GPU against the same job spread over several GPUs
# (issue #23): the generated RC workload at PAPERS papers is loaded and
# grounded once by the command line (-keepData), then MAP jobs on that
# network are queued with mln.infer and served by mln_worker processes:
#   1 GPU     one worker (--gpu 0), partitions 1, timeout T
#   N GPUs    N = 2, 4, 8 as the host has them: one worker per GPU
#             (--gpu g), partitions N, timeout T; MLN_SPREAD_HALF=1 adds
#             mln_worker --gpus all with timeout T/2
#   2 on GPU0 two workers sharing GPU 0, partitions 2, timeout T (the
#             protocol without a second GPU; MLN_SPREAD_SHARED=1)
# Writes spread_run.md to OUT_DIR: per job the end-to-end seconds (claim to
# answer written: reading the network, planning, the walks, the write-back),
# the search seconds (the worker's solve), the cost and the rounds, and each
# part's worker, device and seconds.
#
#   bash bench/spread_run.sh OUT_DIR [PAPERS] [BUILD_DIR]
#   MLN_SPREAD_TIMEOUT=30   T, seconds
#   MLN_SPREAD_ROUNDS=N     rounds over the cut parts (default: the job's, 30 with kept walks)
#   MLN_SPREAD_DEVICE=gpu   the jobs' device (cpu: the same runs on CPU workers, for trying the script)
#   MLN_SPREAD_VARIANT="VAR=value ..." [MLN_SPREAD_VARIANT_GPUS=2]: that run again with these variables
#   MLN_SPREAD_RUNS="1 2 4"  only these GPU counts (default: 1 and every count the host has)
#   MLN_SPREAD_REPEAT=K     those runs K times over, in turn
#   MLN_SPREAD_TASK=marginal  marginal jobs of MLN_SPREAD_SAMPLES samples (default 100) instead:
#                           a part per GPU where the components allow, else slices of one part
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: spread_run.sh OUT_DIR [PAPERS] [BUILD_DIR]}
papers=${2:-1000000}
build=${3:-$root/build/cmake}
T=${MLN_SPREAD_TIMEOUT:-30}
R=${MLN_SPREAD_ROUNDS:-}
rounds_opt=${R:+\"rounds\": $R, }
task=${MLN_SPREAD_TASK:-map}
S=${MLN_SPREAD_SAMPLES:-100}
case $task in
  map) task_opt= ;;
  marginal) task_opt="\"samples\": $S, "; rounds_opt= ;;
  *) echo "MLN_SPREAD_TASK: map or marginal" >&2; exit 2 ;;
esac
dev=${MLN_SPREAD_DEVICE:-gpu}
mkdir -p "$out"
if [ -z "${PGHOST:-}" ]; then eval "$(bash "$root/scripts/cluster.sh" env)"; fi
export PGDATABASE=${PGDATABASE:-postgres}
work=$(mktemp -d /tmp/mln-spread-XXXXXX)
trap 'rm -rf "$work"; [ -n "${wk:-}" ] && kill $wk 2>/dev/null' EXIT  # (--gpus all passes the signal on)
q() { psql -qXAt -v ON_ERROR_STOP=1 -c "$1"; }
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
log=$out/spread_run.log
: >"$log"

"$build/bench/gen/mln_gen" rc "$papers" "$work/rc" >/dev/null || { echo "generator failed" >&2; exit 1; }
# Load and ground (and a 1-second search) with the command line, keeping the program.
CUDA_VISIBLE_DEVICES=0 "$build/solver/pg_mln" -i "$work/rc/prog.mln" -e "$work/rc/evidence.db" \
  -queryFile "$work/rc/query.db" -r "$work/out.txt" --device "$dev" -timeout 1 -keepData -verbose 1 >>"$log" 2>&1
prog=$(sed -n "s/.*Data remains in schema 'mln_\(.*\)'.*/\1/p" "$log" | tail -1)
[ -n "$prog" ] || { echo "no program kept (see $log)" >&2; exit 1; }
clauses=$(sed -n 's/.*### atoms = \([0-9]*\); clauses = \([0-9]*\).*/\2/p' "$log" | head -1)
atoms=$(sed -n 's/.*### atoms = \([0-9]*\);.*/\1/p' "$log" | head -1)

md=$out/spread_run.md
# The report, written again after each run (a run cut short keeps the ones before).
write_md() {
{
  echo "# One $task job on several GPUs (issue #23)"
  echo
  echo "- commit: \`${MLN_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null)}\`, date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; $gpus x $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
  echo "- command: \`MLN_SPREAD_TIMEOUT=$T MLN_SPREAD_ROUNDS=${R:-default}${MLN_SPREAD_TASK:+ MLN_SPREAD_TASK=$task MLN_SPREAD_SAMPLES=$S}${MLN_SPREAD_REPEAT:+ MLN_SPREAD_REPEAT=$MLN_SPREAD_REPEAT} bash bench/spread_run.sh OUT $papers\`"
  echo "- workload: generated RC, $papers papers: $atoms atoms, $clauses clauses (loaded and grounded once by the"
  echo "  command line: $(grep -E '^(load|ground) +[0-9.]+$' "$log" | head -2 | awk '{ printf "%s %s s ", $1, $2 }'))"
  echo "- end to end: the job's claim to its answer written (the workers read the network, plan, walk, write back);"
  echo "  search: the leading worker's solve (plan, rounds, parts' walks)"
  echo
  echo "| run | parts | timeout s | end to end s | search s | cost | rounds | device | status |"
  echo "|---|---:|---:|---:|---:|---:|---:|---|---|"
  for r in "${rows[@]}"; do echo "| $r |"; done
  echo
  echo "Parts (round | part | worker | device | atoms | clauses | seconds | flips | cost with neighbours held, or a"
  echo "marginal part's average cost | its samples):"
  echo
  echo '```'
  cat "$work/parts.md"
  echo '```'
} >"$md"
}
rows=()
# run LABEL PARTITIONS TIMEOUT WORKER-ARGS...: one job served by the
# workers, one mln_worker per argument list (separated by ";").
run() {
  local label=$1 parts=$2 tmo=$3; shift 3
  wk=
  local args=()
  for a in "$@" ";"; do
    if [ "$a" = ";" ]; then
      env ${run_env:-} "$build/solver/mln_worker" "${args[@]}" >>"$log" 2>&1 & wk="$wk $!"
      args=()
    else
      args+=("$a")
    fi
  done
  sleep 1  # the workers connect and listen
  local j
  j=$(q "SELECT mln.infer('$prog', '$task', '{\"partitions\": $parts, $rounds_opt$task_opt\"timeout\": $tmo, \"seed\": 1, \"device\": \"$dev\"}')")
  q "SELECT (mln.wait($j, interval '900 s'))->>'status'" >/dev/null
  kill $wk 2>/dev/null; wait $wk 2>/dev/null; wk=
  rows+=("$(q "SELECT concat_ws(' | ', '$label', $parts, $tmo,
                      round(extract(epoch FROM finished_at - started_at)::numeric, 1), round(seconds::numeric, 1),
                      round(coalesce(best_cost, average_cost)::numeric, 1), coalesce(rounds::text, '-'), device, status)
               FROM mln.jobs WHERE id = $j")")
  echo "## $label (job $j)" >>"$work/parts.md"
  q "SELECT concat_ws(' | ', round, part, worker, device, atoms, clauses, round(seconds::numeric, 2), flips,
                      round(coalesce(cost, average_cost)::numeric, 1), samples)
       FROM mln.job_parts WHERE job = $j ORDER BY round, part" >>"$work/parts.md"
  if [ "$task" = marginal ]; then
    # Each run's marginals against the first run's (one GPU): both are
    # estimates from $S samples, so this is their difference, not an error.
    if [ -z "${marg_base:-}" ]; then
      q "DROP TABLE IF EXISTS mln_spread_marg; CREATE TABLE mln_spread_marg AS
         SELECT predicate, arguments::text AS args, probability FROM mln.marginals('$prog')"
      marg_base=$label
    else
      echo "mean |p - p($marg_base)|: $(q "SELECT round(avg(abs(m.probability - b.probability))::numeric, 4) || ' over ' || count(*) || ' atoms'
             FROM mln.marginals('$prog') m JOIN mln_spread_marg b ON b.predicate = m.predicate AND b.args = m.arguments::text")" >>"$work/parts.md"
    fi
  fi
  write_md
}
# MLN_SPREAD_RUNS="1 4": only these GPU counts (a diagnostic call; the
# report's ratios want 1 beside the others).
want() { [ -z "${MLN_SPREAD_RUNS:-}" ] || [[ " $MLN_SPREAD_RUNS " == *" $1 "* ]]; }
# MLN_SPREAD_REPEAT=K: the runs below K times over, in turn (labelled
# "run k"), for how much a time varies from one job to the next.
K=${MLN_SPREAD_REPEAT:-1}
for ((k = 1; k <= K; k++)); do
  tag=; [ "$K" -gt 1 ] && tag=", run $k"
  want 1 && run "1 GPU$tag" 1 "$T" --gpu 0
  # 2, 4, 8 GPUs as the host has them: one worker per GPU (--gpu g each).
  for n in 2 4 8; do
    [ "$gpus" -ge "$n" ] || break
    want "$n" || continue
    wargs=()
    for ((g = 0; g < n; g++)); do wargs+=(--gpu "$g" ";"); done
    unset 'wargs[${#wargs[@]}-1]'
    run "$n GPUs$tag" "$n" "$T" "${wargs[@]}"
  done
done
# MLN_SPREAD_VARIANT="VAR=value ...": the run on MLN_SPREAD_VARIANT_GPUS
# GPUs (2 by default) again with these variables in the workers'
# environment (tuning runs).
vn=${MLN_SPREAD_VARIANT_GPUS:-2}
if [ -n "${MLN_SPREAD_VARIANT:-}" ] && [ "$gpus" -ge "$vn" ]; then
  wargs=()
  for ((g = 0; g < vn; g++)); do wargs+=(--gpu "$g" ";"); done
  unset 'wargs[${#wargs[@]}-1]'
  run_env=$MLN_SPREAD_VARIANT run "$vn GPUs, $MLN_SPREAD_VARIANT" "$vn" "$T" "${wargs[@]}"
fi
if [ "${MLN_SPREAD_HALF:-0}" = 1 ] && [ "$gpus" -ge 2 ]; then
  run "$gpus GPUs, T/2" "$gpus" "$(awk -v t="$T" 'BEGIN { print t / 2 }')" --gpus all
fi
if [ "${MLN_SPREAD_SHARED:-0}" = 1 ] || [ "$gpus" -lt 2 ]; then
  run "2 workers on GPU 0" 2 "$T" --gpu 0 ";" --gpu 0
fi

q "DROP TABLE IF EXISTS mln_spread_marg" >/dev/null
q "SELECT mln.drop_program('$prog')" >/dev/null
cat "$md"
