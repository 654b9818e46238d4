#!/usr/bin/env bash
# The Debian packages pg_mln needs to build and test.
#   deps.sh install   installs those missing (idempotent; root or sudo only
#                     when something is missing): `make deps`
#   deps.sh check     says which are missing and how to install them, and
#                     fails: what `make build|install|check` run first.  Under
#                     CI=true (or MLN_AUTO_DEPS=1) it installs them instead.
# A build never runs apt-get unasked: an install can upgrade packages the
# machine's running server uses (postgresql-15 among them).
set -euo pipefail
mode=${1:-install}
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
if [ "$mode" = check ] && [ "${CI:-}" != true ] && [ "${MLN_AUTO_DEPS:-0}" = 0 ]; then
  echo "deps: missing ${missing[*]}"
  echo "deps: 'make deps' installs them (apt-get; root or sudo), or install them yourself"
  exit 1
fi
echo "deps: installing ${missing[*]}"
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: done"
