#!/usr/bin/env bash
# pg_mln CLI end to end on every bundled Tuffy sample with no database named:
# the kept private server (started by the first run, reused by the next,
# stopped by --stop-server), make demo's cluster when it is registered, and
# the throwaway cluster of --workdir.  Each run removes what it created.
source "$(dirname "$0")/lib.sh"
check_env=$(bash "$root/scripts/cluster.sh" env)  # the test cluster, for the registry test below
unset PGHOST PGPORT PGDATABASE PGUSER PGSERVICE
# A kept server and a cache of this test's own (never the user's).
chmod 755 "$tmp"
export MLN_SERVER_DIR=$tmp/server XDG_CACHE_HOME=$tmp/cache
stop_kept() { "$PGMLN" --stop-server >/dev/null 2>&1; rm -rf "$tmp"; }
trap stop_kept EXIT
before=$(ls -d /tmp/pg_mln-* 2>/dev/null | wc -l)

# smoke: the optimum is unique; the answer must equal Tuffy's.
"$PGMLN" -i "$DATA/smoke/prog.mln" -e "$DATA/smoke/evidence.db" -queryFile "$DATA/smoke/query.db" \
  -r "$tmp/smoke.out" >"$tmp/smoke.log" 2>&1
check "smoke: exit status 0" test $? -eq 0
printf 'Cancer("Anna")\nCancer("Bob")\nCancer("Edward")\nCancer("Frank")\n' >"$tmp/smoke.expected"
check "smoke: output equals Tuffy's answer" diff -u "$tmp/smoke.expected" <(sort "$tmp/smoke.out")
check "smoke: Tuffy's counts (6 atoms, 6 clauses)" grep -q '### atoms = 6; clauses = 6' "$tmp/smoke.log"
check "smoke: cost 0.00" grep -q '### Best answer has cost 0.00' "$tmp/smoke.log"
check "smoke: the first run started the kept server" grep -q 'kept server in .*started now' "$tmp/smoke.log"

# class: counts equal Tuffy's, cost at most Tuffy's 361.56.
"$PGMLN" -i "$DATA/class/prog.mln" -e "$DATA/class/evidence.db" -queryFile "$DATA/class/query.db" \
  -r "$tmp/class.out" >"$tmp/class.log" 2>&1
check "class: exit status 0" test $? -eq 0
check "class: the second run reused the kept server" \
  bash -c "grep -q 'Using the kept server in' '$tmp/class.log' && ! grep -q 'started now' '$tmp/class.log'"
check "class: Tuffy's counts (9650 atoms, 73265 clauses)" grep -q '### atoms = 9650; clauses = 73265' "$tmp/class.log"
cost=$(sed -n 's/### Best answer has cost //p' "$tmp/class.log")
check "class: cost $cost <= 361.56" awk -v c="${cost:-1e9}" 'BEGIN { exit !(c <= 361.56) }'
check "class: output lines look like category(\"P\", \"C\")" \
  bash -c "[ -s '$tmp/class.out' ] && ! grep -vE '^category\(\"[^\"]+\", \"[^\"]+\"\)$' '$tmp/class.out'"

check "class: no warning with the default time" bash -c "! grep -q '### Warning' '$tmp/class.log'"

# A time limit that ends the search before it has really begun is said.
"$PGMLN" -i "$DATA/class/prog.mln" -e "$DATA/class/evidence.db" -queryFile "$DATA/class/query.db" \
  -r "$tmp/class_t.out" -timeout 0.001 >"$tmp/class_t.log" 2>&1
check "class -timeout 0.001: a warning says the time limit ended the search early" \
  grep -q '### Warning: the time limit (0.001 s) ended the search after' "$tmp/class_t.log"
check "--version names the extension's version" \
  test "$("$PGMLN" --version)" = "pg_mln $(grep -o "default_version = '[^']*'" "$root/pg_mln.control" | cut -d"'" -f2)"

# -q instead of a query file, multiple program files, and -keepData off.
"$PGMLN" -i "$DATA/smoke/prog.mln" -e "$DATA/smoke/evidence.db" -q 'Cancer(x)' -r "$tmp/smoke2.out" >/dev/null 2>&1
check "-q works like a query file" diff -u "$tmp/smoke.expected" <(sort "$tmp/smoke2.out")

# Bad input: clear message, non-zero exit, nothing left behind.
"$PGMLN" -i "$DATA/smoke/prog.mln" -r "$tmp/x.out" >/dev/null 2>"$tmp/err1"; rc=$?
check "missing query: non-zero exit" test $rc -ne 0
check "missing query: clear message" grep -q 'a query is required' "$tmp/err1"
"$PGMLN" -i "$DATA/smoke/prog.mln" -q 'Cancer(x)' -r "$tmp/x.out" -bogus >/dev/null 2>"$tmp/err2"; rc=$?
check "unknown flag: exit 2 and message" bash -c "[ $rc -eq 2 ] && grep -q 'unknown option \"-bogus\"' '$tmp/err2'"
"$PGMLN" -i "$DATA/smoke/prog.mln" -q 'Cancer(x)' -r "$tmp/x.out" -mle >/dev/null 2>"$tmp/err3"; rc=$?
check "-mle: refused, naming it" bash -c "[ $rc -eq 2 ] && grep -q 'option -mle .* is not supported' '$tmp/err3'"
# Tuffy's research flags with their arity (a value for -innerPara and
# -serialmix, none for -key, -gibbs, -mcsat), -closedWorld for -cw, and
# -nopart: the same answer, and a note for -nopart.
"$PGMLN" -i "$DATA/smoke/prog.mln" -e "$DATA/smoke/evidence.db" -q 'Cancer(x)' -r "$tmp/smoke4.out" -key -gibbs \
  -innerPara 4 -mcsat -serialmix 2 -closedWorld Friends -nopart -gibbsThinning 10 >"$tmp/flags.log" 2>&1
