#!/usr/bin/env bash
# GPU MaxWalkSAT that wins on its own (issue #24): cost over time of the GPU
# walk alone, the CPU walk on every core and the CPU walk on one core, side
# by side on the same grounded network, same seed and same time budget.
# Each network is grounded once by the command line (-keepData); then
# bench/walk_race.cpp (mln_walk_race) reads it and runs each walk with
# solver walksat and no bound.  Writes OUT_DIR/walk_race.md and the traces
# OUT_DIR/walk-<load>-<path>.dat ("seconds cost flips").
#
#   bash bench/walk_race.sh OUT_DIR [BUILD_DIR]
#   MLN_RACE_LOADS="class rc:1000 rc:10000 rc:100000 smokers:100000 smokers:1000000"
#   MLN_RACE_PATHS="gpu cpu one"  (gpu needs a CUDA build and a device; wcpu adds the
#                                 weighted walk on all cores, cpu_walk weighted)
#   MLN_RACE_SECONDS=N            every walk's budget (default by size: 10 s up to
#                                 10^6 clauses, 30 s up to 10^7, 60 s above)
#   MLN_RACE_ARGS="key=value ..." extra mln_walk_race settings for every walk
#   MLN_MAP_DEBUG=1               keeps each walk's phase times (OUT_DIR/walk-<load>-<path>.err)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/cli_log.sh"
bench_start race "$@"
RACE=$build/bench/mln_walk_race
loads=${MLN_RACE_LOADS:-class rc:1000 rc:10000 rc:100000 smokers:100000 smokers:1000000}
paths=${MLN_RACE_PATHS:-gpu cpu one}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
cores=$(nproc)

# Time from which a trace stays at cost <= $2 ("-" if it ends above): the
# point after the last one above.  (The trace is the sum of the components'
# best costs so far, each counted from its starting state's cost.)
reach() {
  awk -v c="$2" 'BEGIN { tol = 1e-6 * (c < 0 ? -c : c) + 1e-9; t = "-" }
    $1 == "final" { next }
    { if ($2 > c + tol) t = "-"; else if (t == "-") t = $1 }
    END { print t }' "$1"
}

{
  echo "# GPU walk alone vs the CPU walk: cost over time"
  echo
  echo "- commit: \`${MLN_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null)}\`, date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- machine: ${gpu:-no GPU}, $cores cores"
  echo "- command: \`bash bench/walk_race.sh ${out#$root/}\` (loads: $loads; extra: ${MLN_RACE_ARGS:-none})"
  echo "- each walk: the grounded network read once, solve_map with solver walksat, seed 1, Tuffy's defaults"
  echo "  (adaptive noise on the CPU), the same time budget; gpu = the GPU walk alone (device gpu, design"
  echo "  weighted unless the extra settings say otherwise), cpu = the CPU walk on all $cores cores, one = 1 core."
  echo "- final: the walk's cost at its end (s: when it first reached that cost); gpu@cpu: when the GPU walk"
  echo "  first reached the CPU walk's final cost; sooner: the CPU walk's time to its final cost over that."
  echo "- wcpu = the weighted walk (the GPU's rules) on all $cores cores (cpu_walk weighted); without a gpu"
  echo "  path, gpu@cpu and sooner are the wcpu walk's."
  echo
  echo "| network | atoms | clauses | budget s | gpu final (s) | cpu final (s) | one core final (s) | wcpu final (s) | gpu@cpu s | sooner |"
  echo "|---|---:|---:|---:|---|---|---|---|---:|---:|"
} >"$out/walk_race.md"

for l in $loads; do
  w=${l%%:*}; n=${l#*:}; [ "$w" = "$l" ] && n=0
  d=$work/$w-$n
  mkdir -p "$d"
  if [ "$w" = class ]; then cp "$DATA/class/prog.mln" "$DATA/class/evidence.db" "$DATA/class/query.db" "$d/"
  else "$GEN" "$w" "$n" "$d" 1 >/dev/null || { echo "$l: generator failed" >&2; continue; }; fi
  # Ground once; keep the program's schema for the walks.
  "$PGMLN" -i "$d/prog.mln" -e "$d/evidence.db" -queryFile "$d/query.db" -r "$d/out.txt" -keepData \
    --solver walksat -maxFlips 1 -maxTries 1 >"$d/ground.log" 2>&1 || { echo "$l: grounding failed" >&2; tail -3 "$d/ground.log" >&2; continue; }
  schema=$(sed -n "s/.*Data remains in schema '\(.*\)'.*/\1/p" "$d/ground.log")
  atoms=$(cli_atoms "$d/ground.log" | head -1)
  clauses=$(cli_clauses "$d/ground.log" | head -1)
  secs=${MLN_RACE_SECONDS:-$( [ "${clauses:-0}" -le 1000000 ] && echo 10 || { [ "$clauses" -le 10000000 ] && echo 30 || echo 60; } )}
  declare -A F=() T=()
  for p in $paths; do
    tr=$out/walk-$w-$n-$p.dat
    # shellcheck disable=SC2086
    "$RACE" "$schema" "$p" "$secs" seed=1 ${MLN_RACE_ARGS:-} >"$tr" 2>"$d/$p.err" || { echo "$l $p: failed: $(tail -2 "$d/$p.err")" >&2; F[$p]=-; continue; }
    F[$p]=$(awk '$1 == "final" { print $3 }' "$tr")
    T[$p]=$(reach "$tr" "${F[$p]}")
    echo "$l $p: final ${F[$p]} reached at ${T[$p]:-?} s (budget $secs s)" >&2
    [ -n "${MLN_MAP_DEBUG:-}" ] && cp "$d/$p.err" "$out/walk-$w-$n-$p.err"  # solve_map's phase times
  done
  at=-; sooner=-
  fast=gpu; [ -n "${F[gpu]:-}" ] || fast=wcpu
  if [ -n "${F[$fast]:-}" ] && [ "${F[$fast]}" != - ] && [ -n "${F[cpu]:-}" ] && [ "${F[cpu]}" != - ]; then
    at=$(reach "$out/walk-$w-$n-$fast.dat" "${F[cpu]}"); at=${at:--}
    [ "$at" != - ] && sooner=$(awk -v a="${T[cpu]}" -v b="$at" 'BEGIN { printf "%.1fx", a / (b > 1e-4 ? b : 1e-4) }')
  fi
  name=$w; [ "$n" != 0 ] && name="$w $n"
  cell() { [ -n "${F[$1]:-}" ] && echo "${F[$1]} (${T[$1]:-?})" || echo -; }
  echo "| $name | $atoms | $clauses | $secs | $(cell gpu) | $(cell cpu) | $(cell one) | $(cell wcpu) | $at | $sooner |" >>"$out/walk_race.md"
  psql -qXAt -c "SELECT mln.drop_program('${schema#mln_}')" >/dev/null 2>&1
  unset F T
done
cat "$out/walk_race.md"
