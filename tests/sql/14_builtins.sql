-- The built-in functions and operators of conditions (lang/builtins.hpp):
-- each row's sample, grounded through the host evaluator ('cpu') and through
-- generated SQL ('sql'), must give the row's expected result in both, so
-- the two evaluators agree on every built-in.  The rules below are one per
-- row of the table, in its order (tests/unit/ground_builtins_test.cpp checks
-- that every row is here).  Also: power end to end, arity and domain errors.
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_mln;
SELECT plan(10);

-- Case(Ki) holds for every row; Ok(Ki) is grounded (as the unit clause
-- Ok(Ki)) exactly where row i's condition holds.
SELECT mln.create_program('builtins', $mln$
*Case(key)
Ok(key)
1 Case(K1), [abs(-2.5) = 2.5] => Ok(K1)
1 Case(K2), [sign(-3) = -1] => Ok(K2)
1 Case(K3), [exp(1) = 2.718281828459045] => Ok(K3)
1 Case(K4), [ceil(2.1) = 3] => Ok(K4)
1 Case(K5), [ceiling(-2.1) = -2] => Ok(K5)
1 Case(K6), [floor(-2.1) = -3] => Ok(K6)
1 Case(K7), [trunc(-2.7) = -2] => Ok(K7)
1 Case(K8), [round(2.5) = 2] => Ok(K8)
1 Case(K9), [ln(10) = 2.302585092994046] => Ok(K9)
1 Case(K10), [lg(1000) = 3] => Ok(K10)
1 Case(K11), [log(0.01) = -2] => Ok(K11)
1 Case(K12), [log(2, 1024) = 10] => Ok(K12)
1 Case(K13), [pow(2, 10) = 1024] => Ok(K13)
1 Case(K14), [power(2, 0.5) = 1.4142135623730951] => Ok(K14)
1 Case(K15), [sqrt(2.25) = 1.5] => Ok(K15)
1 Case(K16), [sin(1) = 0.8414709848078965] => Ok(K16)
1 Case(K17), [cos(1) = 0.5403023058681398] => Ok(K17)
1 Case(K18), [tan(1) = 1.5574077246549023] => Ok(K18)
1 Case(K19), [factorial(5) = 120] => Ok(K19)
1 Case(K20), [add(2, 0.5) = 2.5] => Ok(K20)
1 Case(K21), [subtract(2, 0.5) = 1.5] => Ok(K21)
1 Case(K22), [multiply(3, 0.5) = 1.5] => Ok(K22)
1 Case(K23), [divide(7, 2) = 3.5] => Ok(K23)
1 Case(K24), [mod(-7, 3) = -1] => Ok(K24)
1 Case(K25), [bitand(12, 10) = 8] => Ok(K25)
1 Case(K26), [bitor(12, 10) = 14] => Ok(K26)
1 Case(K27), [bitxor(12, 10) = 6] => Ok(K27)
1 Case(K28), [bitshiftleft(1, 4) = 16] => Ok(K28)
1 Case(K29), [bitshiftright(-16, 2) = -4] => Ok(K29)
1 Case(K30), [length("héllo") = 5] => Ok(K30)
1 Case(K31), [len("abc") = 3] => Ok(K31)
1 Case(K32), [strlen(12.5) = 4] => Ok(K32)
1 Case(K33), [upper("ab1c") = "AB1C"] => Ok(K33)
1 Case(K34), [lower("AB1C") = "ab1c"] => Ok(K34)
1 Case(K35), [trim("  a b  ") = "a b"] => Ok(K35)
1 Case(K36), [initcap("hello wORLD x2y") = "Hello World X2y"] => Ok(K36)
1 Case(K37), [md5("abc") = "900150983cd24fb0d6963f7d28e17f72"] => Ok(K37)
1 Case(K38), [concat("a", 1.5, 2) = "a1.52"] => Ok(K38)
1 Case(K39), [strpos("héllo", "l") = 3] => Ok(K39)
1 Case(K40), [repeat("ab", 3) = "ababab"] => Ok(K40)
1 Case(K41), [substr("héllo", 2) = "éllo"] => Ok(K41)
1 Case(K42), [substr("hello", 0, 3) = "he"] => Ok(K42)
1 Case(K43), [replace("banana", "an", "AN") = "bANANa"] => Ok(K43)
1 Case(K44), [split_part("a,b,c", ",", -1) = "c"] => Ok(K44)
1 Case(K45), [regex_replace("ab12cd34", "[0-9]+", "<\\&>") = "ab<12>cd34"] => Ok(K45)
1 Case(K46), [regexp_replace("abc-def", "([a-z]+)-([a-z]+)", "\\2 \\1") = "def abc"] => Ok(K46)
1 Case(K47), [contains("hello", "ell") = 1] => Ok(K47)
1 Case(K48), [startswith("hello", "hex") = 0] => Ok(K48)
1 Case(K49), [endswith("hello", "lo") = 1] => Ok(K49)
1 Case(K50), [(1.5 + 2) = 3.5] => Ok(K50)
1 Case(K51), [(1.5 - 2) = -0.5] => Ok(K51)
1 Case(K52), [(1.5 * 3) = 4.5] => Ok(K52)
1 Case(K53), [(1 / 4) = 0.25] => Ok(K53)
1 Case(K54), [(7.5 % 2) = 1.5] => Ok(K54)
1 Case(K55), [(12 & 10) = 8] => Ok(K55)
1 Case(K56), [(12 | 10) = 14] => Ok(K56)
1 Case(K57), [(12 ^ 10) = 6] => Ok(K57)
1 Case(K58), [(3 << 2) = 12] => Ok(K58)
1 Case(K59), [(2.5 >> 1) = 1] => Ok(K59)
1 Case(K60), [(~5) = -6] => Ok(K60)
1 Case(K61), [(4!) = 24] => Ok(K61)
1 Case(KBAD), [power(2, 10) = 1023] => Ok(KBAD)
$mln$);
SELECT mln.load_evidence('builtins', $ev$
Case(K1)
Case(K2)
Case(K3)
Case(K4)
Case(K5)
Case(K6)
Case(K7)
Case(K8)
Case(K9)
Case(K10)
Case(K11)
Case(K12)
Case(K13)
Case(K14)
Case(K15)
Case(K16)
Case(K17)
Case(K18)
Case(K19)
Case(K20)
Case(K21)
Case(K22)
Case(K23)
Case(K24)
Case(K25)
Case(K26)
Case(K27)
Case(K28)
Case(K29)
Case(K30)
Case(K31)
Case(K32)
Case(K33)
Case(K34)
Case(K35)
Case(K36)
Case(K37)
Case(K38)
Case(K39)
Case(K40)
Case(K41)
Case(K42)
Case(K43)
Case(K44)
Case(K45)
Case(K46)
Case(K47)
Case(K48)
Case(K49)
Case(K50)
Case(K51)
Case(K52)
Case(K53)
Case(K54)
Case(K55)
Case(K56)
Case(K57)
Case(K58)
Case(K59)
Case(K60)
Case(K61)
Case(KBAD)
$ev$);
SELECT mln.set_query('builtins', 'Ok(x)');

