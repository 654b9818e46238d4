#!/usr/bin/env bash
# The bundled example: creates a demo database in the private cluster and
# runs the smoke example through pg_mln (the CLI when it is installed,
# plain SQL otherwise).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
eval "$(bash "$root/scripts/cluster.sh" env)"
createdb mln_demo 2>/dev/null || true
export PGDATABASE=mln_demo
psql -qX -c "CREATE EXTENSION IF NOT EXISTS pg_mln" 
if command -v pg_mln >/dev/null 2>&1 && pg_mln --version >/dev/null 2>&1; then
  out=$(mktemp -d)/smoke.out
  pg_mln -i "$root/examples/smoke/prog.mln" -e "$root/examples/smoke/evidence.db" \
         -queryFile "$root/examples/smoke/query.db" -r "$out"
  echo "== MAP answer ($out):"
  cat "$out"
else
  psql -X -c "SELECT mln.version(), mln.device_info()"
fi
echo "The private cluster keeps running: $(bash "$root/scripts/cluster.sh" env | tr '\n' ' ')"
echo "next: 'bash scripts/cluster.sh psql -d mln_demo' opens psql there (try SELECT * FROM mln.programs);"
echo "      'pg_mln -i examples/class/prog.mln -e examples/class/evidence.db -queryFile examples/class/query.db -r /tmp/class.out'"
echo "      runs Tuffy's class sample; 'make check' runs every test; 'make cluster-stop' stops the cluster"
