#!/usr/bin/env bash
# A hostile role against the worker (issue #59): mallory owns programs, so
# she owns their schemas, and puts her own code where the worker reads or
# writes: a view over her function in place of a network table or an
# evidence table, a row-level security policy, a trigger, a column default
# and a domain check on a result table, a result table of her own in place
# of the worker's.  Each job (map, marginal, dual, learn, rules, spread)
# fails with an error that names the table; her functions never run with
# the worker's rights (they log current_user into a table anyone may write,
# and that log names only mallory); nothing of the victim's reaches her.
# Run once with a superuser worker (it may read everything) and once with a
# member of mln_worker.
source "$(dirname "$0")/lib.sh"
export PGDATABASE=mln_e2e_trojan
dropdb --if-exists "$PGDATABASE" 2>/dev/null; createdb "$PGDATABASE"
users="mln_e2e_victim mln_e2e_mallory mln_e2e_tworker"
cleanup_roles
psql -qX -v ON_ERROR_STOP=1 >/dev/null <<SQL
CREATE EXTENSION pg_mln;
CREATE ROLE mln_e2e_victim LOGIN;
CREATE ROLE mln_e2e_mallory LOGIN;
CREATE ROLE mln_e2e_tworker LOGIN IN ROLE mln_worker;
GRANT CREATE ON DATABASE $PGDATABASE TO mln_e2e_victim, mln_e2e_mallory;
SQL
check "setup: the extension, a victim, an attacker and a worker role" test $? -eq 0
as() { local u=$1; shift; PGUSER=$u PGOPTIONS='-c client_min_messages=warning' psql -qXAt "$@"; }
prog=$(cat "$DATA/smoke/prog.mln")
evid=$(cat "$DATA/smoke/evidence.db"; printf 'Cancer(Anna)\nCancer(Edward)\n')  # examples for the rules jobs

as mln_e2e_victim -v ON_ERROR_STOP=1 -v prog="$prog" -v ev="$evid" >/dev/null <<'SQL'
SELECT mln.create_program('vic', :'prog');
SELECT mln.load_evidence('vic', :'ev');
SELECT mln.set_query('vic', 'Cancer(x)');
SELECT mln.ground('vic');
CREATE SCHEMA vic_own;
CREATE TABLE vic_own.private AS SELECT 'the victim''s secret' AS secret;
SQL
check "victim: a grounded program and a private table" test $? -eq 0

# mallory's tools: a log anyone may write, and functions that log who runs
# them and try to take the victim's secret.
as mln_e2e_mallory -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
CREATE SCHEMA mal_own;
GRANT USAGE ON SCHEMA mal_own TO PUBLIC;
CREATE TABLE mal_own.ran (who name, what text);
GRANT INSERT, SELECT ON mal_own.ran TO PUBLIC;
CREATE FUNCTION mal_own.spy() RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE s text;
BEGIN
  INSERT INTO mal_own.ran VALUES (current_user, 'ran');
  BEGIN
    SELECT secret INTO s FROM vic_own.private;
    INSERT INTO mal_own.ran VALUES (current_user, 'stole: ' || s);
  EXCEPTION WHEN OTHERS THEN NULL;
  END;
  RETURN true;
END $$;
GRANT EXECUTE ON FUNCTION mal_own.spy() TO PUBLIC;
SQL
check "mallory: her log and her function" test $? -eq 0

