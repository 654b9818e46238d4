#!/usr/bin/env bash
# Concurrent, interrupted use: CLIENTS clients (SQL sessions and command
# lines) run mixed jobs on one database (MAP, marginal, cancels,
# re-grounding, weight learning cancelled at a random moment) while a
# fault injector kills workers (kill -9), terminates their connections and
# cancels clients' waits.  Every job must end (done, cancelled or failed
# with a reason) within a bound; every finished answer must equal the
# serial answer for its seed; no program may be left in a state that gives
# a wrong answer.  Short by default (make check); bench/stress.sh runs it
# longer, with server restarts too (MLN_STRESS_RESTART=1), and writes the
# figures.
#   tests/e2e/stress.sh BUILD [CLIENTS] [JOBS_PER_CLIENT] [FAULT_EVERY_S]
source "$(dirname "$0")/lib.sh"
clients=${2:-8}
per_client=${3:-8}
fault_every=${4:-0.25}
export PGDATABASE=mln_e2e_stress
dropdb --if-exists "$PGDATABASE" 2>/dev/null; createdb "$PGDATABASE"
q() { psql -qXAt -v ON_ERROR_STOP=1 -c "$1"; }
log=$tmp/results
: >"$log"
q "CREATE EXTENSION pg_mln" >/dev/null

# Programs: one smokers network per client (people and friendships drawn
# with the client's seed), and one for weight learning.
prog='*Friends(person, person)
Smokes(person)
Cancer(person)
0.5  !Smokes(a1) v Cancer(a1)
0.4  !Friends(a1,a2) v !Smokes(a1) v Smokes(a2)
0.4  !Friends(a1,a2) v !Smokes(a2) v Smokes(a1)
-0.2 Cancer(a1)'
evidence() {  # seed
  awk -v s="$1" 'BEGIN { srand(s); n = 24
    for (i = 0; i < n; i++) { if (rand() < 0.3) print "Smokes(P" i ")"; if (rand() < 0.15) print "Cancer(P" i ")"
      for (k = 0; k < 2; k++) print "Friends(P" i ", P" int(rand() * n) ")" } }'
}
for c in $(seq 0 "$clients"); do
  q "SELECT mln.create_program('p$c', \$p\$$prog\$p\$)" >/dev/null || { not_ok "setup p$c"; finish; exit 1; }
  q "SELECT mln.load_evidence('p$c', \$e\$$(evidence $((c + 1)))\$e\$)" >/dev/null
  q "SELECT mln.set_query('p$c', 'Cancer(x)')" >/dev/null
  q "SELECT mln.ground('p$c', 'cpu')" >/dev/null
done
check "setup: $((clients + 1)) programs grounded" test "$(q "SELECT count(*) FROM mln.programs WHERE grounded_at IS NOT NULL")" = $((clients + 1))

# Two sessions create one program name at once: the second waits for the
# first and gets the error it would get after it, not a raw key violation.
psql -qXAt -c "BEGIN; SELECT mln.create_program('race', 'S(person)'); SELECT pg_sleep(1); COMMIT;" >/dev/null 2>&1 &
racer=$!
sleep 0.3
race_err=$(psql -qXAt -c "SELECT mln.create_program('race', 'S(person)')" 2>&1)
wait $racer
check "a program created twice at once: the second is told it exists" \
  bash -c "echo '$race_err' | grep -q 'program \"race\" already exists' && ! echo '$race_err' | grep -q pkey"

MAPOPT='{"seed": 1, "timeout": 20}'
MAROPT='{"seed": 1, "samples": 40, "threads": 1}'
# A finished job's answer, as one line: MAP cost and hard clauses violated;
# marginals rounded to 2 places.
# A read the injector cuts short (a cancelled wait, a terminated backend, a
# server restarting) returns nothing: read again, for up to 10 s.
read_again() {  # sql
  local a i
  for i in $(seq 1 20); do
    a=$(q "$1" 2>/dev/null) && [ -n "$a" ] && { echo "$a"; return; }
    sleep 0.5
  done
}
map_answer() { read_again "SELECT round((s->>'best_cost')::numeric, 4) || '/' || (s->>'hard_violated') FROM mln.wait($1, interval '90 s') s"; }
mar_answer() { read_again "SELECT md5(string_agg(arguments[1] || ':' || round(probability::numeric, 2), ',' ORDER BY arguments[1])) FROM mln.marginals('$1')"; }
queue() { q "SELECT mln.infer('$1', '$2', '$3')"; }
status_of() { read_again "SELECT status FROM mln.jobs WHERE id = $1"; }

