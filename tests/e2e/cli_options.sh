#!/usr/bin/env bash
# The command line's job flags reach the job as the options table spells
# them: each flag's option (kJobFlags in solver/cli/options.cpp) with its
# value read by the option's type, only the options the task reads, the
# rest left to the table's defaults; --help lists every job flag with the
# table's doc and default.
source "$(dirname "$0")/lib.sh"
eval "$(bash "$root/scripts/cluster.sh" env)"
export PGDATABASE=mln_e2e_cli_options
dropdb --if-exists "$PGDATABASE" 2>/dev/null; createdb "$PGDATABASE"
trap 'dropdb --if-exists "$PGDATABASE" 2>/dev/null; rm -rf "$tmp"' EXIT
psql -qX -c "CREATE EXTENSION pg_mln" >/dev/null
dsn="host=$PGHOST port=$PGPORT dbname=$PGDATABASE"
S=$DATA/smoke
smoke=(-i "$S/prog.mln" -e "$S/evidence.db" -queryFile "$S/query.db")
q() { psql -qXAt -c "$1"; }
# The options of the last job of the task, as jsonb text (keys sorted).
last_options() { q "SELECT options::text FROM mln.jobs WHERE task = '$1' ORDER BY id DESC LIMIT 1"; }

learn=(-i "$S/prog.mln" -e "$S/evidence.db" -q Smokes)  # target Smokes: its evidence is the training world
# runs TASK NAME WANT WHAT FLAGS...: a run of the command line with FLAGS
# (its log in $tmp/NAME.log) succeeds, and its job's options are WANT.
runs() {
  local task=$1 name=$2 want=$3 what=$4; shift 4
  "$PGMLN" --dsn "$dsn" "$@" -r "$tmp/$name.out" -keepData >"$tmp/$name.log" 2>&1
  check "a $task run with job flags succeeds" test $? = 0
  local got; got=$(last_options "$task")
  echo "# $task options: $got"
  check "$task: $what" test "$(q "SELECT '$got'::jsonb = '$want'::jsonb")" = t
}
runs map map '{"seed": 7, "device": "auto", "solver": "walksat", "timeout": 60, "max_flips": 10, "max_tries": 5, "dont_break": true, "random_step": 0.25}' \
  "each flag's option with its value read by its type (010 is 10), and nothing the flags did not set" \
  "${smoke[@]}" -maxFlips 010 -maxTries 5 --solver walksat -dontBreak --seed 7 -randomStep 0.25 -timeout 60
runs marginal marg '{"device": "cpu", "samples": 50, "skip_components_without_query": false}' \
  "-maxTries (MAP's) is left out, -nopush and --search-device are in" \
  "${smoke[@]}" -marginal -maxTries 5 -mcsatSamples 50 -nopush --search-device cpu
check "marginal: the run says the samples it asked for" grep -q 'MCSAT FOR SAMPLES 0 ~ 50' "$tmp/marg.log"
runs learn learn '{"device": "auto", "iterations": 3}' "-dMaxIter is iterations, -maxFlips (inference's) is left out" \
  "${learn[@]}" -learnwt -dMaxIter 3 -maxFlips 100
check "learning: the run says the iterations it asked for" grep -q 'at most 3 iterations' "$tmp/learn.log"
"$PGMLN" --dsn "$dsn" "${learn[@]}" -r "$tmp/learn2.out" -learnwt >"$tmp/learn2.log" 2>&1
check "learning without -dMaxIter: the table's default, 100, said" grep -q 'at most 100 iterations' "$tmp/learn2.log"

"$PGMLN" --dsn "$dsn" "${smoke[@]}" -r "$tmp/bad.out" -maxFlips ten >"$tmp/bad.log" 2>&1
rc=$?
check "-maxFlips ten is refused before any work (exit 2), naming the flag" \
  bash -c "[ $rc = 2 ] && grep -q 'option -maxFlips expects an integer, got \"ten\"' '$tmp/bad.log'"

"$PGMLN" --dsn "$dsn" "${smoke[@]}" -r "$tmp/big.out" -threads 99999999999 >"$tmp/big.log" 2>&1
rc=$?
check "-threads past int is refused (exit 2) with the table's range" \
  bash -c "[ $rc = 2 ] && grep -q -- '-threads must be an integer from 0 (all cores) to 4096 (got \"99999999999\")' '$tmp/big.log'"

help=$("$PGMLN" --help 2>&1)
check "--help lists -maxTries with the table's default" grep -qE '^  -maxTries +WalkSAT tries.* \[3\]$' <<<"$help"
check "--help lists --gap-tolerance with the table's default" grep -qE '^  --gap-tolerance .* \[0\.005\]$' <<<"$help"
check "--help lists every job flag" test "$(grep -cE '^  -{1,2}[a-zA-Z-]+ +.* \[.*\]$' <<<"$help")" = 18
finish
