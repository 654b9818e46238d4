#!/usr/bin/env bash
# The worker against the test cluster: a job end to end through SQL, a
# worker killed mid-job (another reclaims it), cancel through mln.wait,
# and a failed job's readable reason.
source "$(dirname "$0")/lib.sh"
export PGDATABASE=mln_e2e_worker
dropdb --if-exists "$PGDATABASE"; createdb "$PGDATABASE"
psql -qX -v ON_ERROR_STOP=1 >/dev/null <<SQL
CREATE EXTENSION pg_mln;
SELECT mln.create_program('smoke', pg_read_file('$DATA/smoke/prog.mln'));
SELECT mln.load_evidence('smoke', pg_read_file('$DATA/smoke/evidence.db'));
SELECT mln.set_query('smoke', 'Cancer(x)');
SELECT mln.ground('smoke');
-- An unsatisfiable program (min cost > 0): its search runs its whole budget
-- (with exact_max_atoms = 0: its 5 atoms would otherwise be enumerated at once).
SELECT mln.create_program('conflict', E'*Dom(t)\nQ(t)\n1 !Dom(x) v !Dom(y) v Q(x) v Q(y)\n1 !Dom(x) v !Dom(y) v !Q(x) v !Q(y)\n');
SELECT mln.load_evidence('conflict', E'Dom(A)\nDom(B)\nDom(C)\nDom(D)\nDom(E)\n');
SELECT mln.set_query('conflict', 'Q(x)');
SELECT mln.ground('conflict');
SQL
check "setup through SQL" test $? -eq 0
q() { psql -qXAt -c "$1"; }

# 1. A job end to end.
"$WORKER" --quiet --lease 3 & w1=$!
job=$(q "SELECT mln.infer('smoke')")
res=$(q "SELECT mln.wait($job, interval '60 s')->>'status'")
check "job $job done" test "$res" = done
check "MAP cost 0" test "$(q "SELECT (mln.wait($job))->>'best_cost'")" = 0
check "mln.map: Tuffy's answer" test "$(q "SELECT string_agg(arguments[1], ',' ORDER BY arguments[1]) FROM mln.map('smoke') WHERE truth")" = "Anna,Bob,Edward,Frank"
check "map_result table in the program's schema" test "$(q "SELECT count(*) FROM mln_smoke.map_result WHERE truth")" = 4
kill $w1; wait $w1 2>/dev/null

# 2. A failed job has a readable reason.
# (The network disappears between mln.infer and the worker's claim.)
job=$(q "SELECT mln.infer('smoke')")
q "DROP TABLE mln_smoke._clauses" >/dev/null
"$WORKER" --quiet --once
check "failed job reports why" bash -c "psql -qXAt -c \"SELECT error FROM mln.jobs WHERE id = $job AND status = 'failed'\" | grep -q 'not grounded'"
q "SELECT mln.ground('smoke')" >/dev/null

# 3. Kill a worker mid-job: the lease runs out and another worker re-runs it.
job=$(q "SELECT mln.infer('conflict', 'map', '{\"max_flips\": 4000000000, \"max_tries\": 1000, \"timeout\": 600, \"exact_max_atoms\": 0}')")
"$WORKER" --quiet --lease 2 & w2=$!
for i in $(seq 1 100); do [ "$(q "SELECT status FROM mln.jobs WHERE id = $job")" = running ] && break; sleep 0.1; done
kill -9 $w2; wait $w2 2>/dev/null
check "job left running by the killed worker" test "$(q "SELECT status FROM mln.jobs WHERE id = $job")" = running
q "SELECT mln.cancel($job)" >/dev/null   # the long job itself is not needed; test the reclaim with a short one
job=$(q "SELECT mln.infer('smoke')")
q "UPDATE mln.jobs SET status = 'running', worker = 'dead:1', attempts = 1, lease_until = clock_timestamp() + interval '1 s' WHERE id = $job" >/dev/null
"$WORKER" --quiet --lease 2 & w3=$!
res=$(q "SELECT mln.wait($job, interval '60 s')->>'status'")
check "reclaimed job done after the lease ran out" test "$res" = done
check "it was attempted twice" test "$(q "SELECT attempts FROM mln.jobs WHERE id = $job")" = 2

# A job abandoned 5 times (each of its workers died) is not run again: it
# fails, saying so.
job=$(q "SELECT mln.infer('smoke')")
q "UPDATE mln.jobs SET status = 'running', worker = 'dead:5', attempts = 5, lease_until = clock_timestamp() - interval '1 s' WHERE id = $job" >/dev/null
"$WORKER" --quiet --once >/dev/null 2>&1
check "a job abandoned 5 times fails instead of running again" \
  test "$(q "SELECT status || ': ' || error FROM mln.jobs WHERE id = $job")" = \
       "failed: abandoned 5 times: each worker that ran it died or lost its lease (see the worker logs)"

# 4. Cancelling mln.wait cancels the job.
job=$(q "SELECT mln.infer('conflict', 'map', '{\"max_flips\": 4000000000, \"max_tries\": 1000, \"timeout\": 600, \"exact_max_atoms\": 0}')")
psql -qX -c "SET statement_timeout = '2s'; SELECT mln.wait($job)" >/dev/null 2>&1
for i in $(seq 1 100); do s=$(q "SELECT status FROM mln.jobs WHERE id = $job"); [ "$s" = cancelled ] && break; sleep 0.1; done
check "a cancelled wait cancels the job" test "$s" = cancelled

# 5. Explicit cancel of a running job.
job=$(q "SELECT mln.infer('conflict', 'map', '{\"max_flips\": 4000000000, \"max_tries\": 1000, \"timeout\": 600, \"exact_max_atoms\": 0}')")
for i in $(seq 1 100); do [ "$(q "SELECT status FROM mln.jobs WHERE id = $job")" = running ] && break; sleep 0.1; done
q "SELECT mln.cancel($job)" >/dev/null
for i in $(seq 1 100); do w=$(q "SELECT worker IS NOT NULL AND status = 'cancelled' FROM mln.jobs WHERE id = $job"); [ "$w" = t ] && break; sleep 0.1; done
check "mln.cancel stops a running job" test "$w" = t
kill $w3 2>/dev/null; wait $w3 2>/dev/null
dropdb "$PGDATABASE"
finish
