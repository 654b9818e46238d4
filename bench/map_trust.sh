#!/usr/bin/env bash
# MAP you can trust (issue #25): cost, hard clauses violated, bound and time
# of the three MAP solvers side by side in one run, on workloads whose hard
# clauses conflict and on plain ones:
#   class-hard  the class sample with its four structural rules hard
#               (examples/class evidence, bench/gen's class_program_hard)
#   rc-hard N   generated RC whose evidence contradicts its hard rules
#   rc N        generated RC (soft rules), as in the issue's 1,000-paper case
#   class       the class sample as it is
# Each solver runs the command line (pg_mln --solver S) with the same seed;
# "best known" is the lowest cost any of them reached and "bound" the
# highest lower bound any of them proved.  Writes OUT_DIR/map_trust.md.
#
#   bash bench/map_trust.sh OUT_DIR [BUILD_DIR]
#   MLN_TRUST_RC="300 1000"  MLN_TRUST_ILP_TIMEOUT=600 (seconds for solver ilp)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/cli_log.sh"
bench_start trust "$@"
rc_sizes=${MLN_TRUST_RC:-300 1000}
ilp_timeout=${MLN_TRUST_ILP_TIMEOUT:-600}

# Workload directories.
mkdir -p "$work/class-hard"
"$GEN" class-hard 0 "$work/class-hard" >/dev/null
cp "$DATA/class/evidence.db" "$DATA/class/query.db" "$work/class-hard/"
loads="class-hard"
for n in $rc_sizes; do
  "$GEN" rc-hard "$n" "$work/rc-hard-$n" 1 >/dev/null
  "$GEN" rc "$n" "$work/rc-$n" 1 >/dev/null
  loads="$loads rc-hard-$n rc-$n"
done
mkdir -p "$work/class"
cp "$DATA/class/prog.mln" "$DATA/class/evidence.db" "$DATA/class/query.db" "$work/class/"
loads="$loads class"

# Runs one solver; prints "seconds cost hard bound proven".
run() {  # load solver
  local d=$work/$1 s=$2 log=$work/$1-$2.log extra=()
  [ "$s" = ilp ] && extra=(-timeout "$ilp_timeout")
  local t0 t1
  t0=$(date +%s.%N)
  "$PGMLN" -i "$d/prog.mln" -e "$d/evidence.db" -queryFile "$d/query.db" -r "$work/$1-$2.out" \
    --solver "$s" --seed 1 "${extra[@]}" >"$log" 2>&1 || { echo "FAILED - - - -"; tail -3 "$log" >&2; return; }
  t1=$(date +%s.%N)
  local cost hard bound proven
  cost=$(sed -n 's/^### Best answer has cost //p' "$log" | head -1)
  hard=$(sed -n 's/^### \([0-9]*\) hard clause(s) violated/\1/p' "$log" | head -1)
  if grep -q '^### Proven optimal' "$log"; then proven=yes; bound=$cost
  else proven=no; bound=$(sed -n 's/^### Lower bound \([^,]*\),.*/\1/p' "$log" | head -1); fi
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') ${cost:--} ${hard:-0} ${bound:--} $proven"
}

{
  echo "# MAP you can trust: walksat, ilp and auto side by side"
  echo
  echo "- commit: \`${MLN_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null)}\`, date: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores, CPU path"
  echo "- command: \`bash bench/map_trust.sh ${out#$root/}\` (RC sizes: $rc_sizes; solver ilp with -timeout $ilp_timeout)"
  echo "- seconds: the whole command line (grounding included) against a running server; cost: Tuffy's cost of the"
  echo "  answer; hard: hard clauses violated; bound: the solver's lower bound on the optimum (= cost when proven)."
  echo "- vs best: cost over the best cost any solver reached, minus 1; gap: (cost - best bound) / cost, where"
  echo "  best bound is the highest bound any solver proved (0 when the optimum is proven)."
  echo
  echo "| workload | solver | seconds | cost | hard violated | bound | proven | vs best | gap |"
  echo "|---|---|---:|---:|---:|---:|---|---:|---:|"
} >"$out/map_trust.md"
for l in $loads; do
  declare -A R=()
  for s in walksat ilp auto; do R[$s]=$(run "$l" "$s"); echo "$l $s: ${R[$s]}" >&2; done
  best=$(for s in walksat ilp auto; do echo "${R[$s]}" | awk '$2 != "-" && $2 != "FAILED" { print $2 }'; done | sort -g | head -1)
  bbound=$(for s in walksat ilp auto; do echo "${R[$s]}" | awk '$4 != "-" { print $4 }'; done | sort -g | tail -1)
  for s in walksat ilp auto; do
    set -- ${R[$s]}
    awk -v l="$l" -v s="$s" -v t="$1" -v c="$2" -v h="$3" -v b="$4" -v p="$5" -v best="$best" -v bb="$bbound" 'BEGIN {
      vs = (c == "-" || c == "FAILED" || best == "") ? "-" : (best > 0 ? sprintf("%+.2f%%", 100 * (c / best - 1)) : (c > 0 ? "inf" : "0%"));
      gap = (c == "-" || c == "FAILED" || bb == "") ? "-" : (c > 0 ? sprintf("%.2f%%", 100 * (c - bb) / c) : "0%");
      printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", l, s, t, c, h, b, p, vs, gap }' >>"$out/map_trust.md"
  done
  unset R
done
{
  echo
  echo "\"proven\" holds up to the solvers' tolerance: cost and bound agree within 10^-9 of the cost. Where"
  echo "hard clauses dominate the cost (5.2e7 per violated one) that is wider than a soft weight."
} >>"$out/map_trust.md"
echo "wrote $out/map_trust.md" >&2