# The serial answers, with one worker.
"$WORKER" --quiet --lease 2 >"$tmp/serial_worker.log" 2>&1 &
w0=$!
for c in $(seq 0 "$clients"); do
  j=$(queue "p$c" map "$MAPOPT"); echo "p$c $(map_answer "$j")" >>"$tmp/ref_map"
  j=$(queue "p$c" marginal "$MAROPT"); q "SELECT mln.wait($j, interval '90 s')" >/dev/null
  echo "p$c $(mar_answer "p$c")" >>"$tmp/ref_mar"
done
j=$(queue p0 map "$MAPOPT"); again=$(map_answer "$j")
check "serial MAP answers are reproducible for a seed" test "p0 $again" = "$(head -1 "$tmp/ref_map")"
j=$(queue p0 marginal "$MAROPT"); q "SELECT mln.wait($j, interval '90 s')" >/dev/null
check "serial marginals are reproducible for a seed" test "p0 $(mar_answer p0)" = "$(head -1 "$tmp/ref_mar")"
(cd "$DATA/smoke" && "$PGMLN" --dsn "dbname=$PGDATABASE" -i prog.mln -e evidence.db -queryFile query.db \
   -r "$tmp/ref_cli.txt" --seed 1 >/dev/null 2>&1)
check "serial command-line answer" test -s "$tmp/ref_cli.txt"
kill $w0; wait $w0 2>/dev/null
ref_map() { awk -v p="$1" '$1 == p { print $2 }' "$tmp/ref_map"; }
ref_mar() { awk -v p="$1" '$1 == p { print $2 }' "$tmp/ref_mar"; }

# Workers: NW of them, restarted whenever one dies (the injector kills them).
NW=3
mkdir -p "$tmp/w"
# (Started from a subshell that exits at once: a worker the injector kills
# is nobody's child here, so no shell reports it.)
start_worker() { ( "$WORKER" --quiet --lease 2 >>"$tmp/workers.log" 2>&1 & echo $! >"$tmp/w/$1" ); }
for i in $(seq 1 $NW); do start_worker "$i"; done
touch "$tmp/running"
( while [ -e "$tmp/running" ]; do
    for i in $(seq 1 $NW); do kill -0 "$(cat "$tmp/w/$i")" 2>/dev/null || start_worker "$i"; done
    sleep 0.3
  done ) &
keeper=$!

# The fault injector: one fault every fault_every seconds, in turn.
( n=0
  while [ -e "$tmp/running" ]; do
    sleep "$fault_every"
    [ -e "$tmp/running" ] || break
    # Long mode (MLN_STRESS_RESTART=1): every 25th fault restarts the server.
    if [ "${MLN_STRESS_RESTART:-0}" = 1 ] && [ $((n % 25)) = 24 ]; then
      bash "$root/scripts/cluster.sh" stop >/dev/null 2>&1; bash "$root/scripts/cluster.sh" start >/dev/null 2>&1 &&
        echo "restart the server" >>"$tmp/faults"
      n=$((n + 1)); continue
    fi
    case $((n % 4)) in
      0) i=$((RANDOM % NW + 1)); kill -9 "$(cat "$tmp/w/$i")" 2>/dev/null && echo "kill -9 worker" >>"$tmp/faults" ;;
      1) [ "$(q "SELECT count(pg_terminate_backend(pid)) FROM (SELECT pid FROM pg_stat_activity
              WHERE datname = current_database() AND application_name = 'mln_worker' ORDER BY random() LIMIT 1) w")" = 1 ] \
           && echo "terminate a worker's connection" >>"$tmp/faults" ;;
      2) [ "$(q "SELECT count(pg_cancel_backend(pid)) FROM (SELECT pid FROM pg_stat_activity
              WHERE datname = current_database() AND query LIKE '%mln.wait(%' AND pid <> pg_backend_pid()
              ORDER BY random() LIMIT 1) w")" = 1 ] && echo "cancel a client's wait" >>"$tmp/faults" ;;
      3) [ "$(q "SELECT count(pg_terminate_backend(pid)) FROM (SELECT pid FROM pg_stat_activity
              WHERE datname = current_database() AND application_name IN ('psql', 'pg_mln')
                AND (query LIKE '%mln.ground(%' OR query LIKE '%mln.wait(%') AND pid <> pg_backend_pid()
              ORDER BY random() LIMIT 1) w")" = 1 ] && echo "terminate a client's backend" >>"$tmp/faults" ;;
    esac
    n=$((n + 1))
  done ) &
