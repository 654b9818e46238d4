#!/usr/bin/env bash
# The GPU run, in one call, on a GPU host that has CUDA but no PostgreSQL and
# no network (see tests/gpu/; .devcache/ is carried along):
#   1. builds PostgreSQL 15 from the carried source (bash .devcache/pg-build.sh)
#   2. builds pg_mln with the CUDA backend (sm_90)
#   3. runs the GoogleTest suites with MLN_REQUIRE_GPU=1 (GPU tests must run, not skip)
#   4. installs the extension, starts a private cluster, runs the pgTAP files
#      and the CLI end to end with mln.device = 'gpu'
#   5. runs the benchmarks (operators, WalkSAT, grounding) as JSON
# Writes logs and tables to $OUT (default ./gpu-out) and prints a summary last.
#
# Usage: bash tests/gpu_prepare.sh here, then on the GPU host (device tool,
# carry .devcache): bash tests/gpu_run.sh [quick|bench|micro|full|quick+micro]
#   quick: build and tests; bench: build and the benchmark suite (end to end,
#   heap-to-heap operators; MLN_BENCH_* select sizes and workloads, and
#   MLN_BENCH_APPEND=1 adds to the results of an earlier call on the same
#   machine); micro: build and the micro-benchmarks; trace: grounding
#   profiled by operator (bench/engine_trace.sh); big: 10^8 ground
#   clauses in the database (bench/big_run.sh, MLN_BIG_PAPERS); heap: the
#   heap-to-heap operators alone (bench/heap_ops.sh at MLN_HEAP_SIZES, default
#   10^7, MLN_HEAP_OPS); kernels: per-kernel DRAM bandwidth of the joins
#   under Nsight Compute (bench/kernel_profile.sh); walk: the GPU walk's
#   tests and bench/walk_race.sh (issue #24); marginal: the marginal
#   e2e test and bench/marginal.sh; mcsat: bench_mcsat's one GPU chain
#   against one core, warm (issue #19); learn: the learning e2e test, class
#   -learnwt on the GPU and the CPU, bench_learn; spread: one MAP job on
#   one GPU and spread over every GPU (bench/spread_run.sh, MLN_SPREAD_PAPERS,
#   issue #23); defaults: the default against every single path and NuWLS
#   (bench/defaults.sh, issue #39); datalog: bench/datalog.sh with the GPU
#   and the CPU at 10^5..10^7 edges (issue #41); rules: the rule-learning
#   tests and bench/rules.sh (issue #42); pdhg: the PDHG bound's
#   tests (ctest -R Pdhg) and bench/lp_bound on RC 10^4 and 10^5 papers, CPU
#   and GPU side by side (issue #40, MLN_PDHG_PAPERS; not part of full); cplogic: the ProbLog tests and
#   bench/cplogic.sh on the GPU, the CPU and one core (issue #43); repro: the stop rules' tests and
#   bench/repro.sh, the default twice per workload (issue #60); er: bench/er.sh at MLN_ER_SIZES
#   records (issue #63); full: all but datalog, rules, pdhg, repro, er and cplogic.  MLN_PG_OPTS adds server settings
#   (e.g. "-c shared_buffers=8GB").  Modes join
#   with '+'.  The builds (PostgreSQL in /tmp/pg, pg_mln in build/gpu-cuda)
#   are reused by later calls while the machine stays warm.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$root/gpu-out}
mkdir -p "$OUT"
mode=${1:-full}
has() { case "+$mode+" in *"+$1+"*|*"+full+"*) return 0 ;; esac; return 1; }
# Modes that full leaves out run only when named.
only() { case "+$mode+" in *"+$1+"*) return 0 ;; esac; return 1; }
cd "$root"
summary=$OUT/summary.md
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
J=$(nproc)

note "# pg_mln GPU run"
note ""
commit=$(cat .devcache/commit.txt 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)  # commit.txt: written by the caller before each run
export MLN_COMMIT=$commit
note "- commit: $commit"
note "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
note "- device: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | head -1)"
note "- host: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB"

# 1. PostgreSQL from the carried source.
t0=$(date +%s)
if [ -x /tmp/pg/bin/postgres ] && [ -x /tmp/pg/bin/pg_config ]; then
  echo "PostgreSQL: reusing /tmp/pg" >"$OUT/build.log"
