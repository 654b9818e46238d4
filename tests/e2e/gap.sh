#!/usr/bin/env bash
# The job tables' gap (SQL mln._gap) is the solver's (core/base/gap.hpp):
# both are checked against tests/data/gap_cases.tsv (the C++ side by
# SolverCost.RelativeGapFollowsTheOneTable).
source "$(dirname "$0")/lib.sh"
export PGDATABASE=mln_e2e_gap
dropdb --if-exists "$PGDATABASE"; createdb "$PGDATABASE"
psql -qX -v ON_ERROR_STOP=1 -c "CREATE EXTENSION pg_mln" >/dev/null
grep -v '^#' "$root/tests/data/gap_cases.tsv" > "$tmp/cases.tsv"
out=$(psql -qXAt -v ON_ERROR_STOP=1 <<SQL
CREATE TEMP TABLE c (cost float8, bound float8, gap float8);
\copy c FROM '$tmp/cases.tsv'
SELECT format('%s %s %s %s', cost, bound, gap, mln._gap(cost, bound)) FROM c WHERE abs(mln._gap(cost, bound) - gap) > 1e-12;
SELECT count(*) FROM c;
SQL
)
n=$(tail -1 <<<"$out")
check "mln._gap agrees with the table's $n cases" test "$out" = "$n"
check "the table has its cases" test "$n" -ge 10
check "mln._gap of a missing bound is NULL" test "$(psql -qXAt -c "SELECT mln._gap(1, NULL) IS NULL")" = t
dropdb "$PGDATABASE"
finish
