#!/usr/bin/env bash
# Installs the Debian packages pg_mln needs to build and test, skipping those
# already present (idempotent).  Needs root (or sudo) only when something is
# missing.
set -euo pipefail
pkgs=(postgresql-15 postgresql-server-dev-15 postgresql-contrib libpq-dev postgresql-15-pgtap
      libtap-parser-sourcehandler-pgtap-perl libgtest-dev libbenchmark-dev libmetis-dev
      libthrust-dev libcub-dev coinor-libcbc-dev cmake g++ make pkg-config python3 gnuplot-nox clang libclang-rt-14-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#pkgs[@]} packages present"
  exit 0
fi
echo "deps: installing ${missing[*]}"
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: done"
