#!/usr/bin/env bash
# README.md's examples, run as printed: every ```sql block in order, in one
# database, with a worker started the way the quick start starts it, and
# every command line that begins with `pg_mln ` in a copy of
# examples/smoke.  A block that errors or runs past its time fails.
# Lines that build, install or open a shell (make, eval, psql) are the
# set-up this script does itself; the worker's --dsn names this test's
# database instead of mln_demo.
source "$(dirname "$0")/lib.sh"
export PGDATABASE=mln_e2e_readme
dropdb --if-exists "$PGDATABASE" 2>/dev/null; createdb "$PGDATABASE"
readme=$root/README.md
limit=${MLN_README_BLOCK_SECONDS:-90}

# The fenced blocks of one language, each into its own numbered file.
blocks() {  # lang outdir
  awk -v lang="$1" -v dir="$2" '
    $0 == "```" lang { n++; f = sprintf("%s/%02d.%s", dir, n, lang); inb = 1; next }
    /^```/ && inb { inb = 0; close(f); next }
    inb { print > f }' "$readme"
}
mkdir -p "$tmp/sql" "$tmp/sh"
blocks sql "$tmp/sql"
blocks sh "$tmp/sh"
nsql=$(ls "$tmp/sql" | wc -l)
check "README.md has SQL examples ($nsql blocks)" test "$nsql" -ge 3

# The worker, as the quick start starts it (its line, with this database).
wline=$(grep -h '^mln_worker ' "$tmp"/sh/*.sh | head -1)
check "the quick start starts a worker" test -n "$wline"
wline=${wline%%&*}
wline=${wline//dbname=mln_demo/dbname=$PGDATABASE}
eval "set -- ${wline#mln_worker }"
"$WORKER" "$@" >"$tmp/worker.log" 2>&1 &
wpid=$!
trap 'kill $wpid 2>/dev/null; wait $wpid 2>/dev/null; rm -rf "$tmp"' EXIT

for f in "$tmp"/sql/*.sql; do
  b=$(basename "$f" .sql)
  timeout "$limit" psql -X -v ON_ERROR_STOP=1 -f "$f" >"$tmp/out_$b" 2>&1
  rc=$?
  if [ $rc -ne 0 ]; then sed 's/^/#   /' "$tmp/out_$b" | tail -15; fi
  check "README SQL block $b runs as printed (rc $rc; 124: past ${limit} s)" test $rc -eq 0
done
check "the quick start's MAP answer: Cancer(Anna) is true" grep -q '^ Cancer *| {Anna} *| t' "$tmp/out_01"
check "the quick start's marginals list Cancer(Edward)" grep -q '^ Cancer *| {Edward} *| 0\.[0-9]' "$tmp/out_01"
check "the examples print no NOTICE" bash -c "! grep -q NOTICE $tmp/out_*"

# Command lines, in a copy of the smoke sample (they write out.txt there).
cp -r "$DATA/smoke" "$tmp/smoke"
n=0
while IFS= read -r line; do
  n=$((n + 1))
  eval "set -- ${line#pg_mln }"
  (cd "$tmp/smoke" && timeout "$limit" "$PGMLN" "$@") >"$tmp/cli_$n" 2>&1
  rc=$?
  [ $rc -ne 0 ] && sed 's/^/#   /' "$tmp/cli_$n" | tail -10
  check "README command line '$line' runs as printed (rc $rc)" test $rc -eq 0
done < <(grep -h '^pg_mln ' "$tmp"/sh/*.sh)
check "README has command-line examples ($n)" test "$n" -ge 1
check "the command line wrote its answer" test -s "$tmp/smoke/out.txt"

kill $wpid 2>/dev/null; wait $wpid 2>/dev/null
dropdb "$PGDATABASE"
finish
