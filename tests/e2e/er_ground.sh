#!/usr/bin/env bash
# The entity-resolution program (bench/gen/er_gen.py: a query over every
# pair of records, symmetry and transitivity) grounds on the operator engine
# to the network Tuffy's generated SQL gives (device 'sql', the reference
# path): the same atoms and the same clauses with the same weights.  The
# engine's closure and active clauses never copy the query's candidate
# domain (issue #63); this holds them to the reference.
source "$(dirname "$0")/lib.sh"
export PGDATABASE=mln_e2e_er
dropdb --if-exists "$PGDATABASE"; createdb "$PGDATABASE"
python3 "$root/bench/gen/er_gen.py" sql | psql -qX -v ON_ERROR_STOP=1 >/dev/null
python3 "$root/bench/gen/er_gen.py" records 120 3 2 >"$tmp/records.tsv"
psql -qX -v ON_ERROR_STOP=1 -c "\\copy records FROM '$tmp/records.tsv'" >/dev/null
python3 "$root/bench/gen/er_gen.py" bind | psql -qX -v ON_ERROR_STOP=1 >/dev/null
check "set-up: 120 records, the program bound to the views" test $? -eq 0
network() {  # device -> "atoms clauses digest-of-clauses digest-of-atoms"
  psql -qXAt -v ON_ERROR_STOP=1 2>/dev/null <<SQL
SELECT concat_ws(' ', g->>'atoms', g->>'clauses') FROM (SELECT mln.ground('er', device => '$1') g) s;
SELECT md5(string_agg(x, E'\n' ORDER BY x)) FROM (SELECT weight::text || ':' ||
  (SELECT string_agg(l, ',' ORDER BY l) FROM unnest(literals) l) x FROM mln.ground_clauses('er')) c;
SELECT md5(string_agg(predicate || array_to_string(arguments, ','), ';' ORDER BY 1)) FROM mln.ground_atoms('er');
SQL
}
cpu=$(network cpu | tr '\n' ' ')
sql=$(network sql | tr '\n' ' ')
echo "# cpu: $cpu"
echo "# sql: $sql"
check "the engine grounds a network (atoms and clauses)" bash -c "[ \"\$(cut -d' ' -f2 <<<'$cpu')\" -gt 1000 ]"
check "the same atoms and clauses, weights and literals, as Tuffy's SQL path" test "$cpu" = "$sql"
dropdb "$PGDATABASE"
finish
