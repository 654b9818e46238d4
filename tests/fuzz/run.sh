#!/usr/bin/env bash
# Fuzzes each parser for SECONDS seconds: the MLN language (fuzz_parser),
# Datalog, ProbLog and the job options' JSON.
#   tests/fuzz/run.sh SECONDS
# Builds the `fuzz_parsers` target if needed (build dir: $MLN_FUZZ_BUILD,
# default build/fuzz), seeds each corpus from tests/fuzz/seeds*/ (the MLN
# one also from the Tuffy samples, $MLN_DATASETS) and from generated deep
# nesting and long inputs, then runs libFuzzer.  Crashes land in the build
# dir (fuzz_artifacts/TARGET).
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
cmake --build "$build" --target fuzz_parsers

rep() { local s=$1 n=$2 out=; for ((i = 0; i < n; i++)); do out+=$s; done; printf '%s' "$out"; }
corpus() {  # target: fills $build/fuzz_corpus/TARGET/seed
  local seed=$build/fuzz_corpus/$1/seed
  rm -rf "$seed"; mkdir -p "$seed" "$build/fuzz_corpus/$1/work" "$build/fuzz_artifacts/$1"
  case $1 in
    fuzz_parser)
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
      cp "$here"/seeds/* "$seed"/
      { printf 'P(t)\n1 '; rep '(' 1500; printf 'P(x)'; rep ')' 1500; echo; } > "$seed/deep.mln"
      { printf 'P(t)\n1 P(x)'; rep ' v P(x)' 500; echo; } > "$seed/long.mln" ;;
    fuzz_datalog)
      cp "$here"/seeds_datalog/* "$seed"/
      { printf 'q(1). p(Y) :- q(X), Y = '; rep '(' 1500; printf 'X'; rep ')' 1500; echo .; } > "$seed/deep.dl"
      { printf 'q(1). p(Y) :- q(X), Y = X'; rep ' + X' 900; echo .; } > "$seed/long.dl"
      { echo 'p0(1).'; for i in $(seq 0 400); do echo "p$((i + 1))(X) :- p$i(X)."; done; } > "$seed/chain.dl" ;;
    fuzz_problog)
      cp "$here"/seeds_problog/* "$seed"/
      { printf '0.5::a. query('; rep '(' 1500; printf 'a'; rep ')' 1500; echo ').'; } > "$seed/deep.pl"
      { echo '0.5::p0.'; for i in $(seq 0 300); do echo "p$((i + 1)) :- p$i."; done; echo 'query(p301).'; } > "$seed/chain.pl" ;;
    fuzz_options)
      cp "$here"/seeds_options/* "$seed"/
      { printf '{"seed": '; rep '[' 2000; rep ']' 2000; echo '}'; } > "$seed/deep.json"
      { printf '{"solver": "'; rep 'x' 3000; echo '"}'; } > "$seed/long.json" ;;
  esac
}

rc=0
for t in fuzz_parser fuzz_datalog fuzz_problog fuzz_options; do
  corpus "$t"
  dict=()
  [ "$t" = fuzz_parser ] && dict=(-dict="$here/mln.dict")
  echo "== $t ($secs s)"
  (cd "$build/fuzz_artifacts/$t" &&
    "$build/tests/fuzz/$t" -max_total_time="$secs" -max_len=8192 -timeout=10 -rss_limit_mb=2048 "${dict[@]}" \
      -print_final_stats=1 "$build/fuzz_corpus/$t/work" "$build/fuzz_corpus/$t/seed") || { echo "$t: FAILED"; rc=1; }
done
echo "fuzz: $([ $rc -eq 0 ] && echo 'all targets clean' || echo 'a target found a bug')"
exit $rc
