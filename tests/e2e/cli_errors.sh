#!/usr/bin/env bash
# pg_mln CLI errors in the user's terms: a wrong path (-i, -e, -queryFile,
# -conf, -r) fails before any database work, naming the flag, the path and
# the system's reason; a server error shows its DETAIL and HINT and never the
# program's per-run name; runs started together on a database without the
# extension all succeed; a session that only looks like a worker does not
# hold a run up, nor one that stops mid-job; -learnwt prints a line per
# iteration.
source "$(dirname "$0")/lib.sh"
eval "$(bash "$root/scripts/cluster.sh" env)"
export PGDATABASE=mln_e2e_cli_errors
dropdb --if-exists "$PGDATABASE" 2>/dev/null; createdb "$PGDATABASE"
fresh=mln_e2e_cli_errors_fresh
dsn="host=$PGHOST port=$PGPORT dbname=$PGDATABASE"
fake_pid= wpid=
cleanup() {
  [ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null
  [ -n "$wpid" ] && kill "$wpid" 2>/dev/null
  dropdb --if-exists "$fresh" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
chmod 755 "$tmp"  # the unprivileged user below reads in it
S=$DATA/smoke
smoke=(-i "$S/prog.mln" -e "$S/evidence.db" -queryFile "$S/query.db")
printf 'Cancer("Anna")\nCancer("Bob")\nCancer("Edward")\nCancer("Frank")\n' >"$tmp/smoke.expected"
cli() { "$PGMLN" --dsn "$dsn" "$@"; }

# Permission checks need a user that file modes apply to: root reads and
# writes anything, so as root they run as 'nobody' (setpriv), if it can run
# the binary and read the samples.
as_user=()
if [ "$(id -u)" -eq 0 ]; then
  as_user=(none)
  if command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
    cand=(setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups)
    "${cand[@]}" test -x "$PGMLN" -a -r "$S/prog.mln" 2>/dev/null && as_user=("${cand[@]}")
  fi
fi

# A path error: exit 2, the flag, path and reason on stderr, and nothing
# started (no connection, no grounding).
# Usage: path_error DESCRIPTION 'FLAG PATH' REASON [runner] -- ARGS...
path_error() {
  local d=$1 names=$2 reason=$3; shift 3
  local run=()
  while [ "$1" != -- ]; do run+=("$1"); shift; done
  shift
  "${run[@]}" "$PGMLN" --dsn "$dsn" "$@" >"$tmp/pe.out" 2>"$tmp/pe.err"
  local rc=$? bad=0
  [ $rc -eq 2 ] && grep -qF -- "$names: cannot " "$tmp/pe.err" && grep -qF -- ": $reason" "$tmp/pe.err" &&
    ! grep -qE 'Connecting to RDBMS|Grounding' "$tmp/pe.out" || bad=1
  check "$d: exit 2, '$names: ...: $reason', no database work" test $bad -eq 0
  [ $bad -eq 0 ] || { echo "#   exit $rc"; tail -n 3 "$tmp/pe.out" "$tmp/pe.err" | sed 's/^/#   /'; }
}
mkdir "$tmp/dir"
printf 'Smokes(Anna)\n' >"$tmp/unreadable.db" && chmod 000 "$tmp/unreadable.db"
skip_perm() {
  if [ "${as_user[0]:-}" = none ]; then echo "ok - # skip (root, no setpriv to run as nobody) $1"; return 0; fi
  return 1
}

for flag in -i -e -queryFile; do
  case $flag in
    -i) rest=(-e "$S/evidence.db" -queryFile "$S/query.db") ;;
    -e) rest=(-i "$S/prog.mln" -queryFile "$S/query.db") ;;
    -queryFile) rest=(-i "$S/prog.mln" -e "$S/evidence.db") ;;
  esac
  path_error "$flag a directory" "$flag $tmp/dir" "Is a directory" -- "${rest[@]}" "$flag" "$tmp/dir" -r "$tmp/o.txt"
  path_error "$flag a missing file" "$flag $tmp/missing" "No such file or directory" -- \
    "${rest[@]}" "$flag" "$tmp/missing" -r "$tmp/o.txt"
  skip_perm "$flag an unreadable file" ||
    path_error "$flag an unreadable file" "$flag $tmp/unreadable.db" "Permission denied" "${as_user[@]}" -- \
      "${rest[@]}" "$flag" "$tmp/unreadable.db" -r "$tmp/o.txt"
