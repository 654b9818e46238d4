#!/usr/bin/env bash
# Follow mode (issue #62): mln.follow(name) starts a background process,
# running as the role that calls it, that keeps the program's answer
# current: after each committed change to a table the program was grounded
# from, it grounds it again and queues a MAP job for mln_worker.  Checked:
# the first answer comes without a call; after an UPDATE, an INSERT and a
# DELETE the answer is current again (not stale, a newer job) within
# seconds, at the cost a program grounded and solved from scratch gets; the
# process runs as the owner (not the worker's role); a second mln.follow is
# refused, as is a role that cannot log in and a bad task; mln.unfollow,
# mln.drop_program and dropping the role end the process.
source "$(dirname "$0")/lib.sh"
eval "$(bash "$root/scripts/cluster.sh" env)"
export PGDATABASE=mln_e2e_follow
users="mln_e2e_follower mln_e2e_nologin"
cleanup_roles
dropdb --if-exists "$PGDATABASE" 2>/dev/null; createdb "$PGDATABASE"
wpid=
# Followers stay connected to the database: end them before it goes.
stop_followers() {
  psql -qXAt -d postgres -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                             WHERE backend_type = 'mln follow' AND datname = '$PGDATABASE'" >/dev/null 2>&1
}
cleanup() { [ -n "$wpid" ] && kill "$wpid" 2>/dev/null; stop_followers; cleanup_roles; rm -rf "$tmp"; }
stop_followers
trap cleanup EXIT
q() { psql -qXAt -c "$1"; }
qf() { psql -qXAt -U mln_e2e_follower -c "$1"; }  # as the program's owner
psql -qX -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
CREATE EXTENSION pg_mln;
CREATE ROLE mln_e2e_follower LOGIN;
CREATE ROLE mln_e2e_nologin NOLOGIN;
GRANT CREATE ON DATABASE mln_e2e_follow TO mln_e2e_follower;
GRANT mln_e2e_nologin TO mln_e2e_follower;
SQL
psql -qX -U mln_e2e_follower -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
CREATE SCHEMA data;
CREATE TABLE data.records (id text PRIMARY KEY, name text, zip text);
INSERT INTO data.records SELECT 'r' || i, 'name' || (i / 3), 'z' || (i / 4) FROM generate_series(1, 60) i;
CREATE VIEW data.sim AS SELECT a.id AS a, b.id AS b FROM data.records a JOIN data.records b ON a.name = b.name AND a.id <> b.id;
CREATE VIEW data.samezip AS SELECT a.id AS a, b.id AS b FROM data.records a JOIN data.records b
  ON a.zip = b.zip AND left(a.name, 5) = left(b.name, 5) AND a.id <> b.id;
CREATE FUNCTION data.er(p text) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
  PERFORM mln.create_program(p, E'*Sim(rec, rec)\n*SameZip(rec, rec)\nSame(rec, rec)\n2 Sim(a, b) => Same(a, b)\n'
                                || E'1 SameZip(a, b) => Same(a, b)\n-1.5 Same(a, b)\n3 Same(a, b), Same(b, c) => Same(a, c)\n'
                                || E'Same(a, b) => Same(b, a).\n');
  PERFORM mln.bind_predicate(p, 'Sim', 'data.sim', ARRAY['a', 'b']);
  PERFORM mln.bind_predicate(p, 'SameZip', 'data.samezip', ARRAY['a', 'b']);
  PERFORM mln.set_query(p, 'Same(x, y)');
END $f$;
SELECT data.er('er');
SELECT data.er('er_ref');
SQL
check "set-up: a program over views of a table, owned by a login role" test $? -eq 0
"$WORKER" >"$tmp/worker.log" 2>&1 & wpid=$!

# current N: waits (up to 20 s) until er has a MAP answer of a job after N
# that is not stale; prints the job.
current() {
  for _ in $(seq 1 200); do
    j=$(qf "SELECT job FROM mln.answer_versions('er') WHERE answer = 'map' AND stale IS FALSE AND job > $1")
    [ -n "$j" ] && { echo "$j"; return 0; }
    sleep 0.1
  done
  return 1
}
# ref_cost: er_ref grounded and solved from scratch, cold.
ref_cost() {
  qf "SELECT mln.ground('er_ref')" >/dev/null
  psql -qXAt -U mln_e2e_follower -c "CALL mln.solve('er_ref')" | sed -n 's/.*"best_cost": \([-0-9.e]*\).*/\1/p'
}
cost_of() { qf "SELECT best_cost FROM mln.jobs WHERE id = $1"; }

pid=$(qf "SELECT mln.follow('er')")
check "mln.follow returns the process id" test -n "$pid"
check "the process runs as the program's owner" \
  test "$(q "SELECT usename || ' ' || application_name FROM pg_stat_activity WHERE pid = $pid")" = "mln_e2e_follower mln_follow er"
j=$(current 0)
check "the first answer comes without a call (job $j)" test -n "$j"
check "at the cost from scratch" test "$(cost_of "$j")" = "$(ref_cost)"
n=0
for change in "UPDATE data.records SET name = 'name7' WHERE id = 'r30'" \
              "INSERT INTO data.records VALUES ('n1', 'name9', 'z9')" \
              "DELETE FROM data.records WHERE id = 'r12'"; do
  n=$((n + 1))
  qf "$change" >/dev/null
  t0=$(date +%s%N)
  j2=$(current "$j")
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  check "change $n: the answer is current again (job $j2, $ms ms)" test -n "$j2"
  check "change $n: at the cost from scratch" test "$(cost_of "$j2")" = "$(ref_cost)"
  j=${j2:-$j}
done
check "the follower keeps no error" test -z "$(qf "SELECT error FROM mln.followers WHERE program = 'er'")"
out=$(qf "SELECT mln.follow('er')" 2>&1)
check "a second mln.follow is refused" grep -q 'is followed already' <<<"$out"
out=$(psql -qXAt -U mln_e2e_follower -c "SET ROLE mln_e2e_nologin; SELECT mln.follow('er_ref')" 2>&1)
check "a role that cannot log in is refused" grep -q 'cannot log in' <<<"$out"
out=$(qf "SELECT mln.follow('er_ref', 'learn')" 2>&1)
check "a task other than map, marginal or dual is refused" grep -q 'task must be map, marginal or dual' <<<"$out"
out=$(qf "SELECT mln._follow_start('er_ref')" 2>&1)
check "mln._follow_start alone starts nothing" grep -q 'is called by mln.follow' <<<"$out"
gone() { for _ in $(seq 1 50); do [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE pid = $1")" = 0 ] && return 0; sleep 0.1; done; return 1; }
check "mln.unfollow ends the process" bash -c "[ \"\$(psql -qXAt -U mln_e2e_follower -c \"SELECT mln.unfollow('er')\")\" = t ]" 
check "within a second or so" gone "$pid"
pid=$(qf "SELECT mln.follow('er')")
qf "SELECT mln.drop_program('er')" >/dev/null
check "dropping the program ends its follower" gone "$pid"
pid=$(qf "SELECT mln.follow('er_ref')")
psql -qX -c "DROP OWNED BY mln_e2e_follower CASCADE" -c "DROP ROLE mln_e2e_nologin" -c "DROP ROLE mln_e2e_follower" >/dev/null 2>&1
check "dropping its role ends a follower" gone "$pid"
finish
