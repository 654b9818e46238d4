# Parsers for the pg_mln command line's output, shared by bench/run.sh and
# bench/big_run.sh (source it).  Each takes the log file first.
cli_phase() { awk -v k="$2" '$1 == k && NF == 2 && $2 ~ /^[0-9.]+$/ { print $2 }' "$1"; }  # seconds of a phase
cli_atoms() { sed -n 's/### atoms = \([0-9]*\); clauses = \([0-9]*\)/\1/p' "$1"; }
cli_clauses() { sed -n 's/### atoms = \([0-9]*\); clauses = \([0-9]*\)/\2/p' "$1"; }
cli_cost() { sed -n 's/### Best answer has cost //p' "$1"; }
cli_rss_kb() { sed -n 's/^RSS //p' "$1"; }  # from /usr/bin/time -f "RSS %M"
