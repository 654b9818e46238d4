#!/usr/bin/env bash
# Run on the development machine (called by tests/gpu_prepare.sh). Fills .devcache/
# (ignored by git) with what a GPU run on the device machine needs and cannot download there:
#   - PostgreSQL 15 source (from Debian's source packages), built there by pg-build.sh
#   - pgTAP's extension files, if postgresql-15-pgtap is installed here
#   - pg-build.sh itself
# Then call the device tool with carry [".devcache"] and a command such as:
#   bash .devcache/pg-build.sh && export PATH=/tmp/pg/bin:$PATH && <build and test with CUDA>
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(git rev-parse --show-toplevel)
cache="$root/.devcache"
mkdir -p "$cache"
# .gitignore lists .devcache/ (no need for .git/info/exclude, which a clone may lack)
git -C "$root" check-ignore -q .devcache || { echo ".devcache/ must be in .gitignore" >&2; exit 1; }
cp "$here/pg-build.sh" "$cache/"
if ! ls "$cache"/postgresql-15_*.orig.tar.bz2 >/dev/null 2>&1; then
  src=/etc/apt/sources.list.d/debian-src.sources
  if ! grep -rqs '^Types: deb-src' /etc/apt/sources.list.d/; then
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > "$src"
    apt-get update -qq
  fi
  tmp=$(mktemp -d)
  ok=
  for v in $(apt-cache showsrc postgresql-15 | awk '/^Version:/{print $2}' | sort -rV); do
    if (cd "$tmp" && apt-get source -qq --download-only "postgresql-15=$v" >/dev/null 2>&1); then ok=$v; break; fi
  done
  [ -n "$ok" ] || { echo "could not download PostgreSQL 15 source" >&2; exit 1; }
  mv "$tmp"/postgresql-15_*.orig.tar.bz2 "$cache/"
  rm -rf "$tmp"
  echo "PostgreSQL source $ok in .devcache/"
fi
if [ -f /usr/share/postgresql/15/extension/pgtap.control ]; then
  mkdir -p "$cache/pgtap"
  cp /usr/share/postgresql/15/extension/pgtap* "$cache/pgtap/"
fi
du -sh "$cache"