done
# Each of several evidence files is checked.
path_error "-e good,directory" "-e $tmp/dir" "Is a directory" -- \
  -i "$S/prog.mln" -e "$S/evidence.db,$tmp/dir" -queryFile "$S/query.db" -r "$tmp/o.txt"
path_error "-conf a missing file" "-conf $tmp/missing.conf" "No such file or directory" -- \
  "${smoke[@]}" -conf "$tmp/missing.conf" -r "$tmp/o.txt"
path_error "-r a directory" "-r $tmp/dir" "Is a directory" -- "${smoke[@]}" -r "$tmp/dir"
path_error "-r in a missing directory" "-r $tmp/nodir/o.txt" "directory $tmp/nodir: No such file or directory" -- \
  "${smoke[@]}" -r "$tmp/nodir/o.txt"
mkdir "$tmp/ro" && chmod 555 "$tmp/ro"
skip_perm "-r in an unwritable directory" ||
  path_error "-r in an unwritable directory" "-r $tmp/ro/o.txt" "directory $tmp/ro: Permission denied" \
    "${as_user[@]}" -- "${smoke[@]}" -r "$tmp/ro/o.txt"
mkdir "$tmp/d.marginal"
path_error "-dual: -r's .marginal file a directory" "-r $tmp/d.marginal" "Is a directory" -- \
  "${smoke[@]}" -dual -r "$tmp/d"

# A server error: DETAIL and HINT shown, the program named by its -i file,
# never by its name in the database (smoke has no true Cancer atom to
# learn from).
cli "${smoke[@]}" -r "$tmp/l.out" -learnwt >"$tmp/l.log" 2>"$tmp/l.err"; rc=$?
check "-learnwt without training data: exit 2, the program named by -i" \
  bash -c "[ $rc -eq 2 ] && grep -qxF 'ERROR: the program (-i $S/prog.mln) has no training data' '$tmp/l.err'"
check "-learnwt without training data: the server's DETAIL" \
  grep -qx 'DETAIL: no query atom is true in the evidence .*' "$tmp/l.err"
check "-learnwt without training data: a HINT in the command line's terms" grep -qx 'HINT: .*(-e).*' "$tmp/l.err"
check "no internal program name (tuffy_<pid>) in the messages" bash -c "! grep -q 'tuffy_' '$tmp/l.err'"

# -learnwt: a line per iteration, also when the output is not a terminal
# (a small program whose iterations take long: many samples, no exact path).
printf '*Dom(t)\nQ(t)\n1 !Dom(x) v !Dom(y) v Q(x) v Q(y)\n0.5 !Dom(x) v !Dom(y) v !Q(x) v !Q(y)\n0.2 Q(x)\n' \
  >"$tmp/lc.mln"
printf 'Dom(A)\nDom(B)\nDom(C)\nDom(D)\nDom(E)\nQ(A)\nQ(B)\n!Q(C)\nQ(D)\n' >"$tmp/lc.db"
cli -i "$tmp/lc.mln" -e "$tmp/lc.db" -q Q -r "$tmp/lc.out" -learnwt -dMaxIter 3 -mcsatSamples 600000 \
  --exact-max-atoms 0 >"$tmp/lc.log" 2>&1; rc=$?
check "-learnwt: exit 0 and 'iteration k/3, objective X' lines" \
  bash -c "[ $rc -eq 0 ] && grep -qE '^    iteration [1-3]/3, objective -?[0-9.]+' '$tmp/lc.log'"