check "Tuffy's research flags and -nopart: the same answer" diff -u "$tmp/smoke.expected" <(sort "$tmp/smoke4.out")
check "-nopart: a note says it changes nothing" grep -q '### Note: -nopart changes nothing' "$tmp/flags.log"
"$PGMLN" -i /nonexistent.mln -q 'Cancer(x)' -r "$tmp/x.out" >/dev/null 2>"$tmp/err4"; rc=$?
check "missing program file: message names it" bash -c "[ $rc -ne 0 ] && grep -q '/nonexistent.mln' '$tmp/err4'"
printf 'Smokes(person)\n1 Smokes(x) v v Smokes(y)\n' >"$tmp/bad.mln"
"$PGMLN" -i "$tmp/bad.mln" -q 'Smokes(x)' -r "$tmp/x.out" >/dev/null 2>"$tmp/err5"; rc=$?
check "malformed program: file, line and column" bash -c "[ $rc -ne 0 ] && grep -q 'bad.mln: line 2, column' '$tmp/err5'"
printf 'Smokes(Anna)\nSmokes(A, B)\n' >"$tmp/bad.db"
"$PGMLN" -i "$DATA/smoke/prog.mln" -e "$tmp/bad.db" -q 'Cancer(x)' -r "$tmp/x.out" >/dev/null 2>"$tmp/err6"; rc=$?
check "malformed evidence: file and line" bash -c "[ $rc -ne 0 ] && grep -q 'bad.db' '$tmp/err6' && grep -q 'line 2' '$tmp/err6'"

# What the runs created is gone; the server log has no warnings or errors
# from normal runs (the failed runs above log their errors, so look at
# a clean run's lines only).
kq() { psql -qXAt "host=$MLN_SERVER_DIR port=55433 user=postgres dbname=pg_mln" -c "$1"; }
check "kept server: no program or schema left behind" \
  test "$(kq "SELECT count(*) FROM mln.programs") $(kq "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'mln\_%'")" = "0 0"
lines=$(wc -l <"$MLN_SERVER_DIR/server.log")
"$PGMLN" -i "$DATA/smoke/prog.mln" -e "$DATA/smoke/evidence.db" -q 'Cancer(x)' -r "$tmp/smoke3.out" >/dev/null 2>&1
check "a normal run leaves no WARNING or ERROR in the server log" \
  bash -c "! tail -n +$((lines + 1)) '$MLN_SERVER_DIR/server.log' | grep -E 'WARNING|ERROR'"
check "--stop-server stops the kept server" bash -c "'$PGMLN' --stop-server | grep -q 'stopped the kept server'"
check "--stop-server again: nothing running" bash -c "'$PGMLN' --stop-server | grep -q 'not running'"

# make demo's cluster, when registered and up, is used when the kept server is down.
mkdir -p "$XDG_CACHE_HOME/pg_mln"
eval "$check_env"
echo "host=$PGHOST port=$PGPORT user=postgres" >"$XDG_CACHE_HOME/pg_mln/demo-cluster"
unset PGHOST PGPORT PGUSER
"$PGMLN" -i "$DATA/smoke/prog.mln" -e "$DATA/smoke/evidence.db" -q 'Cancer(x)' -r "$tmp/smoke4.out" >"$tmp/smoke4.log" 2>&1
check "with the kept server down, make demo's cluster is used" \
  bash -c "grep -q \"Using the make demo's cluster\" '$tmp/smoke4.log' && diff -q '$tmp/smoke.expected' <(sort '$tmp/smoke4.out')"
rm -f "$XDG_CACHE_HOME/pg_mln/demo-cluster"

# --workdir: a throwaway cluster, removed at the end.
mkdir -p "$tmp/wd" && chmod 777 "$tmp/wd"
"$PGMLN" -i "$DATA/smoke/prog.mln" -e "$DATA/smoke/evidence.db" -q 'Cancer(x)' -r "$tmp/smoke5.out" --workdir "$tmp/wd" \
  >"$tmp/smoke5.log" 2>&1
check "--workdir: a throwaway cluster answers and is removed" \
  bash -c "grep -q 'Started private PostgreSQL cluster in $tmp/wd' '$tmp/smoke5.log' && [ -z \"\$(ls -A '$tmp/wd')\" ]"
after=$(ls -d /tmp/pg_mln-* 2>/dev/null | wc -l)
check "no private cluster or temp directory left behind" test "$after" -eq "$before"
finish
