#!/usr/bin/env bash
# Extension upgrade: install 0.1.0, load and ground a program, ALTER
# EXTENSION pg_mln UPDATE, and the program still grounds and solves; the
# upgraded extension has exactly the catalog of a fresh install, which runs
# the consolidated base script, and so has every earlier version updated.
source "$(dirname "$0")/lib.sh"
export PGDATABASE=mln_e2e_upgrade
dropdb --if-exists "$PGDATABASE"; createdb "$PGDATABASE"
dropdb --if-exists mln_e2e_fresh; createdb mln_e2e_fresh
q() { psql -qXAt -v ON_ERROR_STOP=1 -c "$1"; }

q "CREATE EXTENSION pg_mln VERSION '0.1.0'"
check "installed at 0.1.0" test "$(q "SELECT extversion FROM pg_extension WHERE extname = 'pg_mln'")" = 0.1.0
psql -qX -v ON_ERROR_STOP=1 >/dev/null <<SQL
SELECT mln.create_program('smoke', pg_read_file('$DATA/smoke/prog.mln'));
SELECT mln.load_evidence('smoke', pg_read_file('$DATA/smoke/evidence.db'));
SELECT mln.set_query('smoke', 'Cancer(x)');
SELECT mln.ground('smoke');
SQL
check "program loaded and grounded under 0.1.0" test $? -eq 0
clauses_before=$(q "SELECT count(*) FROM mln.ground_clauses('smoke')")

q "ALTER EXTENSION pg_mln UPDATE" >/dev/null
check "ALTER EXTENSION pg_mln UPDATE reaches the default version" \
  test "$(q "SELECT extversion = default_version FROM pg_extension, pg_available_extensions WHERE extname = 'pg_mln' AND name = extname")" = t
check "the program survived the upgrade" test "$(q "SELECT count(*) FROM mln.programs WHERE name = 'smoke'")" = 1
check "its ground network is still readable" test "$(q "SELECT count(*) FROM mln.ground_clauses('smoke')")" = "$clauses_before"
q "SELECT mln.ground('smoke')" >/dev/null
check "it grounds again after the upgrade" test $? -eq 0
job=$(q "SELECT mln.infer('smoke')")
"$WORKER" --quiet --once >/dev/null 2>&1
check "and solves: job done with cost 0" test "$(q "SELECT (mln.wait($job, interval '30 s'))->>'best_cost'")" = 0
check "MAP answer after the upgrade" \
  test "$(q "SELECT string_agg(arguments[1], ',' ORDER BY arguments[1]) FROM mln.map('smoke') WHERE truth")" = "Anna,Bob,Edward,Frank"
check "every function has a comment after the upgrade" \
  test "$(q "SELECT count(*) FROM pg_proc WHERE pronamespace = 'mln'::regnamespace AND obj_description(oid, 'pg_proc') IS NULL")" = 0

# 0.2.0 -> 0.3.0 on its own: a MAP job queued under 0.2.0 keeps its row,
# and after the update MAP answers carry a bound.
# at VERSION DB: a new database DB with the extension at VERSION, smoke
# grounded and a MAP job queued.
at() {
  dropdb --if-exists "$2"; createdb "$2"
  psql -d "$2" -qXAt -v ON_ERROR_STOP=1 -c "CREATE EXTENSION pg_mln VERSION '$1'"
  psql -d "$2" -qX -v ON_ERROR_STOP=1 >/dev/null <<SQL
SELECT mln.create_program('smoke', pg_read_file('$DATA/smoke/prog.mln'));
SELECT mln.load_evidence('smoke', pg_read_file('$DATA/smoke/evidence.db'));
SELECT mln.set_query('smoke', 'Cancer(x)');
SELECT mln.ground('smoke');
SELECT mln.infer('smoke');
SQL
}
q2() { psql -d mln_e2e_upgrade2 -qXAt -v ON_ERROR_STOP=1 -c "$1"; }
at 0.2.0 mln_e2e_upgrade2
check "0.2.0: a program grounded and a MAP job queued" test "$(q2 "SELECT count(*) FROM mln.jobs")" = 1
q2 "ALTER EXTENSION pg_mln UPDATE TO '0.3.0'" >/dev/null
check "ALTER EXTENSION pg_mln UPDATE TO '0.3.0' from 0.2.0" test "$(q2 "SELECT extversion FROM pg_extension WHERE extname = 'pg_mln'")" = 0.3.0
check "the queued job survived the update" test "$(q2 "SELECT count(*) FROM mln.jobs WHERE status = 'queued'")" = 1
job2=$(q2 "SELECT mln.infer('smoke', options => '{\"solver\": \"ilp\"}')")
PGDATABASE=mln_e2e_upgrade2 "$WORKER" --quiet --once >/dev/null 2>&1
PGDATABASE=mln_e2e_upgrade2 "$WORKER" --quiet --once >/dev/null 2>&1
check "after the update a MAP job reports its bound and proof" \
  test "$(q2 "SELECT concat_ws(',', s->>'best_cost', s->>'bound', s->>'gap', s->>'optimal') FROM mln.wait($job2, interval '30 s') s")" = "0,0,0,true"
