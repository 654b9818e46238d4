#!/usr/bin/env bash
# ProbLog programs as worker jobs (docs/problog.md, "Jobs"): CALL
# mln.solve(program, 'problog', options) queues, commits and waits; while
# the worker samples, mln.job_progress and mln.wait show the samples drawn
# and accepted and the widest interval; a cancel stops the sampling between
# batches and leaves no answer row.  (Equality with mln.problog, refusals,
# privileges: pgTAP 19_problog_job.sql.)
source "$(dirname "$0")/lib.sh"
eval "$(bash "$root/scripts/cluster.sh" env)"
export PGDATABASE=mln_e2e_problog_job
dropdb --if-exists "$PGDATABASE" 2>/dev/null; createdb "$PGDATABASE"
q() { psql -qXAt -v ON_ERROR_STOP=1 -c "$1"; }
q "SET client_min_messages = error; CREATE EXTENSION pg_mln" >/dev/null

alarm='0.1::burglary. 0.2::earthquake. 0.9::alarm :- burglary, earthquake. 0.8::alarm :- burglary, \+earthquake.
0.1::alarm :- \+burglary, earthquake. evidence(alarm). query(burglary). query(earthquake).'
"$WORKER" --quiet >/dev/null 2>&1 & wsolve=$!
res=$(echo "CALL mln.solve(:'prog', 'problog', '{\"device\": \"cpu\"}')" | psql -qXAt -v ON_ERROR_STOP=1 -v prog="$alarm" 2>&1)
kill $wsolve; wait $wsolve 2>/dev/null
check "CALL mln.solve(program, 'problog', options) queues, commits and waits: done" \
  test "$(printf '%s' "$res" | python3 -c 'import json, sys; print(json.load(sys.stdin)["status"])' 2>/dev/null)" = done
check "its answer: P(burglary | alarm) = 0.82 within its interval" \
  test "$(q "SELECT ci_low <= 0.82 AND 0.82 <= ci_high FROM mln.problog_results WHERE query = 'burglary'")" = t

# A run that samples until cancelled: 10^12 samples of a program whose
# every batch draws samples, with evidence.
job=$(q "SELECT mln.problog_job('0.5::a. 0.5::b. c :- a, b. 0.5::d :- c. 0.5::d :- \\+a. evidence(d). query(a). query(c).',
                                '{\"samples\": 1000000000000, \"device\": \"cpu\", \"verbose\": true}')" 2>/dev/null)
"$WORKER" --once --name problog_w >"$tmp/w.log" 2>&1 & wpid=$!
seen=f
for _ in $(seq 1 300); do
  seen=$(q "SELECT coalesce(samples > 0 AND accepted > 0 AND accepted < samples AND widest_interval > 0
                            AND samples_per_s > 0, false) FROM mln.job_progress WHERE id = $job")
  [ "$seen" = t ] && break
  sleep 0.1
done
check "progress while it samples: samples drawn and accepted, samples/s, the widest interval in mln.job_progress" \
  test "$seen" = t
check "and in mln.wait's answer, with its progress toward samples_total" \
  test "$(q "SELECT (s->>'accepted')::bigint > 0 AND (s->>'widest_interval')::float8 > 0 AND (s->>'progress')::float8 < 1
               AND (s->>'samples_total')::bigint = 1000000000000 FROM mln.wait($job, interval '0 s') s")" = t
q "SELECT mln.cancel($job)" >/dev/null
t0=$(date +%s)
for _ in $(seq 1 300); do kill -0 $wpid 2>/dev/null || break; sleep 0.1; done
check "a cancel stops the sampling between batches (the worker is done within 5 s)" test $(( $(date +%s) - t0 )) -le 5
kill -KILL $wpid 2>/dev/null; wait $wpid 2>/dev/null  # (a worker that ignored the cancel)
check "the job stays cancelled" test "$(q "SELECT status FROM mln.jobs WHERE id = $job")" = cancelled
check "and wrote no answer, and its ground program is gone" \
  test "$(q "SELECT (SELECT count(*) FROM mln.problog_results WHERE job = $job) + (SELECT count(*) FROM mln.problog_ground WHERE job = $job)")" = 0
check "the worker logs its batches (verbose) and says it was cancelled" \
  bash -c "grep -q 'job $job: .* samples drawn, .* accepted, widest interval' '$tmp/w.log' && grep -q 'job $job: cancelled' '$tmp/w.log'"

# Roles: alice queues a program over her own table (grounded with her
# privileges when queued); a worker that is no superuser, only a member of
# mln_worker (under the tables' row-level security), serves it; alice reads
# the answer, bob sees nothing of it.
users="pj_e2e_alice pj_e2e_bob pj_e2e_worker"
drop_roles() {
  for r in $users; do
    psql -qX -c "DROP OWNED BY $r CASCADE" >/dev/null 2>&1; psql -qX -d postgres -c "DROP ROLE IF EXISTS $r" >/dev/null 2>&1
  done
}
drop_roles
q "CREATE ROLE pj_e2e_alice LOGIN; CREATE ROLE pj_e2e_bob LOGIN; CREATE ROLE pj_e2e_worker LOGIN IN ROLE mln_worker;
   GRANT CREATE ON DATABASE $PGDATABASE TO pj_e2e_alice" >/dev/null
as() { local u=$1; shift; PGUSER=$u psql -qXAt "$@"; }
as pj_e2e_alice -c "CREATE SCHEMA alice; CREATE TABLE alice.edge(a int, b int); INSERT INTO alice.edge VALUES (1, 2), (2, 3)"
input='.input edge(a int, b int) from alice.edge(a, b)\n'
ajob=$(as pj_e2e_alice -c "SELECT mln.problog_job(E'$input 0.5::r(X, Y) :- edge(X, Y). r(X, Z) :- r(X, Y), r(Y, Z).
                                                   query(r(1, _)).', '{\"samples\": 40000, \"device\": \"cpu\"}')" 2>&1)
check "alice queues a program over her own table" test -n "${ajob##*[!0-9]*}"
PGUSER=pj_e2e_worker "$WORKER" --quiet --once 2>"$tmp/roles.err"
check "the mln_worker member serves it" \
  test "$(as pj_e2e_alice -c "SELECT (mln.wait($ajob, interval '30 s'))->>'status'")" = done
check "alice reads her answer: r(1,2) = 0.5, r(1,3) = 0.25 within their intervals" \
  test "$(as pj_e2e_alice -c "SELECT string_agg(query || ':' || (ci_low <= e AND e <= ci_high), ',' ORDER BY query_no)
                              FROM mln.problog_results JOIN (VALUES ('r(1,2)', 0.5), ('r(1,3)', 0.25)) x(query, e) USING (query)
                              WHERE job = $ajob")" = "r(1,2):true,r(1,3):true"
check "bob sees neither the job nor its answer" \
  test "$(as pj_e2e_bob -c "SELECT (SELECT count(*) FROM mln.jobs WHERE id = $ajob) + (SELECT count(*) FROM mln.problog_results)")" = 0
check "nor can he read alice's table through a job" \
  bash -c "PGUSER=pj_e2e_bob psql -qXAt -c \"SELECT mln.problog_job(E'$input 0.5::r(X, Y) :- edge(X, Y). query(r(1, 2)).')\" 2>&1 | grep -q 'permission denied'"
drop_roles
dropdb "$PGDATABASE"
finish
