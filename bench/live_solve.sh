#!/usr/bin/env bash
# CALL mln.solve end to end after a change (issue #62), the live path
# beside the path from scratch, in one session with one mln_worker: issue
# #62's entity-resolution program over views of a records table
# (bench/gen/er_gen.py, RECORDS records, seed 1) as program 'er' (live
# grounding on: mln.ground moves the session's state, carries the answer and
# the touched atoms, and the MAP job searches only the touched components)
# and as 'er_ref' (mln.live_grounding off: grounded from scratch, every
# component searched from a cold start, nothing carried).  CHANGES single-row changes
# (UPDATE of a name, INSERT near an existing record, DELETE), each followed
# by CALL mln.solve('er'), timed as the client sees it; every SCRATCH_EVERY
# changes, CALL mln.solve('er_ref') too, and the two answers' costs.
# Appends to OUT (bench/live.sh's file).
#   bash bench/live_solve.sh [OUT.md]   RECORDS=1500 CHANGES=100 SCRATCH_EVERY=25
# Needs `make install` and the cluster of `make cluster-start` (or PG* variables).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -z "${PGHOST:-}" ] && eval "$(bash scripts/cluster.sh env)"
OUT=${1:-bench/results/cpu-2core/live.md}
RECORDS=${RECORDS:-1500}
CHANGES=${CHANGES:-100}
SCRATCH_EVERY=${SCRATCH_EVERY:-25}
DB=${BENCH_DB:-mln_bench_live_solve}
WORKER=${MLN_WORKER:-$(command -v mln_worker || echo build/cmake/solver/mln_worker)}
work=$(mktemp -d)
wpid=
trap '[ -n "$wpid" ] && kill "$wpid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; dropdb --if-exists "$DB" 2>/dev/null || true' EXIT
dropdb --if-exists "$DB" 2>/dev/null || true
createdb "$DB"
q() { psql -d "$DB" -qXAt -v ON_ERROR_STOP=1 "$@"; }
python3 bench/gen/er_gen.py sql | q >/dev/null
python3 bench/gen/er_gen.py records "$RECORDS" 1 >"$work/records.tsv"
q -c "\\copy records FROM '$work/records.tsv'"
python3 bench/gen/er_gen.py bind | q >/dev/null
python3 bench/gen/er_gen.py bind | sed "s/'er'/'er_ref'/g" | q >/dev/null
"$WORKER" --dsn "dbname=$DB" >"$work/worker.log" 2>&1 &
wpid=$!
q >"$work/rows.txt" <<SQL
CREATE TEMP TABLE t (k int, kind text, path text, ms float8, ground_ms float8, job_ms float8, cost float8,
                     bound float8, optimal boolean, solver text);
SET mln.live_grounding = on;
SELECT mln.ground('er') IS NOT NULL;
CALL mln.solve('er');
SET mln.live_grounding = off;
SELECT mln.ground('er_ref') IS NOT NULL;
CALL mln.solve('er_ref');
SET mln.live_grounding = on;
DO \$\$
DECLARE victim text; kind text; r jsonb; t0 timestamptz; ms float8; g jsonb;
BEGIN
  FOR k IN 1..$CHANGES LOOP
    victim := (SELECT id FROM records ORDER BY md5(id || k) LIMIT 1);
    CASE k % 3
      WHEN 0 THEN UPDATE records SET name = left(name, 1) || 'q' || substr(name, 3) WHERE id = victim; kind := 'update';
      WHEN 1 THEN INSERT INTO records SELECT 'x' || k, eid, name, zip FROM records WHERE id = victim; kind := 'insert';
      ELSE DELETE FROM records WHERE id = victim; kind := 'delete';
    END CASE;
    COMMIT;
    FOREACH g IN ARRAY ARRAY['"er"'::jsonb, '"er_ref"'::jsonb] LOOP
      CONTINUE WHEN g = '"er_ref"' AND k % $SCRATCH_EVERY <> 0 AND k <> 1;
      PERFORM set_config('mln.live_grounding', CASE WHEN g = '"er"' THEN 'on' ELSE 'off' END, false);
      -- from scratch is cold: nothing carried to er_ref's next job
      IF g = '"er_ref"' THEN DELETE FROM mln_er_ref._map_info; END IF;
      r := NULL;
      t0 := clock_timestamp();
      CALL mln.solve(g #>> '{}', 'map', '{}', NULL, r);
      ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
      INSERT INTO t SELECT k, kind, CASE WHEN g = '"er"' THEN 'live' ELSE 'from scratch' END, ms,
             (p.ground_stats->'seconds'->>'total')::float8 * 1000, (r->>'seconds')::float8 * 1000,
             (r->>'best_cost')::float8, (r->>'bound')::float8, (r->>'optimal')::boolean, r->>'solver'
        FROM mln.programs p WHERE p.name = g #>> '{}';
      COMMIT;
    END LOOP;
  END LOOP;
END \$\$;
SELECT format('| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |', a.k, a.kind, round(a.ms::numeric, 1),
  round(a.ground_ms::numeric, 1), round(a.job_ms::numeric, 1), a.cost, round(a.bound::numeric, 2),
  round(b.ms::numeric / 1000, 2), b.cost, round((b.ms / a.ms)::numeric, 0) || 'x')
FROM t a JOIN t b ON b.k = a.k AND b.path = 'from scratch' WHERE a.path = 'live' ORDER BY a.k;
SELECT format('|| %s | %s | %s | %s | %s |', path, count(*),
  round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 1),
  round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 1),
  round(max(ms)::numeric, 1))
FROM t GROUP BY path ORDER BY path DESC;
SQL
commit=${MLN_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo +uncommitted)}
{
  echo
  echo "## CALL mln.solve end to end: the live path and the path from scratch"
  echo
  echo "- commit $commit, $(date -u +%Y-%m-%d), $(nproc) cores; command: \`RECORDS=$RECORDS CHANGES=$CHANGES SCRATCH_EVERY=$SCRATCH_EVERY bash bench/live_solve.sh\`"
  echo "- one session, one \`mln_worker\` on the same machine; after each single-row change to \`records\` (committed): \`CALL mln.solve('er')\` with live grounding (the session's state moved, the answer carried, the MAP job searching the touched components), and every $SCRATCH_EVERY changes \`CALL mln.solve('er_ref')\` with \`mln.live_grounding = off\` (grounded from scratch, every component searched from a cold start: its previous answer is not carried). Milliseconds as the client sees them (ground: \`ground_stats\`' total; job: the job's search). Costs from the jobs."
  echo
  echo "| change | kind | live ms | ground ms | job ms | live cost | live bound | scratch s | scratch cost | speed-up |"
  echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  grep '^| ' "$work/rows.txt"
  echo
  echo "| path | calls | p50 ms | p99 ms | max ms |"
  echo "|---|---:|---:|---:|---:|"
  grep '^||' "$work/rows.txt" | sed 's/^||/|/'
} >>"$OUT"
echo "live_solve: appended to $OUT"
