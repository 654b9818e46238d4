#!/usr/bin/env bash
# The stress harness's long mode: tests/e2e/stress.sh with more clients,
# more jobs each and faults more often, ROUNDS times over; writes
# OUT_DIR/stress.md with each round's clients, jobs, faults, wrong answers
# and jobs left unended (hangs).  Needs the test cluster (make
# cluster-start) and a build.
#   bash bench/stress.sh OUT_DIR [BUILD_DIR]
#   MLN_STRESS_CLIENTS=16 MLN_STRESS_JOBS=20 MLN_STRESS_FAULT_EVERY=0.3 MLN_STRESS_ROUNDS=3
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: bench/stress.sh OUT_DIR [BUILD_DIR]}
build=${2:-$root/build/cmake}
clients=${MLN_STRESS_CLIENTS:-16}
jobs=${MLN_STRESS_JOBS:-20}
every=${MLN_STRESS_FAULT_EVERY:-0.3}
rounds=${MLN_STRESS_ROUNDS:-3}
mkdir -p "$out"
eval "$(bash "$root/scripts/cluster.sh" env)"
sum=$(mktemp)
trap 'rm -f "$sum"' EXIT
{
  echo "# Stress harness, long mode"
  echo
  echo "\`MLN_STRESS_CLIENTS=$clients MLN_STRESS_JOBS=$jobs MLN_STRESS_FAULT_EVERY=$every MLN_STRESS_ROUNDS=$rounds bash bench/stress.sh $out\`"
  echo "at $(git -C "$root" rev-parse --short HEAD), $(nproc) cores, $(date -u +%Y-%m-%d)."
  echo "Each round: $clients clients (SQL sessions and command lines) on one database, $jobs jobs each"
  echo "(MAP, marginal, cancels, re-grounding with a command-line run, weight learning cancelled at a"
  echo "random moment), 3 workers with 2 s leases, a fault every $every s in turn: kill -9 of a worker,"
  echo "pg_terminate_backend of a worker's connection, pg_cancel_backend of a client's wait,"
  echo "pg_terminate_backend of a client's backend; every 25th fault restarts the server. Wrong: a finished answer that differs from the serial"
  echo "answer for its seed, or mln.infer accepting a learning network. Hangs: jobs still queued or"
  echo "running 60 s after the clients end."
  echo
  echo "| round | clients | client jobs | faults | wrong answers | hangs | seconds | checks |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---|"
} >"$out/stress.md"
for r in $(seq 1 "$rounds"); do
  MLN_STRESS_RESTART=1 MLN_STRESS_SUMMARY=$sum bash "$root/tests/e2e/stress.sh" "$build" "$clients" "$jobs" "$every" >"$out/stress_round$r.log" 2>&1
  rc=$?
  sed -i "s#$root/##g" "$out/stress_round$r.log"  # the log names no path outside the clone
  read -r c j f w h s <"$sum"
  echo "| $r | $c | $j | $f | $w | $h | $s | $([ $rc -eq 0 ] && echo passed || echo FAILED) |" >>"$out/stress.md"
  tail -1 "$out/stress.md"
done