# Three runs started at once on a database without the extension: each
# creates it if missing, one at a time.
dropdb --if-exists "$fresh" 2>/dev/null; createdb "$fresh"
for i in 1 2 3; do
  "$PGMLN" --dsn "host=$PGHOST port=$PGPORT dbname=$fresh" "${smoke[@]}" -r "$tmp/c$i.out" >"$tmp/c$i.log" 2>&1 &
  pids[$i]=$!
done
for i in 1 2 3; do
  wait "${pids[$i]}"; rc=$?
  check "concurrent first runs on a new database: run $i exits 0 with the answer" \
    bash -c "[ $rc -eq 0 ] && diff -q '$tmp/smoke.expected' <(sort '$tmp/c$i.out') >/dev/null"
  [ $rc -eq 0 ] || grep ERROR -A2 "$tmp/c$i.log" | sed 's/^/#   /'
done

# A session named like the worker that never claims the job: the run serves
# the job itself after a second (it waited forever before).
PGAPPNAME=mln_worker psql -qXAt -c "SELECT pg_sleep(60)" >/dev/null 2>&1 &
fake_pid=$!
for i in $(seq 1 50); do
  [ "$(psql -qXAt -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'mln_worker'
                      AND datname = current_database()")" -gt 0 ] && break
  sleep 0.1
done
timeout 60 "$PGMLN" --dsn "$dsn" "${smoke[@]}" -r "$tmp/f.out" >"$tmp/f.log" 2>&1; rc=$?
check "a worker-named session that claims nothing: the run finishes (exit $rc) with the answer" \
  bash -c "[ $rc -eq 0 ] && diff -q '$tmp/smoke.expected' <(sort '$tmp/f.out') >/dev/null"
check "... and says it served the job itself" \
  grep -qx '### no worker claimed the job within 1 s; serving it in this process' "$tmp/f.log"
psql -qXAt -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'mln_worker'
               AND query LIKE '%pg_sleep(60)%' AND pid <> pg_backend_pid()" >/dev/null
kill "$fake_pid" 2>/dev/null; wait "$fake_pid" 2>/dev/null; fake_pid=

# A real worker that is idle claims the job: the run does not serve it.
"$WORKER" --quiet & wpid=$!
for i in $(seq 1 50); do
  [ "$(psql -qXAt -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'mln_worker'
                      AND datname = current_database()")" -gt 0 ] && break
  sleep 0.1
done
cli "${smoke[@]}" -r "$tmp/w.out" >"$tmp/w.log" 2>&1; rc=$?
check "an idle external worker serves the job (exit $rc, the answer, no in-process worker)" \
  bash -c "[ $rc -eq 0 ] && diff -q '$tmp/smoke.expected' <(sort '$tmp/w.out') >/dev/null \
           && ! grep -q 'serving it in this process' '$tmp/w.log'"
kill "$wpid" 2>/dev/null; wait "$wpid" 2>/dev/null; wpid=

# A worker that claims the job and then stops (SIGSTOP: connected, silent):
# once its lease has run out, the run serves the job itself.
"$WORKER" --quiet --lease 2 & wpid=$!
timeout 180 "$PGMLN" --dsn "$dsn" -i "$tmp/lc.mln" -e "$tmp/lc.db" -q Q -r "$tmp/lc2.out" -learnwt -dMaxIter 4 -mcsatSamples 600000 \
  --exact-max-atoms 0 >"$tmp/lease.log" 2>&1 &
cpid=$!
for i in $(seq 1 100); do
  [ "$(psql -qXAt -c "SELECT count(*) FROM mln.jobs WHERE status = 'running'")" -gt 0 ] && break
  sleep 0.1
done
kill -STOP "$wpid"
wait "$cpid"; rc=$?
kill -KILL "$wpid" 2>/dev/null; wait "$wpid" 2>/dev/null; wpid=
check "a worker that stops mid-job: the run finishes (exit $rc) and says it took the job over" \
  bash -c "[ $rc -eq 0 ] && grep -qx \"### the job's worker stopped renewing its lease; serving the job in this process\" \
           '$tmp/lease.log'"

dropdb "$PGDATABASE"
finish