# A program of mallory's, grounded (arg 2: 'learn' grounds for learning).
new_program() {
  as mln_e2e_mallory -v ON_ERROR_STOP=1 -v prog="$prog" -v ev="$evid" >/dev/null <<SQL
SELECT mln.create_program('$1', :'prog');
SELECT mln.load_evidence('$1', :'ev');
SELECT mln.set_query('$1', 'Cancer(x)');
SQL
  if [ "${2:-}" = learn ]; then
    as mln_e2e_mallory -c "SELECT mln.load_evidence('$1', E'Cancer(Anna)\n!Cancer(Bob)\n')" >/dev/null
  else
    as mln_e2e_mallory -c "SELECT mln.ground('$1')" >/dev/null
  fi
}
# Replaces table $2 of program $1 by a view of it that calls spy().
view_over() {
  as mln_e2e_mallory -v ON_ERROR_STOP=1 >/dev/null <<SQL
ALTER TABLE mln_$1."$2" RENAME TO "${2}_real";
CREATE VIEW mln_$1."$2" AS SELECT * FROM mln_$1."${2}_real" WHERE mal_own.spy();
GRANT SELECT ON mln_$1."$2" TO PUBLIC;
SQL
}
# Queues job $2 (options $3) of program $1 and waits; prints status|error.
run_job() {
  local id
  if [ "$2" = learn ]; then
    id=$(as mln_e2e_mallory -c "SELECT mln.learn_weights('$1', '{\"iterations\": 5}')")
  elif [ "$2" = rules ]; then
    id=$(as mln_e2e_mallory -c "SELECT mln.learn_rules_job('$1', 'Cancer', '{\"min_pos\": 1}')")
  else
    id=$(as mln_e2e_mallory -c "SELECT mln.infer('$1', '$2', '${3:-{\}}')")
  fi
  wait_job "$id"
}
wait_job() {
  as mln_e2e_mallory -c "SELECT (w->>'status') || '|' || coalesce(w->>'error', '') FROM mln.wait($1, interval '90 s') w"
}
refused() {  # name, job output, table named in the error
  check "$1: the job fails" test "${2%%|*}" = failed
  # (A table the worker was never granted, one mallory made after the
  # grounding: its lock is refused before the check.)
  check "$1: its error names $3 and why" \
    bash -c "[[ \"\$1\" == *'refused to '*'$3'* || \"\$1\" == *'permission denied for table ${3##*.}'* ]]" _ "$2"
}
spied_as_worker() {  # rows of the log not written as mallory
  psql -qXAt -c "SELECT count(*) FROM mal_own.ran WHERE who <> 'mln_e2e_mallory'"
}

