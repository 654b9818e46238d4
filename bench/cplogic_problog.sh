# ProbLog beside mln.problog in bench/cplogic.sh (sourced there; it sets
# PROBLOG, PROBLOG_N, PROBLOG_TIMEOUT, have_problog and tmp).  ProbLog
# (ML-KULeuven/problog) is pure Python and single-threaded: its numbers sit
# beside pg_mln's one-core column.  The programs are the generator's text as
# it is: ProbLog reads the same syntax (probabilities as 1/3, \+ for
# negation, query/1).

# problog_header: the report's line on ProbLog: its version and commit, or
# why it is not there.
problog_header() {
  if ! $have_problog; then
    echo "- ProbLog: not run (PROBLOG unset, or no problog-cli.py there: PROBLOG=DIR with ML-KULeuven/problog's"
    echo "  source adds its sampling and exact inference)"
    return
  fi
  local version commit
  version=$(sed -nE "s/^version *= *'([^']+)'.*/\\1/p" "$PROBLOG/problog/version.py" 2>/dev/null)
  commit=$(git -C "$PROBLOG" rev-parse --short HEAD 2>/dev/null || head -c 7 "$PROBLOG/COMMIT" 2>/dev/null || echo unknown)
  echo "- ProbLog ${version:-unknown version}, commit ${commit:-unknown}, on $(python3 --version 2>&1), one core:"
  echo "  \`problog sample --estimate -N $PROBLOG_N --seed 1\` (wall seconds to its $PROBLOG_N samples / the samples per second it"
  echo "  reports, sampling alone; its estimate ± the 95% Wilson half-width; \"agrees\": that interval meets pg_mln's)"
  echo "  and \`problog\` exact inference (d-DNNF through the dsharp binary it ships: the probability and wall"
  echo "  seconds; \"in\": inside pg_mln's interval); each run cut at ${PROBLOG_TIMEOUT} s, a program's larger sizes"
  echo "  skipped after a cut"
}

# wall CMD...: runs CMD under the timeout (SIGINT: ProbLog's sampler then
# prints what it has); its output in $tmp/pl, its wall seconds in $tmp/pl_s;
# returns CMD's status (124: cut).
wall() {
  local t0 rc
  t0=$(date +%s.%N)
  timeout -s INT "$PROBLOG_TIMEOUT" "$@" >"$tmp/pl" 2>&1
  rc=$?
  python3 -c "print('%.2f' % ($(date +%s.%N) - $t0))" >"$tmp/pl_s"
  return $rc
}

# problog_sample PROG FILE P LO HI: the two sampling cells (time and rate;
# estimate and agreement with pg_mln's interval [LO, HI]).
problog_sample() {
  local prog=$1 file=$2 lo=$4 hi=$5 rc n rate q cut=""
  if [ -e "$tmp/skip_sample_$prog" ]; then echo "skipped | |"; return; fi
  wall python3 "$PROBLOG/problog-cli.py" sample --estimate -N "$PROBLOG_N" --seed 1 "$file"
  rc=$?
  n=$(sed -nE 's/.*estimate after ([0-9]+) samples.*/\1/p' "$tmp/pl")
  rate=$(sed -nE 's/.*\(([0-9.]+) samples\/second\).*/\1/p' "$tmp/pl")
  if [ -z "$n" ] || [ "$n" = 0 ]; then
    touch "$tmp/skip_sample_$prog"
    [ $rc -eq 124 ] && echo "timeout (> $PROBLOG_TIMEOUT s) | |" || echo "failed | |"
    [ $rc -eq 124 ] || tail -3 "$tmp/pl" >&2
    return
  fi
  [ $rc -eq 124 ] && { cut=", cut"; touch "$tmp/skip_sample_$prog"; }
  # The query's line ("a0:<TAB>0.238"); a query never true is not printed: 0.
  q=$(sed -nE 's/^ *[^%][^:]*:\t *([0-9.e-]+) *$/\1/p' "$tmp/pl" | head -1)
  python3 - "$(cat "$tmp/pl_s")" "$rate" "$n" "${q:-0}" "${lo:-nan}" "${hi:-nan}" "$cut" <<'PY'
import math, sys
s, rate, n, q, lo, hi, cut = sys.argv[1:]
n, q, lo, hi, z = int(n), float(q), float(lo), float(hi), 1.96
c = (q + z * z / (2 * n)) / (1 + z * z / n)
h = z * math.sqrt(q * (1 - q) / n + z * z / (4 * n * n)) / (1 + z * z / n)
agree = "" if math.isnan(lo) else (", agrees" if c - h <= hi and lo <= c + h else ", DISAGREES")
print("%s / %.0f (%d samples%s) | %.4f ± %.4f%s |" % (s, float(rate), n, cut, q, h, agree))
PY
}

# problog_exact PROG FILE LO HI: the exact-inference cell.
problog_exact() {
  local prog=$1 file=$2 lo=$3 hi=$4 rc v
  if [ -e "$tmp/skip_exact_$prog" ]; then echo "skipped |"; return; fi
  wall python3 "$PROBLOG/problog-cli.py" "$file"
  rc=$?
  v=$(sed -nE 's/^ *[^:]+:\t *([0-9.e-]+) *$/\1/p' "$tmp/pl" | head -1)
  if [ $rc -ne 0 ] || [ -z "$v" ]; then
    touch "$tmp/skip_exact_$prog"
    [ $rc -eq 124 ] && echo "timeout (> $PROBLOG_TIMEOUT s) |" || { echo "failed |"; tail -3 "$tmp/pl" >&2; }
    return
  fi
  python3 -c "
import sys; v, lo, hi, s = float('$v'), float('${lo:-nan}'), float('${hi:-nan}'), '$(cat "$tmp/pl_s")'
where = '' if lo != lo else (', in' if lo <= v <= hi else ', OUTSIDE pg_mln\'s interval')
print('%s, %s s%s |' % ('$v', s, where))"
}

# problog_cells PROG FILE P LO HI: ProbLog's three cells of one row.
problog_cells() {
  echo "$(problog_sample "$@") $(problog_exact "$1" "$2" "$4" "$5")"
}
