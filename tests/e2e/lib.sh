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
# Drops the roles named in $users (what they own in $PGDATABASE first): the
# set-up and the clean-up of the tests with roles of their own.
cleanup_roles() {
  for r in $users; do
    psql -qX -d "$PGDATABASE" -c "DROP OWNED BY $r CASCADE" >/dev/null 2>&1
    psql -qX -d postgres -c "DROP ROLE IF EXISTS $r" >/dev/null 2>&1
  done
}
