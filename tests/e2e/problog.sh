#!/usr/bin/env bash
# ProbLog on the command line (docs/problog.md, "On the command line"):
# pg_mln -problog FILE answers the program's queries through mln.problog, one
# line per query atom (query, probability, 95% interval, samples).  Every
# answer's interval must hold the exact probability (worked out by hand
# below; the seed is fixed, so the run is the same each time); errors name
# the file, with line and column for the program's, and come before any
# server work where they can.
source "$(dirname "$0")/lib.sh"
eval "$(bash "$root/scripts/cluster.sh" env)"
export PGDATABASE=mln_e2e_problog
dropdb --if-exists "$PGDATABASE" 2>/dev/null; createdb "$PGDATABASE"
cli() { "$PGMLN" --dsn "dbname=$PGDATABASE" "$@"; }

# Burglary and earthquake given the alarm: P(burglary | alarm) = 0.082 / 0.1 =
# 0.82, P(earthquake | alarm) = 0.036 / 0.1 = 0.36.
cat >"$tmp/alarm.pl" <<'PL'
0.1::burglary. 0.2::earthquake.
0.9::alarm :- burglary, earthquake.
0.8::alarm :- burglary, \+earthquake.
0.1::alarm :- \+burglary, earthquake.
evidence(alarm).
query(burglary). query(earthquake).
PL
# An annotated disjunction and negation: a and b exclude each other, so
# P(d) = P(b) * 0.6 = 0.3; and a path over the database's table edge:
# r(1,3) needs both edges' 0.5, P = 0.25; r(1,2) = 0.5.
cat >"$tmp/ad.pl" <<'PL'
0.3::a; 0.5::b.
0.6::c :- b.
d :- \+a, c.
0.5::r(X, Y) :- edge(X, Y).
r(X, Z) :- r(X, Y), r(Y, Z).
query(a). query(d). query(r(1, _)).
PL
psql -qX -c "CREATE TABLE edge(a int, b int); INSERT INTO edge VALUES (1, 2), (2, 3)"
printf 'burglary\t0.82\nearthquake\t0.36\n' >"$tmp/alarm.exact"
printf 'a\t0.3\nd\t0.3\nr(1,2)\t0.5\nr(1,3)\t0.25\n' >"$tmp/ad.exact"

# within OUT EXACT: every line of OUT has 5 fields, the queries of EXACT in
# its order, each exact probability in [ci_low, ci_high], an interval no
# wider than the stopping rule's 0.01 and at least 1,000 samples.
within() {
  awk -F'\t' 'NR == FNR { p[FNR] = $2; q[FNR] = $1; n = FNR; next }
    { m++; if (NF != 5 || $1 != q[m] || !($3 <= p[m] && p[m] <= $4) || $4 - $3 > 0.0101 || $5 < 1000) {
        print "  bad line " m ": " $0 " (exact " p[m] ")"; bad = 1 } }
    END { exit bad || m != n }' "$2" "$1"
}

cli -problog "$tmp/alarm.pl" -o "$tmp/alarm.tsv" >"$tmp/log" 2>&1
check "pg_mln -problog exits 0" test $? -eq 0
check "burglary and earthquake given the alarm: 0.82 and 0.36 within their intervals" within "$tmp/alarm.tsv" "$tmp/alarm.exact"
check "the stopping rule's samples: one count for all queries, at most (1.96/0.01)^2 = 38,416" \
  test "$(cut -f5 "$tmp/alarm.tsv" | sort -u | awk '$1 <= 38416' | wc -l)" = 1
cli -problog "$tmp/ad.pl" --device cpu >"$tmp/ad.tsv" 2>"$tmp/log"
check "without -o the answer is stdout's only content" within "$tmp/ad.tsv" "$tmp/ad.exact"
check "and the progress goes to stderr" grep -q '>>> 4 query atom(s)' "$tmp/log"
cli -problog "$tmp/ad.pl" --device cpu -problogOptions '{"samples": 5000, "seed": 7}' >"$tmp/a1" 2>/dev/null
cli -problog "$tmp/ad.pl" --device cpu -problogOptions '{"samples": 5000, "seed": 7, "threads": 1}' >"$tmp/a2" 2>/dev/null
check "-problogOptions samples: exactly 5,000 samples" test "$(cut -f5 "$tmp/a1" | sort -u)" = 5000
check "the same seed gives the same answer on any thread count" cmp -s "$tmp/a1" "$tmp/a2"
cli -problog "$tmp/alarm.pl" -verbose 1 -problogOptions '{"samples": 2000, "max_samples": 2000}' \
  -o "$tmp/v.tsv" >"$tmp/log" 2>&1
