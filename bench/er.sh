#!/usr/bin/env bash
# Entity resolution (issues #63, #62): bench/gen/er_gen.py's records (seed 1)
# in a table, Sim and SameZip bound to views over it, query Same(x, y).  Per
# size: mln.ground with the defaults (its phases' seconds, atoms, clauses and
# a digest of the network: weights and literals, in any order), then the
# default MAP (CALL mln.solve: seconds, cost, bound, optimal) and its
# precision and recall against the generator's entities (pairs a != b).
# Writes OUT_DIR/er.md; logs OUT_DIR/er.log.
#   bash bench/er.sh OUT_DIR [BUILD_DIR]
#   MLN_ER_SIZES="1500 6000" (records), MLN_ER_SOLVE=0 (grounding only),
#   MLN_ER_SOLVE_TIMEOUT=300 (seconds for the MAP job), MLN_ER_SYLLABLES=3 (2: the denser variant)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/cli_log.sh"
bench_start er "$@"
sizes=${MLN_ER_SIZES:-1500}
solve=${MLN_ER_SOLVE:-1}
limit=${MLN_ER_SOLVE_TIMEOUT:-300}
syl=${MLN_ER_SYLLABLES:-3}
exec 3>"$out/er.log"
db=mln_bench_er
q() { psql -d "$db" -qXAt -v ON_ERROR_STOP=1 -c "$1" 2>>"$out/er.log"; }
worker_pid=
trap '[ -n "$worker_pid" ] && kill "$worker_pid" 2>/dev/null; dropdb --if-exists "$db" 2>/dev/null; rm -rf "$work"' EXIT

{
  echo "# Entity resolution: grounding and MAP (issues #62, #63)"
  echo
  echo "- command: \`MLN_ER_SIZES=\"$sizes\" MLN_ER_SOLVE=$solve MLN_ER_SYLLABLES=$syl bash bench/er.sh $out\`"
  echo "- commit: \`${MLN_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null)$(git -C "$root" diff --quiet 2>/dev/null || echo +uncommitted)}\`," \
       "date: $(date -u +%Y-%m-%dT%H:%M:%SZ), machine: $(nproc) cores"
  echo "- program: \`python3 bench/gen/er_gen.py program\` (Sim, SameZip bound to views; symmetry hard, transitivity 3.0)"
  echo
  echo "| records | path | ground s | kbmc | closure (rounds) | clauses | atoms | clauses | network digest | MAP s | cost | bound | optimal | precision | recall |"
  echo "|---:|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|---:|---:|"
} >"$out/er.md"

for n in $sizes; do
  dropdb --if-exists "$db" 2>/dev/null; createdb "$db"
  python3 "$root/bench/gen/er_gen.py" sql | psql -d "$db" -qX -v ON_ERROR_STOP=1 >&3 2>&1
  python3 "$root/bench/gen/er_gen.py" records "$n" 1 "$syl" >"$work/records.tsv"
  psql -d "$db" -qX -v ON_ERROR_STOP=1 -c "\\copy records FROM '$work/records.tsv'" >&3 2>&1
  python3 "$root/bench/gen/er_gen.py" bind | psql -d "$db" -qX -v ON_ERROR_STOP=1 >&3 2>&1
  # The phases a path has ('-' where it has none: the live build has no kbmc or closure phase).
  g=$(q "SELECT concat_ws(' ', g->'seconds'->>'total', coalesce(round((g->'seconds'->>'kbmc')::numeric, 2)::text, '-'),
                          coalesce(round((g->'seconds'->>'closure')::numeric, 2)::text, '-'), coalesce(g->>'closure_rounds', '-'),
                          coalesce(round((g->'seconds'->>'clauses')::numeric, 2)::text, '-'), g->>'atoms', g->>'clauses', g->>'device')
         FROM (SELECT mln.ground('er') g) s")
  read -r gs gk gc gr gcl ga gn gdev <<<"$g"
  digest=$(q "SELECT left(md5(string_agg(x, E'\n' ORDER BY x)), 12) FROM (SELECT weight::text || ':' ||
                (SELECT string_agg(l, ',' ORDER BY l) FROM unnest(literals) l) x FROM mln.ground_clauses('er')) c")
  ms=- cost=- bound=- opt=- prec=- rec=-
  if [ "$solve" = 1 ]; then
    PGDATABASE=$db "$build/solver/mln_worker" --quiet >&3 2>&1 & worker_pid=$!
    t0=$(date +%s.%N)
    r=$(psql -d "$db" -qXAt -c "CALL mln.solve('er', timeout => interval '$limit s')" 2>>"$out/er.log")
    t1=$(date +%s.%N)
    kill "$worker_pid" 2>/dev/null; wait "$worker_pid" 2>/dev/null; worker_pid=
    ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')  # (no bc on the GPU host)
    read -r cost bound opt <<<"$(q "SELECT concat_ws(' ', round((j->>'best_cost')::numeric, 2), round((j->>'bound')::numeric, 2),
                                          j->>'optimal') FROM (SELECT '$r'::jsonb j) s")"
    # Precision and recall of Same over ordered pairs a != b, against the generator's entities.
    read -r prec rec <<<"$(q "WITH pred AS (SELECT arguments[1] a, arguments[2] b FROM mln.map('er') WHERE truth AND arguments[1] <> arguments[2]),
        gold AS (SELECT x.id a, y.id b FROM records x JOIN records y ON x.eid = y.eid AND x.id <> y.id),
        hit AS (SELECT count(*) n FROM pred JOIN gold USING (a, b))
      SELECT round(hit.n::numeric / greatest((SELECT count(*) FROM pred), 1), 3) || ' ' ||
             round(hit.n::numeric / greatest((SELECT count(*) FROM gold), 1), 3) FROM hit")"
  fi
  printf '| %s | %s | %.2f | %s | %s (%s) | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$n" "$gdev" "$gs" "$gk" \
    "$gc" "$gr" "$gcl" "$ga" "$gn" "$digest" "$ms" "$cost" "$bound" "$opt" "$prec" "$rec" >>"$out/er.md"
done
cat "$out/er.md"
