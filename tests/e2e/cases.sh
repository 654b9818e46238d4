#!/usr/bin/env bash
# The data-driven language tests (tests/cases/README.md), in Soufflé's
# style: a folder per case, tests/cases/<language>/<case>/, with the
# program, its input facts and its expected output.  Each case runs through
# the product's public surface and prints one ok / not ok line:
#   datalog  program.dl, <rel>.facts loaded into tables of a fresh schema,
#            mln.datalog into another; each <rel>.csv is compared with the
#            table <rel> (rows sorted, tab-separated)
#   problog  program.pl (and <rel>.facts, as above) through mln.problog;
#            expected.tsv holds each query's exact probability, and the
#            estimate must lie within 5 standard errors of it
#   mln      prog.mln, evidence.db, query.db through the pg_mln command line
#            (Tuffy's -i -e -queryFile -r, plus the words of a flags file);
#            expected.tsv is the MAP answer's true query atoms, or with
#            -marginal each atom's exact probability (tolerance 0.001)
# A case with a file expected_error must fail, its error message holding
# that file's text.  Adding a case needs no change here.  MLN_CASES=GLOB
# (e.g. 'datalog/*') runs a subset.  Usage: cases.sh [BUILD_DIR]
source "$(dirname "$0")/lib.sh"
eval "$(bash "$root/scripts/cluster.sh" env)"
export PGDATABASE=mln_e2e_cases PGOPTIONS="-c client_min_messages=warning"
dropdb --if-exists "$PGDATABASE" 2>/dev/null; createdb "$PGDATABASE"
psql -qX -c "CREATE EXTENSION pg_mln" >/dev/null
cases=$root/tests/cases
n=0   # a number per case: its schemas are case<n>_in and case<n>_out

# The column types of a facts file: int where every value of the column is
# an integer of 32 bits, else text.  An empty file takes its columns from
# the program's '.input REL(col type, ...)' declaration.
column_types() {  # FACTS PROGRAM REL
  if [ -s "$1" ]; then
    awk -F'\t' '{ for (i = 1; i <= NF; i++) if ($i !~ /^-?[0-9]+$/ || $i + 0 > 2147483647 || $i + 0 < -2147483648) t[i] = 1
                  if (NF > nf) nf = NF }
      END { for (i = 1; i <= nf; i++) printf "%sc%d %s", (i > 1 ? ", " : ""), i, (t[i] ? "text" : "int") }' "$1"
  else
    grep -oE "^[[:space:]]*\.input[[:space:]]+$3[[:space:]]*\([^)]*\)" "$2" | head -1 | sed -E 's/^[^(]*\((.*)\)$/\1/'
  fi
}

