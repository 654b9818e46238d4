#!/usr/bin/env bash
# Follow mode (issue #62): how soon after a commit the answer is current
# again.  Issue #62's entity-resolution program over views of a records
# table (bench/gen/er_gen.py, RECORDS records, seed 1), followed by
# mln.follow('er', every => EVERY) with one mln_worker; CHANGES single-row
# changes (UPDATE of a name, INSERT near an existing record, DELETE), each
# committed, then timed until mln.answer_versions('er') shows a MAP answer
# of a newer job that is not stale (client side: a psql call, then 5 ms).
# Appends to OUT (bench/live.sh's file).
#   bash bench/live_follow.sh [OUT.md]   RECORDS=1500 CHANGES=30 EVERY='100 ms'
# Needs `make install` and the cluster of `make cluster-start` (or PG* variables).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -z "${PGHOST:-}" ] && eval "$(bash scripts/cluster.sh env)"
OUT=${1:-bench/results/cpu-2core/live.md}
RECORDS=${RECORDS:-1500}
CHANGES=${CHANGES:-30}
EVERY=${EVERY:-100 ms}
DB=${BENCH_DB:-mln_bench_live_follow}
WORKER=${MLN_WORKER:-$(command -v mln_worker || echo build/cmake/solver/mln_worker)}
work=$(mktemp -d)
wpid=
stop() {
  psql -d "$DB" -qXAt -c "SELECT mln.unfollow('er')" >/dev/null 2>&1 || true
  psql -d postgres -qXAt -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                             WHERE backend_type = 'mln follow' AND datname = '$DB'" >/dev/null 2>&1 || true
  [ -n "$wpid" ] && kill "$wpid" 2>/dev/null
  wait 2>/dev/null
}
trap 'stop; rm -rf "$work"; dropdb --if-exists "$DB" 2>/dev/null || true' EXIT
dropdb --if-exists "$DB" 2>/dev/null || true
createdb "$DB"
q() { psql -d "$DB" -qXAt -v ON_ERROR_STOP=1 "$@"; }
python3 bench/gen/er_gen.py sql | q >/dev/null
python3 bench/gen/er_gen.py records "$RECORDS" 1 >"$work/records.tsv"
q -c "\\copy records FROM '$work/records.tsv'"
python3 bench/gen/er_gen.py bind | q >/dev/null
"$WORKER" --dsn "dbname=$DB" >"$work/worker.log" 2>&1 &
wpid=$!
q -c "SELECT mln.follow('er', every => interval '$EVERY')" >/dev/null
latest() { q -c "SELECT coalesce(max(job), 0) FROM mln.answer_versions('er') WHERE answer = 'map' AND stale IS FALSE"; }
for _ in $(seq 1 600); do [ "$(latest)" != 0 ] && break; sleep 0.1; done  # the first answer (a solve from scratch)
job=$(latest)
: >"$work/ms.txt"
for k in $(seq 1 "$CHANGES"); do
  case $((k % 3)) in
    0) sql="UPDATE records SET name = left(name, 1) || 'q' || substr(name, 3) WHERE id = (SELECT id FROM records ORDER BY md5(id || $k) LIMIT 1)" ;;
    1) sql="INSERT INTO records SELECT 'x' || $k, eid, name, zip FROM records WHERE id = (SELECT id FROM records ORDER BY md5(id || $k) LIMIT 1)" ;;
    *) sql="DELETE FROM records WHERE id = (SELECT id FROM records ORDER BY md5(id || $k) LIMIT 1)" ;;
  esac
  q -c "$sql" >/dev/null
  t0=$(date +%s%N)
  for _ in $(seq 1 4000); do
    j=$(latest)
    [ "$j" -gt "$job" ] && break
    sleep 0.005
  done
  echo $(( ($(date +%s%N) - t0) / 1000 )) >>"$work/ms.txt"  # microseconds
  job=$j
done
err=$(q -c "SELECT coalesce(error, '') FROM mln.followers WHERE program = 'er'")
stats=$(sort -n "$work/ms.txt" | awk '{ a[NR] = $1 / 1000 } END { p50 = a[int((NR + 1) / 2)]; p99 = a[int(NR * 0.99 + 0.999)];
  printf "| %d | %.1f | %.1f | %.1f |", NR, p50, p99, a[NR] }')
commit=${MLN_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo +uncommitted)}
{
  echo
  echo "## Follow mode: from a commit to a current answer"
  echo
  echo "- commit $commit, $(date -u +%Y-%m-%d), $(nproc) cores; command: \`RECORDS=$RECORDS CHANGES=$CHANGES EVERY='$EVERY' bash bench/live_follow.sh\`"
  echo "- \`mln.follow('er', every => '$EVERY')\` and one \`mln_worker\` on the same machine; after each committed single-row change, the time until \`mln.answer_versions('er')\` shows a MAP answer of a newer job that is not stale (the client polls: a psql call, then 5 ms, about 20 ms a poll). It includes the wait for the follower's next look (up to \`every\`), the live grounding, the MAP job on the touched components and its write.${err:+ Follower error: $err}"
  echo
  echo "| changes | p50 ms | p99 ms | max ms |"
  echo "|---:|---:|---:|---:|"
  echo "$stats"
} >>"$OUT"
echo "live_follow: appended to $OUT"
