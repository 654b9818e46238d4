#!/usr/bin/env bash
# An answer follows the tables it was computed from (issue #60): an
# entity-resolution program reads Sim and SameZip through views over a
# records table.  A committed change to the table (update, insert, delete,
# truncate, a partition's rows) makes the network stale; mln.map and
# mln.marginals say so (a NOTICE and a column); CALL mln.solve grounds it
# again first and then gives the answer a program grounded afresh gives.
# A change rolled back, or one the grounding saw, changes nothing; writers
# of a tracked table do not wait for each other; a table the owner may not
# put a trigger on, or a materialized view, is reported as not tracked.
source "$(dirname "$0")/lib.sh"
eval "$(bash "$root/scripts/cluster.sh" env)"
export PGDATABASE=mln_e2e_stale
users="stale_owner stale_user"
cleanup_roles
dropdb --if-exists "$PGDATABASE" 2>/dev/null; createdb "$PGDATABASE"
wpid=
cleanup() { [ -n "$wpid" ] && kill "$wpid" 2>/dev/null; cleanup_roles; rm -rf "$tmp"; }
trap cleanup EXIT
q() { psql -qXAt -c "$1"; }
qe() { psql -qXAt -c "$1" 2>&1; }  # with the NOTICEs

er_program='
Sim(rec, rec)
SameZip(rec, rec)
Same(rec, rec)
2 Sim(a, b) => Same(a, b)
1 SameZip(a, b) => Same(a, b)
-1.5 Same(a, b)
'
psql -qX -v ON_ERROR_STOP=1 >/dev/null <<SQL
CREATE EXTENSION pg_mln;
CREATE TABLE records (id text PRIMARY KEY, name text, zip text);
INSERT INTO records SELECT 'r' || i, 'name' || (i / 2), 'z' || (i / 3) FROM generate_series(1, 40) i;
CREATE VIEW sim AS SELECT a.id AS a, b.id AS b FROM records a JOIN records b ON a.name = b.name AND a.id <> b.id;
CREATE VIEW samezip AS SELECT a.id AS a, b.id AS b FROM records a JOIN records b ON a.zip = b.zip AND a.id <> b.id;
CREATE FUNCTION er_program(p text) RETURNS void LANGUAGE plpgsql AS \$\$
BEGIN
  PERFORM mln.create_program(p, \$p\$$er_program\$p\$);
  PERFORM mln.bind_predicate(p, 'Sim', 'sim', ARRAY['a', 'b']);
  PERFORM mln.bind_predicate(p, 'SameZip', 'samezip', ARRAY['a', 'b']);
  PERFORM mln.set_query(p, 'Same(x, y)');
END \$\$;
SELECT er_program('er');
SELECT mln.ground('er');
SQL
check "set-up: an entity-resolution program over views of records" test $? -eq 0
"$WORKER" >"$tmp/worker.log" 2>&1 & wpid=$!

digest() { q "SELECT md5(string_agg(arguments::text || truth::text, ';' ORDER BY arguments::text)) FROM mln.map('$1')"; }
state() { q "SELECT mln.program_state('$1')"; }
q "CALL mln.solve('er')" >/dev/null
check "grounded and solved: the state is grounded" test "$(state er)" = grounded
check "mln.sources: records is tracked, unchanged" \
  test "$(q "SELECT string_agg(relation::text || ':' || tracked || ':' || changed, ',') FROM mln.sources('er')
             WHERE relation = 'records'::regclass")" = "records:true:false"
check "mln.map: stale is false, no NOTICE" \
  bash -c "[ \"\$(psql -qXAt -c \"SELECT DISTINCT stale FROM mln.map('er')\" 2>&1)\" = f ]"

# The issue's case: an update and 30 new records.
q "UPDATE records SET name = 'name1' WHERE id IN ('r10', 'r11')" >/dev/null
q "INSERT INTO records SELECT 'n' || i, 'new' || (i / 2), 'y' || (i / 3) FROM generate_series(1, 30) i" >/dev/null
check "after an update and an insert: stale" test "$(state er)" = stale
check "mln.sources says records changed" \
  test "$(q "SELECT changed FROM mln.sources('er') WHERE relation = 'records'::regclass")" = t
check "mln.sources counts the two transactions that wrote records" \
  test "$(q "SELECT changes FROM mln.sources('er') WHERE relation = 'records'::regclass")" = 2
out=$(qe "SELECT DISTINCT stale FROM mln.map('er')")
check "mln.map: stale is true, and a NOTICE names records" \
  bash -c "grep -qx t <<<'$out' && grep -q 'NOTICE:  program \"er\" is stale' <<<'$out' && grep -q 'records changed since' <<<'$out'"
