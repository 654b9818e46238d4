#!/usr/bin/env bash
# Evidence loading speed through the streaming path (COPY of line-aligned
# chunks into the staging table, then mln.ingest_evidence), as the command
# line does it: class's 82,684 atoms, and a generated file of N atoms
# (default 10 million) over a closed-world predicate.  Appends a table to
# OUT_DIR/load_evidence.md.
#
#   bash bench/load_evidence.sh OUT_DIR [N] [BUILD_DIR]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: load_evidence.sh OUT_DIR [N] [BUILD_DIR]}
n=${2:-10000000}
build=${3:-$root/build/cmake}
DATA=${MLN_DATASETS:-$root/examples}
work=$(mktemp -d /tmp/mln-load-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

# A program whose grounding is trivial, so that the load phase is what is timed.
printf '*Ev(t, t)\nQ(t)\n1 Q(x)\n' >"$work/prog.mln"
awk -v n="$n" 'BEGIN { srand(7); for (i = 0; i < n; i++) printf "Ev(A%d, B%d)\n", i % 5003, int(i / 5003) }' >"$work/ev.db"

# Seconds of the command line's "load" phase (COPY + ingest + set_query).
load_secs() {  # prog evidence query
  "$build/solver/pg_mln" -i "$1" -e "$2" -q "$3" -r "$work/out.txt" -maxFlips 100 | awk '$1 == "load" { print $2 }'
}
s_class=$(load_secs "$DATA/class/prog.mln" "$DATA/class/evidence.db" 'category(p,x)')
s_gen=$(load_secs "$work/prog.mln" "$work/ev.db" 'Q(x)')
{
  echo "# Evidence loading (streaming path)"
  echo
  echo "- commit: \`${MLN_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null)}\`, date: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores"
  echo "- command: \`bash bench/load_evidence.sh ${out#$root/} $n\`; seconds are the command line's load phase"
  echo
  echo "| evidence | atoms | seconds | atoms/s |"
  echo "|---|---:|---:|---:|"
  echo "| class | 82684 | $s_class | $(awk -v s="$s_class" 'BEGIN { printf "%.0f", 82684 / s }') |"
  echo "| generated | $n | $s_gen | $(awk -v s="$s_gen" -v n="$n" 'BEGIN { printf "%.0f", n / s }') |"
} >"$out/load_evidence.md"
cat "$out/load_evidence.md"
