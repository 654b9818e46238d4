#!/usr/bin/env bash
# Weight learning end to end: mln.learn_weights through the worker (weights
# written as a new version, the trace, inference with the learned weights),
# a learning job surviving a killed worker, cancellation and a re-grounding
# leaving the weights unchanged, and the command line's -learnwt (smoke and
# class) with Tuffy's output file.
source "$(dirname "$0")/lib.sh"
export PGDATABASE=mln_e2e_learn
dropdb --if-exists "$PGDATABASE" 2>/dev/null; createdb "$PGDATABASE"
psql -qX -v ON_ERROR_STOP=1 >/dev/null <<SQL
CREATE EXTENSION pg_mln;
-- smoke, with a training world for Cancer (its query predicate).
SELECT mln.create_program('st', pg_read_file('$DATA/smoke/prog.mln'));
SELECT mln.load_evidence('st', pg_read_file('$DATA/smoke/evidence.db') ||
                               E'\nCancer(Anna)\nCancer(Edward)\n!Cancer(Bob)\nCancer(Frank)\n');
SELECT mln.set_query('st', 'Cancer(x)');
-- A small program whose learning runs as long as asked (exact_max_atoms = 0
-- and many samples per iteration).
SELECT mln.create_program('lc', E'*Dom(t)\nQ(t)\n1 !Dom(x) v !Dom(y) v Q(x) v Q(y)\n0.5 !Dom(x) v !Dom(y) v !Q(x) v !Q(y)\n0.2 Q(x)\n');
SELECT mln.load_evidence('lc', E'Dom(A)\nDom(B)\nDom(C)\nDom(D)\nDom(E)\nQ(A)\nQ(B)\n!Q(C)\nQ(D)\n');
SELECT mln.set_query('lc', 'Q(x)');
SQL
check "setup through SQL" test $? -eq 0
q() { psql -qXAt -c "$1"; }
weights() { q "SELECT string_agg(weight::text, ',' ORDER BY idx) FROM mln.clauses WHERE program = '$1'"; }

"$WORKER" --quiet --lease 3 & w1=$!

# 1. A learning job end to end.
before=$(weights st)
job=$(q "SELECT mln.learn_weights('st', '{\"iterations\": 30}')")
res=$(q "SELECT mln.wait($job, interval '60 s')->>'status'")
check "learning job $job done" test "$res" = done
check "mln.wait reports iterations, iterations_total and the objective" \
  test "$(q "SELECT (s->>'iterations')::int > 0 AND s->>'iterations_total' = '30' AND (s->>'objective')::float8 > 0
             FROM mln.wait($job) s")" = t
check "the weights changed ($before -> $(weights st))" test "$(weights st)" != "$before"
check "version 1 keeps the weights as written, version 2 is the job's" \
  test "$(q "SELECT string_agg(version || ':' || source, ',' ORDER BY version)
             FROM (SELECT DISTINCT version, source FROM mln.weight_versions WHERE program = 'st') v")" = "1:as written,2:learned"
check "the trace has iteration 0 (the initial weights) to the last, three clauses each" \
  test "$(q "SELECT min(iteration) = 0 AND max(iteration) = (SELECT iterations FROM mln.jobs WHERE id = $job)
               AND count(*) = 3 * (max(iteration) + 1) FROM mln.learning_trace WHERE job = $job")" = t
