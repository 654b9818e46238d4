#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/CMakeLists.txt runs it):
#   build.sh CLANGXX SOURCE_ROOT OUT_DIR
# The language sources (extension/lang) and the options reader
# (options/src/options.cpp) are compiled once, with the sanitizers, in
# parallel; each target (fuzz_*.cpp) links them with its own entry point.
set -euo pipefail
cxx=$1 src=$2 out=$3
flags=(-std=c++17 -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
       -I"$src/extension" -I"$src/gpu/include" -I"$src/options/include" -I"$src/format/include")
mkdir -p "$out/obj"
export cxx out
export FLAGS="${flags[*]}"
ls "$src"/extension/lang/*.cpp "$src/options/src/options.cpp" |
  xargs -P "$(nproc)" -I{} sh -c '$cxx $FLAGS -fsanitize=fuzzer-no-link -c "{}" -o "$out/obj/$(basename "{}" .cpp).o"'
for t in "$src"/tests/fuzz/fuzz_*.cpp; do
  name=$(basename "$t" .cpp)
  "$cxx" "${flags[@]}" -fsanitize=fuzzer "$t" "$out"/obj/*.o -o "$out/$name"
done
