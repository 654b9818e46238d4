#!/usr/bin/env bash
# The hostile suite (issue #59): over 200 inputs a hostile or careless role
# can give the SQL functions and the command line (deep nesting, long
# inputs, bad options, other roles' objects, injected names, endless
# sampling, memory-hungry searches), each in a session of its own as a plain
# role.  Each case asserts that the server was not restarted, the session
# survived, the call failed where it must, and a failed call changed
# nothing (tests/e2e/hostile.py; the cases: hostile_cases.py).
source "$(dirname "$0")/lib.sh"
eval "$(bash "$root/scripts/cluster.sh" env)"
export PGDATABASE=mln_e2e_hostile
role=mln_e2e_hostile
dropdb --if-exists "$PGDATABASE" 2>/dev/null; createdb "$PGDATABASE"
users=$role
cleanup_roles
prog=$(cat "$DATA/smoke/prog.mln")
evid=$(cat "$DATA/smoke/evidence.db")
PGOPTIONS='-c client_min_messages=warning' psql -qX -v ON_ERROR_STOP=1 -v prog="$prog" -v ev="$evid" >/dev/null <<SQL
CREATE EXTENSION pg_mln;
CREATE ROLE $role LOGIN;
GRANT CREATE ON DATABASE $PGDATABASE TO $role;
-- A superuser's bound on the CPU backend's memory for this role: the
-- memory-hungry cases fail at 1 GB instead of taking the machine's.
ALTER ROLE $role SET mln.cpu_memory_limit = '1GB';
CREATE SCHEMA hostile_admin;
CREATE TABLE hostile_admin.secret AS SELECT 42 AS a;
SELECT mln.create_program('admins', :'prog');
SQL
check "setup: the extension, a plain role, another role's table and program" test $? -eq 0
PGUSER=$role PGOPTIONS='-c client_min_messages=warning' psql -qX -v ON_ERROR_STOP=1 -v prog="$prog" -v ev="$evid" >/dev/null <<'SQL'
SELECT mln.create_program('base', :'prog');
SELECT mln.load_evidence('base', :'ev');
SELECT mln.set_query('base', 'Cancer(x)');
SELECT mln.ground('base');
CREATE SCHEMA hostile_own;
CREATE SCHEMA hostile_out;
CREATE TABLE hostile_own.t AS SELECT g AS a, g % 7 AS b FROM generate_series(1, 1000) g;
CREATE TABLE hostile_own.txt AS SELECT g::text AS s FROM generate_series(1, 10) g;
CREATE TABLE hostile_own.big AS SELECT g AS a, g AS b FROM generate_series(1, 10000) g;
CREATE VIEW hostile_own.v AS SELECT 1 AS c1;
CREATE TABLE hostile_own.gp_pos AS SELECT g AS a, (g * 7) % 300000 AS b FROM generate_series(1, 2000) g;
CREATE TABLE hostile_own.mid1 AS SELECT g % 300 AS a, g AS b FROM generate_series(1, 300000) g;
CREATE TABLE hostile_own.mid2 AS SELECT g AS a, g % 300 AS b FROM generate_series(1, 300000) g;
SQL
check "setup: the role's program, tables and schemas" test $? -eq 0
MLN_SMOKE=$DATA/smoke python3 "$(dirname "$0")/hostile.py" "$role" "$PGMLN" "$tmp"
rc=$?
check "every hostile case" test $rc -eq 0
# Four sessions deriving one relation into a fresh schema at once (issue
# #59: a raw pg_type_typname_nsp_index duplicate-key error in 3 of 4
# rounds): each succeeds, and the table holds the serial answer.
for round in 1 2 3; do
  psql -qX -c "DROP SCHEMA IF EXISTS race CASCADE; CREATE SCHEMA race" >/dev/null 2>&1
  pids=()
  for k in 1 2 3 4; do
    psql -qXAt -v ON_ERROR_STOP=1 -c "SELECT mln.datalog('e(1, 2). e(2, 3). p(X, Y) :- e(X, Y). p(X, Z) :- p(X, Y), e(Y, Z).', 'race')" \
      >"$tmp/race-$k.out" 2>&1 & pids+=($!)
  done
  bad=0
  for p in "${pids[@]}"; do wait "$p" || bad=$((bad + 1)); done
  check "concurrent writers, round $round: all four succeed" test "$bad" -eq 0
  check "... and p is the serial answer" test "$(psql -qXAt -c "SELECT string_agg(c1 || '-' || c2, ',' ORDER BY c1, c2) FROM race.p")" = "1-2,1-3,2-3"
done
psql -qX -c "DROP SCHEMA IF EXISTS race CASCADE" >/dev/null 2>&1

cleanup_roles
dropdb --if-exists "$PGDATABASE" 2>/dev/null
finish
