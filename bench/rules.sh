#!/usr/bin/env bash
# Rule learning (issue #42): pg_mln's search with coverage on the operator
# engine (every CPU thread, one thread, the GPU) against Aleph in SWI-Prolog
# on the same generated family task (grandparent from parent and male) at
# growing sizes.  Both must find the planted rule; the table says when one
# did not.  Aleph's time is its own "[time taken]" for induce (the search,
# loading excluded) and the wall clock of the whole swipl run.
#
#   bash bench/rules.sh [OUT.md]          (default bench/results/cpu-2core/rules.md)
#   FACTS="10000 100000 1000000"          background facts per task
#   ENGINES=cpu,cpu1,cuda                 pg_mln's engines (cuda: absent without a GPU)
#   BIN=build/cmake/bench/mln_rules_bench
#   ALEPH=dir holding aleph.pl (Aleph's public source: github.com/friguzzi/aleph,
#         prolog/aleph.pl); SWIPL=swipl; ALEPH_TIMEOUT=600 seconds; ALEPH_MAX_FACTS=10000000
#   Absent Aleph or swipl: said so in the results.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-bench/results/cpu-2core/rules.md}
FACTS=${FACTS:-"10000 100000 1000000"}
ENGINES=${ENGINES:-cpu,cpu1,cuda}
BIN=${BIN:-build/cmake/bench/mln_rules_bench}
ALEPH=${ALEPH:-}
SWIPL=${SWIPL:-swipl}
ALEPH_TIMEOUT=${ALEPH_TIMEOUT:-600}
ALEPH_MAX_FACTS=${ALEPH_MAX_FACTS:-10000000}
[ -x "$BIN" ] || { echo "rules.sh: $BIN not built (cmake --build <dir> --target mln_rules_bench)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
aleph_ok=0
aleph_note="absent (set ALEPH to the directory of aleph.pl)"
if [ -n "$ALEPH" ] && [ -f "$ALEPH/aleph.pl" ]; then
  if command -v "$SWIPL" >/dev/null 2>&1; then
    aleph_ok=1
    aleph_note="Aleph $(cat "$ALEPH/../VERSION" 2>/dev/null || echo '(version unknown)') on $("$SWIPL" --version)"
  else
    aleph_note="absent ($SWIPL not found)"
  fi
fi
{
  echo "# Rule learning: pg_mln against Aleph"
  echo
  echo "- command: \`FACTS=\"$FACTS\" ENGINES=$ENGINES bash bench/rules.sh $OUT\`"
  echo "- machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)"
  echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || cat .devcache/commit.txt 2>/dev/null)"
  echo "- Aleph: $aleph_note"
  echo "- task: grandparent from parent and male (bench/rules.cpp); positives and negatives FACTS/20 each;"
  echo "  pg_mln default search (beam 8, max_body 4); Aleph clauselength 4, i 2, noise 0, minpos 2"
  echo
  echo "| facts | examples | engine | planted rule | seconds | coverage s | candidates | candidate-examples/s | Aleph induce s | Aleph wall s | Aleph / pg_mln |"
  echo "|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|"
} >"$OUT"
for n in $FACTS; do
  pl="$tmp/fam$n.pl"
  out=$("$BIN" "$n" engines="$ENGINES" aleph="$pl")
  echo "$out"
  examples=$(echo "$out" | sed -n 's/.*, \([0-9]*\) positives, \([0-9]*\) negatives.*/\1 \2/p' | awk '{print $1 + $2}')
  a_ind="-" a_wall="-" a_found="-"
  if [ $aleph_ok = 1 ] && [ "$n" -le "$ALEPH_MAX_FACTS" ]; then
    t0=$(date +%s.%N)
    a_out=$(timeout "$ALEPH_TIMEOUT" "$SWIPL" -q -p library="$ALEPH" \
      -g "induce(P), forall(member(C, P), portray_clause(C)), halt" "$pl" 2>&1)
    rc=$?
    a_wall=$(echo "$(date +%s.%N) - $t0" | bc)
    if [ $rc = 124 ]; then a_ind="timeout"; else
      a_ind=$(echo "$a_out" | sed -n 's/^\[time taken\] \[\([0-9.e-]*\)\]/\1/p' | tail -1 | awk '{printf "%.3f", $1}')
      # The theory is printed last by portray_clause: the planted rule, in either literal order.
      theory=$(echo "$a_out" | awk '/^\[total clauses constructed\]/{f=1; next} f' | tr -d ' \n')
      case "$theory" in
        "grandparent(A,B):-parent(A,C),parent(C,B)."|"grandparent(A,B):-parent(C,B),parent(A,C).") a_found=yes ;;
        *) a_found="NO: $theory" ;;
      esac
    fi
    a_wall=$(printf '%.2f' "$a_wall")
  fi
  first=1
  echo "$out" | grep '^engine' | while IFS= read -r line; do
    eng=$(echo "$line" | sed 's/^engine \([^ ]*\): absent.*/\1: absent/; s/^engine [^ ]* (\([^)]*)*\)): rule.*/\1/')
    if echo "$line" | grep -q ': absent'; then
      echo "| $n | $examples | $eng | | | | | | | | |" >>"$OUT"; continue
    fi
    planted=$(echo "$line" | sed -n 's/.*| planted \([A-Z a-z]*\) |.*/\1/p')
    total=$(echo "$line" | sed -n 's/.*| total \([0-9.]*\) s.*/\1/p')
    cov=$(echo "$line" | sed -n 's/.*| coverage \([0-9.]*\) s.*/\1/p')
    cands=$(echo "$line" | sed -n 's/.*| candidates \([0-9]*\) .*/\1/p')
    rate=$(echo "$line" | sed -n 's/.*| \([0-9.e+]*\) candidate-examples.*/\1/p')
    ratio="-"
    case "$a_ind" in ''|-|timeout) ;; *) ratio=$(awk -v a="$a_ind" -v b="$total" 'BEGIN{printf "%.1fx", a / (b > 0 ? b : 1e-9)}') ;; esac
    if [ $first = 1 ]; then a="$a_ind | $a_wall | $ratio"; first=0; else a="| | $ratio"; fi
    echo "| $n | $examples | $eng | $planted | $total | $cov | $cands | $rate | $a |" >>"$OUT"
  done
  if [ "$a_found" != yes ] && [ "$a_found" != - ]; then echo "| | | Aleph's theory | $a_found | | | | | | | |" >>"$OUT"; fi
done
echo "rules.sh: wrote $OUT"
cat "$OUT"