check "the program must be grounded again" test "$(q "SELECT grounded_at IS NULL FROM mln.programs WHERE name = 'st'")" = t
q "SELECT mln.set_query('st', 'Cancer(x)'); SELECT mln.ground('st')" >/dev/null
job2=$(q "SELECT mln.infer('st', 'marginal')")
check "inference with the learned weights" test "$(q "SELECT mln.wait($job2, interval '60 s')->>'status'")" = done
q "SELECT mln.restore_weights('st', 1)" >/dev/null
check "restore_weights brings the weights as written back" test "$(weights st)" = "$before"
# The sampler on the GPU (every component there, as one network): where
# the GPU is required (tests/gpu_run.sh) the job must run on it and learn;
# elsewhere it must either do that or fail naming the GPU and leave the
# weights as they were.
before=$(weights st)
job=$(q "SELECT mln.learn_weights('st', '{\"iterations\": 10, \"device\": \"gpu\", \"exact_max_atoms\": 0}')")
res=$(q "SELECT mln.wait($job, interval '60 s')->>'status'")
dev=$(q "SELECT coalesce(device, '') FROM mln.jobs WHERE id = $job")
if [ "${MLN_REQUIRE_GPU:-}" = 1 ] || [ "$res" = done ]; then
  check "learning with device gpu: done on the GPU ($res, device '$dev')" test "$res:$dev" = done:gpu
  check "learning with device gpu: the weights changed" test "$(weights st)" != "$before"
else
  check "learning with device gpu and no GPU: the job failed ($res)" test "$res" = failed
  check "... naming the GPU" bash -c "psql -qXAt -c \"SELECT error FROM mln.jobs WHERE id = $job\" | grep -q 'no GPU is usable'"
  check "... and the weights are unchanged" test "$(weights st)" = "$before"
fi
kill $w1; wait $w1 2>/dev/null

# 2. Kill a worker mid-job: the lease runs out and another worker re-runs it
#    (the timeout ends the run with the iterations done so far).
lc_before=$(weights lc)
job=$(q "SELECT mln.learn_weights('lc', '{\"samples\": 400000, \"exact_max_atoms\": 0, \"iterations\": 100000, \"timeout\": 5}')")
"$WORKER" --quiet --lease 2 & w2=$!
for i in $(seq 1 200); do [ "$(q "SELECT iterations > 0 FROM mln.jobs WHERE id = $job")" = t ] && break; sleep 0.1; done
check "a running learning job publishes its iterations" \
  test "$(q "SELECT iterations > 0 AND status = 'running' FROM mln.job_progress WHERE id = $job")" = t
kill -9 $w2; wait $w2 2>/dev/null
check "job left running by the killed worker" test "$(q "SELECT status FROM mln.jobs WHERE id = $job")" = running
check "no weight written by the killed worker" test "$(weights lc)" = "$lc_before"
"$WORKER" --quiet --lease 2 & w3=$!
res=$(q "SELECT mln.wait($job, interval '60 s')->>'status'")
check "reclaimed learning job done after the lease ran out" test "$res" = done
check "it was attempted twice" test "$(q "SELECT attempts FROM mln.jobs WHERE id = $job")" = 2
check "its timeout is reported as a warning" \
  bash -c "psql -qXAt -c \"SELECT warnings FROM mln.jobs WHERE id = $job\" | grep -q timeout"
check "the learned weights were written" test "$(weights lc)" != "$lc_before"
lc_learned=$(weights lc)

# 3. mln.cancel stops a running learning job within a second; no weight changes.
long='{"samples": 400000, "exact_max_atoms": 0, "iterations": 100000, "timeout": 600}'
job=$(q "SELECT mln.learn_weights('lc', '$long')")
for i in $(seq 1 100); do [ "$(q "SELECT status FROM mln.jobs WHERE id = $job")" = running ] && break; sleep 0.1; done
sleep 1
q "SELECT mln.set_query('st', 'Cancer(x)'); SELECT mln.ground('st')" >/dev/null
next=$(q "SELECT mln.infer('st', 'map')")  # the worker takes it once the cancelled job stopped
t_cancel=$(q "SELECT clock_timestamp() FROM (SELECT mln.cancel($job)) c")
res=$(q "SELECT mln.wait($next, interval '60 s')->>'status'")
check "the cancelled learning job is cancelled" test "$(q "SELECT status FROM mln.jobs WHERE id = $job")" = cancelled
lag=$(q "SELECT round(extract(epoch FROM started_at - '$t_cancel'::timestamptz)::numeric, 2) FROM mln.jobs WHERE id = $next")
check "the worker was free ${lag} s after mln.cancel (at most 1 s)" awk -v l="${lag:-9}" 'BEGIN { exit !(l <= 1.0) }'
check "a cancelled learning job leaves the weights unchanged" test "$(weights lc)" = "$lc_learned"