dropdb mln_e2e_upgrade2

# 0.3.0 -> 0.4.0 on its own: a job queued under 0.3.0 keeps its row, and
# after the update a MAP job spreads over parts.
q3() { psql -d mln_e2e_upgrade3 -qXAt -v ON_ERROR_STOP=1 -c "$1"; }
at 0.3.0 mln_e2e_upgrade3
check "0.3.0: a program grounded and a MAP job queued" test "$(q3 "SELECT count(*) FROM mln.jobs")" = 1
check "0.3.0 refuses the option partitions" \
  sh -c "psql -d mln_e2e_upgrade3 -qXAt -c \"SELECT mln.infer('smoke', options => '{\\\"partitions\\\": 2}')\" 2>&1 | grep -q 'unknown inference option'"
q3 "ALTER EXTENSION pg_mln UPDATE TO '0.4.0'" >/dev/null
check "ALTER EXTENSION pg_mln UPDATE TO '0.4.0' from 0.3.0" test "$(q3 "SELECT extversion FROM pg_extension WHERE extname = 'pg_mln'")" = 0.4.0
check "the queued job survived the update" test "$(q3 "SELECT count(*) FROM mln.jobs WHERE status = 'queued'")" = 1
job3=$(q3 "SELECT mln.infer('smoke', options => '{\"partitions\": 2}')")
PGDATABASE=mln_e2e_upgrade3 "$WORKER" --quiet --once >/dev/null 2>&1
check "after the update a MAP job spreads over parts" \
  test "$(q3 "SELECT (mln.wait($job3, interval '30 s'))->>'best_cost', parts FROM mln.jobs WHERE id = $job3")" = "0|2"
dropdb mln_e2e_upgrade3

# 0.4.0 -> 0.5.0 on its own: the result table a job wrote under 0.4.0
# becomes a view (the same rows) when the next job finishes.
q4() { psql -d mln_e2e_upgrade4 -qXAt -v ON_ERROR_STOP=1 -c "$1"; }
at 0.4.0 mln_e2e_upgrade4
PGDATABASE=mln_e2e_upgrade4 "$WORKER" --quiet --once >/dev/null 2>&1
check "0.4.0: the job wrote map_result as a table" \
  test "$(q4 "SELECT relkind FROM pg_class WHERE oid = 'mln_smoke.map_result'::regclass")" = r
before=$(q4 "SELECT string_agg(arguments[1] || ':' || truth, ',' ORDER BY arguments[1]) FROM mln_smoke.map_result")
q4 "ALTER EXTENSION pg_mln UPDATE TO '0.5.0'" >/dev/null
check "ALTER EXTENSION pg_mln UPDATE TO '0.5.0' from 0.4.0" test "$(q4 "SELECT extversion FROM pg_extension WHERE extname = 'pg_mln'")" = 0.5.0
job4=$(q4 "SELECT mln.infer('smoke')")
PGDATABASE=mln_e2e_upgrade4 "$WORKER" --quiet --once >/dev/null 2>&1
q4 "SELECT mln.wait($job4, interval '30 s')" >/dev/null
check "after the update the next job makes map_result a view" \
  test "$(q4 "SELECT relkind FROM pg_class WHERE oid = 'mln_smoke.map_result'::regclass")" = v