check "mln.infer refuses a stale network" bash -c "! psql -qXAt -c \"SELECT mln.infer('er')\" 2>/dev/null"
out=$(qe "CALL mln.solve('er')")
check "CALL mln.solve on a stale network grounds it again first" \
  bash -c "grep -q 'is stale: grounding it again first' <<<'$out' && grep -q '\"status\": \"done\"' <<<'$out'"
check "then it is grounded, and its answer is not stale" \
  bash -c "[ '$(state er)' = grounded ] && [ \"\$(psql -qXAt -c \"SELECT DISTINCT stale FROM mln.map('er')\")\" = f ]"
check "the last answer is carried to the new network as the next MAP job's start (ground_stats' carried)" \
  test "$(q "SELECT (ground_stats->'carried'->'map'->>'true_atoms')::int > 0 FROM mln.programs WHERE name = 'er'")" = t
check "and the worker started the MAP job from them" grep -q 'map: starts from the previous answer\|map: the network was grounded again after a change: searches' "$tmp/worker.log"
check "the new records are in the answer" test "$(q "SELECT count(*) FROM mln.map('er') WHERE arguments[1] LIKE 'n%'")" -gt 0
q "SELECT er_program('er_fresh'); SELECT mln.ground('er_fresh')" >/dev/null
q "CALL mln.solve('er_fresh')" >/dev/null
check "the answer equals a program's grounded afresh" test "$(digest er)" = "$(digest er_fresh)"
check "the log of changes the groundings saw is emptied" \
  test "$(q "SELECT count(*) FROM mln.table_changes WHERE relid = 'records'::regclass")" = 0
q "SELECT mln.drop_program('er_fresh')" >/dev/null

# What does not make it stale.
q "BEGIN; INSERT INTO records VALUES ('x1', 'a', 'b'); ROLLBACK" >/dev/null
q "BEGIN; SAVEPOINT s; DELETE FROM records WHERE id = 'r1'; ROLLBACK TO s; COMMIT" >/dev/null
check "a change rolled back (or to a savepoint) leaves it grounded" test "$(state er)" = grounded
q "SELECT mln.ground('er')" >/dev/null
check "a grounding carries the answer of the network it replaced, and no warm start of 0.16.0's" \
  test "$(q "SELECT (to_regclass('mln_er._warm') IS NULL)::text || ((SELECT count(*) FROM mln_er._carried WHERE truth)
             = (ground_stats->'carried'->'map'->>'true_atoms')::int)::text FROM mln.programs WHERE name = 'er'")" = truetrue
q "BEGIN; INSERT INTO records VALUES ('x2', 'a', 'b'); SELECT mln.ground('er'); COMMIT" >/dev/null
check "a change made before the grounding, in its transaction, leaves it grounded" test "$(state er)" = grounded
q "BEGIN; SELECT mln.ground('er'); DELETE FROM records WHERE id = 'x2'; COMMIT" >/dev/null
check "a change after the grounding, in its transaction, makes it stale" test "$(state er)" = stale
out=$(q "SELECT mln.refresh('er')")
check "mln.refresh grounds a stale network again" grep -q '"refreshed": true' <<<"$out"
check "after mln.refresh it is grounded" test "$(state er)" = grounded
check "mln.refresh of a current network does nothing" bash -c "grep -q '\"refreshed\": false' <<<'$(q "SELECT mln.refresh('er')")'"
check "mln.refresh of a program never grounded says to ground it" \
  bash -c "psql -qXAt -c \"SELECT mln.create_program('ng', 'P(t)'); SELECT mln.refresh('ng')\" 2>&1 | grep -q 'has not been grounded'"
q "SELECT mln.drop_program('ng')" >/dev/null

# A change the grounding cannot see: committed by a transaction that was
# running when the grounding started.
psql -qXAt -c "BEGIN; INSERT INTO records VALUES ('x3', 'a', 'b'); SELECT pg_sleep(2); COMMIT" >/dev/null & w=$!
sleep 0.5
q "SELECT mln.ground('er')" >/dev/null
wait "$w"
check "a change running while it grounds makes it stale once committed" test "$(state er)" = stale
check "mln.refresh counts that one change and grounds it again" \
  bash -c "grep -q '\"changes\": 1' <<<'$(q "SELECT mln.refresh('er')")' && [ '$(state er)' = grounded ]"