# 4. The program grounded again while its learning job runs: the job fails,
#    the weights stay.
job=$(q "SELECT mln.learn_weights('lc', '{\"samples\": 20000, \"exact_max_atoms\": 0, \"iterations\": 100000, \"timeout\": 3}')")
for i in $(seq 1 100); do [ "$(q "SELECT status FROM mln.jobs WHERE id = $job")" = running ] && break; sleep 0.1; done
q "SELECT mln.ground('lc')" >/dev/null
res=$(q "SELECT mln.wait($job, interval '60 s')->>'status'")
check "a learning job whose program was grounded again meanwhile fails" \
  test "$res|$(q "SELECT error ~ 'grounded again' FROM mln.jobs WHERE id = $job")" = "failed|t"
check "a failed learning job leaves the weights unchanged" test "$(weights lc)" = "$lc_learned"
kill $w3 2>/dev/null; wait $w3 2>/dev/null

# 5. The command line: -learnwt.
dsn="host=${PGHOST:-localhost} port=${PGPORT:-5432} dbname=$PGDATABASE"
cli() { "$PGMLN" --dsn "$dsn" "$@"; }
cli -i "$DATA/smoke/prog.mln" -e "$DATA/smoke/evidence.db" -q Smokes -r "$tmp/sl.out" -learnwt -dMaxIter 20 \
  >"$tmp/sl.log" 2>&1
check "cli -learnwt smoke (target Smokes; Cancer hidden): exit status 0" test $? -eq 0
check "cli -learnwt: the declarations first" \
  test "$(head -3 "$tmp/sl.out" | tr '\n' ' ')" = "*Friends(person,person) Smokes(person) Cancer(person) "
check "cli -learnwt: Tuffy's two sections" \
  bash -c "grep -qx '//AVERAGE WEIGHT OF ALL THE ITERATIONS' '$tmp/sl.out' && grep -qx '//WEIGHT OF LAST ITERATION' '$tmp/sl.out'"
check "cli -learnwt: one '<weight> <clause> //<no>' line per clause in each" \
  test "$(grep -cE '^-?[0-9]+\.[0-9]{4} .* //[1-3]$' "$tmp/sl.out")" -eq 6
check "cli -learnwt: the iterations line" grep -qE '^### [0-9]+ learning iterations' "$tmp/sl.log"
cli -i "$DATA/smoke/prog.mln" -e "$DATA/smoke/evidence.db" -queryFile "$DATA/smoke/query.db" -r "$tmp/x.out" \
  -learnwt >/dev/null 2>"$tmp/err1"; rc=$?
check "cli -learnwt without training data: exit 2 and the reason" \
  bash -c "[ $rc -eq 2 ] && grep -q 'no training data' '$tmp/err1'"
cli -i "$DATA/smoke/prog.mln" -q Smokes -r "$tmp/x.out" -learnwt -marginal >/dev/null 2>"$tmp/err2"; rc=$?
check "cli -learnwt -marginal: exit 2" bash -c "[ $rc -eq 2 ] && grep -q 'learnwt cannot be combined' '$tmp/err2'"
check "cli: no program left behind" test "$(q "SELECT count(*) FROM mln.programs WHERE name LIKE 'tuffy_%'")" = 0

class=(-i "$DATA/class/prog.mln" -e "$DATA/class/evidence.db" -queryFile "$DATA/class/query.db")
cli "${class[@]}" -r "$tmp/cl.out" -learnwt -dMaxIter 2 -mcsatSamples 20 >"$tmp/cl.log" 2>&1
check "cli -learnwt class (2 iterations): exit status 0" test $? -eq 0
check "cli -learnwt class: 15 weighted clauses in each section" \
  test "$(grep -cE '^-?[0-9]+\.[0-9]{4} .* //[0-9]+$' "$tmp/cl.out")" -eq 30

dropdb "$PGDATABASE"
finish
