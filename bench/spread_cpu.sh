#!/usr/bin/env bash
# One MAP job on 1, 2, ... CPU workers (issue #23's protocol without a GPU):
# generated RC at PAPERS papers is loaded and grounded once (-keepData) into
# database mln_cpuexp of the project's cluster, then each line of standard
# input, LABEL|WORKERS|OPTIONS-JSON, queues a MAP job served by that many
# mln_worker processes; prints "label | end to end s | search s | cost |
# rounds | device | status" and the job's parts.
#   bash bench/spread_cpu.sh PAPERS < jobs
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" && eval "$(bash scripts/cluster.sh env)"; export PGDATABASE=mln_cpuexp
psql -qXAt -d postgres -c "CREATE DATABASE mln_cpuexp" 2>/dev/null && psql -qXAt -c "CREATE EXTENSION pg_mln"
q() { psql -qXAt -v ON_ERROR_STOP=1 -c "$1"; }
papers=${1:?usage: spread_cpu.sh PAPERS < jobs}; work=$root/build/spread-cpu; mkdir -p $work  # the generated network, kept for the next call
if [ ! -f $work/prog.$papers ] || [ "$(q "SELECT count(*) FROM mln.programs WHERE name = '$(cat $work/prog.$papers)'")" != 1 ]; then
  rm -rf $work/rc; build/cmake/bench/gen/mln_gen rc $papers $work/rc >/dev/null
  build/cmake/solver/pg_mln -i $work/rc/prog.mln -e $work/rc/evidence.db -queryFile $work/rc/query.db -r $work/out.txt --device cpu -timeout 1 -keepData -verbose 1 > $work/cli.log 2>&1
  sed -n "s/.*Data remains in schema 'mln_\(.*\)'.*/\1/p" $work/cli.log | tail -1 > $work/prog.$papers
fi
prog=$(cat $work/prog.$papers)
while IFS='|' read -r label n opts; do
  [ -z "$label" ] && continue
  pids=
  for ((i=0;i<n;i++)); do build/cmake/solver/mln_worker --name w$i >>$work/w.log 2>&1 & pids="$pids $!"; done
  sleep 1
  j=$(q "SELECT mln.infer('$prog', options => '$opts')")
  q "SELECT (mln.wait($j, interval '900 s'))->>'status'" >/dev/null
  kill $pids 2>/dev/null; wait $pids 2>/dev/null
  q "SELECT concat_ws(' | ', '$label', round(extract(epoch FROM finished_at - started_at)::numeric, 1), round(seconds::numeric, 2), round(best_cost::numeric, 1), coalesce(rounds::text, '-'), device, status) FROM mln.jobs WHERE id = $j"
  q "SELECT concat_ws(' ', ' ', round, part, worker, round(seconds::numeric, 2), flips, round(cost::numeric,1)) FROM mln.job_parts WHERE job = $j ORDER BY round, part"
done
