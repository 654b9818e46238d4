#!/usr/bin/env bash
# The CBC crash check of issue #59: IlpTest.ATimeLimitLeavesAValidBound
# (time limits from 1 ms to 2 s) run two copies at a time on two cores,
# ROUNDS times on each pair of CPUS given, as a loaded 2-core machine runs
# it; a copy that ends by a signal is a crash.  Prints each failure and a
# closing "N passed, M failed".
#   tests/ilp_pairs.sh SOLVER_TESTS ROUNDS "0,1" ["2,3" ...]
set -uo pipefail
bin=$1 rounds=$2; shift 2
dir=${ILP_PAIRS_DIR:-$(mktemp -d)}  # ILP_PAIRS_DIR: keep each copy's log and status there
mkdir -p "$dir"
pair() {  # cpus index
  local cpus=$1 k=$2 r a b
  for ((r = 0; r < rounds; r++)); do
    taskset -c "$cpus" "$bin" --gtest_filter=IlpTest.ATimeLimitLeavesAValidBound >"$dir/$k-$r-a.log" 2>&1 & a=$!
    taskset -c "$cpus" "$bin" --gtest_filter=IlpTest.ATimeLimitLeavesAValidBound >"$dir/$k-$r-b.log" 2>&1 & b=$!
    wait $a; echo "$k $r a $?" >>"$dir/rc"
    wait $b; echo "$k $r b $?" >>"$dir/rc"
  done
}
k=0
for cpus in "$@"; do pair "$cpus" $k & k=$((k + 1)); done
wait
passed=$(awk '$4 == 0' "$dir/rc" | wc -l)
failed=$(awk '$4 != 0' "$dir/rc" | wc -l)
awk '$4 != 0 { print "not ok - pair " $1 " round " $2 " copy " $3 ": exit " $4 (($4 > 128) ? " (signal " $4 - 128 ")" : "") }' "$dir/rc"
for f in $(awk '$4 != 0 { print $1 "-" $2 "-" $3 ".log" }' "$dir/rc"); do tail -5 "$dir/$f"; done
echo "ilp pairs: $passed passed, $failed failed"
[ -n "${ILP_PAIRS_DIR:-}" ] || rm -rf "$dir"
[ "$failed" -eq 0 ]
