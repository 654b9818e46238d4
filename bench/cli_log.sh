# Parsers for the pg_mln command line's output, shared by the bench scripts
# (source it).  Each takes the log file first.
cli_phase() { awk -v k="$2" '$1 == k && NF == 2 && $2 ~ /^[0-9.]+$/ { print $2 }' "$1"; }  # seconds of a phase
cli_atoms() { sed -n 's/### atoms = \([0-9]*\); clauses = \([0-9]*\)/\1/p' "$1"; }
cli_clauses() { sed -n 's/### atoms = \([0-9]*\); clauses = \([0-9]*\)/\2/p' "$1"; }
cli_cost() { sed -n 's/### Best answer has cost //p' "$1"; }
cli_rss_kb() { sed -n 's/^RSS //p' "$1"; }  # from /usr/bin/time -f "RSS %M"

# The common start of a bench script run as SCRIPT OUT_DIR [BUILD_DIR]
# (after `root` is set): sets out, build (absolute), DATA, PGMLN, GEN and
# work (a folder removed on exit), makes OUT_DIR, and takes the private
# cluster's environment when no server is named.
bench_start() {  # tag "$@"
  local tag=$1
  shift
  out=${1:?usage: $(basename "$0") OUT_DIR [BUILD_DIR]}
  build=${2:-$root/build/cmake}
  case $build in /*) ;; *) build=$root/$build ;; esac
  DATA=${MLN_DATASETS:-$root/examples}
  PGMLN=$build/solver/pg_mln
  GEN=$build/bench/gen/mln_gen
  work=$(mktemp -d "/tmp/mln-$tag-XXXXXX")
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$out"
  if [ -z "${PGHOST:-}" ]; then eval "$(bash "$root/scripts/cluster.sh" env)"; fi
  export PGDATABASE=${PGDATABASE:-postgres}
}
