#!/usr/bin/env bash
# MAP you can trust, end to end: on a program whose hard rules contradict
# its evidence, the worker's ilp job is proven optimal and no worse than the
# walk's; every MAP job stores a bound no higher than its cost; auto keeps
# the better answer; the weighted CPU walk (cpu_walk) leaves no more hard
# clauses violated than the optimum does; the command line prints the proof or the gap, and refuses an
# unknown --solver or --cpu-walk.
source "$(dirname "$0")/lib.sh"
export PGDATABASE=mln_e2e_trust
dropdb --if-exists "$PGDATABASE"; createdb "$PGDATABASE"
q() { psql -qXAt -v ON_ERROR_STOP=1 -c "$1"; }
q "CREATE EXTENSION pg_mln" >/dev/null

# Class with its structural rules hard (bench/gen's class-hard): the labels
# of citing papers contradict the hard rules.
"$build/bench/gen/mln_gen" class-hard 0 "$tmp/ch" >/dev/null
# (The program text goes through psql: the server may not read $tmp.)
psql -qX -v ON_ERROR_STOP=1 -v prog="$(cat "$tmp/ch/prog.mln")" >/dev/null <<SQL
SELECT mln.create_program('ch', :'prog');
SELECT mln.load_evidence('ch', pg_read_file('$DATA/class/evidence.db'));
SELECT mln.set_query('ch', pg_read_file('$DATA/class/query.db'));
SELECT mln.ground('ch');
SQL
check "class-hard grounded" test $? -eq 0
job() {  # options -> "cost hard bound optimal solver"
  local j
  j=$(q "SELECT mln.infer('ch', options => '$1')")
  "$WORKER" --quiet --once >/dev/null 2>&1
  q "SELECT concat_ws(' ', s->>'best_cost', s->>'hard_violated', s->>'bound', s->>'optimal', s->>'solver', s->>'status')
       FROM mln.wait($j, interval '300 s') s"
}
read -r wc wh wb wo ws wst <<<"$(job '{"solver": "walksat", "seed": 1}')"
read -r ic ih ib io is ist <<<"$(job '{"solver": "ilp", "seed": 1}')"
read -r ac ah ab ao as ast <<<"$(job '{"seed": 1}')"
read -r kc kh kb ko ks kst <<<"$(job '{"solver": "walksat", "cpu_walk": "weighted", "device": "cpu", "seed": 1}')"
echo "# walksat: $wc ($wh hard, bound $wb, $wo); ilp: $ic ($ih hard, $io); auto: $ac ($ah hard, $ao, $as); weighted cpu walk: $kc ($kh hard)"
check "the three jobs are done" test "$wst $ist $ast" = "done done done"
check "the ilp job is proven optimal" test "$io" = true
check "and answered by the exact path" test "$is" = ilp
check "its bound is its cost" awk -v c="$ic" -v b="$ib" 'BEGIN { exit !(c != "" && c == b) }'
check "the walk's answer is no better than the proven optimum" awk -v w="$wc" -v o="$ic" 'BEGIN { exit !(w != "" && o != "" && w >= o * (1 - 1e-9)) }'
check "the walk's bound is at most the optimum" awk -v b="$wb" -v o="$ic" 'BEGIN { exit !(b != "" && o != "" && b <= o * (1 + 1e-9)) }'
check "auto (the default) reaches the optimum within 1%" awk -v a="$ac" -v o="$ic" 'BEGIN { exit !(a != "" && o != "" && a <= o * 1.01) }'
check "auto is never worse than walksat" awk -v a="$ac" -v w="$wc" 'BEGIN { exit !(a != "" && w != "" && a <= w * (1 + 1e-9)) }'
check "auto's answer says how it was found" test -n "$as"
check "the weighted CPU walk's job is done" test "$kst" = done
check "its answer is no better than the proven optimum" awk -v w="$kc" -v o="$ic" 'BEGIN { exit !(w != "" && o != "" && w >= o * (1 - 1e-9)) }'
check "and it violates no more hard clauses than the optimum" test "${kh:-x}" = "$ih"
check "the MAP table holds the ilp job's answer" test "$(q "SELECT count(*) FROM mln.map('ch')")" -gt 0

# The command line: proof or gap, and a bad --solver.
out=$("$PGMLN" -i "$tmp/ch/prog.mln" -e "$DATA/class/evidence.db" -queryFile "$DATA/class/query.db" -r "$tmp/ch.out" \
      --solver ilp --seed 1 2>&1)
check "pg_mln --solver ilp prints the proof" grep -q '^### Proven optimal (ilp)' <<<"$out"
check "and the hard clauses it could not satisfy" grep -q 'hard clause(s) violated' <<<"$out"
out=$("$PGMLN" -i "$DATA/class/prog.mln" -e "$DATA/class/evidence.db" -queryFile "$DATA/class/query.db" \
      -r "$tmp/c.out" --solver walksat --seed 1 2>&1)
check "pg_mln --solver walksat prints a proof or a bound" grep -qE '^### (Proven optimal|Lower bound [0-9.]+, gap [0-9.]+%)' <<<"$out"
out=$("$PGMLN" -i "$DATA/class/prog.mln" -q 'category(p,x)' -r "$tmp/x.out" --solver simplex 2>&1); rc=$?
check "an unknown --solver is refused (exit 2)" test "$rc" = 2
check "naming the solvers" grep -q "auto, walksat or ilp" <<<"$out"
out=$("$PGMLN" -i "$DATA/class/prog.mln" -q 'category(p,x)' -r "$tmp/x.out" --cpu-walk tabu 2>&1); rc=$?
check "an unknown --cpu-walk is refused (exit 2)" test "$rc" = 2
check "naming the walks" grep -q "walksat or weighted" <<<"$out"
finish