injector=$!

# One client: per_client jobs on its program, each action in turn from a
# shuffled list; one line per job into the log: action job outcome.
client() {
  local c=$1 p=p$1 k j st a ans
  RANDOM=$((c * 7919 + 1))
  for k in $(seq 1 "$per_client"); do
    a=$(( (RANDOM + k) % 6 ))
    [ "$c" = 0 ] && [ "$k" = 2 ] && a=5   # client 0 learns once, whatever the draw
    case $a in
      0|1) j=$(queue $p map "$MAPOPT") || { echo "map - queue-error" >>"$log"; continue; }
         ans=$(map_answer "$j"); st=$(status_of "$j")
         if [ "$st" = done ]; then
           [ "$ans" = "$(ref_map $p)" ] && echo "map $j ok" >>"$log" ||
             echo "map $j WRONG '$ans' vs $(ref_map $p): $(q "SELECT concat_ws(' ', status, best_cost, hard_violated, attempts, worker, error) FROM mln.jobs WHERE id = $j")" >>"$log"
         else echo "map $j $st" >>"$log"; fi ;;
      2) j=$(queue $p marginal "$MAROPT") || { echo "marginal - queue-error" >>"$log"; continue; }
         q "SELECT mln.wait($j, interval '90 s')" >/dev/null 2>&1; st=$(status_of "$j")
         if [ "$st" = done ]; then
           # Another marginal job of this program may finish in between: the answer read is a seeded one either way.
           ans=$(mar_answer $p)
           [ "$ans" = "$(ref_mar $p)" ] && echo "marginal $j ok" >>"$log" ||
             echo "marginal $j WRONG '$ans' vs $(ref_mar $p): $(q "SELECT concat_ws(' ', status, samples, attempts, worker, error) FROM mln.jobs WHERE id = $j")" >>"$log"
         else echo "marginal $j $st" >>"$log"; fi ;;
      3) j=$(queue $p map "$MAPOPT") || { echo "cancel - queue-error" >>"$log"; continue; }
         sleep "0.$((RANDOM % 5))"; q "SELECT mln.cancel($j)" >/dev/null
         echo "cancel $j $(status_of "$j")" >>"$log" ;;
      4) q "SELECT mln.ground('$p', 'cpu')" >/dev/null
         (cd "$DATA/smoke" && timeout 120 "$PGMLN" --dsn "dbname=$PGDATABASE" -i prog.mln -e evidence.db \
            -queryFile query.db -r "$tmp/cli_${c}_${k}.txt" --seed 1 >"$tmp/cli_${c}_${k}.log" 2>&1)
         st=$?
         if [ $st -ne 0 ]; then echo "cli - exit-$st: $(grep -m1 ERROR "$tmp/cli_${c}_${k}.log")" >>"$log"
         elif cmp -s <(sort "$tmp/cli_${c}_${k}.txt") <(sort "$tmp/ref_cli.txt"); then echo "cli - ok" >>"$log"
         else echo "cli - WRONG" >>"$log"; fi ;;
      5) # Weight learning on the program, cancelled at a random moment; then
         # the program must answer as before (or, if learning finished, after
         # its weights are restored).
         j=$(q "SELECT mln.learn_weights('$p', '{\"iterations\": 30, \"seed\": 1}', 'cpu')") || { echo "learn - queue-error" >>"$log"; continue; }
         sleep "0.$((RANDOM % 9))"
         # Until the job has ended (a cancel or a read the injector cuts short is tried again).
         for i in $(seq 1 120); do
           q "SELECT mln.cancel($j)" >/dev/null 2>&1
           st=$(status_of "$j")
           case $st in done | failed | cancelled) break ;; esac
           sleep 0.5
         done
         [ "$st" = done ] && read_again "SELECT mln.restore_weights('$p', 1)" >/dev/null
         if q "SELECT mln.infer('$p')" >/dev/null 2>&1; then echo "learn $j INFER-ACCEPTED-LEARNING-NETWORK" >>"$log"; fi
         read_again "SELECT mln.ground('$p', 'cpu')" >/dev/null
         j=$(queue $p map "$MAPOPT"); ans=$(map_answer "$j"); st=$(status_of "$j")
         if [ "$st" = done ]; then
           [ "$ans" = "$(ref_map $p)" ] && echo "learn $j ok" >>"$log" || echo "learn $j WRONG $ans vs $(ref_map $p)" >>"$log"
         else echo "learn $j $st" >>"$log"; fi ;;
    esac
  done
}
t0=$(date +%s)
pids=()
for c in $(seq 0 $((clients - 1))); do client "$c" & pids+=($!); done
for p in "${pids[@]}"; do wait "$p"; done
rm -f "$tmp/running"
kill $injector 2>/dev/null; wait $injector 2>/dev/null
# Every job ends within the bound (leases are 2 s: a job a killed worker held is re-run).
left=
for i in $(seq 1 120); do
  left=$(q "SELECT count(*) FROM mln.jobs WHERE status IN ('queued', 'running')")
  [ "$left" = 0 ] && break
  sleep 0.5
