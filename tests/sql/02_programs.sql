-- Programs: create, catalog views, errors, transactional failure, drop.
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_mln;
SELECT plan(26);

SELECT lives_ok($$SELECT mln.create_program('smoke', $p$
*Friends(person, person)
Smokes(person)
Cancer(person)
0.5  !Smokes(a1) v Cancer(a1)
0.4  !Friends(a1,a2) v !Smokes(a1) v Smokes(a2)
0.4  !Friends(a1,a2) v !Smokes(a2) v Smokes(a1)
$p$)$$, 'create_program accepts the smoke program');

SELECT is((SELECT count(*)::int FROM mln.program_predicates WHERE program = 'smoke'), 3, 'three predicates');
SELECT is((SELECT count(*)::int FROM mln.program_clauses WHERE program = 'smoke'), 3, 'three clauses');
SELECT is((SELECT clause_form FROM mln.program_clauses WHERE program = 'smoke' AND clause_no = 1),
          '0.5000 !Smokes(a1) v Cancer(a1)', 'clause form with weight');
SELECT ok((SELECT closed_world FROM mln.program_predicates WHERE program = 'smoke' AND name = 'Friends'),
          'Friends is closed-world');
SELECT has_schema('mln_smoke', 'the program has its own schema');
SELECT has_table('mln_smoke', 'Smokes', 'one evidence table per predicate');
SELECT has_table('mln_smoke', '_symbols', 'a symbol dictionary');

-- Errors: each has its errcode and names line and column.
SELECT throws_ok($$SELECT mln.create_program('smoke', 'P(x)')$$, '42710', NULL, 'duplicate program name');
SELECT throws_ok($$SELECT mln.create_program('bad name', 'P(x)')$$, '42602', NULL, 'invalid program name');
SELECT throws_like($$SELECT mln.create_program('p1', E'P(t)\n1 P(x) v ^ Q(x)')$$, '%line 2%column%',
                   'a syntax error names line and column');
SELECT throws_ok($$SELECT mln.create_program('p2', E'P(t)\n1 Q(x)')$$, '42704', NULL,
                 'unknown predicate is undefined_object');
SELECT throws_ok($$SELECT mln.create_program('p3', E'P(t)\n1 P(x, y)')$$, '22023', NULL, 'arity mismatch');
SELECT throws_ok($$SELECT mln.create_program('p4', E'P(t)\nP(t)\n1 P(x)')$$, '42710', NULL,
                 'duplicate declaration');
SELECT throws_ok($$SELECT mln.create_program('p5', '')$$, '22023', NULL, 'empty program');
SELECT throws_ok($$SELECT mln.create_program('p6', E'P(int_)\n1 P(Anna)')$$, '42804', NULL, 'type clash');

-- A failed call leaves nothing behind.
SELECT is((SELECT count(*)::int FROM mln.programs WHERE name LIKE 'p_'), 0, 'failed creates leave no catalog rows');
SELECT hasnt_schema('mln_p1', 'failed creates leave no schema');

-- An existing schema of the user's is never taken over.
CREATE SCHEMA mln_mine;
CREATE TABLE mln_mine.keep(x int);
SELECT throws_ok($$SELECT mln.create_program('mine', 'P(t)
1 P(x)')$$, '42P06', NULL, 'a program never reuses an existing schema');
SELECT has_table('mln_mine', 'keep', 'the user''s schema is untouched');

-- Names reach SQL quoted: odd predicate names are safe.
SELECT lives_ok($$SELECT mln.create_program('Quoted_1', E'Robert_Tables(t)\n1 Robert_Tables(x)')$$,
                'predicate names are quoted identifiers');
SELECT has_table('mln_quoted_1', 'Robert_Tables', 'mixed-case table name kept');

-- A program the parser warns about (here: declarations only) is created; the warning is raised.
SELECT lives_ok($$SELECT mln.create_program('decls', E'*Friends(person, person)\nSmokes(person)\n')$$,
                'a program with parser warnings is created');
SELECT has_table('mln_decls', 'Smokes', 'its predicate tables exist');

SELECT lives_ok($$SELECT mln.drop_program('smoke')$$, 'drop_program');
SELECT hasnt_schema('mln_smoke', 'dropping removes the schema');

SELECT * FROM finish();
ROLLBACK;
