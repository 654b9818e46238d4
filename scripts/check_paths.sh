#!/usr/bin/env bash
# Fails when a tracked file names a path outside the repository: the tests,
# the build, CI and the benchmarks must work on a clone with nothing beside
# it.  Looks for the development machines' paths (/work/..., /root/...,
# /home/...) and for relative paths that climb out of the clone
# (../shared, $root/.., CMAKE_SOURCE_DIR/..).  System paths (/usr, /tmp,
# /etc, /usr/local/cuda) are fine.  Run by `make check`.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
pattern='(^|[^A-Za-z0-9_.])/work/|/root/|/home/[a-z]|\.\./shared|\$root/\.\.|\$\{?here\}?/\.\./\.\./\.\.|CMAKE_SOURCE_DIR\}/\.\.'
# This script names the patterns it looks for.
hits=$(git ls-files -z | grep -zv '^scripts/check_paths.sh$' |
       xargs -0 grep -InE "$pattern" -- 2>/dev/null)
if [ -n "$hits" ]; then
  echo "tracked files name paths outside the repository:"
  echo "$hits" | head -50
  exit 1
fi
echo "paths: no tracked file names a path outside the repository ($(git ls-files | wc -l) files)"
