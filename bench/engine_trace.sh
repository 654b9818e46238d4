#!/usr/bin/env bash
# Summarises an operator trace (MLN_ENGINE_TRACE=1 writes one line per
# operator call to stderr: "mln-engine-trace BACKEND OP rows=N ms=T") as a
# Markdown table: calls, total, mean and largest milliseconds, and output
# rows per operator, slowest first.
#   bash bench/engine_trace.sh TRACE_FILE [TITLE]
set -euo pipefail
f=${1:?usage: engine_trace.sh TRACE_FILE [TITLE]}
echo "# Operator trace${2:+: $2}"
echo
echo "| operator | calls | total ms | mean ms | max ms | output rows |"
echo "|---|---:|---:|---:|---:|---:|"
awk '$1 == "mln-engine-trace" {
  op = $3; split($4, r, "="); split($5, t, "=");
  n[op]++; ms[op] += t[2]; rows[op] += r[2]; if (t[2] > mx[op]) mx[op] = t[2]; all += t[2]; calls++
} END {
  for (op in n) printf "| %s | %d | %.2f | %.3f | %.3f | %d |\n", op, n[op], ms[op], ms[op] / n[op], mx[op], rows[op]
  printf "| all | %d | %.2f | %.3f | | |\n", calls, all, (calls ? all / calls : 0)
}' "$f" | sort -t'|' -k4 -gr