check "with the same rows ($before)" \
  test "$(q4 "SELECT string_agg(arguments[1] || ':' || truth, ',' ORDER BY arguments[1]) FROM mln_smoke.map_result")" = "$before"
dropdb mln_e2e_upgrade4

# 0.5.0 -> 0.6.0 on its own: a job queued under 0.5.0 is still served, a
# plain role's direct insert is then checked like mln.infer, and mln.map
# says when there is no answer.
# updated_serves FROM TO DB: DB at FROM with a MAP job queued, updated to
# TO; the job is served after the update.
updated_serves() {
  at "$1" "$3"
  psql -d "$3" -qXAt -v ON_ERROR_STOP=1 -c "ALTER EXTENSION pg_mln UPDATE TO '$2'" >/dev/null
  check "ALTER EXTENSION pg_mln UPDATE TO '$2' from $1" \
    test "$(psql -d "$3" -qXAt -c "SELECT extversion FROM pg_extension WHERE extname = 'pg_mln'")" = "$2"
  local job; job=$(psql -d "$3" -qXAt -c "SELECT id FROM mln.jobs WHERE status = 'queued'")
  PGDATABASE=$3 "$WORKER" --quiet --once >/dev/null 2>&1
  check "the job queued under $1 is served after the update" \
    test "$(psql -d "$3" -qXAt -c "SELECT (mln.wait($job, interval '30 s'))->>'status'")" = done
}
q5() { psql -d mln_e2e_upgrade5 -qXAt -v ON_ERROR_STOP=1 -c "$1"; }
updated_serves 0.5.0 0.6.0 mln_e2e_upgrade5
q5 "DROP ROLE IF EXISTS mln_e2e_up_bob; CREATE ROLE mln_e2e_up_bob; GRANT CREATE ON DATABASE mln_e2e_upgrade5 TO mln_e2e_up_bob" >/dev/null
check "after the update a plain role cannot queue a job on another's program" \
  bash -c "! psql -d mln_e2e_upgrade5 -qXAt -c \"SET ROLE mln_e2e_up_bob; INSERT INTO mln.jobs(program, task) VALUES ('smoke', 'map')\" 2>/dev/null"
q5 "SELECT mln.ground('smoke')" >/dev/null
check "after the update mln.map refuses a program with no MAP answer" \
  bash -c "psql -d mln_e2e_upgrade5 -qXAt -c \"SELECT * FROM mln.map('smoke')\" 2>&1 | grep -q 'no MAP inference result'"
dropdb mln_e2e_upgrade5
q "DROP ROLE IF EXISTS mln_e2e_up_bob" >/dev/null

# 0.6.0 -> 0.7.0 on its own: a job queued under 0.6.0 is still served; after
# the update mln.options() lists the options and the checks, now read from
# that table, refuse as they did.
q6() { psql -d mln_e2e_upgrade6 -qXAt -v ON_ERROR_STOP=1 -c "$1"; }
updated_serves 0.6.0 0.7.0 mln_e2e_upgrade6
check "after the update mln.options() lists the options" \
  test "$(q6 "SELECT count(DISTINCT name) FROM mln.options() WHERE task IN ('map', 'marginal', 'infer', 'learn', 'all')")" = 25
check "and mln.infer refuses a bad option as before" \
  bash -c "psql -d mln_e2e_upgrade6 -qXAt -c \"SELECT mln.infer('smoke', options => '{\\\"samples\\\": 10}')\" 2>&1 | grep -q 'inference option \"samples\" applies to marginal inference, not to task \"map\"'"