for worker in postgres mln_e2e_tworker; do
  k=${worker#mln_e2e_}
  # mln.learn_weights grounds for learning and queues the job: the view goes
  # in between, before a worker runs.
  new_program "d$k" learn
  lj=$(as mln_e2e_mallory -c "SELECT mln.learn_weights('d$k', '{\"iterations\": 5}')")
  view_over "d$k" _learn_world
  PGUSER=$worker "$WORKER" --quiet --lease 3 2>"$tmp/worker-$worker.err" & w=$!
  psql -qXAt -c "TRUNCATE mal_own.ran"

  new_program "a$k"; view_over "a$k" _clauses
  refused "$worker, map over a view in place of _clauses" "$(run_job "a$k" map)" "mln_a$k._clauses"

  new_program "b$k"; view_over "b$k" _atoms
  refused "$worker, marginal over a view in place of _atoms" \
    "$(run_job "b$k" marginal '{"samples": 50}')" "mln_b$k._atoms"

  new_program "c$k"
  as mln_e2e_mallory -c "ALTER TABLE mln_c$k._clauses ENABLE ROW LEVEL SECURITY;
    CREATE POLICY p ON mln_c$k._clauses USING (mal_own.spy())" >/dev/null
  refused "$worker, dual over a policy on _clauses" "$(run_job "c$k" dual '{"samples": 50}')" "mln_c$k._clauses"

  refused "$worker, learn over a view in place of _learn_world" "$(wait_job "$lj")" "mln_d$k._learn_world"

  # A rules job reads its evidence as mallory when it is queued: the view
  # runs then, as her, and the worker never reads it.
  new_program "e$k"; view_over "e$k" Smokes
  check "$worker, rules over a view in place of an evidence table: done" test "$(run_job "e$k" rules | cut -d'|' -f1)" = done

  new_program "f$k"
  as mln_e2e_mallory -v ON_ERROR_STOP=1 >/dev/null <<SQL
CREATE OR REPLACE FUNCTION mal_own.trg() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN PERFORM mal_own.spy(); RETURN NEW; END \$\$;
CREATE TRIGGER t BEFORE INSERT ON mln_f$k._map FOR EACH ROW EXECUTE FUNCTION mal_own.trg();
SQL
  refused "$worker, map into _map with a trigger" "$(run_job "f$k" map)" "mln_f$k._map"

  new_program "g$k"
  as mln_e2e_mallory -c "ALTER TABLE mln_g$k._map ADD COLUMN x boolean DEFAULT mal_own.spy()" >/dev/null
  refused "$worker, map into _map with a default" "$(run_job "g$k" map)" "mln_g$k._map"

  new_program "h$k"
  as mln_e2e_mallory -c "CREATE DOMAIN mal_own.b$k AS boolean CHECK (mal_own.spy());
    ALTER TABLE mln_h$k._map ALTER COLUMN truth TYPE mal_own.b$k" >/dev/null
  refused "$worker, map into _map through a domain" "$(run_job "h$k" map)" "mln_h$k._map"

  new_program "i$k"
  as mln_e2e_mallory -v ON_ERROR_STOP=1 >/dev/null <<SQL
CREATE TABLE mln_i$k._marginal (atom int4 PRIMARY KEY, probability float8 NOT NULL);
CREATE TRIGGER t BEFORE INSERT ON mln_i$k._marginal FOR EACH ROW EXECUTE FUNCTION mal_own.trg();
SQL
  refused "$worker, marginal into her own _marginal with a trigger" \
    "$(run_job "i$k" marginal '{"samples": 50}')" "mln_i$k._marginal"

  new_program "j$k"; view_over "j$k" _clauses
  refused "$worker, a spread map over a view in place of _clauses" \
    "$(run_job "j$k" map '{"partitions": 2}')" "mln_j$k._clauses"

  check "$worker: none of mallory's code ran with the worker's rights" test "$(spied_as_worker)" = 0
  check "$worker: nothing of the victim's reached mallory" \
    test "$(psql -qXAt -c "SELECT count(*) FROM mal_own.ran WHERE what LIKE 'stole%'")" = 0
  # The worker still serves the victim.
  vj=$(as mln_e2e_victim -c "SELECT mln.infer('vic', 'map')")
  check "$worker: the victim's map job is done" \
    test "$(as mln_e2e_victim -c "SELECT mln.wait($vj, interval '60 s')->>'status'")" = done
  kill $w; wait $w 2>/dev/null
done

# A ProbLog job grounds in the queueing backend, as its owner: a view over
# mallory's function there runs as mallory, never as the worker.
PGUSER=postgres "$WORKER" --quiet --lease 3 2>"$tmp/worker-pl.err" & w=$!
as mln_e2e_mallory -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
CREATE TABLE mal_own.e_real (a int, b int);
INSERT INTO mal_own.e_real VALUES (1, 2);
CREATE VIEW mal_own.e AS SELECT * FROM mal_own.e_real WHERE mal_own.spy();
SQL
pj=$(as mln_e2e_mallory -c "SELECT mln.problog_job('.input e(a int, b int) from mal_own.e
0.5::p(X) :- e(X, _).
query(p(1)).')")
check "problog job over mallory's view is done" \
  test "$(as mln_e2e_mallory -c "SELECT mln.wait($pj, interval '60 s')->>'status'")" = done
check "... and her function ran as mallory only" test "$(spied_as_worker)" = 0
check "... and it did run (the log is real)" \
  test "$(psql -qXAt -c "SELECT count(*) > 0 FROM mal_own.ran WHERE who = 'mln_e2e_mallory'")" = t
kill $w; wait $w 2>/dev/null

# Queueing a rules job grants the worker no table of the program: its
# evidence is read then, as mallory, and stored (mln.rules_input).
as mln_e2e_mallory -v prog="$prog" -v ev="$evid" >/dev/null <<'SQL'
SELECT mln.create_program('grants', :'prog');
SELECT mln.load_evidence('grants', :'ev');
SQL
gj=$(as mln_e2e_mallory -c "SELECT mln.learn_rules_job('grants', 'Cancer', '{\"min_pos\": 1}')")
check "a queued rules job grants mln_worker nothing on the program" \
  test "$(psql -qXAt -c "SELECT count(*) FROM information_schema.role_table_grants
                          WHERE table_schema = 'mln_grants' AND grantee = 'mln_worker'")" = 0
check "... and its evidence is stored with it" test "$(psql -qXAt -c "SELECT count(*) > 0 FROM mln.rules_input WHERE job = $gj")" = t

cleanup_roles
dropdb --if-exists "$PGDATABASE" 2>/dev/null
finish
