#!/usr/bin/env bash
# The project's private PostgreSQL 15 cluster: its own data directory and
# socket under build/, its own port (default 55432), never the system's
# cluster.  Usage: cluster.sh start|stop|status|psql [args]
#
# PostgreSQL refuses to run as root; when invoked as root the server runs as
# the unprivileged 'postgres' user that Debian's package creates.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
PGBIN=${PGBIN:-$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)}
[ -x "$PGBIN/pg_ctl" ] || PGBIN=/usr/lib/postgresql/15/bin
PGPORT=${MLN_PGPORT:-55432}
data="$root/build/pgdata"
sock="$root/build/pgsock"
log="$root/build/pg.log"
# Where the command line looks for this cluster when no database is named
# (solver/cli/embedded.cpp): written on start, removed on stop.
registry="${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/pg_mln/demo-cluster"
register() { mkdir -p "$(dirname "$registry")" && echo "host=$sock port=$PGPORT user=postgres" >"$registry" || true; }

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then su postgres -s /bin/bash -c "$*"; else bash -c "$*"; fi
}

start() {
  mkdir -p "$root/build" "$sock"
  if [ "$(id -u)" -eq 0 ]; then chown postgres "$sock"; chmod 755 "$root/build"; fi
  if [ ! -s "$data/PG_VERSION" ]; then
    rm -rf "$data"; mkdir -p "$data"
    [ "$(id -u)" -eq 0 ] && chown postgres "$data"
    as_owner "'$PGBIN/initdb' -D '$data' -U postgres -A trust -E UTF8 --locale=C.UTF-8" >"$root/build/initdb.log" 2>&1 \
      || { cat "$root/build/initdb.log"; exit 1; }
    cat >>"$data/postgresql.conf" <<CONF
port = $PGPORT
listen_addresses = '127.0.0.1'
unix_socket_directories = '$sock'
shared_buffers = 256MB
max_connections = 50
fsync = off
synchronous_commit = off
full_page_writes = off
CONF
  fi
  if as_owner "'$PGBIN/pg_ctl' -D '$data' status" >/dev/null 2>&1; then
    echo "cluster: running on port $PGPORT ($data)"
    register
    return
  fi
  [ "$(id -u)" -eq 0 ] && touch "$log" && chown postgres "$log"
  # OpenMP threads of the CPU backend sleep instead of spinning between
  # operators: backends share the cores with each other.
  as_owner "OMP_WAIT_POLICY=passive '$PGBIN/pg_ctl' -D '$data' -l '$log' -w -t 60 start" >/dev/null \
    || { tail -20 "$log"; exit 1; }
  register
  echo "cluster: started on port $PGPORT ($data)"
}

stop() {
  if [ -s "$data/PG_VERSION" ] && as_owner "'$PGBIN/pg_ctl' -D '$data' status" >/dev/null 2>&1; then
    as_owner "'$PGBIN/pg_ctl' -D '$data' -m fast -w stop" >/dev/null
    [ "$(cat "$registry" 2>/dev/null)" = "host=$sock port=$PGPORT user=postgres" ] && rm -f "$registry"
    echo "cluster: stopped"
  else
    echo "cluster: not running"
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) as_owner "'$PGBIN/pg_ctl' -D '$data' status" ;;
  env) echo "export PGHOST=$sock PGPORT=$PGPORT PGUSER=postgres" ;;
  psql) shift; PGHOST=$sock PGPORT=$PGPORT PGUSER=postgres exec psql "$@" ;;
  *) echo "usage: $0 start|stop|status|env|psql [args]" >&2; exit 2 ;;
esac
