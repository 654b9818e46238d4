#!/usr/bin/env bash
# Live answers on issue #62's entity-resolution program, the live path and
# the path from scratch side by side in one run: bench/gen/er_gen.py's
# records (RECORDS, seed 1), then CHANGES random single-row changes (insert,
# update, delete) and batches of BATCHES rows.  Each change: the live path
# (LiveGrounder::update, the network, MAP on the touched components from the
# previous answer; build/cmake/bench/mln_live_ground) timed per step, and
# every SCRATCH_EVERY changes ground() plus solve_map() from scratch on the
# same data (the defaults of both).  The engine alone: no SQL, no worker.
#
#   bash bench/live.sh [OUT.md]   (default bench/results/cpu-2core/live.md)
#   RECORDS=1500 CHANGES=100 SCRATCH_EVERY=25 BATCHES="10 100 1000" SEED=1
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-bench/results/cpu-2core/live.md}
RECORDS=${RECORDS:-1500}
CHANGES=${CHANGES:-100}
SCRATCH_EVERY=${SCRATCH_EVERY:-25}
BATCHES=${BATCHES:-"10 100 1000"}
SEED=${SEED:-1}
BIN=${BIN:-build/cmake/bench/mln_live_ground}
[ -x "$BIN" ] || { echo "live: $BIN is missing (make build)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 bench/gen/er_gen.py records "$RECORDS" 1 >"$work/records.tsv"
commit=${MLN_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo +uncommitted)}
mkdir -p "$(dirname "$OUT")"
{
  echo "# Live answers on entity resolution: the live path beside the path from scratch"
  echo
  echo "- commit $commit, $(date -u +%Y-%m-%d), $(nproc) cores; command: \`RECORDS=$RECORDS CHANGES=$CHANGES SCRATCH_EVERY=$SCRATCH_EVERY BATCHES=\"$BATCHES\" SEED=$SEED bash bench/live.sh\`"
  echo "- program: issue #62's (\`python3 bench/gen/er_gen.py program\`), records \`er_gen.py records $RECORDS 1\`, Sim and SameZip computed as its views define them"
  echo "- live: \`LiveGrounder::update\` (delta grounding), \`output()\` (the network), \`solve_map_touched\` (MAP on the components that hold a touched atom, from the previous answer); from scratch: \`ground()\` and \`solve_map()\`, both with their defaults. Costs are over the whole network."
  echo
  "$BIN" "$work/records.tsv" "$CHANGES" "$SEED" "$SCRATCH_EVERY" "$BATCHES"
} >"$OUT"
echo "live: wrote $OUT"