done
kill $keeper 2>/dev/null; wait $keeper 2>/dev/null
for i in $(seq 1 $NW); do kill "$(cat "$tmp/w/$i")" 2>/dev/null; done
for i in $(seq 1 50); do  # the workers are not this shell's children: wait for them to leave
  alive=0
  for w in $(seq 1 $NW); do kill -0 "$(cat "$tmp/w/$w")" 2>/dev/null && alive=1; done
  [ $alive = 0 ] && break
  sleep 0.1
done
wait 2>/dev/null
secs=$(( $(date +%s) - t0 ))

jobs=$(wc -l <"$log")
faults=$(wc -l <"$tmp/faults" 2>/dev/null || echo 0)
wrong=$(grep -c 'WRONG\|INFER-ACCEPTED' "$log")
failed_no_reason=$(q "SELECT count(*) FROM mln.jobs WHERE status = 'failed' AND coalesce(error, '') = ''")
echo "# stress: $clients clients, $jobs jobs ($(q "SELECT count(*) FROM mln.jobs") in mln.jobs), $faults faults, $secs s"
echo "# outcomes: $(awk '{print $1 ":" $3}' "$log" | sed 's/WRONG.*/WRONG/; s/exit-\([0-9]*\).*/exit-\1/' | sort | uniq -c | tr -s ' ' | tr '\n' ' ')"
echo "# faults: $(sort "$tmp/faults" 2>/dev/null | uniq -c | tr -s ' ' | tr '\n' ' ')"
grep 'WRONG\|INFER-ACCEPTED\|exit-' "$log" | sed 's/^/#   /'
check "at least $((clients * per_client)) client jobs ran ($jobs)" test "$jobs" -ge $((clients * per_client))
check "at least 10 faults were injected ($faults)" test "$faults" -ge 10
check "no wrong answer ($wrong)" test "$wrong" = 0
check "every job ended within the bound ($left left queued or running)" test "$left" = 0
check "every failed job says why ($failed_no_reason without a reason)" test "$failed_no_reason" = 0
check "most jobs finished (done: $(grep -c ' ok$' "$log"))" test "$(grep -c ' ok$' "$log")" -ge $((jobs / 3))
# No program is left in a state that would answer wrongly: each grounds and solves to its serial answer.
"$WORKER" --quiet --lease 2 >/dev/null 2>&1 &
w=$!
bad=0
for c in $(seq 0 $((clients - 1))); do
  st=$(q "SELECT mln.program_state('p$c')")
  [ "$st" = grounded ] || q "SELECT mln.ground('p$c', 'cpu')" >/dev/null
  j=$(queue "p$c" map "$MAPOPT"); [ "$(map_answer "$j")" = "$(ref_map "p$c")" ] || bad=$((bad + 1))
done
kill $w; wait $w 2>/dev/null
check "afterwards every program solves to its serial answer ($bad differ)" test "$bad" = 0
[ -n "${MLN_STRESS_SUMMARY:-}" ] && echo "$clients $jobs $faults $wrong $left $secs" >"$MLN_STRESS_SUMMARY"
dropdb "$PGDATABASE"
finish
