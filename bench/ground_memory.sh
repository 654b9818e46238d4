#!/usr/bin/env bash
# The grounding backend's memory per ground clause (issue #45): grounds the
# generated RC workload at each PAPERS count with mln.ground(name, DEVICE) in
# a fresh backend of a database of its own, and reads the backend's peak
# resident memory (VmHWM of /proc/self/status, read by the same backend after
# the call) and the grounding statistics' "memory" (the engine's peak, and
# the backend's resident and peak memory after each phase).  Writes
# OUT_DIR/ground_memory.md (and ground_memory.log, the statistics as JSON).
#
#   bash bench/ground_memory.sh OUT_DIR [PAPERS...] [BUILD_DIR]
#   MLN_GM_DEVICE=cpu        mln.ground's device (cpu | gpu | auto)
#   MLN_GM_DB=mln_ground_memory   the database (created with the extension when absent)
#   PAPERS default: 10000 100000; the lead's GPU run: 565000 (10^8 clauses)
# The server must run the build to be measured (make install; the private
# cluster unless PGHOST names another).  The peak includes the shared
# buffers this backend touched (RssShmem, reported beside it: at most
# shared_buffers).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: ground_memory.sh OUT_DIR [PAPERS...] [BUILD_DIR]}
shift
papers=()
build=$root/build/cmake
for a in "$@"; do
  if [[ $a =~ ^[0-9]+$ ]]; then papers+=("$a"); else build=$a; fi
