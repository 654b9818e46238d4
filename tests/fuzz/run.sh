#!/usr/bin/env bash
# Fuzzes the MLN parser for SECONDS seconds.
#   tests/fuzz/run.sh SECONDS
# Builds the `fuzz_parser` target if needed (build dir: $MLN_FUZZ_BUILD,
# default build/fuzz), seeds the corpus from the Tuffy samples ($MLN_DATASETS)
# and tests/fuzz/seeds/, then runs libFuzzer.  Crashes land in the build dir.
set -euo pipefail
secs=${1:?usage: tests/fuzz/run.sh SECONDS}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${MLN_FUZZ_BUILD:-$root/build/fuzz}
datasets=${MLN_DATASETS:-$root/examples}

if ! command -v clang++ >/dev/null && ! command -v clang++-14 >/dev/null; then
  echo "clang++ missing: apt-get install -y clang libclang-rt-14-dev" >&2
  exit 1
fi
cmake -S "$root" -B "$build" -DMLN_WITH_CUDA=OFF -DMLN_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" --target fuzz_parser

seed=$build/fuzz_corpus/seed
work=$build/fuzz_corpus/work
mkdir -p "$seed" "$work" "$build/fuzz_artifacts"
for d in "$datasets"/*/; do
  name=$(basename "$d")
  for f in prog.mln query.db; do
    [ -f "$d/$f" ] && cp "$d/$f" "$seed/$name-$f"
  done
  # Evidence files can be megabytes: the first lines are seed enough.
  [ -f "$d/evidence.db" ] && head -n 40 "$d/evidence.db" > "$seed/$name-evidence.db"
  # A three-part input: program \0 evidence \0 query.
  if [ -f "$d/prog.mln" ]; then
    { cat "$d/prog.mln"; printf '\0'; head -n 20 "$d/evidence.db" 2>/dev/null || true; printf '\0';
      cat "$d/query.db" 2>/dev/null || true; } > "$seed/$name-all"
  fi
done
cp "$here"/seeds/* "$seed"/ 2>/dev/null || true

cd "$build/fuzz_artifacts"
exec "$build/tests/fuzz/fuzz_parser" -max_total_time="$secs" -max_len=4096 -timeout=10 \
  -rss_limit_mb=2048 -dict="$here/mln.dict" -print_final_stats=1 "$work" "$seed"
