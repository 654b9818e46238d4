#!/usr/bin/env bash
# About 10^8 ground clauses, grounded and solved inside the database (issue
# #9): the generated RC workload at PAPERS papers (565,000 give about 10^8
# ground clauses), run end to end by the command line against the running
# database: evidence COPY, mln.ground in the server, the worker's MaxWalkSAT
# with a search time limit, answers written back.  Writes big_run.md (the
# phase table, the grounding statistics, the worker's own timings, and the
# lower bound with its gap and time) to OUT_DIR.
#
#   bash bench/big_run.sh OUT_DIR [PAPERS] [BUILD_DIR]
#   MLN_BIG_DEVICE=gpu      engine path (gpu | cpu)
#   MLN_BIG_TIMEOUT=20      search time limit in seconds (-timeout)
# Also writes the job's cost over time (trace-big-PAPERS.dat: seconds cost
# flips, polled every 0.2 s) and summarises it in big_run.md.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/cli_log.sh"
out=${1:?usage: big_run.sh OUT_DIR [PAPERS] [BUILD_DIR]}
papers=${2:-565000}
build=${3:-$root/build/cmake}
dev=${MLN_BIG_DEVICE:-gpu}
tmo=${MLN_BIG_TIMEOUT:-20}
mkdir -p "$out"
if [ -z "${PGHOST:-}" ]; then eval "$(bash "$root/scripts/cluster.sh" env)"; fi
export PGDATABASE=${PGDATABASE:-postgres}
work=$(mktemp -d /tmp/mln-big-XXXXXX)
trap 'rm -rf "$work"' EXIT

t0=$(date +%s.%N)
"$build/bench/gen/mln_gen" rc "$papers" "$work/rc" >/dev/null || { echo "generator failed" >&2; exit 1; }
gen_s=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
tuples=$(grep -c . "$work/rc/evidence.db")
log=$out/big_run.log
trace=$out/trace-big-$papers.dat
rm -f "$trace"
MLN_TRACE_FILE=$trace /usr/bin/time -f "RSS %M" "$build/solver/pg_mln" -i "$work/rc/prog.mln" -e "$work/rc/evidence.db" \
  -queryFile "$work/rc/query.db" -r "$work/out.txt" --device "$dev" -timeout "$tmo" -verbose 2 >"$log" 2>&1
rc=$?
ph() { cli_phase "$log" "$1"; }
atoms=$(cli_atoms "$log")
clauses=$(cli_clauses "$log")
cost=$(cli_cost "$log")
md=$out/big_run.md
{
  echo "# RC at $papers papers: ground clauses in the database, end to end"
  echo
  echo "- commit: \`${MLN_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null)}\`, date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || echo none)"
  echo "- command: \`MLN_BIG_DEVICE=$dev MLN_BIG_TIMEOUT=$tmo bash bench/big_run.sh OUT $papers\`"
  echo "- workload: generated RC, $papers papers, $tuples evidence tuples (generated in $gen_s s, not counted)"
  echo "- the command line runs against a database that is already up; search = the worker reading the"
  echo "  network, MaxWalkSAT with \`-timeout $tmo\`, and the answers written back; exit status $rc"
  echo
  echo "| atoms | clauses | load s | ground s | search s | output s | total s | cost | CLI RSS MB |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  echo "| ${atoms:-?} | ${clauses:-?} | $(ph load) | $(ph ground) | $(ph search) | $(ph output) | $(ph total) | ${cost:-?} | $(cli_rss_kb "$log" | awk '{ printf "%.0f", $1 / 1024 }') |"
  echo
  echo "Grounding statistics (\`mln.ground\`, seconds per phase; memory in bytes):"
  echo
  echo '```'
  sed -n 's/^ *grounding statistics: //p; s/^ *grounding backend peak RSS: /backend peak RSS: /p' "$log"
  echo '```'
  echo
  echo "The worker's own log (read, components, search, write back):"
  echo
  echo '```'
  grep -E '^worker: ' "$log" | grep -v -E 'waiting|idle' | head -30
  grep -E 'search GPU memory peak' "$log"
  echo '```'
  if grep -q -E '^\[(solve_map|weighted walk|pdhg gpu)' "$log"; then  # with MLN_MAP_DEBUG=1
    echo
    echo "Where the search's seconds went (MLN_MAP_DEBUG=1; solve_map's clock starts after the read):"
    echo
    echo '```'
    grep -E '^\[(solve_map|weighted walk|pdhg gpu)' "$log" | head -60
    echo '```'
  fi
  echo
  echo "The lower bound (the LP relaxation's, by PDHG beside the walk, on the GPU where the worker has one),"
  echo "the gap, and when the first whole answer and the final bound came (seconds from the start of the search):"
  echo
  echo '```'
  grep -E '^### (Lower bound|Proven|Search ended|Warning)' "$log" || echo "(no bound reported)"
  echo '```'
  echo
  echo "Cost over time (the job's best cost as the command line polled it, seconds from the start of"
  echo "search, which includes the worker's read; the changes of cost; trace: \`$(basename "$trace")\`):"
  echo
  echo '```'
  # every change of cost, thinned to about 30 rows (the first and the last kept)
  awk 'BEGIN { n = 0 } NF >= 2 && $2 != "" && $2 != last { t[n] = $1; c[n] = $2; n++; last = $2 }
       END { k = n > 30 ? int((n + 29) / 30) : 1
             for (i = 0; i < n; i++) if (i % k == 0 || i == n - 1) printf "%8.2f s  %s\n", t[i], c[i] }' "$trace" 2>/dev/null
  echo '```'
  [ $rc -eq 0 ] || { echo; echo "The run failed; the end of its log:"; echo; echo '```'; tail -15 "$log"; echo '```'; }
} >"$md"
cat "$md"
exit $rc
