#!/usr/bin/env bash
# Installs the worker and the command line onto the PATH (/usr/local/bin),
# when they have been built.
set -euo pipefail
build=${1:-build/cmake}
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
for b in mln_worker pg_mln; do
  if [ -x "$build/solver/$b" ]; then
    $SUDO install -m 755 "$build/solver/$b" /usr/local/bin/$b
  fi
done