job6=$(q6 "SELECT mln.infer('smoke', options => '{\"max_tries\": 2, \"solver\": \"walksat\"}')")
PGDATABASE=mln_e2e_upgrade6 "$WORKER" --quiet --once >/dev/null 2>&1
check "and a job queued after the update is served with its options" \
  test "$(q6 "SELECT concat_ws(',', s->>'status', s->>'best_cost') FROM mln.wait($job6, interval '30 s') s")" = "done,0"
dropdb mln_e2e_upgrade6

# 0.7.0 -> 0.8.0 on its own: a job queued under 0.7.0 is still served; after
# the update mln.datalog evaluates a program over a table of the database and
# writes its derived relation.
q7() { psql -d mln_e2e_upgrade7 -qXAt -v ON_ERROR_STOP=1 -c "$1"; }
updated_serves 0.7.0 0.8.0 mln_e2e_upgrade7
q7 "CREATE TABLE edges(src int, dst int); INSERT INTO edges VALUES (1, 2), (2, 3), (3, 4); CREATE SCHEMA dl" >/dev/null
check "after the update mln.datalog writes the transitive closure" \
  test "$(q7 "SELECT relation || ':' || rows FROM mln.datalog('tc(X, Y) :- edges(X, Y). tc(X, Y) :- tc(X, Z), edges(Z, Y).', 'dl')")" = "tc:6"
check "and mln.datalog_query returns it" \
  test "$(q7 "SELECT count(*) FROM mln.datalog_query('tc(X, Y) :- edges(X, Y). tc(X, Y) :- tc(X, Z), edges(Z, Y).', 'tc') AS t(a int, b int)")" = 6
dropdb mln_e2e_upgrade7

# 0.8.0 -> 0.9.0 on its own: a job queued under 0.8.0 is still served; after
# the update mln.learn_rules learns a rule over tables of the database.
q8() { psql -d mln_e2e_upgrade8 -qXAt -v ON_ERROR_STOP=1 -c "$1"; }
updated_serves 0.8.0 0.9.0 mln_e2e_upgrade8
q8 "CREATE TABLE parent(a int, b int); INSERT INTO parent VALUES (1, 2), (2, 3), (3, 4), (4, 5), (2, 6);
    CREATE TABLE gp_pos AS SELECT x.a, y.b FROM parent x JOIN parent y ON x.b = y.a;
    CREATE TABLE gp_neg(a int, b int); INSERT INTO gp_neg VALUES (2, 2), (5, 1), (1, 2), (2, 3), (6, 1), (1, 4)" >/dev/null
check "after the update mln.learn_rules learns grandparent" \
  test "$(q8 "SELECT rule FROM mln.learn_rules('gp', 'gp_pos', 'gp_neg', ARRAY['parent'])")" = "gp(A, B) :- parent(A, C), parent(C, B)."
dropdb mln_e2e_upgrade8