CREATE TEMP TABLE want AS SELECT 'Ok(K' || k || ')' AS atom FROM generate_series(1, 61) AS k;
CREATE FUNCTION pg_temp.oks() RETURNS SETOF text LANGUAGE sql AS
  $$SELECT array_to_string(literals, ' v ') FROM mln.ground_clauses('builtins') WHERE weight > 0$$;

SELECT mln.ground('builtins', 'cpu');
CREATE TEMP TABLE got_cpu AS SELECT * FROM pg_temp.oks() AS atom;
SELECT set_eq('SELECT atom FROM got_cpu', 'SELECT atom FROM want',
              'cpu (host evaluator): every built-in gives its expected result on its sample');
SELECT mln.ground('builtins', 'sql');
CREATE TEMP TABLE got_sql AS SELECT * FROM pg_temp.oks() AS atom;
SELECT set_eq('SELECT atom FROM got_sql', 'SELECT atom FROM want',
              'sql (generated SQL): every built-in gives its expected result on its sample');
SELECT set_eq('SELECT atom FROM got_sql', 'SELECT atom FROM got_cpu', 'cpu and sql agree on every built-in');
SELECT is((SELECT count(*)::int FROM got_cpu WHERE atom = 'Ok(KBAD)'), 0, 'a wrong expectation holds in neither');

-- power: parsed, evaluated on the host and in SQL.
SELECT lives_ok($$SELECT mln.create_program('pow', $mln$
*N(key, int_)
Big(key)
1 N(k, m), [power(m, 2) > 50 && pow(2, m) >= 256] => Big(k)
$mln$)$$, 'power and pow parse in a rule');
SELECT mln.load_evidence('pow', E'N(A, 3)\nN(B, 8)\nN(C, 9)\n');
SELECT mln.set_query('pow', 'Big(x)');
SELECT mln.ground('pow', 'cpu');
SELECT set_eq($$SELECT array_to_string(literals, ' v ') FROM mln.ground_clauses('pow')$$, ARRAY['Big(B)', 'Big(C)'],
              'power through cpu');
SELECT mln.ground('pow', 'sql');
SELECT set_eq($$SELECT array_to_string(literals, ' v ') FROM mln.ground_clauses('pow')$$, ARRAY['Big(B)', 'Big(C)'],
              'power through sql');

-- Errors: arity when the program is created; PostgreSQL's domain errors on both paths.
SELECT throws_like($$SELECT mln.create_program('bad_arity', $mln$
P(key)
1 P(k), [power(2) > 1] => P(k)
$mln$)$$, '%power takes 2 arguments, not 1%', 'a built-in with the wrong number of arguments is refused');
SELECT mln.create_program('div0', $mln$
*N(key, int_)
Q(key)
1 N(k, m), [divide(1, m - 3) > 0] => Q(k)
$mln$);
SELECT mln.load_evidence('div0', E'N(A, 3)\n');
SELECT mln.set_query('div0', 'Q(x)');
SELECT throws_like($$SELECT mln.ground('div0', 'cpu')$$, '%division by zero%', 'division by zero is an error on the host');
SELECT throws_like($$SELECT mln.ground('div0', 'sql')$$, '%division by zero%', 'and in SQL');

SELECT * FROM finish();
ROLLBACK;
