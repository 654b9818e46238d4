#!/usr/bin/env bash
# Quiet build for `make build|install|demo|check`: CMake (gpu/, extension's
# pure-C++ parts, solver/, tests, benchmarks), then the extension library
# with PGXS, and with `install` the extension and the binaries.  Prints one
# line per step and the build's progress; the compiler lines go to
# build/build.log (V=1 shows them instead).  On failure prints the log's
# errors and tail.
#   scripts/build.sh BUILD_DIR JOBS PG_CONFIG [install] -- [CMAKE_FLAGS...]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=$1 jobs=$2 pgconfig=$3; shift 3
install=0
[ "${1:-}" = install ] && { install=1; shift; }
[ "${1:-}" = -- ] && shift
mkdir -p build
log=build/build.log
: >"$log"
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo

fail() {
  echo "build: FAILED in $1; the errors (full log: $log):"
  grep -E 'error|Error|undefined reference' "$log" | grep -v '^make.*Error [0-9]' | head -20
  echo "---- last lines of $log:"
  tail -15 "$log"
  exit 1
}
# Runs "$@", logging everything; with V=1, also shows it.
step() {
  if [ "${V:-0}" != 0 ]; then "$@" 2>&1 | tee -a "$log"; return "${PIPESTATUS[0]}"; fi
  "$@" >>"$log" 2>&1
}
# The same, printing CMake's percentage as it goes (every 10%, or in place on a terminal).
progress() {
  if [ "${V:-0}" != 0 ]; then step "$@"; return; fi
  local tty=0; [ -t 1 ] && tty=1
  "$@" 2>&1 | tee -a "$log" | awk -v tty=$tty '
    match($0, /^\[ *[0-9]+%\]/) {
      p = substr($0, RSTART + 1, RLENGTH - 3) + 0
      if (tty) { printf "\rbuild: compiling %3d%%", p; fflush() }
      else if (int(p / 10) > last) { last = int(p / 10); printf "build: compiling %d%%\n", p; fflush() }
    }
    END { if (tty) printf "\n" }'
  return "${PIPESTATUS[0]}"
}

t0=$(date +%s)
if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "build: configuring ($build)"
  step cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" || fail "cmake configure"
  grep -m1 'pg_mln: CUDA backend' "$log" | sed 's/^-- /build: /'
fi
echo "build: compiling with $jobs jobs (log: $log)"
progress cmake --build "$build" -j"$jobs" || fail "the CMake build"
step make -f Makefile.pgxs BUILD="$build" PG_CONFIG="$pgconfig" -j"$jobs" || fail "the extension library (PGXS)"
if [ $install = 1 ]; then
  step $SUDO make -f Makefile.pgxs BUILD="$build" PG_CONFIG="$pgconfig" install || fail "make install (PGXS)"
  step bash scripts/install-bin.sh "$build" || fail "installing mln_worker and pg_mln"
  echo "build: installed the extension into $("$pgconfig" --pkglibdir) and mln_worker, pg_mln into /usr/local/bin"
fi
echo "build: done in $(( $(date +%s) - t0 )) s"