done
[ ${#papers[@]} -gt 0 ] || papers=(10000 100000)
case $build in /*) ;; *) build=$root/$build ;; esac
dev=${MLN_GM_DEVICE:-cpu}
db=${MLN_GM_DB:-mln_ground_memory}
gen=$build/bench/gen/mln_gen
mkdir -p "$out"
if [ -z "${PGHOST:-}" ]; then eval "$(bash "$root/scripts/cluster.sh" env)"; fi
work=$(mktemp -d /tmp/mln-gm-XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
if [ "$(psql -d postgres -XAtc "SELECT count(*) FROM pg_database WHERE datname = '$db'")" != 1 ]; then
  psql -d postgres -Xqc "CREATE DATABASE $db" || exit 1
fi
psql -d "$db" -Xqc "CREATE EXTENSION IF NOT EXISTS pg_mln CASCADE" || exit 1
log=$out/ground_memory.log
: >"$log"
rows=()
stage_rows=()
for n in "${papers[@]}"; do
  d=$work/rc$n
  "$gen" rc "$n" "$d" 1 >/dev/null || { echo "generator failed" >&2; exit 1; }
  chmod -R a+r "$d"
  chmod 755 "$d"
  name=gm_rc$n
  psql -d "$db" -Xq -v ON_ERROR_STOP=1 >/dev/null <<SQL || exit 1
SELECT mln.drop_program('$name') FROM mln.programs WHERE name = '$name';
SELECT mln.create_program('$name', pg_read_file('$d/prog.mln'));
SELECT mln.load_evidence('$name', pg_read_file('$d/evidence.db'));
SELECT mln.set_query('$name', pg_read_file('$d/query.db'));
SQL
  # One backend: the grounding, then its own /proc/self/status.
  res=$(PGOPTIONS="-c client_min_messages=warning" psql -d "$db" -XAt -v ON_ERROR_STOP=1 <<SQL
SELECT mln.ground('$name', '$dev')::text;
SELECT (regexp_match(s, 'VmHWM:\s*(\d+)'))[1] || ' ' || (regexp_match(s, 'RssShmem:\s*(\d+)'))[1]
  FROM pg_read_file('/proc/self/status') s;
SQL
  ) || { echo "grounding failed at $n papers" >&2; exit 1; }
  stats=$(sed -n 1p <<<"$res")
  read -r hwm shm <<<"$(sed -n 2p <<<"$res")"
  echo "rc $n $dev: $stats" >>"$log"
  echo "rc $n $dev: VmHWM $hwm kB, RssShmem $shm kB" >>"$log"
  rows+=("$(python3 - "$n" "$hwm" "$shm" "$stats" <<'PY'
import json, sys
n, hwm, shm, st = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
c = st["clauses"]
mem = st.get("memory", {})
per = lambda b: "%.1f" % (b / c) if c else "-"
order = ["load", "evidence", "kbmc", "rules", "queries", "closure", "atoms", "clauses", "soft_evidence",
         "key_constraints", "consolidate", "unit_propagation", "store"]
ph = mem.get("phases", {})
# The phase in which the peak was reached: the first whose peak so far is the final one.  The shared
# buffers mapped at its end are at least those mapped at the peak, so the peak less them is a lower
# bound on the backend's own memory at its peak (the shared buffers only grow within a backend).
at, shared_then = "end", shm * 1024  # reached after the last phase's record (the statistics' own UPDATE)
for k in order:
    if k in ph and ph[k][1] >= hwm * 1024:
        at, shared_then = k, ph[k][2] if len(ph[k]) > 2 else shm * 1024
        break
cells = [n, str(st["atoms"]), str(c), "%.2f" % (hwm / 1048576), per(hwm * 1024), at,
         per(hwm * 1024 - shared_then), "%.0f" % (shared_then / 1048576), "%.0f" % (shm / 1024),
         per(mem["engine_peak_bytes"]) if "engine_peak_bytes" in mem else "-", "%.1f" % st["seconds"]["total"]]
print("| " + " | ".join(cells) + " |")
PY
)")
  stage_rows+=("$(python3 - "$n" "$stats" <<'PY'
import json, sys
n, st = sys.argv[1], json.loads(sys.argv[2])
c = st["clauses"]
ph = st.get("memory", {}).get("phases", {})
order = ["load", "evidence", "kbmc", "rules", "queries", "closure", "atoms", "clauses", "soft_evidence",
         "key_constraints", "consolidate", "unit_propagation", "store"]
cell = lambda k: "%.1f / %.1f" % (ph[k][0] / c, ph[k][1] / c) if k in ph and c else "-"
print("| " + " | ".join([n] + [cell(k) for k in order if k not in ("rules", "queries", "soft_evidence", "key_constraints")]) + " |")
PY
)")
  psql -d "$db" -Xqc "SELECT mln.drop_program('$name')" >/dev/null
done
md=$out/ground_memory.md
{
  echo "# The grounding backend's memory per ground clause"
  echo
  echo "- commit: \`${MLN_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null)}\`, date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || echo none)"
  echo "- command: \`MLN_GM_DEVICE=$dev bash bench/ground_memory.sh OUT ${papers[*]}\`"
  echo "- workload: generated RC (\`mln_gen rc PAPERS DIR 1\`), grounded by \`mln.ground(name, '$dev')\` in a fresh backend"
  echo
  echo "B/cl: bytes per ground clause. Peak: the backend's VmHWM after the call (GB = 2^30 bytes); in: the phase"
  echo "that reached it (end: after the store). Own: the peak less the shared buffers mapped at the end of that phase (RssShmem: the"
  echo "server's shared_buffers the backend touched, at most their size, not memory of its own; a lower bound on"
  echo "the backend's own memory at the peak). Shared at end: RssShmem after the call (the store writes through"
  echo "shared buffers). Engine: the operator engine's own peak (host memory on the cpu device, so part of the"
  echo "backend's; GPU memory on gpu)."
  echo
  echo "| papers | atoms | clauses | peak GB | peak B/cl | in | own B/cl | shared then MB | shared at end MB | engine B/cl | seconds |"
  echo "|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "The backend's resident memory / its peak so far after each phase, B/cl (grounding statistics"
  echo "memory.phases; load: the evidence read; store: the network written; the rules, queries, soft evidence"
  echo "and key constraint phases change little and are left out):"
  echo
  echo "| papers | load | evidence | kbmc | closure | atoms | clauses | consolidate | unit propagation | store |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${stage_rows[@]}"
} >"$md"
cat "$md"
