# Helpers for the end-to-end tests (sourced).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build/cmake}
case $build in /*) ;; *) build=$root/$build ;; esac
DATA=${MLN_DATASETS:-$root/examples}  # the Tuffy samples, committed (examples/NOTICE)
PGMLN=$build/solver/pg_mln
WORKER=$build/solver/mln_worker
pass=0; fail=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
not_ok() { fail=$((fail + 1)); echo "not ok - $*"; }
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
finish() { echo "# $pass passed, $fail failed"; [ "$fail" -eq 0 ]; }
tmp=$(mktemp -d /tmp/mln-e2e-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
