#!/usr/bin/env bash
# Marginal inference end to end (pg_mln -marginal), side by side with Tuffy's
# figures (docs/performance.md, 2-core machine):
#  1. accuracy on smoke against its exact marginals (enumeration of its
#     network, which pg_mln does itself for small components): the MC-SAT
#     sampler alone (--exact-max-atoms 0) at 100 and 5,000 samples, max and
#     mean absolute error, next to Tuffy's (0.13 at 100, 0.028 at 5,000);
#  2. class -marginal (100 samples) and -dual, per path, median of R runs,
#     against Tuffy's 9.1 s;
#  3. generated smokers and RC workloads (bench/gen) at the given sizes.
# Writes OUT_DIR/marginal.md.
#
#   bash bench/marginal.sh OUT_DIR [BUILD_DIR]
#   MLN_MARGINAL_SIZES="1000 10000 100000"  MLN_MARGINAL_REPEAT=3
#   MLN_BENCH_PATHS="gpu cpu" (default: gpu and cpu with a GPU, else cpu)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/cli_log.sh"
bench_start marg "$@"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
paths=${MLN_BENCH_PATHS:-$([ -n "$gpu" ] && echo "gpu cpu" || echo cpu)}
reps=${MLN_MARGINAL_REPEAT:-3}
sizes=${MLN_MARGINAL_SIZES:-1000 10000 100000}

# Runs pg_mln; prints "wall_s average_cost" and leaves the output in $work/$tag.out(.marginal).
run() {  # tag dir path extra-args...
  local tag=$1 d=$2 p=$3; shift 3
  local t0 t1
  t0=$(date +%s.%N)
  "$PGMLN" -i "$d/prog.mln" -e "$d/evidence.db" -queryFile "$d/query.db" -r "$work/$tag.out" --device "$p" "$@" \
    >"$work/$tag.log" 2>&1 || { echo "FAILED"; tail -3 "$work/$tag.log" >&2; return 1; }
  t1=$(date +%s.%N)
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') $(sed -n 's/^### Average Cost //p' "$work/$tag.log" | head -1)"
}
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
# Max and mean |p - q| over the atoms of two marginal files ("%.4f<TAB>Atom").
errors() {
  awk -F'\t' 'NR == FNR { ref[$2] = $1; next } ($2 in ref) { d = $1 - ref[$2]; if (d < 0) d = -d; if (d > m) m = d; s += d; n++ }
              END { printf "%.4f %.4f %d", m, (n ? s / n : 0), n }' "$1" "$2"
}

{
  echo "# Marginal inference (MC-SAT), end to end"
  echo
  echo "- commit: \`${MLN_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null)}\`, date: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores${gpu:+, $gpu}"
  echo "- command: \`bash bench/marginal.sh ${out#$root/}\`; wall seconds of the whole command line against a running server"
  echo "- Tuffy's figures: docs/performance.md (Tuffy 0.4, 2-core machine, against a running server)"
  echo
  echo "## Accuracy on smoke (exact marginals by enumeration)"
  echo
  echo "| sampler | samples | max abs error | mean abs error | atoms | Tuffy's max error |"
  echo "|---|---:|---:|---:|---:|---:|"
  run smoke_exact "$DATA/smoke" cpu -marginal >/dev/null
  for s in 100 5000; do
    tuffy_err=$([ "$s" = 100 ] && echo 0.13 || echo 0.028)
    for p in $paths; do
      run "smoke_$p$s" "$DATA/smoke" "$p" -marginal -mcsatSamples "$s" --exact-max-atoms 0 >/dev/null
      read -r m a n <<<"$(errors "$work/smoke_exact.out" "$work/smoke_$p$s.out")"
      echo "| MC-SAT, $p | $s | $m | $a | $n | $tuffy_err |"
    done
  done
  echo
  echo "Exact marginals (pg_mln's enumeration): $(awk -F'\t' '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $1 }' "$work/smoke_exact.out")"
  echo
  echo "## class (9,650 atoms, 73,265 clauses), 100 samples"
  echo
  echo "| task | path | wall s (median of $reps) | min-max | average cost | vs Tuffy (9.1 s) |"
  echo "|---|---|---:|---|---:|---:|"
  for task in marginal dual; do
    for p in $paths; do
      : >"$work/walls"
      cost=
      for _ in $(seq "$reps"); do
        read -r w c <<<"$(run "class_$task" "$DATA/class" "$p" "-$task")"
        echo "$w" >>"$work/walls"; cost=$c
      done
      med=$(median <"$work/walls")
      echo "| -$task | $p | $med | $(sort -g "$work/walls" | head -1)-$(sort -g "$work/walls" | tail -1) | ${cost:--} | $(awk -v w="$med" 'BEGIN { printf "%.1fx", 9.1 / w }') |"
    done
  done
  if [ -x "$build/bench/gen/mln_gen" ]; then
    echo
    echo "## Generated workloads, -marginal (100 samples)"
    echo
    echo "| workload | size | path | atoms | clauses | wall s | ground s | search s | average cost |"
    echo "|---|---:|---|---:|---:|---:|---:|---:|---:|"
    for n in $sizes; do
      for w in smokers rc; do
        "$build/bench/gen/mln_gen" "$w" "$n" "$work/$w-$n" >/dev/null || continue
        for p in $paths; do
          read -r wall c <<<"$(run "$w-$n-$p" "$work/$w-$n" "$p" -marginal -verbose 1)"
          l=$work/$w-$n-$p.log
          echo "| $w | $n | $p | $(cli_atoms "$l") | $(cli_clauses "$l") | $wall | $(cli_phase "$l" ground) | $(cli_phase "$l" search) | ${c:--} |"
        done
      done
    done
  fi
} >"$out/marginal.md"
cat "$out/marginal.md"