# Creates schema case<n>_in holding a table per <rel>.facts of the case,
# and an empty case<n>_out.
load_facts() {  # DIR PROGRAM
  local f rel cols
  psql -qX -v ON_ERROR_STOP=1 -c "DROP SCHEMA IF EXISTS case${n}_in, case${n}_out CASCADE;
    CREATE SCHEMA case${n}_in; CREATE SCHEMA case${n}_out" >/dev/null || return 1
  for f in "$1"/*.facts; do
    [ -e "$f" ] || continue
    rel=$(basename "$f" .facts)
    cols=$(column_types "$f" "$2" "$rel")
    [ -n "$cols" ] || { echo "cannot tell the columns of the empty $(basename "$f")" >"$tmp/err"; return 1; }
    psql -qX -v ON_ERROR_STOP=1 -c "CREATE TABLE case${n}_in.\"$rel\" ($cols)" \
      -c "\\copy case${n}_in.\"$rel\" FROM '$f'" >/dev/null 2>"$tmp/err" || return 1
  done
}

# Runs SQL with the case's program as :'prog' (and its input schema first
# on the search path); the output to $tmp/out, the errors to $tmp/err.
run_sql() {  # PROGRAM SQL [psql -v args...]
  local prog=$1 sql=$2; shift 2
  PGOPTIONS="$PGOPTIONS -c search_path=case${n}_in,public" \
    psql -qXAt -v ON_ERROR_STOP=1 -v prog="$(cat "$prog")" "$@" >"$tmp/out" 2>"$tmp/err" <<<"$sql"
}

# The case must have failed with its expected_error's text in the message.
expect_error() {  # DIR RC
  local want
  want=$(cat "$1/expected_error")
  if [ "$2" -eq 0 ]; then echo "# it succeeded; expected an error with: $want"; return 1; fi
  grep -qF -- "$want" "$tmp/err" && return 0
  echo "# expected an error with: $want"; sed 's/^/# got: /' "$tmp/err" | head -5
  return 1
}

same_rows() {  # EXPECTED GOT: equal as sorted lines
  if diff -u --label expected --label got <(LC_ALL=C sort "$1") <(LC_ALL=C sort "$2") >"$tmp/diff"; then return 0; fi
  sed 's/^/# /' "$tmp/diff" | head -20
  return 1
}

run_datalog() {  # DIR
  local d=$1 prog=$1/program.dl e rel bad=0
  load_facts "$d" "$prog" || { sed 's/^/# /' "$tmp/err"; return 1; }
  run_sql "$prog" "SELECT relation, rows FROM mln.datalog(:'prog', 'case${n}_out')"
  local rc=$?
  [ -e "$d/expected_error" ] && { expect_error "$d" $rc; return; }
  [ $rc -eq 0 ] || { sed 's/^/# /' "$tmp/err" | head -5; return 1; }
  for e in "$d"/*.csv; do
    [ -e "$e" ] || continue
    rel=$(basename "$e" .csv)
    if ! psql -qX -v ON_ERROR_STOP=1 -c "COPY case${n}_out.\"$rel\" TO STDOUT" >"$tmp/rows" 2>"$tmp/err"; then
      echo "# relation $rel: $(head -1 "$tmp/err")"; bad=1; continue
    fi
    same_rows "$e" "$tmp/rows" || { echo "# (relation $rel: - expected, + got)"; bad=1; }
  done
  return $bad
}

# Each query's estimate within K standard errors, sqrt(p (1 - p) / n), of
# its exact probability p (n: the samples that satisfy the evidence), or
# equal to it where p is 0 or 1; the same queries in both.
within_se() {  # EXPECTED GOT K
  awk -F'\t' -v k="$3" '
    NR == FNR { if (NF) { p[$1] = $2; want++ } next }
    { got++
      if (!($1 in p)) { print "# unexpected query " $1 " (" $2 ")"; bad = 1; next }
      seen[$1] = 1; n = $3 + 0; e = p[$1] + 0
      tol = (n > 0 ? k * sqrt(e * (1 - e) / n) : 0) + 1e-6
      d = $2 - e; if (d < 0) d = -d
      if (n <= 0 || d > tol) { printf "# %s: %s over %d samples, exact %s (tolerance %.6f)\n", $1, $2, n, e, tol; bad = 1 } }
    END { for (q in p) if (!(q in seen)) { print "# missing query " q; bad = 1 }
          exit bad }' "$1" "$2"
}

run_problog() {  # DIR
  local d=$1 prog=$1/program.pl opts='{"samples": 100000, "seed": 42, "device": "cpu", "threads": 1}'
  [ -e "$d/options.json" ] && opts=$(cat "$d/options.json")
  load_facts "$d" "$prog" || { sed 's/^/# /' "$tmp/err"; return 1; }
  run_sql "$prog" "SELECT query, probability, samples FROM mln.problog(:'prog', :'opts')" -v opts="$opts" -F $'\t'
  local rc=$?
  [ -e "$d/expected_error" ] && { expect_error "$d" $rc; return; }
  [ $rc -eq 0 ] || { sed 's/^/# /' "$tmp/err" | head -5; return 1; }
  within_se "$d/expected.tsv" "$tmp/out" 5
}

# Marginals: the same atoms, each probability within TOL of the exact one
# (the output's " // prior = ..." suffix dropped).
within_tol() {  # EXPECTED GOT TOL
  awk -F'\t' -v tol="$3" '
    NR == FNR { if (NF) p[$2] = $1; next }
    { sub(/ \/\/ prior = .*$/, "", $2)
      if (!($2 in p)) { print "# unexpected atom " $2 " (" $1 ")"; bad = 1; next }
      seen[$2] = 1; d = $1 - p[$2]; if (d < 0) d = -d
      if (d > tol) { printf "# %s: %s, exact %s (tolerance %s)\n", $2, $1, p[$2], tol; bad = 1 } }
    END { for (a in p) if (!(a in seen)) { print "# missing atom " a; bad = 1 }
          exit bad }' "$1" "$2"
}

run_mln() {  # DIR
  local d=$1 args flags=() rc
  [ -x "$PGMLN" ] || { echo "# no pg_mln binary at $PGMLN"; return 1; }
  args=(-i "$d/prog.mln" -queryFile "$d/query.db" -r "$tmp/result.txt")
  [ -e "$d/evidence.db" ] && args+=(-e "$d/evidence.db")
  [ -e "$d/flags" ] && read -ra flags <"$d/flags"
  rm -f "$tmp/result.txt"
  "$PGMLN" --dsn "dbname=$PGDATABASE" "${args[@]}" "${flags[@]}" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ -e "$d/expected_error" ] && { cat "$tmp/out" >>"$tmp/err"; expect_error "$d" $rc; return; }
  [ $rc -eq 0 ] || { tail -5 "$tmp/err" "$tmp/out" | sed 's/^/# /'; return 1; }
  case " ${flags[*]} " in
    *" -marginal "*) within_tol "$d/expected.tsv" "$tmp/result.txt" "$(cat "$d/tolerance" 2>/dev/null || echo 0.001)" ;;
    *) same_rows "$d/expected.tsv" "$tmp/result.txt" ;;
  esac
}

for d in "$cases"/*/*/; do
  d=${d%/}
  name=${d#"$cases"/}
  # shellcheck disable=SC2053  # MLN_CASES is a glob
  [[ $name == ${MLN_CASES:-*} ]] || continue
  n=$((n + 1))
  case ${name%%/*} in
    datalog) check "$name" run_datalog "$d" ;;
    problog) check "$name" run_problog "$d" ;;
    mln) check "$name" run_mln "$d" ;;
    *) not_ok "$name: no language ${name%%/*} (datalog, problog or mln)" ;;
  esac
  psql -qX -c "DROP SCHEMA IF EXISTS case${n}_in, case${n}_out CASCADE" >/dev/null 2>&1
done
[ $n -gt 0 ] || not_ok "no case under tests/cases matches ${MLN_CASES:-*}"

# The expected outputs are the references' answers, checked each run: SQL
# (reference.sql in SQLite) for Datalog, enumeration of every world for MLN.
check "datalog: every expected output is what its reference.sql computes" \
  python3 "$root/tests/cases/datalog/reference.py"
for d in "$root"/tests/cases/mln/*/; do
  [ -f "$d/expected.tsv" ] || continue
  check "mln/$(basename "$d"): expected.tsv is the enumeration's exact answer" \
    python3 "$root/tests/cases/mln/enumerate.py" "$d" --check
done

dropdb "$PGDATABASE"
finish
