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
# A worker as a real deployment runs it: a login role in the extension's
# role mln_worker, no superuser (README, "Several users").  The command
# line's job goes to it.
worker_pid=
if command -v mln_worker >/dev/null 2>&1 &&
   [ "$(psql -qXAt -c "SELECT count(*) FROM pg_roles WHERE rolname = 'mln_worker'")" = 1 ]; then
  psql -qX -c "DO \$\$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'mln_demo_worker') THEN
                 CREATE ROLE mln_demo_worker LOGIN IN ROLE mln_worker; END IF; END \$\$"
  PGUSER=mln_demo_worker mln_worker --quiet & worker_pid=$!
  trap '[ -n "$worker_pid" ] && kill $worker_pid 2>/dev/null' EXIT
  for _ in $(seq 50); do
    [ "$(psql -qXAt -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'mln_worker'")" -gt 0 ] && break
    sleep 0.1
  done
  echo "== worker: mln_worker as role mln_demo_worker (member of mln_worker, no superuser)"
fi
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