elif ! bash .devcache/pg-build.sh >"$OUT/build.log" 2>&1; then note "PostgreSQL build FAILED"; exit 1; fi
export PATH=/tmp/pg/bin:$PATH
# pgTAP 04 checks page visibility with contrib's pg_visibility (Debian's
# postgresql-15 ships it; a source build has it under contrib/).
[ -f /tmp/pg/share/extension/pg_visibility.control ] ||
  make -C /tmp/pgsrc/contrib/pg_visibility -s install >>"$OUT/build.log" 2>&1 || note "pg_visibility build FAILED"
note "- PostgreSQL: $(/tmp/pg/bin/postgres --version) built in $(( $(date +%s) - t0 )) s"

# 2. pg_mln with CUDA.
t0=$(date +%s)
B=$root/build/gpu-cuda
# GoogleTest, Google Benchmark and METIS come from .devcache/deps (tests/gpu_prepare.sh).
export LD_LIBRARY_PATH=$root/.devcache/deps/usr/lib/x86_64-linux-gnu:/tmp/pg/lib:${LD_LIBRARY_PATH:-}
{ cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release -DMLN_DATASETS="$root/examples" \
    -DCMAKE_PREFIX_PATH="$root/.devcache/deps/usr" &&
  cmake --build $B -j"$J"; } >>"$OUT/build.log" 2>&1 || { note "pg_mln build FAILED (see build.log)"; tail -40 "$OUT/build.log"; exit 1; }
grep -q "CUDA backend ON" "$OUT/build.log" && note "- pg_mln: built with CUDA in $(( $(date +%s) - t0 )) s" \
  || note "- pg_mln: WARNING: built WITHOUT CUDA"

# ctest_gpu NAME REGEX [JOBS]: the GoogleTests matching REGEX with the GPU
# required, logged to $OUT/NAME_tests.log, their tally in the summary.
ctest_gpu() {
  (cd "$B" && ctest --output-on-failure -j"${3:-1}" -R "$2" --timeout 300) >"$OUT/$1_tests.log" 2>&1
  note "ctest -R '$2' (MLN_REQUIRE_GPU=1): exit $?, $(grep -E 'tests passed|tests failed' "$OUT/$1_tests.log")"
}

# 3. GoogleTest with the GPU required.
export MLN_REQUIRE_GPU=1 MLN_DATASETS="$root/examples"
ctest_rc=skipped
if has quick && [ -z "${MLN_SKIP_CTEST:-}" ]; then  # MLN_SKIP_CTEST=1: a later call that ran them already
# One ctest entry per case, MLN_CTEST_JOBS (4) side by side, each under its
# TIMEOUT; the cases that need the GPU take it one at a time (RESOURCE_LOCK,
# tests/CMakeLists.txt: at -j16 with the GPU shared, flip-budgeted GPU walks
# missed optima they find alone, and ran 17x slower).  The full-size
# statistical checks (label slow) are left out: a reduced version of each runs.
cj=${MLN_CTEST_JOBS:-4}
t0=$(date +%s)
(cd $B && ctest --output-on-failure -j"$cj" -LE slow --timeout 900) >"$OUT/ctest.log" 2>&1
ctest_rc=$?
note ""
note "## GoogleTest (MLN_REQUIRE_GPU=1, ctest -j$cj -LE slow: $(( $(date +%s) - t0 )) s)"
note '```'
grep -E "tests passed|\*\*\*|\(Failed\)|\(Timeout\)|\(Skipped\)|Not Run|^ *(gpu|lang|ground|solver|needs_gpu) *=" \
  "$OUT/ctest.log" | tail -25 | tee -a "$summary"
note '```'
fi

# 4. Extension, private cluster, SQL and CLI with mln.device = 'gpu'.
make -f Makefile.pgxs BUILD=$B PG_CONFIG=/tmp/pg/bin/pg_config -j"$J" install >>"$OUT/build.log" 2>&1 \
  || { note "extension build FAILED"; tail -30 "$OUT/build.log"; }
