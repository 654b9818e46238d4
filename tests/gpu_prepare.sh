#!/usr/bin/env bash
# Run here (the development machine), once, before tests/gpu_run.sh is sent to
# the GPU host.  Fills .devcache/ (git-ignored) with what that host lacks and
# cannot download: PostgreSQL's source and pgTAP (tests/gpu/prepare.sh), and
# GoogleTest, Google Benchmark and METIS from this
# machine's Debian packages, as a mirrored /usr tree (their CMake package
# files locate themselves relative to it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash tests/gpu/prepare.sh
d=.devcache/deps/usr
rm -rf .devcache/deps && mkdir -p $d/include $d/lib/x86_64-linux-gnu/cmake
cp -r /usr/include/gtest /usr/include/gmock /usr/include/benchmark /usr/include/metis.h $d/include/
cp -a /usr/lib/x86_64-linux-gnu/libgtest*.a /usr/lib/x86_64-linux-gnu/libgmock*.a \
      /usr/lib/x86_64-linux-gnu/libbenchmark* /usr/lib/x86_64-linux-gnu/libmetis.so* $d/lib/x86_64-linux-gnu/
cp -r /usr/lib/x86_64-linux-gnu/cmake/GTest /usr/lib/x86_64-linux-gnu/cmake/benchmark $d/lib/x86_64-linux-gnu/cmake/
# COIN-OR CBC (the exact MAP path) and the libraries it loads: each
# library's soname file (dereferenced: lapack and blas are Debian
# alternatives) and a link libX.so -> it for the linker.
cp -r /usr/include/coin $d/include/
for l in CbcSolver Cbc Cgl OsiClp ClpSolver Clp Osi CoinUtils lapack blas gfortran quadmath; do
  so=$(ls /usr/lib/x86_64-linux-gnu/lib$l.so.[0-9] 2>/dev/null | head -1)
  [ -n "$so" ] || { echo "gpu_prepare: lib$l not found (apt-get install coinor-libcbc-dev)" >&2; exit 1; }
  cp -L "$so" $d/lib/x86_64-linux-gnu/
  ln -sf "$(basename "$so")" $d/lib/x86_64-linux-gnu/lib$l.so
done
# Soufflé for bench/datalog.sh (optional): build it from souffle-lang/souffle's
# public source (cmake -DSOUFFLE_USE_SQLITE=OFF -DSOUFFLE_USE_ZLIB=OFF
# -DSOUFFLE_USE_LIBFFI=OFF -DSOUFFLE_USE_CURSES=OFF, cmake --install --prefix P)
# and give SOUFFLE_PREFIX=P: it is packed here, stripped, and gpu_run.sh's
# datalog mode unpacks it (its compiled mode finds its headers beside it).
if [ -n "${SOUFFLE_PREFIX:-}" ] && [ -x "$SOUFFLE_PREFIX/bin/souffle" ]; then
  # Its compile script holds the build's header path: a placeholder instead,
  # which gpu_run.sh fills with where the headers are unpacked.
  t=$(mktemp -d); cp -r "$SOUFFLE_PREFIX"/. "$t"/ && strip "$t/bin/souffle" &&
    sed -i 's|"-I[^"]*"|"-I@SOUFFLE_INCLUDE@"|; s|"source_include_dir": "[^"]*"|"source_include_dir": "@SOUFFLE_INCLUDE@"|' \
      "$t/bin/souffle-compile.py" && tar cJf .devcache/souffle.tar.xz -C "$t" . ; rm -rf "$t"
  "$SOUFFLE_PREFIX/bin/souffle" --version 2>&1 | grep -m1 Version > .devcache/souffle.VERSION
fi
# The commit the GPU run measures (the host gets no .git).
echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo +uncommitted)" > .devcache/commit.txt
du -sh .devcache