check "-verbose shows the server's progress" grep -q 'NOTICE: .*problog grounded in' "$tmp/log"

# Errors.  host=/nonexistent: a run that tried to connect would fail on it
# instead of on the error checked.
"$PGMLN" --dsn host=/nonexistent -problog "$tmp/none.pl" -o "$tmp/x.tsv" >"$tmp/err" 2>&1
check "a missing file: the system's reason, before any connection" \
  grep -q "ERROR: -problog $tmp/none.pl: cannot read the program file: No such file or directory" "$tmp/err"
printf '0.1::burglary.\n0.9::alarm :- burglary\nquery(alarm).\n' >"$tmp/bad.pl"
"$PGMLN" --dsn host=/nonexistent -problog "$tmp/bad.pl" -o "$tmp/x.tsv" >"$tmp/err" 2>&1
check "a syntax error: the file, line and column, before any connection" \
  grep -q "ERROR: $tmp/bad.pl: line 3, column 1: syntax error at or near \"query\"" "$tmp/err"
printf '0.5::a(1).\n\nquery(a(1)). evidence(a(2)).\n' >"$tmp/ev.pl"
cli -problog "$tmp/ev.pl" -o "$tmp/x.tsv" >"$tmp/err" 2>&1
rc=$?
check "the server's error on the program: the file, line and column" \
  grep -q "ERROR: $tmp/ev.pl: line 3, column 23: evidence a(2) = true cannot hold" "$tmp/err"
check "exit status 2 and no output file" test $rc -eq 2 -a ! -e "$tmp/x.tsv"
cli -problog "$tmp/alarm.pl" -maxFlips 10 >"$tmp/err" 2>&1
check "an MLN flag is refused, named" grep -q 'ERROR: option -maxFlips does not apply to -problog' "$tmp/err"
cli -problog "$tmp/alarm.pl" --device sql >"$tmp/err" 2>&1
check "--device sql is refused" grep -q 'ERROR: --device must be auto, cpu or gpu with -problog' "$tmp/err"
cli -problog "$tmp/alarm.pl" -problogOptions '{"delta": 2}' >"$tmp/err" 2>&1
check "a bad option is the server's error" grep -q 'ERROR: option "delta" of mln.problog must be a number in (0, 1)' "$tmp/err"
# Ctrl-C: 10^12 samples would take hours; the call is cancelled between batches.
# (The binary itself in the background: a function would run in a subshell,
# which would get the signal and, being asynchronous, ignore it.)
"$PGMLN" --dsn "dbname=$PGDATABASE" -problog "$tmp/ad.pl" -problogOptions '{"samples": 1000000000000}' \
  -o "$tmp/c.tsv" >"$tmp/err" 2>&1 &
pid=$!
sleep 2; kill -INT $pid
# A run that ignored the signal would sample for hours: give up after 60 s.
for _ in $(seq 60); do kill -0 $pid 2>/dev/null || break; sleep 1; done
if kill -0 $pid 2>/dev/null; then  # and stop its backend, which would sample on
  kill -KILL $pid
  psql -qXAt -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity
                 WHERE datname = current_database() AND pid <> pg_backend_pid()" >/dev/null
fi
wait $pid
rc=$?
check "Ctrl-C cancels the call: exit 130, the server's cancel, no output file" \
  test $rc -eq 130 -a ! -e "$tmp/c.tsv" -a -n "$(grep 'canceling statement due to user request' "$tmp/err")"
# docs/problog.md's example prints what the function prints (seeded).
doc_sql=$(awk '/^## An example/ {on = 1} on && /^```sql/ {inb = 1; next} inb && /^```/ {exit} inb && !/^--/ {print}' "$root/docs/problog.md")
doc_out=$(awk '/^## An example/ {on = 1} on && /^```sql/ {inb = 1; next} inb && /^```/ {exit} inb && /^--/ {print}' "$root/docs/problog.md")
psql -qX -c "CREATE EXTENSION IF NOT EXISTS pg_mln" >/dev/null 2>&1
got=$(psql -X -c "$doc_sql" | head -4 | sed 's/^/-- /; s/ *$//')
check "docs/problog.md's example output is the function's" test "$got" = "$doc_out"

dropdb "$PGDATABASE"
finish
