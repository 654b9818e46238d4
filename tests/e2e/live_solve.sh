#!/usr/bin/env bash
# CALL mln.solve after a change, on the live path (issue #62): in one
# session, the entity-resolution program of issue #62 over views of a
# records table is grounded live ('er'); after each committed single-row
# change, mln.ground carries the last MAP answer and the touched atoms, and
# the worker's MAP job searches only the touched components.  The same
# program grounded from scratch and solved cold ('er_ref', live grounding
# off, nothing carried) is the reference: its components are small, where
# the walk finds the optimum, so the two costs are equal, and the live
# bound (composed from the previous answer's) is at most that cost.  The
# reported cost is that of the answer written: a job on the unchanged
# network (the carried answer used up, every component searched) gives it.
source "$(dirname "$0")/lib.sh"
eval "$(bash "$root/scripts/cluster.sh" env)"
export PGDATABASE=mln_e2e_live_solve
dropdb --if-exists "$PGDATABASE" 2>/dev/null; createdb "$PGDATABASE"
wpid=
cleanup() { [ -n "$wpid" ] && kill "$wpid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
q() { psql -qXAt -c "$1"; }
psql -qX -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
CREATE EXTENSION pg_mln;
CREATE TABLE records (id text PRIMARY KEY, name text, zip text);
SELECT setseed(0.5);
INSERT INTO records SELECT 'r' || i, (ARRAY['an', 'bo', 'cy', 'di'])[1 + (i * 7) % 4] || (i % 9), 'z' || (i % 5)
  FROM generate_series(1, 60) i;
CREATE VIEW sim AS SELECT a.id AS a, b.id AS b FROM records a JOIN records b
  ON a.name = b.name AND a.id <> b.id;
CREATE VIEW samezip AS SELECT a.id AS a, b.id AS b FROM records a JOIN records b
  ON a.zip = b.zip AND left(a.name, 2) = left(b.name, 2) AND a.id <> b.id;
CREATE FUNCTION er_program(p text) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
  PERFORM mln.create_program(p, $p$
*Sim(rec, rec)
*SameZip(rec, rec)
Same(rec, rec)
2.0  Sim(a, b) => Same(a, b)
1.0  SameZip(a, b) => Same(a, b)
-1.5 Same(a, b)
3.0  Same(a, b), Same(b, c) => Same(a, c)
Same(a, b) => Same(b, a).
$p$);
  PERFORM mln.bind_predicate(p, 'Sim', 'sim', ARRAY['a', 'b']);
  PERFORM mln.bind_predicate(p, 'SameZip', 'samezip', ARRAY['a', 'b']);
  PERFORM mln.set_query(p, 'Same(x, y)');
END $f$;
SELECT er_program('er');
SELECT er_program('er_ref');
SQL
check "set-up: two entity-resolution programs over the same views" test $? -eq 0
"$WORKER" >"$tmp/worker.log" 2>&1 & wpid=$!

psql -qXAt -v ON_ERROR_STOP=1 >"$tmp/out.txt" 2>"$tmp/err.txt" <<'SQL'
CREATE TEMP TABLE t (k int, path text, cost float8, bound float8, optimal boolean, solver text, stop text);
SELECT mln.ground('er') IS NOT NULL;  -- from scratch (few KBMC candidates)
SELECT mln.ground('er') IS NOT NULL;  -- builds the session's live state
CALL mln.solve('er');
SET mln.live_grounding = off;
SELECT mln.ground('er_ref') IS NOT NULL;
SET mln.live_grounding = on;
DO $$
DECLARE victim text; r jsonb; g text;
BEGIN
  FOR k IN 1..12 LOOP
    victim := (SELECT id FROM records ORDER BY md5(id || k) LIMIT 1);
    CASE k % 3
      WHEN 0 THEN UPDATE records SET name = (SELECT name FROM records ORDER BY md5(id || k || 'n') LIMIT 1) WHERE id = victim;
      WHEN 1 THEN INSERT INTO records SELECT 'x' || k, name, zip FROM records WHERE id = victim;
      ELSE DELETE FROM records WHERE id = victim;
    END CASE;
    COMMIT;
    FOREACH g IN ARRAY ARRAY['er', 'er_ref'] LOOP
      PERFORM set_config('mln.live_grounding', CASE WHEN g = 'er' THEN 'on' ELSE 'off' END, false);
      IF g = 'er_ref' AND to_regclass('mln_er_ref._map_info') IS NOT NULL THEN DELETE FROM mln_er_ref._map_info; END IF;
      r := NULL;
      CALL mln.solve(g, 'map', '{}', NULL, r);
      INSERT INTO t VALUES (k, g, (r->>'best_cost')::float8, (r->>'bound')::float8, (r->>'optimal')::boolean,
                            r->>'solver', r->>'stop_reason');
      COMMIT;
    END LOOP;
  END LOOP;
  PERFORM set_config('mln.live_grounding', 'on', false);
  r := NULL;
  CALL mln.solve('er', 'map', '{}', NULL, r);  -- unchanged: every component searched
  INSERT INTO t VALUES (13, 'er', (r->>'best_cost')::float8, (r->>'bound')::float8, (r->>'optimal')::boolean,
                        r->>'solver', r->>'stop_reason');
END $$;
SELECT 'rows ' || count(*) FROM t;
SELECT 'valid bounds ' || count(*) FROM t a JOIN t b ON a.k = b.k AND a.path = 'er' AND b.path = 'er_ref'
  WHERE a.bound <= b.cost + 1e-6 AND a.bound >= 0;
SELECT 'same costs ' || count(*) FROM t a JOIN t b ON a.k = b.k AND a.path = 'er' AND b.path = 'er_ref'
  WHERE abs(a.cost - b.cost) < 1e-6;
SELECT 'touched jobs ' || count(*) FROM t WHERE path = 'er' AND k <= 12 AND (solver = 'kept' OR stop LIKE '%touched%');
SELECT 'resolved cost ' || (SELECT (a.cost = b.cost)::text FROM t a, t b WHERE a.k = 12 AND a.path = 'er' AND b.k = 13);
SELECT 'last full ' || (SELECT stop NOT LIKE '%touched%' FROM t WHERE k = 13);
SQL
check "twelve changes, each solved live and from scratch, and one more solve" grep -qx 'rows 25' "$tmp/out.txt"
check "each live answer's bound is at least 0 and at most the cost from scratch" grep -qx 'valid bounds 12' "$tmp/out.txt"
check "the live answer's cost is the cold answer's from scratch after each change" grep -qx 'same costs 12' "$tmp/out.txt"
check "each live MAP job searched only the touched components" grep -qx 'touched jobs 12' "$tmp/out.txt"
check "the worker said so" test "$(grep -c 'searches the components of its' "$tmp/worker.log")" -ge 12
check "a job on the unchanged network searches every component" grep -qx 'last full true' "$tmp/out.txt"
check "and finds the cost the live path reported for its answer" grep -qx 'resolved cost true' "$tmp/out.txt"
if ! grep -qx 'same costs 12' "$tmp/out.txt"; then cat "$tmp/out.txt" "$tmp/err.txt" >&2; fi

# Another session (each psql -c is one) holds no live state: its grounding
# compares the stored network with the new one to find the touched atoms.
q "DELETE FROM records WHERE id = (SELECT min(a) FROM sim)" >/dev/null
live=$(q "CALL mln.solve('er')")
q "DELETE FROM mln_er_ref._map_info" >/dev/null
ref=$(psql -qXAt -c "SET mln.live_grounding = off" -c "CALL mln.solve('er_ref')")
check "from a new session, the touched atoms are found by comparing the networks" \
  test "$(q "SELECT ground_stats->'carried'->>'how' FROM mln.programs WHERE name = 'er'")" = compared
check "and the MAP job searches only their components" grep -q 'on the touched components\|nothing touched' <<<"$live"
# Marginals: a marginal job after a change samples the touched components
# and keeps the previous marginals elsewhere (from the first marginal job on
# this network); against MC-SAT from scratch on er_ref (its components are
# mostly enumerated: exact), they agree.
q "CALL mln.solve('er', 'marginal')" >/dev/null
q "INSERT INTO records SELECT 'm1', name, zip FROM records ORDER BY id LIMIT 1" >/dev/null
marg=$(q "CALL mln.solve('er', 'marginal')")
psql -qXAt -c "SET mln.live_grounding = off" -c "CALL mln.solve('er_ref', 'marginal')" >/dev/null
check "a marginal job after a change samples only the touched components" \
  grep -q 'components the change did not touch are the previous answer' <<<"$marg"
diff=$(q "SELECT round(avg(abs(a.probability - b.probability))::numeric, 4) || ' ' || count(*) FROM mln.marginals('er') a
          JOIN mln.marginals('er_ref') b USING (predicate, arguments)")
check "its marginals are those of MC-SAT from scratch (mean difference, atoms: $diff)" \
  bash -c "awk '{ exit !(\$1 < 0.02 && \$2 > 50) }' <<<'$diff'"
# A job with other options than the job whose answer was carried searches
# everything (from that answer).
q "CALL mln.solve('er')" >/dev/null
q "DELETE FROM records WHERE id = (SELECT max(a) FROM sim)" >/dev/null
other=$(q "CALL mln.solve('er', 'map', '{\"seed\": 7}')")
done_n=$(grep -c '"status": "done"' <<<"$other"); touched_n=$(grep -c 'touched components\|nothing touched' <<<"$other")
check "a MAP job with other options after a change searches every component" test "$done_n$touched_n" = 10
cost() { sed -n 's/.*"best_cost": \([-0-9.e]*\).*/\1/p' <<<"$1"; }
check "to the cost of the cold solve from scratch ($(cost "$live") and $(cost "$ref"))" test "$(cost "$live")" = "$(cost "$ref")"
finish
