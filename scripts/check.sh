#!/usr/bin/env bash
# Runs every test suite against the private cluster: GoogleTest (ctest),
# pgTAP (pg_prove, one fresh database per run) and the end-to-end tests.
# Prints one summary line "check: N passed, M failed" and exits non-zero on
# any failure.  Usage: check.sh BUILD_DIR [unit|sql|e2e]...
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build/cmake}; shift || true
parts=${*:-paths unit sql e2e}
eval "$(bash "$root/scripts/cluster.sh" env)"
export PGDATABASE=mln_check
passed=0; failed=0; failures=()

record() {  # name rc
  if [ "$2" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("$1"); fi
}

for part in $parts; do
  case $part in
    paths)
      echo "== self-containment (tracked files name no path outside the clone)"
      bash "$root/scripts/check_paths.sh"
      record "paths" $?
      echo "== layering (includes follow docs/architecture.md's layers)"
      python3 "$root/scripts/check_layering.py" "$root"
      record "layering" $?
      echo "== sizes (files under 500 lines, functions under 120, or a comment says why)"
      python3 "$root/scripts/check_sizes.py" "$root"
      record "sizes" $?
      echo "== file tables (the docs' tables of files name what the tree holds)"
      python3 "$root/scripts/check_file_tables.py" "$root"
      record "file tables" $?
      ;;
    unit)
      # One ctest entry per GoogleTest case, run side by side (MLN_TEST_JOBS,
      # default one per core), each under its own TIMEOUT (tests/CMakeLists.txt).
      # The full-size statistical tests (label slow) are left to
      # 'make test-slow': a reduced version of each runs here.
      echo "== GoogleTest (ctest -LE slow)"
      (cd "$build" && ctest --output-on-failure -j"${MLN_TEST_JOBS:-$(nproc)}" -LE slow --timeout 600)
      record "ctest" $?
      echo "== parser fuzzing (libFuzzer, short run)"
      bash "$root/tests/fuzz/run.sh" "${MLN_FUZZ_SECONDS:-20}" >"$root/build/fuzz.log" 2>&1
      rc=$?; tail -3 "$root/build/fuzz.log"
      record "fuzz" $rc
      ;;
    sql)
      echo "== pgTAP (pg_prove)"
      dropdb --if-exists mln_check && createdb mln_check
      psql -qX -c "CREATE EXTENSION pgtap" >/dev/null
      # The Tuffy samples, for tests that load them (read by the server).
      datasets=${MLN_DATASETS:-$root/examples}
      for f in "$root"/tests/sql/*.sql; do
        pg_prove -q --set datasets="$datasets" "$f"
        rc=$?  # (taken before any command substitution resets $?)
        record "pgtap:$(basename "$f")" $rc
      done
      ;;
    e2e)
      echo "== end-to-end"
      for f in "$root"/tests/e2e/*.sh; do
        [ -e "$f" ] || continue
        [ "$(basename "$f")" = lib.sh ] && continue  # helpers, not a test
        echo "-- $(basename "$f")"
        bash "$f" "$build"
        rc=$?
        record "e2e:$(basename "$f")" $rc
      done
      ;;
  esac
done

echo
[ ${#failures[@]} -eq 0 ] || echo "failed suites: ${failures[*]}"
echo "check: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then
  echo "next: 'make demo' runs the smoke example; 'bash scripts/cluster.sh psql -d mln_check' opens psql on the"
  echo "      test cluster; 'make bench' writes the benchmark report; 'make cluster-stop' stops the cluster"
else
  echo "next: each failed suite's output is above (build log: build/build.log, fuzzing: build/fuzz.log);"
  echo "      'make test-unit', 'make test-sql' or 'make test-e2e' re-run one part"
fi
[ "$failed" -eq 0 ]