# 0.9.0 -> 0.10.0 on its own: a job queued under 0.9.0 is still served;
# after the update a rule learning job is queued, served by the worker and
# its rule added to the program as a new weight version.
q9() { psql -d mln_e2e_upgrade9 -qXAt -v ON_ERROR_STOP=1 -c "$1"; }
updated_serves 0.9.0 0.10.0 mln_e2e_upgrade9
q9 "SET client_min_messages = error;
    SELECT mln.create_program('fam', E'parent(person, person)\ngp(person, person)\n');
    SELECT mln.load_evidence('fam', 'parent(A, B) parent(B, C) parent(C, D) parent(B, E) gp(A, C) gp(B, D) gp(A, E)
                                     !gp(A, B) !gp(C, A) !gp(D, A) !gp(A, D)')" >/dev/null
job9=$(q9 "SELECT mln.learn_rules_job('fam', 'gp', '{\"device\": \"cpu\"}')")
PGDATABASE=mln_e2e_upgrade9 "$WORKER" --quiet --once >/dev/null 2>&1
check "after the update a rules job is served" test "$(q9 "SELECT (mln.wait($job9, interval '30 s'))->>'status'")" = done
check "and learns gp" \
  test "$(q9 "SELECT positives || ':' || negatives FROM mln.learned_rules WHERE job = $job9")" = "3:0"
check "mln.add_learned_rules adds it as weight version 2" test "$(q9 "SELECT mln.add_learned_rules('fam', $job9)")" = 2
dropdb mln_e2e_upgrade9

# 0.10.0 -> 0.11.0 on its own: a job queued under 0.10.0 is still served;
# after the update a ProbLog program is queued as a job (no program of
# mln.programs), served by the worker, its answer mln.problog's.
q10() { psql -d mln_e2e_upgrade10 -qXAt -v ON_ERROR_STOP=1 -c "$1"; }
updated_serves 0.10.0 0.11.0 mln_e2e_upgrade10
pl="0.3::a. 0.6::b :- a. query(b)."
job10=$(q10 "SELECT mln.problog_job('$pl', '{\"samples\": 20000, \"device\": \"cpu\"}')")
PGDATABASE=mln_e2e_upgrade10 "$WORKER" --quiet --once >/dev/null 2>&1
check "after the update a problog job is served" test "$(q10 "SELECT (mln.wait($job10, interval '30 s'))->>'status'")" = done
check "and answers what mln.problog answers" \
  test "$(q10 "SELECT (SELECT probability FROM mln.problog_results WHERE job = $job10)
                    = (SELECT probability FROM mln.problog('$pl', '{\"samples\": 20000, \"device\": \"cpu\"}'))")" = t
dropdb mln_e2e_upgrade10

# 0.11.0 -> 0.12.0 on its own: a job queued under 0.11.0 is still served; a
# staging table made under 0.11.0 (compressed chunks) stores its chunks
# uncompressed once mln.evidence_staging is asked for it again, and the
# streaming path still loads evidence.
q11() { psql -d mln_e2e_upgrade11 -qXAt -v ON_ERROR_STOP=1 -c "$1"; }
at 0.11.0 mln_e2e_upgrade11
q11 "SELECT mln.evidence_staging('smoke')" >/dev/null
check "0.11.0: the staging table compresses its chunks" \
  test "$(q11 "SELECT attstorage FROM pg_attribute WHERE attrelid = 'mln_smoke._staging'::regclass AND attname = 'body'")" = x
q11 "ALTER EXTENSION pg_mln UPDATE TO '0.12.0'" >/dev/null
check "ALTER EXTENSION pg_mln UPDATE TO '0.12.0' from 0.11.0" test "$(q11 "SELECT extversion FROM pg_extension WHERE extname = 'pg_mln'")" = 0.12.0
job11=$(q11 "SELECT id FROM mln.jobs WHERE status = 'queued'")
PGDATABASE=mln_e2e_upgrade11 "$WORKER" --quiet --once >/dev/null 2>&1
check "the job queued under 0.11.0 is served after the update" \
  test "$(q11 "SELECT (mln.wait($job11, interval '30 s'))->>'status'")" = done
q11 "SELECT mln.evidence_staging('smoke')" >/dev/null
check "after the update the staging table stores its chunks uncompressed" \
  test "$(q11 "SELECT attstorage FROM pg_attribute WHERE attrelid = 'mln_smoke._staging'::regclass AND attname = 'body'")" = e
q11 "INSERT INTO mln_smoke._staging VALUES (0, 1, 'Smokes(Zed)')" >/dev/null
check "and the streaming path loads evidence through it" test "$(q11 "SELECT mln.ingest_evidence('smoke')")" = 1
dropdb mln_e2e_upgrade11

# 0.12.0 -> 0.13.0 on its own: a rules job queued under 0.12.0 (its evidence
# granted to mln_worker, nothing stored) is served after the update, by
# reads of the tables checked first; the update takes the grants back; a
# rules job queued after it stores its evidence, is served, and leaves none.
q12() { psql -d mln_e2e_upgrade12 -qXAt -v ON_ERROR_STOP=1 -c "$1"; }
at 0.12.0 mln_e2e_upgrade12
q12 "SELECT mln.load_evidence('smoke', E'Cancer(Anna)\nCancer(Edward)\n!Cancer(Bob)\n')" >/dev/null
r12=$(q12 "SELECT mln.learn_rules_job('smoke', 'Cancer', '{\"min_pos\": 1}')")
smokes_granted() { q12 "SELECT has_table_privilege('mln_worker', 'mln_smoke.\"Smokes\"', 'SELECT')"; }
check "0.12.0: queueing a rules job granted mln_worker the evidence" test "$(smokes_granted)" = t
q12 "ALTER EXTENSION pg_mln UPDATE TO '0.13.0'" >/dev/null
check "ALTER EXTENSION pg_mln UPDATE TO '0.13.0' from 0.12.0" test "$(q12 "SELECT extversion FROM pg_extension WHERE extname = 'pg_mln'")" = 0.13.0
check "the update takes the grant back" test "$(smokes_granted)" = f
for _ in 1 2; do PGDATABASE=mln_e2e_upgrade12 "$WORKER" --quiet --once >/dev/null 2>&1; done
check "the rules job queued under 0.12.0 is served after the update" \
  test "$(q12 "SELECT (mln.wait($r12, interval '30 s'))->>'status'")" = done
r13=$(q12 "SELECT mln.learn_rules_job('smoke', 'Cancer', '{\"min_pos\": 1}')")
check "a rules job queued after it stores its evidence and grants nothing" \
  test "$(q12 "SELECT count(*) > 0 FROM mln.rules_input WHERE job = $r13")$(smokes_granted)" = tf
PGDATABASE=mln_e2e_upgrade12 "$WORKER" --quiet --once >/dev/null 2>&1
check "... is served, with the rules of the job before it, and leaves no input behind" \
  test "$(q12 "SELECT (mln.wait($r13, interval '30 s'))->>'status'")$(q12 "SELECT count(*) FROM mln.rules_input")$(q12 \
        "SELECT (SELECT array_agg(rule ORDER BY rule) FROM mln.learned_rules WHERE job = $r13) = (SELECT array_agg(rule ORDER BY rule) FROM mln.learned_rules WHERE job = $r12)")" = done0t
dropdb mln_e2e_upgrade12

# 0.13.0 -> 0.14.0 on its own: a network grounded under 0.13.0 is served;
# whether its answer is current is not known (NULL, and a NOTICE says why)
# until it is grounded again, which records its tables: then a change to one
# makes it stale.
q13() { psql -d mln_e2e_upgrade13 -qXAt -v ON_ERROR_STOP=1 -c "$1"; }
at 0.13.0 mln_e2e_upgrade13
q13 "ALTER EXTENSION pg_mln UPDATE TO '0.14.0'" >/dev/null
check "ALTER EXTENSION pg_mln UPDATE TO '0.14.0' from 0.13.0" test "$(q13 "SELECT extversion FROM pg_extension WHERE extname = 'pg_mln'")" = 0.14.0
for _ in 1 2; do PGDATABASE=mln_e2e_upgrade13 "$WORKER" --quiet --once >/dev/null 2>&1; done
check "the network grounded under 0.13.0 is solved after the update, and stays 'grounded'" \
  test "$(q13 "SELECT count(*) FROM mln.jobs WHERE status = 'done'")$(q13 "SELECT mln.program_state('smoke')")" = 1grounded
out13=$(psql -d mln_e2e_upgrade13 -qXAt -c "SELECT DISTINCT stale IS NULL FROM mln.map('smoke')" 2>&1)
check "its answer's staleness is not known, and a NOTICE says it was grounded before 0.14.0" \
  bash -c "grep -qx t <<<'$out13' && grep -q 'grounded before pg_mln 0.14.0' <<<'$out13'"
q13 "SELECT mln.ground('smoke')" >/dev/null
q13 "DELETE FROM mln_smoke.\"Smokes\" WHERE ctid = (SELECT min(ctid) FROM mln_smoke.\"Smokes\")" >/dev/null
check "grounded again, a change to its evidence table makes it stale" test "$(q13 "SELECT mln.program_state('smoke')")" = stale
dropdb mln_e2e_upgrade13

# 0.14.0 -> 0.15.0 on its own: a network grounded under 0.14.0 stays
# current; the gap is the solver's (max(|cost|, 1) below); mln.sources counts
# the transactions since the grounding and mln.refresh grounds it again.
q14() { psql -d mln_e2e_upgrade14 -qXAt -v ON_ERROR_STOP=1 -c "$1"; }
at 0.14.0 mln_e2e_upgrade14
q14 "ALTER EXTENSION pg_mln UPDATE TO '0.15.0'" >/dev/null
check "ALTER EXTENSION pg_mln UPDATE TO '0.15.0' from 0.14.0" test "$(q14 "SELECT extversion FROM pg_extension WHERE extname = 'pg_mln'")" = 0.15.0
check "a network grounded under 0.14.0 is still grounded" test "$(q14 "SELECT mln.program_state('smoke')")" = grounded
check "mln._gap: (cost - bound) / max(|cost|, 1)" test "$(q14 "SELECT mln._gap(0.5, 0.4)::numeric(4,2)")" = 0.10
q14 "DELETE FROM mln_smoke.\"Smokes\" WHERE ctid = (SELECT min(ctid) FROM mln_smoke.\"Smokes\")" >/dev/null
check "a change counts in mln.sources' changes" \
  test "$(q14 "SELECT sum(changes) FROM mln.sources('smoke')")$(q14 "SELECT mln.program_state('smoke')")" = 1stale
check "mln.refresh grounds it again" \
  test "$(q14 "SELECT mln.refresh('smoke')->>'refreshed'")$(q14 "SELECT mln.program_state('smoke')")" = truegrounded
dropdb mln_e2e_upgrade14

# 0.16.0 -> 0.17.0 on its own: mln.refresh grounds again through
# mln.ground, which carries the last MAP answer (here one written as a
# worker writes it) to the new network; 0.16.0's _warm is not made.
q16() { psql -d mln_e2e_upgrade16 -qXAt -v ON_ERROR_STOP=1 -c "$1"; }
at 0.16.0 mln_e2e_upgrade16
q16 "ALTER EXTENSION pg_mln UPDATE TO '0.17.0'" >/dev/null
check "ALTER EXTENSION pg_mln UPDATE TO '0.17.0' from 0.16.0" test "$(q16 "SELECT extversion FROM pg_extension WHERE extname = 'pg_mln'")" = 0.17.0
q16 "INSERT INTO mln_smoke._map SELECT id, true FROM mln_smoke._atoms; INSERT INTO mln_smoke._map_info VALUES (1, 2.5, 2.5, true)" >/dev/null
q16 "DELETE FROM mln_smoke.\"Smokes\" WHERE ctid = (SELECT min(ctid) FROM mln_smoke.\"Smokes\")" >/dev/null
q16 "SELECT mln.refresh('smoke')" >/dev/null
check "mln.refresh carries the answer (ground_stats' carried) and makes no _warm" \
  test "$(q16 "SELECT (ground_stats->'carried'->'map'->>'cost') || ' ' || (to_regclass('mln_smoke._warm') IS NULL)::text
               || ' ' || ((ground_stats->'carried'->'map'->>'true_atoms')::int = (SELECT count(*) FROM mln_smoke._carried WHERE truth))::text
               FROM mln.programs WHERE name = 'smoke'")" = "2.5 true true"
dropdb mln_e2e_upgrade16

# The command line against a database whose extension is older than the
# server's: it stops before changing anything and says how to update.
dropdb --if-exists mln_e2e_old; createdb mln_e2e_old
psql -qXAt -d mln_e2e_old -c "CREATE EXTENSION pg_mln VERSION '0.11.0'" >/dev/null
"$PGMLN" --dsn "dbname=mln_e2e_old" -i "$DATA/smoke/prog.mln" -e "$DATA/smoke/evidence.db" \
  -queryFile "$DATA/smoke/query.db" -r "$tmp/old.out" >"$tmp/old.log" 2>&1
rc=$?
check "pg_mln on an extension at 0.11.0 fails (exit $rc)" test "$rc" -ne 0
check "and says to ALTER EXTENSION pg_mln UPDATE" grep -q 'is version 0.11.0, but the server has .* ALTER EXTENSION pg_mln UPDATE' "$tmp/old.log"
check "and leaves the extension and the database as they were" test "$(psql -qXAt -d mln_e2e_old -c \
  "SELECT extversion || ' ' || (SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'mln\_%') FROM pg_extension WHERE extname = 'pg_mln'")" = "0.11.0 0"
dropdb mln_e2e_old

# A fresh install runs sql/pg_mln--<default>.sql, the consolidated base
# script, and nothing else; every earlier version reaches the same extension
# through its upgrade scripts.  scripts/sql_catalog.sh describes a database's
# extension (member objects, function definitions, views, columns in order,
# constraints, indexes, triggers, policies, comments, privileges, config-dump
# registrations, rows), and the descriptions are diffed.
catalog() { bash "$root/scripts/sql_catalog.sh" "$1" 2>&1; }
# same_catalog WANT GOT: true when equal; else the diff's start, and false.
same_catalog() { diff -u "$1" "$2" >"$tmp/catalog.diff" && return 0; head -40 "$tmp/catalog.diff"; return 1; }
default=$(sed -n "s/^default_version = '\(.*\)'$/\1/p" "$root/pg_mln.control")
psql -qXAt -v ON_ERROR_STOP=1 -d mln_e2e_fresh -c "CREATE EXTENSION pg_mln" >/dev/null
catalog mln_e2e_fresh >"$tmp/fresh"
check "a fresh install is at the default version $default" grep -qx "extension pg_mln | version $default, .*" "$tmp/fresh"
check "pg_mln--$default.sql, the base script, is installed" test -f "$(pg_config --sharedir)/extension/pg_mln--$default.sql"
# Observable: the update path adds mln.job_plans.slices by ALTER TABLE (0.5.0),
# which stores a missing value for the rows the table had; the base script
# creates the column with its table.
check "and the fresh install ran it (mln.job_plans.slices made with its table, not added)" \
  test "$(psql -qXAt -d mln_e2e_fresh -c "SELECT atthasmissing FROM pg_attribute
                                          WHERE attrelid = 'mln.job_plans'::regclass AND attname = 'slices'")" = f
check "the database updated from 0.1.0 above, its program in it, has a fresh install's catalog (rows aside)" \
  same_catalog <(grep -v '^rows ' "$tmp/fresh") <(catalog "$PGDATABASE" | grep -v '^rows ')

# Every earlier version (read from sql/'s file names): CREATE EXTENSION at
# it, ALTER EXTENSION pg_mln UPDATE, and the catalog is a fresh install's.
versions=$(ls "$root"/sql/pg_mln--*.sql | sed -n 's|.*/pg_mln--\([0-9.]*\)\(--[0-9.]*\)\{0,1\}\.sql$|\1|p' \
           | sort -uV | grep -vx "$default")
check "the earlier versions, one per upgrade script: $(echo $versions)" \
  test "$(echo $versions | wc -w)" -eq "$(ls "$root"/sql/pg_mln--*--*.sql | wc -l)"
for v in $versions; do
  db=mln_e2e_upgrade_v${v//./_}
  dropdb --if-exists "$db" 2>/dev/null; createdb "$db"
  { psql -qXAt -v ON_ERROR_STOP=1 -d "$db" -c "CREATE EXTENSION pg_mln VERSION '$v'" &&
    psql -qXAt -v ON_ERROR_STOP=1 -d "$db" -c "ALTER EXTENSION pg_mln UPDATE"; } >"$tmp/update.log" 2>&1
  catalog "$db" >"$tmp/updated"
  check "$v, updated: the catalog of a fresh $default install" same_catalog "$tmp/fresh" "$tmp/updated"
  dropdb "$db"
done
dropdb mln_e2e_fresh
dropdb "$PGDATABASE"
finish