# Writers of a tracked table do not wait for each other.
psql -qXAt -c "BEGIN; INSERT INTO records VALUES ('x4', 'a', 'b'); SELECT pg_sleep(2); COMMIT" >/dev/null & w=$!
sleep 0.5
check "a second writer does not wait for the first's commit" \
  psql -qXAt -c "SET lock_timeout = '300ms'; INSERT INTO records VALUES ('x5', 'a', 'b')"
wait "$w"
check "both changes count" test "$(q "SELECT count(*) FROM mln.table_changes WHERE relid = 'records'::regclass")" = 2
q "SELECT mln.ground('er')" >/dev/null
q "TRUNCATE records" >/dev/null
check "TRUNCATE makes it stale" test "$(state er)" = stale

# A partitioned table: a row written to a partition directly.
psql -qX -v ON_ERROR_STOP=1 >/dev/null <<SQL
CREATE TABLE parts (a text, b text, k int) PARTITION BY RANGE (k);
CREATE TABLE parts_1 PARTITION OF parts FOR VALUES FROM (0) TO (10);
CREATE TABLE parts_2 PARTITION OF parts FOR VALUES FROM (10) TO (20);
INSERT INTO parts VALUES ('r1', 'r2', 1), ('r3', 'r4', 12);
SELECT mln.create_program('pt', \$p\$$er_program\$p\$);
SELECT mln.bind_predicate('pt', 'Sim', 'parts', ARRAY['a', 'b']);
SELECT mln.set_query('pt', 'Same(x, y)');
SELECT mln.ground('pt');
SQL
check "a partitioned table: it and its partitions are tracked" \
  test "$(q "SELECT string_agg(relation::text, ',' ORDER BY relation::text) FROM mln.sources('pt') WHERE tracked")" \
       = 'mln_pt."Same",mln_pt."SameZip",parts,parts_1,parts_2'
q "INSERT INTO parts_2 VALUES ('r5', 'r6', 15)" >/dev/null
check "a row written to a partition directly makes it stale" test "$(state pt)" = stale
q "SELECT mln.ground('pt')" >/dev/null
q "DROP TABLE parts" >/dev/null
check "a dropped source makes it stale" \
  bash -c "[ '$(state pt)' = stale ] && psql -qXAt -c \"SELECT (mln._freshness(p)).detail FROM mln.programs p WHERE name = 'pt'\" | grep -q 'a dropped table'"

# What cannot be tracked is said, and the answer's staleness is unknown.
psql -qX -v ON_ERROR_STOP=1 >/dev/null <<SQL
CREATE ROLE stale_owner; CREATE ROLE stale_user;
GRANT CREATE ON DATABASE $PGDATABASE TO stale_user;
CREATE TABLE theirs (a text, b text); ALTER TABLE theirs OWNER TO stale_owner;
GRANT SELECT ON theirs TO stale_user;
INSERT INTO theirs VALUES ('r1', 'r2');
CREATE MATERIALIZED VIEW sim_m AS SELECT * FROM sim;
GRANT SELECT ON sim_m TO stale_user;
SQL
out=$(psql -qXAt 2>&1 <<SQL
SET ROLE stale_user;
SELECT mln.create_program('ut', \$p\$$er_program\$p\$);
SELECT mln.bind_predicate('ut', 'Sim', 'theirs', ARRAY['a', 'b']);
SELECT mln.bind_predicate('ut', 'SameZip', 'sim_m', ARRAY['a', 'b']);
SELECT mln.set_query('ut', 'Same(x, y)');
SELECT mln.ground('ut') IS NOT NULL;
SELECT relation || ':' || tracked || ':' || coalesce(changed::text, 'null') FROM mln.sources('ut') WHERE NOT tracked ORDER BY 1;
SELECT (mln._freshness(p)).stale IS NULL FROM mln.programs p WHERE name = 'ut';
SQL
)
check "a table another role owns: a WARNING says its changes are not tracked" \
  bash -c "grep -q 'WARNING:  program \"ut\": changes to theirs are not tracked (permission denied' <<<'$out'"
check "a materialized view: not tracked either" grep -q 'changes to sim_m are not tracked (a materialized view' <<<"$out"
check "mln.sources lists both as not tracked, changed unknown" \
  bash -c "grep -qx 'sim_m:false:null' <<<'$out' && grep -qx 'theirs:false:null' <<<'$out'"
check "whether its answer is current is unknown (NULL), not false" grep -qx t <<<"$out"
check "nothing was put on the other role's table" test "$(q "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'theirs'::regclass")" = 0

kill "$wpid" 2>/dev/null; wait "$wpid" 2>/dev/null; wpid=
dropdb "$PGDATABASE"
finish