id postgres >/dev/null 2>&1 || useradd -m postgres
PGD=/tmp/mln-pgdata
# A server an earlier call left running (one stopped at the call's time limit) holds the port: stop it.
[ -f $PGD/postmaster.pid ] && su postgres -c "/tmp/pg/bin/pg_ctl -D $PGD -m immediate stop" >/dev/null 2>&1
rm -rf $PGD /tmp/mln-sock; mkdir -p $PGD /tmp/mln-sock; chown postgres $PGD /tmp/mln-sock
OMP_WAIT_POLICY=passive; export OMP_WAIT_POLICY
su postgres -c "/tmp/pg/bin/initdb -D $PGD -U postgres -A trust >/dev/null" &&
  su postgres -c "OMP_WAIT_POLICY=passive /tmp/pg/bin/pg_ctl -D $PGD -l /tmp/mln-pg.log -w -o \"-c listen_addresses='' -c unix_socket_directories=/tmp/mln-sock -p 55432 -c fsync=off ${MLN_PG_OPTS:-}\" start >/dev/null"
export PGHOST=/tmp/mln-sock PGPORT=55432 PGUSER=postgres
createdb mln_check
psql -qX -d mln_check -c "CREATE EXTENSION pgtap" >/dev/null
psql -qX -d mln_check -c "CREATE EXTENSION pg_mln" >/dev/null
sql_fail=0
export MLN_PG_BINDIR=/tmp/pg/bin
if has quick; then
note ""
note "## SQL (pgTAP files through psql, PGOPTIONS=-c mln.device=gpu)"
note '```'
psql -qXAt -d mln_check -c "SELECT mln.device_info()" 2>&1 | tee -a "$summary"
: >"$OUT/sql.log"
for f in tests/sql/*.sql; do
  # The files that run the worker (\! mln_worker) find this build's.
  PATH=$B/solver:$PATH PGOPTIONS='-c mln.device=gpu' psql -qXAt -d mln_check -v datasets="$root/examples" -f "$f" >>"$OUT/sql.log" 2>&1
  okn=$(grep -c '^ok ' "$OUT/sql.log"); nok=$(grep -c '^not ok ' "$OUT/sql.log")
done
okn=$(grep -c '^ok ' "$OUT/sql.log"); nok=$(grep -c '^not ok ' "$OUT/sql.log")
planned=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$OUT/sql.log" | awk '{ s += $1 } END { print s + 0 }')
note "pgTAP: $okn ok, $nok not ok, $planned planned"
note '```'
[ "$nok" -eq 0 ] && [ "$okn" -eq "$planned" ] || sql_fail=1

note ""
note "## CLI end to end, --device gpu"
note '```'
: >"$OUT/e2e.log"
for s in smoke class; do
  D=$root/examples/$s
  ( unset PGHOST PGPORT PGUSER; /usr/bin/time -f "%e s wall, %M KB max RSS" \
      $B/solver/pg_mln -i $D/prog.mln -e $D/evidence.db -queryFile $D/query.db -r /tmp/$s.out --device gpu ) >>"$OUT/e2e.log" 2>&1
  echo "$s: $(grep -E '### atoms' "$OUT/e2e.log" | tail -1) | $(grep -E 'Best answer' "$OUT/e2e.log" | tail -1) | $(grep -E 'max RSS' "$OUT/e2e.log" | tail -1)" | tee -a "$summary"
done
note '```'
MLN_DATASETS=$root/examples bash tests/e2e/worker_jobs.sh $B >>"$OUT/e2e.log" 2>&1
note "worker e2e: $(tail -1 "$OUT/e2e.log")"
fi

# 5. Benchmarks: the suite's GPU half (bench/run.sh: end to end per path,
# heap-to-heap operators vs PostgreSQL, micro-benchmarks), tarred into $OUT.
if has trace; then
  # Grounding profiled by operator (MLN_ENGINE_TRACE): smokers at
  # MLN_TRACE_SIZE people (default 10^5) on the GPU, library level.
  n=${MLN_TRACE_SIZE:-100000}
  MLN_ENGINE_TRACE=1 MLN_BENCH_GROUND_SIZES=$n MLN_DATASETS="$root/examples" timeout 300 \
    $B/bench/bench_ground --benchmark_filter="ground/smokers/$n/cuda" >"$OUT/trace_bench.txt" 2>"$OUT/trace_raw.txt"
  bash bench/engine_trace.sh "$OUT/trace_raw.txt" "smokers $n, $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" \
    >"$OUT/trace.md"
  note "- engine trace: $(wc -l <"$OUT/trace_raw.txt") operator calls"
  gzip -f "$OUT/trace_raw.txt"
fi

if has heap; then
  PGDATABASE=postgres timeout ${MLN_HEAP_WALL:-400} bash bench/heap_ops.sh "$OUT" "${MLN_HEAP_SIZES:-10000000}" \
    >"$OUT/heap_ops.log" 2>&1
  note "bench/heap_ops.sh: exit $?"
  cat "$OUT/heap_ops.md" >>"$summary" 2>/dev/null
fi

if has micro || has bench || has big || has spread; then
  note ""
  note "## Benchmarks"
  gname=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr ' ' '-' | tr -cd 'A-Za-z0-9_-')
  export MLN_BENCH_MACHINE=gpu-${gname:-unknown} MLN_DATASETS="$root/examples"
  export MLN_BENCH_SIZES=${MLN_BENCH_SIZES:-1000 10000 100000}
  export MLN_BENCH_MAX_ROWS=${MLN_BENCH_MAX_ROWS:-100000000} MLN_BENCH_CPU_MAX_ROWS=${MLN_BENCH_CPU_MAX_ROWS:-10000000}
  export MLN_BENCH_MAX_CLAUSES=${MLN_BENCH_MAX_CLAUSES:-10000000} MLN_BENCH_TIMEOUT=${MLN_BENCH_TIMEOUT:-60}
  if has bench; then
    PGDATABASE=postgres MLN_BENCH_MICRO=0 MLN_BENCH_LOAD=${MLN_BENCH_LOAD:-0} MLN_BENCH_LOGS=$OUT/runlogs \
      timeout ${MLN_BENCH_WALL:-480} bash bench/run.sh $B >"$OUT/bench.log" 2>&1
    note "bench/run.sh: exit $?"
    tail -25 "$OUT/bench.log" | tee -a "$summary"
    tar czf "$OUT/results.tar.gz" -C bench/results "$MLN_BENCH_MACHINE"
    # Each run's command-line log (grounding phases, worker timings).
    [ -d "$OUT/runlogs" ] && tar czf "$OUT/runlogs.tar.gz" -C "$OUT" runlogs && rm -rf "$OUT/runlogs"
  fi
  if has spread; then
    # The spread GoogleTests with the GPU required (kept walks on the GPU), then
    # one MAP job on one GPU against the same job over every GPU (bench/spread_run.sh, issue #23).
    MLN_REQUIRE_GPU=1 $B/tests/solver_tests --gtest_filter='SolverSpread*' >"$OUT/spread_tests.log" 2>&1
    note "solver_tests SolverSpread* (MLN_REQUIRE_GPU=1): exit $?, $(grep -E '^\[  (PASSED|FAILED) ' "$OUT/spread_tests.log" | tr '\n' ' ')"
    grep -B2 -A8 'Failure' "$OUT/spread_tests.log" | head -40 | tee -a "$summary"
    PGDATABASE=postgres timeout ${MLN_SPREAD_WALL:-540} \
      bash bench/spread_run.sh "$OUT" "${MLN_SPREAD_PAPERS:-1000000}" $B >/dev/null 2>&1
    note "bench/spread_run.sh: exit $?"
    cat "$OUT/spread_run.md" >>"$summary" 2>/dev/null
  fi
  if has big; then
    # 10^8 ground clauses in the database on the GPU path (bench/big_run.sh).
    PGDATABASE=postgres MLN_BIG_DEVICE=gpu timeout ${MLN_BIG_WALL:-560} \
      bash bench/big_run.sh "$OUT" "${MLN_BIG_PAPERS:-565000}" $B >/dev/null 2>&1
    note "bench/big_run.sh: exit $?"
    cat "$OUT/big_run.md" >>"$summary" 2>/dev/null
  fi
  if has micro; then
    # MLN_MICRO_BENCHES picks the programs, MLN_FILTER_<program> a --benchmark_filter,
    # MLN_MICRO_TIMEOUT the seconds each may take.
    for b in ${MLN_MICRO_BENCHES:-bench_ops bench_walksat bench_ground}; do
      fvar=MLN_FILTER_$b
      timeout "${MLN_MICRO_TIMEOUT:-200}" $B/bench/$b --benchmark_out="$OUT/$b.json" --benchmark_out_format=json \
        --benchmark_min_time=0.1 ${!fvar:+--benchmark_filter=${!fvar}} >/dev/null 2>>"$OUT/build.log"
      rc=$?
      [ -f "$OUT/$b.json" ] && sed -i "s#\"$root/#\"#" "$OUT/$b.json"
      note "- $b: exit $rc"
    done
  fi
fi

# An e2e test (tests/e2e/NAME.sh) with grounding on the GPU: its last line
# and any failure into the summary.
gpu_e2e() {
  MLN_DATASETS=$root/examples PGOPTIONS='-c mln.device=gpu' timeout 300 bash "tests/e2e/$1.sh" $B >"$OUT/$1_e2e.log" 2>&1
  note "$1 e2e: $(tail -1 "$OUT/$1_e2e.log")"
  grep '^not ok' "$OUT/$1_e2e.log" | tee -a "$summary"
}

if has marginal; then
  # Marginal inference: the e2e test on the GPU path, then bench/marginal.sh
  # (accuracy on smoke, class -marginal/-dual, generated workloads; gpu and cpu).
  note ""
  note "## Marginal inference"
  gpu_e2e marginal
  PGDATABASE=postgres MLN_BENCH_PATHS="gpu cpu" MLN_MARGINAL_SIZES="${MLN_MARGINAL_SIZES:-1000 10000 100000}" \
    timeout ${MLN_MARGINAL_WALL:-400} bash bench/marginal.sh "$OUT" $B >"$OUT/marginal_bench.log" 2>&1
  note "bench/marginal.sh: exit $?"
  cat "$OUT/marginal.md" >>"$summary" 2>/dev/null
fi

if has mcsat; then
  # MC-SAT samples/s (issue #19): one GPU chain against one CPU core, warm
  # (bench_mcsat GpuOne and Cpu1Warm; the CPU rows up to 10^6 clauses),
  # with the one-chain sampler's phase times; the table into the summary.
  note ""
  note "## MC-SAT samples/s, one chain, warm"
  MLN_MCSAT_DEBUG=1 MLN_BENCH_MAX_CLAUSES=1000000 timeout "${MLN_MCSAT_WALL:-300}" $B/bench/bench_mcsat \
    --benchmark_filter='Mcsat(GpuOne|Cpu1Warm)/' >"$OUT/bench_mcsat.txt" 2>"$OUT/bench_mcsat.err"
  note "bench_mcsat: exit $?"
  grep mcsat_parallel_gpu "$OUT/bench_mcsat.err" >"$OUT/bench_mcsat_phases.txt"
  awk '/^BM_McsatCpu1Warm\// || /^BM_McsatGpuOne\// {
         split($1, p, "/"); n = p[2]; r = "";
         for (i = 1; i <= NF; i++) if ($i ~ /^step_samples_per_s=/) { r = substr($i, 20) }
         if ($1 ~ /GpuOne/) g[n] = r; else c[n] = r; sizes[n] = 1 }
       END { print "| clauses | GPU, one chain | one core | ratio |"; print "|---:|---:|---:|---:|";
             for (n in sizes) printf "| %s | %s | %s | %s |\n", n, g[n], (n in c) ? c[n] : "-",
               (n in c && c[n] + 0 > 0) ? sprintf("%.1fx", g[n] / c[n]) : "-" }' "$OUT/bench_mcsat.txt" | tee -a "$summary"
fi

if has learn; then
  # Weight learning: the e2e test (mln.device = 'gpu' grounds), class
  # -learnwt with the sampler on the GPU and on the CPU threads, and
  # bench_learn (seconds per iteration: GPU, all cores, one core).
  note ""
  note "## Weight learning"
  gpu_e2e learn
  note '```'
  D=$root/examples/class
  for dev in gpu cpu; do
    ( unset PGHOST PGPORT PGUSER; /usr/bin/time -f "%e s wall" $B/solver/pg_mln -learnwt -i $D/prog.mln -e $D/evidence.db \
        -queryFile $D/query.db -r /tmp/class-learn-$dev.mln -dMaxIter "${MLN_LEARN_CLASS_ITERS:-10}" --search-device $dev ) \
      >"$OUT/learn_class_$dev.log" 2>&1
    note "class -learnwt -dMaxIter ${MLN_LEARN_CLASS_ITERS:-10} --search-device $dev: exit $?, $(grep -E 'device|s wall' "$OUT/learn_class_$dev.log" | tr '\n' ' ')"
  done
  note '```'
  timeout "${MLN_LEARN_BENCH_WALL:-300}" $B/bench/bench_learn --benchmark_out="$OUT/bench_learn.json" \
    --benchmark_out_format=json ${MLN_FILTER_bench_learn:+--benchmark_filter=$MLN_FILTER_bench_learn} \
    >"$OUT/bench_learn.log" 2>&1
  note "bench_learn: exit $?"
  grep -E "^BM_" "$OUT/bench_learn.log" | tee -a "$summary"
fi

if has walk; then
  # GPU MaxWalkSAT on its own (issue #24): the weighted-walk GoogleTests with
  # the GPU required, then bench/walk_race.sh (GPU walk alone, CPU walk on
  # every core, one core; cost over time).  MLN_RACE_LOADS / _SECONDS / _ARGS.
  note ""
  note "## GPU walk (walk_race)"
  $B/tests/solver_tests --gtest_filter='WeightedWalk*:SolverGpu*' >"$OUT/walk_tests.log" 2>&1
  note "solver_tests WeightedWalk*:SolverGpu* (MLN_REQUIRE_GPU=1): exit $?, $(grep -E '^\[  (PASSED|FAILED) ' "$OUT/walk_tests.log" | tr '\n' ' ')"
  grep -B2 -A8 'Failure' "$OUT/walk_tests.log" | head -40 | tee -a "$summary"
  PGDATABASE=postgres timeout "${MLN_RACE_WALL:-480}" bash bench/walk_race.sh "$OUT" $B >"$OUT/walk_race.log" 2>&1
  note "bench/walk_race.sh: exit $?"
  tail -12 "$OUT/walk_race.log" >>"$summary"
  (cd "$OUT" && tar czf walk_traces.tar.gz walk-*.dat 2>/dev/null && rm -f walk-*.dat)
fi

if only pdhg; then
  # The LP bound by PDHG on the GPU (issue #40): the PDHG GoogleTests with
  # the GPU required (the CPU cases too), then bench/lp_bound on generated RC
  # (grounded in memory on the CPU engine): PDHG on every core and on the
  # GPU, side by side (set-up, time to within 0.5% of the optimum where it is
  # known, time, iterations, bound), and solve_map with the GPU (solve_gpu=1:
  # the GPU walk, stopped by the GPU bound, within 60 s).
  note ""
  note "## PDHG bound on the GPU"
  ctest_gpu pdhg Pdhg 4
  grep -E '\((Failed|Timeout|Skipped)\)' "$OUT/pdhg_tests.log" | tee -a "$summary"
  for papers in ${MLN_PDHG_PAPERS:-10000 100000}; do
    ref=0
    [ "$papers" = 10000 ] && ref=22797.18  # RC 10^4's optimum (bench/results/cpu-2core/lp_bound.md)
    OMP_WAIT_POLICY=passive timeout "${MLN_PDHG_WALL:-150}" $B/bench/mln_lp_bound rc "$papers" threads="$J" clp=0 \
      pdhg_s=60 trace_s=1 ref=$ref solve_gpu=1 walk_s=60 >"$OUT/lp_bound_rc_$papers.log" 2>&1
    note "mln_lp_bound rc $papers: exit $?"
    note '```'
    grep -E '^(network|pdhg.* (done|within|GPU failed)|\||solve)' "$OUT/lp_bound_rc_$papers.log" | tee -a "$summary"
    note '```'
  done
fi

if only rules; then
  # Rule learning (issue #42): the rules GoogleTests with the GPU required
  # (coverage against the reference prover, planted rules on the CUDA
  # engine), then bench/rules.sh's family task on every core, one core and
  # the GPU (Aleph is not on this host: its figures are the dev machine's).
  note ""
  note "## Rule learning"
  ctest_gpu rules '^rules\.'
  OMP_WAIT_POLICY=passive BIN=$B/bench/mln_rules_bench FACTS="${MLN_RULES_FACTS:-1000000 10000000}" \
    timeout ${MLN_RULES_WALL:-300} bash bench/rules.sh "$OUT/rules.md" >"$OUT/rules_run.log" 2>&1
  note "bench/rules.sh: exit $?"
  cat "$OUT/rules.md" >>"$summary" 2>/dev/null
fi

if has defaults; then
  # The default against every single path and NuWLS (issue #39;
  # bench/defaults.sh): MLN_DEFAULTS_LOADS, MLN_DEFAULTS_TIMEOUT.
  note ""
  note "## Defaults vs single paths"
  PGDATABASE=postgres MLN_DEFAULTS_LOADS=${MLN_DEFAULTS_LOADS:-class smokers-10000 rc-1000 rc-10000} \
    timeout ${MLN_DEFAULTS_WALL:-400} bash bench/defaults.sh "$OUT" $B >"$OUT/defaults_run.log" 2>&1
  note "bench/defaults.sh: exit $?"
  cat "$OUT/defaults.md" >>"$summary" 2>/dev/null
fi

if only datalog; then
  # mln.datalog against WITH RECURSIVE (and Soufflé with SOUFFLE=path) on TC and
  # SG over uniform, R-MAT and grid graphs and on points-to (bench/datalog.sh,
  # issue #41), once with device gpu and once cpu: MLN_DATALOG_EDGES,
  # MLN_DATALOG_DEVICES, MLN_DATALOG_TIMEOUT (seconds per statement), MLN_DATALOG_WALL (per device;
  # cut short, the log's lines stand in for the table).
  note ""
  note "## Datalog vs WITH RECURSIVE"
  # Soufflé, built here from its public source (tests/gpu_prepare.sh says
  # how) and carried as .devcache/souffle.tar.xz (compiled mode finds its
  # headers beside the binary).
  if [ -z "${SOUFFLE:-}" ] && [ -f .devcache/souffle.tar.xz ]; then
    mkdir -p build/souffle && tar xJf .devcache/souffle.tar.xz -C build/souffle &&
      sed -i "s|@SOUFFLE_INCLUDE@|$root/build/souffle/include|g" build/souffle/bin/souffle-compile.py &&
      export SOUFFLE=$root/build/souffle/bin/souffle && note "Soufflé: $(cat .devcache/souffle.VERSION 2>/dev/null)"
  fi
  for dev in ${MLN_DATALOG_DEVICES:-gpu cpu}; do
    DEVICE=$dev EDGES=${MLN_DATALOG_EDGES:-100000 1000000 10000000} STMT_TIMEOUT=${MLN_DATALOG_TIMEOUT:-60} \
      PGDATABASE=postgres timeout ${MLN_DATALOG_WALL:-280} bash bench/datalog.sh "$OUT/datalog_$dev.md" >"$OUT/datalog_$dev.log" 2>&1
    note "bench/datalog.sh DEVICE=$dev: exit $?"
    cat "$OUT/datalog_$dev.md" >>"$summary" 2>/dev/null || tail -40 "$OUT/datalog_$dev.log" >>"$summary"
    python3 bench/datalog_plot.py "$OUT/datalog_$dev.md" "$OUT/datalog_scaling_$dev" >>"$OUT/datalog_$dev.log" 2>&1
  done
fi

if only cplogic; then
  # CP-logic forward sampling (issue #43): the ProbLog and forward sampler
  # tests with the GPU required (the CUDA sampler must draw exactly the CPU
  # sampler's samples), then bench/cplogic.sh on the GPU, the CPU backend on
  # every core and on one (MLN_CPLOGIC_DEVICES, MLN_CPLOGIC_WALL seconds).
  note ""
  note "## CP-logic forward sampling"
  ctest_gpu cplogic 'ProbLog|ForwardSampler'
  DEVICES=${MLN_CPLOGIC_DEVICES:-gpu cpu cpu1} BLOODTYPE=${MLN_CPLOGIC_BLOODTYPE:-100 1000 10000 100000} \
    GROWINGHEAD=${MLN_CPLOGIC_GROWINGHEAD:-10 50 200 400} GROWINGBODY=${MLN_CPLOGIC_GROWINGBODY:-10 50 100 200} \
    FIXED=${MLN_CPLOGIC_FIXED:-1000000} FIXED_CPU=${MLN_CPLOGIC_FIXED_CPU:-100000} STMT_TIMEOUT=30 PGDATABASE=postgres \
    timeout ${MLN_CPLOGIC_WALL:-170} bash bench/cplogic.sh "$OUT/cplogic.md" >"$OUT/cplogic.log" 2>&1
  note "bench/cplogic.sh: exit $?"
  cat "$OUT/cplogic.md" >>"$summary" 2>/dev/null || tail -40 "$OUT/cplogic.log" >>"$summary"
fi

if only repro; then
  # Reproducibility (issue #60): the tests of the stop rules and walks with
  # the GPU required, then bench/repro.sh: the default command line twice
  # per workload (MLN_REPRO_LOADS; rc-1000 is UW-CSE's size, rc-100000 17.8M
  # clauses), the answers compared byte for byte.
  note ""
  note "## Reproducibility"
  ctest_gpu repro 'SolverRepro|PdhgTest|PdhgGpuTest|SolverGpu|SolverWeighted'
  MLN_REPRO_LOADS=${MLN_REPRO_LOADS:-class rc-1000 rc-100000} PGDATABASE=postgres \
    timeout ${MLN_REPRO_WALL:-420} bash bench/repro.sh "$OUT" $B >"$OUT/repro_run.log" 2>&1
  note "bench/repro.sh: exit $?"
  cat "$OUT/repro.md" >>"$summary" 2>/dev/null || tail -40 "$OUT/repro_run.log" >>"$summary"
fi

if only er; then
  # Entity resolution (issue #63): bench/er.sh at MLN_ER_SIZES records
  # (default 6000), grounding and the default MAP under
  # MLN_ER_SOLVE_TIMEOUT.  Its views call fuzzystrmatch's levenshtein: a
  # contrib module, built here from the carried source.
  note ""
  note "## Entity resolution"
  [ -f /tmp/pg/share/extension/fuzzystrmatch.control ] ||
    make -C /tmp/pgsrc/contrib/fuzzystrmatch -s install >>"$OUT/build.log" 2>&1 || note "fuzzystrmatch build FAILED"
  MLN_ER_SIZES=${MLN_ER_SIZES:-6000} PGDATABASE=postgres \
    timeout ${MLN_ER_WALL:-420} bash bench/er.sh "$OUT" $B >"$OUT/er_run.log" 2>&1
  note "bench/er.sh: exit $?"
  cat "$OUT/er.md" >>"$summary" 2>/dev/null || tail -40 "$OUT/er_run.log" >>"$summary"
fi

if has kernels; then
  # Per-kernel DRAM bandwidth under Nsight Compute (bench/kernel_profile.sh);
  # MLN_KERNEL_BENCHES: the bench_ops regexes, one ncu run each.
  # shellcheck disable=SC2086
  timeout ${MLN_KERNEL_WALL:-240} bash bench/kernel_profile.sh $B "$OUT" ${MLN_KERNEL_BENCHES:-} >"$OUT/kernels.log" 2>&1
  note "bench/kernel_profile.sh: exit $?"
  cat "$OUT/kernels.md" >>"$summary" 2>/dev/null
  (cd "$OUT" && tar czf kernel_profile.tar.gz kp_* 2>/dev/null && rm -f kp_*)
fi

su postgres -c "/tmp/pg/bin/pg_ctl -D $PGD -m fast stop >/dev/null" 2>/dev/null
note ""
note "Result: ctest rc=$ctest_rc, sql_fail=$sql_fail"
# At most 8 files come back from the GPU host: the logs travel as one archive.
(cd "$OUT" && ls ./*.log >/dev/null 2>&1 && tar czf logs.tar.gz ./*.log && rm -f ./*.log)
cat "$summary"
