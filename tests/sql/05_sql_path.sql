-- The 'sql' grounding path (plain SQL through SPI, Tuffy's way) must give the
-- same ground network as the operator path ('cpu'): smoke, class, and random
-- small programs with negative weights, hard clauses, closed-world predicates,
-- soft evidence and built-in conditions.  Networks are compared as sets of
-- (sorted readable literals, weight rounded to 6 decimals), which is
-- independent of atom numbering.
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_mln;
SELECT plan(34);

-- The network of a grounded program as (readable clause, weight) rows.  Reads
-- the stored chunks directly (one unnest per chunk, hash joins), so that
-- class's 73,265 clauses decode in a second.
CREATE FUNCTION pg_temp.net(p text) RETURNS TABLE (clause text, weight numeric) LANGUAGE plpgsql AS $f$
DECLARE s text := (SELECT schema_name FROM mln.programs WHERE name = p);
BEGIN
  RETURN QUERY EXECUTE format($q$
    WITH atom AS MATERIALIZED (
      SELECT a.id, pr.name || '(' || array_to_string(ARRAY(
               SELECT sy.name FROM unnest(a.args) WITH ORDINALITY AS u(v, o) JOIN %1$I._symbols sy ON sy.id = u.v
                ORDER BY u.o), ',') || ')' AS txt
        FROM %1$I._atoms a JOIN mln.predicates pr ON pr.program = $1 AND pr.idx = a.pred),
    cls AS MATERIALIZED (SELECT r.clause, r.weight AS w, u.v FROM mln._clause_rows(%1$L) r, unnest(r.lits) AS u(v))
    SELECT string_agg(CASE WHEN cls.v < 0 THEN '!' ELSE '' END || atom.txt, ' v '
                      ORDER BY CASE WHEN cls.v < 0 THEN '!' ELSE '' END || atom.txt),
           round(cls.w::numeric, 6)
      FROM cls JOIN atom ON atom.id = abs(cls.v)
     GROUP BY cls.clause, cls.w$q$, s) USING p;
END $f$;

-- Grounds program p through device d and returns its network as text rows.
CREATE FUNCTION pg_temp.ground_net(p text, d text) RETURNS TABLE (clause text, weight numeric) LANGUAGE sql AS $f$
  SELECT mln.ground(p, d);
  SELECT * FROM pg_temp.net(p);
$f$;

-------------------------------------------------------------------------------
-- smoke (reference §5.9)
-------------------------------------------------------------------------------
SELECT mln.create_program('smoke_sql', pg_read_file(:'datasets' || '/smoke/prog.mln'));
SELECT mln.load_evidence('smoke_sql', pg_read_file(:'datasets' || '/smoke/evidence.db'));
SELECT mln.set_query('smoke_sql', pg_read_file(:'datasets' || '/smoke/query.db'));
SELECT mln.create_program('smoke_cpu', pg_read_file(:'datasets' || '/smoke/prog.mln'));
SELECT mln.load_evidence('smoke_cpu', pg_read_file(:'datasets' || '/smoke/evidence.db'));
SELECT mln.set_query('smoke_cpu', pg_read_file(:'datasets' || '/smoke/query.db'));

CREATE TEMP TABLE smoke_stats AS SELECT mln.ground('smoke_sql', 'sql') AS s;
SELECT is((SELECT s->>'device' FROM smoke_stats), 'sql', 'the sql path reports device sql');
SELECT is((SELECT (s->>'atoms')::int FROM smoke_stats), 6, 'smoke through sql: 6 atoms');
SELECT is((SELECT (s->>'clauses')::int FROM smoke_stats), 6, 'smoke through sql: 6 clauses');
SELECT is((SELECT (s->>'closure_rounds')::int FROM smoke_stats), 3, 'smoke through sql: 3 closure rounds (§5.9)');
SELECT set_eq($$SELECT predicate || '(' || array_to_string(arguments, ',') || ')' FROM mln.ground_atoms('smoke_sql')$$,
              ARRAY['Cancer(Anna)', 'Cancer(Bob)', 'Cancer(Edward)', 'Cancer(Frank)', 'Smokes(Bob)', 'Smokes(Frank)'],
              'smoke through sql: the active atoms of Tuffy''s run');
SELECT set_eq($$SELECT array_to_string(literals, ' v ') || ' : ' || round(weight::numeric, 2)
                  FROM mln.ground_clauses('smoke_sql')$$,
              ARRAY['Cancer(Anna) : 0.50', 'Cancer(Edward) : 0.50', 'Smokes(Bob) : 0.40', 'Smokes(Frank) : 0.80',
                    '!Smokes(Bob) v Cancer(Bob) : 0.50', '!Smokes(Frank) v Cancer(Frank) : 0.50'],
              'smoke through sql: the consolidated clauses of Tuffy''s run');
SELECT is((SELECT count(*)::int FROM mln.ground_atoms('smoke_sql') WHERE is_query), 4, 'smoke through sql: 4 query atoms');
SELECT mln.ground('smoke_cpu', 'cpu');
SELECT set_eq($$SELECT array_to_string(literals, ' v ') || ' : ' || round(weight::numeric, 6) FROM mln.ground_clauses('smoke_sql')$$,
              $$SELECT array_to_string(literals, ' v ') || ' : ' || round(weight::numeric, 6) FROM mln.ground_clauses('smoke_cpu')$$,
              'smoke: sql and cpu give the same clauses (mln.ground_clauses)');
SELECT is((SELECT count(*)::int FROM pg_class WHERE relnamespace = pg_my_temp_schema() AND relname LIKE 'mln\_sql\_%'), 0,
          'the sql path leaves no temp tables behind');
SELECT lives_ok($$SELECT mln.ground('smoke_sql', 'sql')$$, 'grounding twice in one transaction works');

-------------------------------------------------------------------------------
-- class: Tuffy's counts, and the same network as cpu
-------------------------------------------------------------------------------
SELECT mln.create_program('class_sql', pg_read_file(:'datasets' || '/class/prog.mln'));
SELECT mln.load_evidence('class_sql', pg_read_file(:'datasets' || '/class/evidence.db'));
SELECT mln.set_query('class_sql', pg_read_file(:'datasets' || '/class/query.db'));
SELECT mln.create_program('class_cpu', pg_read_file(:'datasets' || '/class/prog.mln'));
SELECT mln.load_evidence('class_cpu', pg_read_file(:'datasets' || '/class/evidence.db'));
SELECT mln.set_query('class_cpu', pg_read_file(:'datasets' || '/class/query.db'));
CREATE TEMP TABLE class_net_sql AS SELECT * FROM pg_temp.ground_net('class_sql', 'sql');
CREATE TEMP TABLE class_net_cpu AS SELECT * FROM pg_temp.ground_net('class_cpu', 'cpu');
SELECT is((SELECT (ground_stats->>'atoms')::int FROM mln.programs WHERE name = 'class_sql'), 9650,
          'class through sql: 9,650 atoms (Tuffy''s count)');
SELECT is((SELECT (ground_stats->>'clauses')::int FROM mln.programs WHERE name = 'class_sql'), 73265,
          'class through sql: 73,265 clauses (Tuffy''s count)');
SELECT is((SELECT count(*)::int FROM class_net_sql), 73265, 'class: every stored sql clause decodes');
SELECT is_empty($$SELECT * FROM class_net_sql EXCEPT ALL SELECT * FROM class_net_cpu$$,
                'class: every sql clause is a cpu clause');
SELECT is_empty($$SELECT * FROM class_net_cpu EXCEPT ALL SELECT * FROM class_net_sql$$,
                'class: every cpu clause is an sql clause');
SELECT set_eq($$SELECT id, predicate, arguments, evidence, prior, is_query FROM mln.ground_atoms('class_sql')$$,
              $$SELECT id, predicate, arguments, evidence, prior, is_query FROM mln.ground_atoms('class_cpu')$$,
              'class: the same atoms (even the same atom ids)');

-------------------------------------------------------------------------------
-- hand-written features: negative weights, hard clauses, soft evidence, conditions
-------------------------------------------------------------------------------
SELECT mln.create_program('feat_sql', $p$
*Knows(person, person)
Good(person)
Likes(person, person)
*Level(person, lvl)
High(person)
-1.5  Likes(a, b) v !Knows(a, b)
2  !Good(a) v Likes(a, b) v !Knows(a, b)
Good(a) v !Likes(b, a).
0.7  Knows(a, b), [a != b] => Likes(a, b)
-0.3  Knows(x, y), [x = "Cid"] => !Good(x)
1.2  Likes(a, b) v Likes(b, a) v [a = b]
0.4  Level(a, l), [l > 2] => High(a)
$p$);
CREATE TEMP TABLE feat_evidence AS SELECT $e$
Knows(Ann, Bob)
Knows(Bob, Cid)
Knows(Cid, Ann)
Knows(Cid, Cid)
0.8 Good(Ann)
0.3 !Good(Cid)
!Likes(Bob, Cid)
Level(Ann, 3)
Level(Bob, 1)
Level(Cid, 2.5)
$e$::text AS t;
SELECT mln.load_evidence('feat_sql', (SELECT t FROM feat_evidence));
SELECT mln.set_query('feat_sql', 'Likes(x, y), High(x)');
SELECT mln.create_program('feat_cpu', (SELECT source FROM mln.programs WHERE name = 'feat_sql'));
SELECT mln.load_evidence('feat_cpu', (SELECT t FROM feat_evidence));
SELECT mln.set_query('feat_cpu', 'Likes(x, y), High(x)');
SELECT set_eq($$SELECT * FROM pg_temp.ground_net('feat_sql', 'sql')$$, $$SELECT * FROM pg_temp.ground_net('feat_cpu', 'cpu')$$,
              'negative weights, hard clauses, soft evidence, conditions: sql = cpu');
SELECT ok((SELECT count(*) > 0 FROM pg_temp.net('feat_sql') WHERE weight >= 52000000), 'the feature program has hard clauses');
SELECT ok((SELECT count(*) > 0 FROM pg_temp.net('feat_sql') WHERE weight < 0), 'and negative weights');
SELECT ok((SELECT count(*) > 0 FROM mln.ground_atoms('feat_sql') WHERE prior IS NOT NULL), 'and soft-evidence atoms');
-- [l > 2] compares symbols (lvl is not int_) as numbers, computed on the
-- host from their text: 3 and 2.5 pass, 1 does not.
SELECT set_eq($$SELECT clause FROM pg_temp.net('feat_cpu') WHERE weight = 0.4$$, ARRAY['High(Ann)', 'High(Cid)'],
              'a condition on symbol text reads the names (cpu)');

-- Closed world through the closed_world argument, and activate_all.
SELECT is((SELECT mln.ground('feat_sql', 'sql', false, ARRAY['Good'])->'clauses'),
          (SELECT mln.ground('feat_cpu', 'cpu', false, ARRAY['Good'])->'clauses'), 'closed_world => Good: same clause count');
SELECT set_eq($$SELECT * FROM pg_temp.net('feat_sql')$$, $$SELECT * FROM pg_temp.net('feat_cpu')$$,
              'closed_world => Good: sql = cpu');
SELECT mln.ground('feat_sql', 'sql', true);
SELECT mln.ground('feat_cpu', 'cpu', true);
SELECT set_eq($$SELECT * FROM pg_temp.net('feat_sql')$$, $$SELECT * FROM pg_temp.net('feat_cpu')$$,
              'activate_all: sql = cpu');

-------------------------------------------------------------------------------
-- random small programs (fixed seeds)
-------------------------------------------------------------------------------
-- A random program over P(t), *Q(t,t), R(t,t), S(t): clauses of 1-3 literals
-- with random signs, weights in [-2, 2] or hard, sometimes a condition; random
-- hard and soft evidence.
CREATE FUNCTION pg_temp.random_program(seed float8, OUT prog text, OUT ev text) LANGUAGE plpgsql AS $f$
DECLARE
  preds text[] := ARRAY['P', 'Q', 'R', 'S'];
  arity int[] := ARRAY[1, 2, 2, 1];
  consts text[] := ARRAY['A', 'B', 'C', 'D'];
  vars text[] := ARRAY['x', 'y', 'z'];
  lits text[]; lit text; p int; n int; k int; w float8; c text;
BEGIN
  PERFORM setseed(seed);
  prog := E'P(t)\n*Q(t, t)\nR(t, t)\nS(t)\n';
  FOR i IN 1..6 LOOP
    lits := '{}';
    n := 1 + floor(random() * 3)::int;
    FOR j IN 1..n LOOP
      p := 1 + floor(random() * 4)::int;
      lit := CASE WHEN random() < 0.5 THEN '!' ELSE '' END || preds[p] || '(';
      FOR a IN 1..arity[p] LOOP
        lit := lit || CASE WHEN a > 1 THEN ', ' ELSE '' END ||
               CASE WHEN random() < 0.15 THEN consts[1 + floor(random() * 4)::int] ELSE vars[1 + floor(random() * 3)::int] END;
      END LOOP;
      lits := lits || (lit || ')');
    END LOOP;
    c := array_to_string(lits, ' v ');
    IF random() < 0.2 AND c ~ 'x' AND c ~ 'y' THEN c := c || ' v [x = y]'; END IF;
    IF random() < 0.15 THEN
      prog := prog || c || E'.\n';
    ELSE
      w := round((random() * 4 - 2)::numeric, 2);
      IF w = 0 THEN w := 0.5; END IF;
      prog := prog || w || ' ' || c || E'\n';
    END IF;
  END LOOP;
  ev := '';
  FOR i IN 1..10 LOOP
    p := 1 + floor(random() * 4)::int;
    lit := preds[p] || '(' || consts[1 + floor(random() * 4)::int] ||
           CASE WHEN arity[p] = 2 THEN ', ' || consts[1 + floor(random() * 4)::int] ELSE '' END || ')';
    k := floor(random() * 3)::int;
    ev := ev || CASE k WHEN 0 THEN lit WHEN 1 THEN '!' || lit ELSE round(random()::numeric * 0.8 + 0.1, 2) || ' ' || lit END || E'\n';
  END LOOP;
END $f$;

-- Grounds one random program through both paths; true when the networks agree.
CREATE FUNCTION pg_temp.random_agrees(seed float8) RETURNS boolean LANGUAGE plpgsql AS $f$
DECLARE r record; diff int;
BEGIN
  SELECT * INTO r FROM pg_temp.random_program(seed);
  PERFORM mln.drop_program(x) FROM unnest(ARRAY['rnd_sql', 'rnd_cpu']) x WHERE EXISTS (SELECT 1 FROM mln.programs WHERE name = x);
  PERFORM mln.create_program('rnd_sql', r.prog);
  PERFORM mln.create_program('rnd_cpu', r.prog);
  PERFORM mln.load_evidence('rnd_sql', r.ev);
  PERFORM mln.load_evidence('rnd_cpu', r.ev);
  PERFORM mln.set_query('rnd_sql', 'P(x), R(x, y)');
  PERFORM mln.set_query('rnd_cpu', 'P(x), R(x, y)');
  PERFORM mln.ground('rnd_sql', 'sql');
  PERFORM mln.ground('rnd_cpu', 'cpu');
  SELECT count(*) INTO diff FROM ((SELECT * FROM pg_temp.net('rnd_sql') EXCEPT ALL SELECT * FROM pg_temp.net('rnd_cpu'))
                                  UNION ALL (SELECT * FROM pg_temp.net('rnd_cpu') EXCEPT ALL SELECT * FROM pg_temp.net('rnd_sql'))) d;
  IF diff > 0 THEN RAISE WARNING 'seed %: % differing clauses in program %', seed, diff, r.prog; END IF;
  RETURN diff = 0 AND (SELECT ground_stats->'atoms' FROM mln.programs WHERE name = 'rnd_sql') =
                      (SELECT ground_stats->'atoms' FROM mln.programs WHERE name = 'rnd_cpu');
END $f$;

SELECT ok(pg_temp.random_agrees(0.11), 'random program (seed 0.11): sql = cpu');
SELECT ok(pg_temp.random_agrees(0.23), 'random program (seed 0.23): sql = cpu');
SELECT ok(pg_temp.random_agrees(0.37), 'random program (seed 0.37): sql = cpu');
SELECT ok(pg_temp.random_agrees(0.41), 'random program (seed 0.41): sql = cpu');
SELECT ok(pg_temp.random_agrees(0.59), 'random program (seed 0.59): sql = cpu');
SELECT ok((SELECT count(*) FROM generate_series(1, 20) AS i WHERE NOT pg_temp.random_agrees(i / 50.0)) = 0,
          '20 more random programs: sql = cpu');

-------------------------------------------------------------------------------
-- EXIST, Datalog and scoping rules, key constraints, embedded weights
-------------------------------------------------------------------------------
-- Grounds one program through both paths; true when the networks agree and are not empty.
CREATE FUNCTION pg_temp.agrees(prog text, ev text, q text) RETURNS boolean LANGUAGE plpgsql AS $f$
DECLARE diff int; n int;
BEGIN
  PERFORM mln.drop_program(x) FROM unnest(ARRAY['x_sql', 'x_cpu']) x WHERE EXISTS (SELECT 1 FROM mln.programs WHERE name = x);
  PERFORM mln.create_program('x_sql', prog);
  PERFORM mln.create_program('x_cpu', prog);
  PERFORM mln.load_evidence('x_sql', ev);
  PERFORM mln.load_evidence('x_cpu', ev);
  PERFORM mln.set_query('x_sql', q);
  PERFORM mln.set_query('x_cpu', q);
  n := (mln.ground('x_sql', 'sql')->>'clauses')::int;
  PERFORM mln.ground('x_cpu', 'cpu');
  SELECT count(*) INTO diff FROM ((SELECT * FROM pg_temp.net('x_sql') EXCEPT ALL SELECT * FROM pg_temp.net('x_cpu'))
                                  UNION ALL (SELECT * FROM pg_temp.net('x_cpu') EXCEPT ALL SELECT * FROM pg_temp.net('x_sql'))) d;
  RETURN diff = 0 AND n > 0;
END $f$;

SELECT ok(pg_temp.agrees($p$
*Knows(person, person)
Good(person)
Likes(person, person)
1.3 EXIST y Likes(x, y) v !Good(x)
-0.8 EXIST y Likes(x, y) v Good(x)
0.5 !Knows(a, b) v Likes(a, b)
$p$, E'Knows(Ann, Bob)\nKnows(Bob, Cid)\nKnows(Cid, Ann)\nGood(Ann)\n0.6 Good(Bob)\nLikes(Bob, Ann)\n!Likes(Cid, Ann)',
  'Likes(x, y), Good(x)'), 'EXIST clauses (positive and negative weights): sql = cpu');
SELECT ok(pg_temp.agrees($p$
*Knows(person, person)
Good(person)
Likes(person, person)
Friend(person, person)
Friend(a, b) :- Knows(a, b), Good(a).
Likes(a, b) := Knows(b, a).
1 !Friend(a, b) v Likes(a, b)
-0.5 Good(a) v !Likes(a, b)
$p$, E'Knows(Ann, Bob)\nKnows(Bob, Cid)\nKnows(Cid, Ann)\nGood(Ann)\n0.6 Good(Bob)', 'Likes(x, y), Good(x)'),
  'Datalog and scoping rules: sql = cpu');
SELECT ok(pg_temp.agrees($p$
Cat(paper, cat!)
*Ref(paper, paper)
1 !Ref(a, b) v !Cat(a, c) v Cat(b, c)
0.3 Cat(a, Db)
0.2 Cat(a, Ai)
$p$, E'Ref(P1, P2)\nRef(P2, P3)\nCat(P1, Db)\nCat(P3, Ai)\nCat(P4, Ai)', 'Cat(x, y)'), 'key constraints: sql = cpu');
SELECT ok(pg_temp.agrees($p$
Val(thing, float_)
Hi(thing)
w: Val(t, w) => Hi(t)
$p$, E'Val(A, 1.5)\nVal(B, -2)\nVal(C, 0.25)', 'Hi(x)'), 'embedded weights: sql = cpu');

SELECT * FROM finish();
ROLLBACK;
