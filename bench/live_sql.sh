#!/usr/bin/env bash
# Live grounding through SQL (issue #62), beside grounding from scratch, in
# one session: issue #62's entity-resolution program over views of a
# records table (bench/gen/er_gen.py, RECORDS records, seed 1), then
# CHANGES single-row changes (UPDATE of a name, INSERT near an existing
# record, DELETE), each followed by mln.ground('er') with live grounding
# (the session's state moved) and by mln.ground('er_ref') with
# mln.live_grounding off (from scratch), both timed as the client sees them,
# with ground_stats' phases (load: reading the views; live_update or the
# grounding's phases; store).  Appends to OUT (bench/live.sh's file).
#   bash bench/live_sql.sh [OUT.md]   RECORDS=1500 CHANGES=30
# Needs `make install` and the cluster of `make cluster-start` (or PG* variables).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -z "${PGHOST:-}" ] && eval "$(bash scripts/cluster.sh env)"
OUT=${1:-bench/results/cpu-2core/live.md}
RECORDS=${RECORDS:-1500}
CHANGES=${CHANGES:-30}
DB=${BENCH_DB:-mln_bench_live_sql}
work=$(mktemp -d)
trap 'rm -rf "$work"; dropdb --if-exists "$DB" 2>/dev/null || true' EXIT
dropdb --if-exists "$DB" 2>/dev/null || true
createdb "$DB"
q() { psql -d "$DB" -qXAt -v ON_ERROR_STOP=1 "$@"; }
python3 bench/gen/er_gen.py sql | q >/dev/null
python3 bench/gen/er_gen.py records "$RECORDS" 1 >"$work/records.tsv"
q -c "\\copy records FROM '$work/records.tsv'"
python3 bench/gen/er_gen.py bind | q >/dev/null
python3 bench/gen/er_gen.py bind | sed "s/'er'/'er_ref'/g" | q >/dev/null
q >"$work/rows.txt" <<SQL
SELECT mln.ground('er');
SELECT mln.ground('er_ref');
CREATE TEMP TABLE t (k int, path text, ms float8, load float8, work float8, store float8, clauses int);
CREATE FUNCTION pg_temp.timed(k int, p text, live boolean) RETURNS void LANGUAGE plpgsql AS \$f\$
DECLARE t0 timestamptz; s jsonb;
BEGIN
  PERFORM set_config('mln.live_grounding', CASE WHEN live THEN 'on' ELSE 'off' END, false);
  t0 := clock_timestamp();
  s := mln.ground(p);
  INSERT INTO t VALUES (k, CASE WHEN live THEN 'live' ELSE 'from scratch' END,
    extract(epoch FROM clock_timestamp() - t0) * 1000, (s->'seconds'->>'load')::float8 * 1000,
    coalesce((s->'seconds'->>'live_update')::float8, (s->'seconds'->>'total')::float8 - (s->'seconds'->>'load')::float8
             - (s->'seconds'->>'store')::float8) * 1000,
    (s->'seconds'->>'store')::float8 * 1000, (s->>'clauses')::int);
END \$f\$;
SELECT pg_temp.timed(0, 'er', true);  -- builds the live state
DO \$\$
DECLARE victim text; n int := (SELECT count(*) FROM records);
BEGIN
  FOR k IN 1..$CHANGES LOOP
    victim := (SELECT id FROM records ORDER BY md5(id || k) LIMIT 1);
    CASE k % 3
      WHEN 0 THEN UPDATE records SET name = left(name, 1) || 'q' || substr(name, 3) WHERE id = victim;
      WHEN 1 THEN INSERT INTO records SELECT 'x' || k, eid, name, zip FROM records WHERE id = victim;
      ELSE DELETE FROM records WHERE id = victim;
    END CASE;
    PERFORM pg_temp.timed(k, 'er', true);
    PERFORM pg_temp.timed(k, 'er_ref', false);
  END LOOP;
END \$\$;
SELECT format('| %s | %s | %s | %s | %s | %s |', path,
  round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 1),
  round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 1),
  round(percentile_cont(0.5) WITHIN GROUP (ORDER BY load)::numeric, 1),
  round(percentile_cont(0.5) WITHIN GROUP (ORDER BY work)::numeric, 1),
  round(percentile_cont(0.5) WITHIN GROUP (ORDER BY store)::numeric, 1))
FROM t WHERE k > 0 GROUP BY path ORDER BY path DESC;
SELECT 'same network: ' || (SELECT count(*) FROM (SELECT weight::text || ':' || (SELECT string_agg(l, ',' ORDER BY l) FROM unnest(literals) l)
  FROM mln.ground_clauses('er') EXCEPT ALL SELECT weight::text || ':' || (SELECT string_agg(l, ',' ORDER BY l) FROM unnest(literals) l)
  FROM mln.ground_clauses('er_ref')) d) || ' clauses of er not in er_ref';
SQL
commit=${MLN_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo +uncommitted)}
{
  echo
  echo "## Through SQL: mln.ground with the session's live state, and from scratch"
  echo
  echo "- commit $commit, $(date -u +%Y-%m-%d), $(nproc) cores; command: \`RECORDS=$RECORDS CHANGES=$CHANGES bash bench/live_sql.sh\`"
  echo "- one session; after each single-row change to \`records\`: \`mln.ground('er')\` (live) and \`mln.ground('er_ref')\` (\`mln.live_grounding = off\`), the same program over the same views. Milliseconds as the client sees them; load: reading the evidence (the views \`sim\`, \`samezip\` are computed here); work: the live update, or the grounding's phases; store: writing the network tables."
  echo
  echo "| $CHANGES changes | p50 ms | p99 ms | load p50 | work p50 | store p50 |"
  echo "|---|---:|---:|---:|---:|---:|"
  grep '^|' "$work/rows.txt"
  echo
  grep '^same network' "$work/rows.txt" | sed 's/^/- /'
} >>"$OUT"
echo "live_sql: appended to $OUT"
