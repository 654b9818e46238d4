-- Evidence loading, queries, binding, grounding (counts equal Tuffy's).
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_mln;
SELECT plan(49);

SELECT mln.create_program('smoke', $p$
*Friends(person, person)
Smokes(person)
Cancer(person)
0.5  !Smokes(a1) v Cancer(a1)
0.4  !Friends(a1,a2) v !Smokes(a1) v Smokes(a2)
0.4  !Friends(a1,a2) v !Smokes(a2) v Smokes(a1)
$p$);

SELECT is(mln.load_evidence('smoke', $e$
Friends(Anna, Bob)
Friends(Anna, Edward)
Friends(Anna, Frank)
Friends(Edward, Frank)
Friends(Gary, Helen)
!Friends(Gary, Frank)
Smokes(Anna)
Smokes(Edward)
$e$), 8::bigint, 'load_evidence returns the atom count');
SELECT is((SELECT count(*)::int FROM mln_smoke."Friends"), 6, 'Friends rows stored');
SELECT is((SELECT count(*)::int FROM mln_smoke."Friends" WHERE NOT truth), 1, 'negative evidence stored as false');
SELECT is((SELECT count(*)::int FROM mln_smoke._symbols), 6, 'six constants interned');

-- A load of 10,000 new names or more, at least as many as the dictionary
-- holds, writes the names and then rebuilds the dictionary's indexes
-- (SymbolTable::flush); a failed load leaves the dictionary as it was.
SELECT mln.create_program('many', E'Person(person)\n1 Person(x)');
SELECT is(mln.load_evidence('many', (SELECT string_agg(format('Person(P%s)', g), E'\n') FROM generate_series(1, 12000) g)),
          12000::bigint, 'a load of 12,000 new names');
SELECT throws_like($$SELECT mln.load_evidence('many', (SELECT string_agg(format('Person(Q%s)', g), E'\n')
                                                       FROM generate_series(1, 30000) g) || E'\nPerson(A, B)')$$,
                   '%line 30001%', 'a failed load of 30,000 new names names its line');
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;
SELECT is((SELECT count(*)::int FROM generate_series(1, 12000) g JOIN mln_many._symbols s ON s.name = 'P' || g), 12000,
          'the rebuilt name index finds every name');
SELECT is((SELECT count(*)::int FROM mln_many._symbols WHERE name LIKE 'Q%'), 0, 'and none of the failed load''s');
SELECT mln.load_evidence('many', (SELECT string_agg(format('Person(P%s)', g), E'\n') FROM generate_series(11001, 25000) g));
SELECT mln.load_evidence('many', 'Person(Z)');
SELECT is((SELECT count(*)::int FROM generate_series(1, 25000) g JOIN mln_many._symbols s ON s.name = 'P' || g), 25000,
          'a second large load adds only the new names, and the index finds them');
SELECT is((SELECT s.id FROM mln_many._symbols s WHERE s.name = 'Z'), 25001,
          'a small load adds its name to the index: ids in first-seen order');
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_hashjoin;
RESET enable_mergejoin;
SELECT mln.drop_program('many');

-- The network's clauses are stored in page-long chunk rows kept inline (no
-- TOAST rows), their arrays readable whatever their alignment padding (a
-- chunk of an odd number of literals and offsets pads its weights to 8).
SELECT mln.create_program('chunks', E'*Person(person)\nLikes(person)\nHappy(person)\n'
                                    '1 !Person(x) v Likes(x)\n2 !Likes(x) v Happy(x)\n0.5 Happy(x)');
SELECT mln.load_evidence('chunks', (SELECT string_agg(format('Person(P%s)', g), E'\n') FROM generate_series(1, 2000) g));
SELECT mln.set_query('chunks', 'Happy(x)');
SELECT is((mln.ground('chunks', 'cpu')->>'clauses')::int, 6000, 'a network of 6,000 clauses');
SELECT is((SELECT sum(length(wcode) + array_length(lits, 1) + array_length(offsets, 1))::int
           FROM mln_chunks._clauses) - (SELECT count(*)::int FROM mln_chunks._clauses), 6000 + 8000 + 6000,
          'every chunk row reads back: 6,000 weight codes, 8,000 literals, 6,000 offsets past each chunk''s first');
SELECT is((SELECT array_agg(DISTINCT w ORDER BY w) FROM mln_chunks._clauses, unnest(weights) AS w), ARRAY[0.5, 1, 2]::float8[],
          'each chunk''s weights are a dictionary of its distinct weights');
SELECT is((SELECT array_agg(k ORDER BY k) FROM (SELECT weight || ':' || count(*) AS k FROM mln.ground_clauses('chunks') GROUP BY weight) g),
          ARRAY['0.5:2000', '1:2000', '2:2000'], 'decoded: each weight on its 2,000 clauses');
SELECT cmp_ok((SELECT count(*) FROM mln_chunks._clauses WHERE (array_length(offsets, 1) + array_length(lits, 1)) % 2 = 0),
              '>', 0::bigint, 'in several chunk rows, some with their weights padded');
SELECT is((SELECT pg_relation_size(reltoastrelid) FROM pg_class WHERE oid = 'mln_chunks._clauses'::regclass), 0::bigint,
          'stored inline: no TOAST rows');
-- A table in the format before 0.12.0 (a weight per clause, no codes) reads back the same clauses.
CREATE TEMP TABLE chunks_before AS SELECT * FROM mln.ground_clauses('chunks');
UPDATE mln_chunks._clauses SET weights = ARRAY(SELECT weights[get_byte(wcode, i) + 1] FROM generate_series(0, length(wcode) - 1) AS i ORDER BY i);
ALTER TABLE mln_chunks._clauses DROP COLUMN wcode;
SELECT results_eq('SELECT * FROM mln.ground_clauses(''chunks'')', 'SELECT * FROM chunks_before',
                  'the format before 0.12.0 reads back the same clauses');
SELECT mln.drop_program('chunks');
-- A clause longer than a page is a chunk of its own, moved out of line by the toaster.
SELECT mln.create_program('long', E'Q(t, u)\n*P(t)\n*D(u)\n1 !P(x) v EXIST y Q(x,y)');
SELECT mln.load_evidence('long', E'P(A)\nP(B)\n' || (SELECT string_agg(format('D(U%s)', g), E'\n') FROM generate_series(1, 3000) g));
SELECT mln.set_query('long', 'Q(x,y)');
SELECT is(mln.ground('long', 'cpu')->'clauses', '2'::jsonb, 'two clauses of 3,000 literals');
SELECT is((SELECT array_agg(array_length(lits, 1) ORDER BY chunk) FROM mln_long._clauses), ARRAY[3000, 3000],
          'each in a chunk of its own, read back whole');
SELECT cmp_ok((SELECT pg_relation_size(reltoastrelid) FROM pg_class WHERE oid = 'mln_long._clauses'::regclass), '>', 0::bigint,
              'out of line');
SELECT mln.drop_program('long');

-- A user's index on a predicate table is kept up to date by later loads (multi-insert writes
-- the heap; the loader adds the index entries, as COPY does).
CREATE INDEX friends_by_first ON mln_smoke."Friends" (person1);
SELECT mln.load_evidence('smoke', 'Friends(Helen, Ivan)');
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SELECT is((SELECT count(*)::int FROM mln_smoke."Friends" WHERE person1 = (SELECT id FROM mln_smoke._symbols WHERE name = 'Helen')),
          1, 'an index scan finds the row loaded after the index was made');
RESET enable_seqscan;
RESET enable_bitmapscan;
DELETE FROM mln_smoke."Friends" WHERE person1 = (SELECT id FROM mln_smoke._symbols WHERE name = 'Helen');
DROP INDEX mln_smoke.friends_by_first;

-- Evidence errors name the line; nothing is loaded from a failed call.
SELECT throws_like($$SELECT mln.load_evidence('smoke', E'Smokes(Bob)\nSmoke(Gary)')$$, '%line 2%',
                   'evidence for an undeclared predicate names its line');
SELECT throws_ok($$SELECT mln.load_evidence('smoke', E'Smokes(Bob)\nSmokes(Gary)\nSmokes(A, B)')$$, '22023', NULL,
                 'arity mismatch in evidence');
SELECT throws_ok($$SELECT mln.load_evidence('smoke', '1.5 Smokes(Bob)')$$, '22023', NULL, 'prior outside [0,1]');
SELECT throws_ok($$SELECT mln.load_evidence('nosuch', 'Smokes(Bob)')$$, '42704', NULL, 'unknown program');
SELECT is((SELECT count(*)::int FROM mln_smoke."Smokes"), 2, 'failed loads left no rows');

-- Queries.
SELECT throws_ok($$SELECT mln.ground('smoke', 'cpu')$$, '55000', NULL, 'grounding without a query is an error');
SELECT throws_ok($$SELECT mln.set_query('smoke', 'Canser(x)')$$, '42704', NULL, 'query on an unknown predicate');
SELECT lives_ok($$SELECT mln.set_query('smoke', 'Cancer(x)')$$, 'set_query');

-- Grounding: Tuffy's counts for smoke (6 atoms, 6 clauses).
SELECT is((mln.ground('smoke', 'cpu')->>'atoms')::int, 6, 'smoke grounds to 6 atoms');
SELECT is((SELECT (ground_stats->>'clauses')::int FROM mln.programs WHERE name = 'smoke'), 6, 'and 6 clauses');
SELECT set_eq($$SELECT predicate || '(' || array_to_string(arguments, ',') || ')' FROM mln.ground_atoms('smoke')$$,
              ARRAY['Cancer(Anna)', 'Cancer(Bob)', 'Cancer(Edward)', 'Cancer(Frank)', 'Smokes(Bob)', 'Smokes(Frank)'],
              'the active atoms are those of Tuffy''s run');
SELECT set_eq($$SELECT array_to_string(literals, ' v ') || ' : ' || round(weight::numeric, 2)
                  FROM mln.ground_clauses('smoke')$$,
              ARRAY['Cancer(Anna) : 0.50', 'Cancer(Edward) : 0.50', 'Smokes(Bob) : 0.40', 'Smokes(Frank) : 0.80',
                    '!Smokes(Bob) v Cancer(Bob) : 0.50', '!Smokes(Frank) v Cancer(Frank) : 0.50'],
              'the consolidated clauses are those of Tuffy''s run');
SELECT is((SELECT count(*)::int FROM mln.ground_atoms('smoke') WHERE is_query), 4, 'four active query atoms');
-- The worker reads the chunk arrays as raw little-endian bytes (mln._array_le).
SELECT is((SELECT (SELECT array_agg(get_byte(b, 4 * i) | (get_byte(b, 4 * i + 1) << 8) | (get_byte(b, 4 * i + 2) << 16)
                                    | (get_byte(b, 4 * i + 3) << 24) ORDER BY i)
                     FROM generate_series(0, length(b) / 4 - 1) i)
             FROM (SELECT mln._array_le(lits) AS b FROM mln_smoke._clauses WHERE chunk = 0) c),
          (SELECT lits FROM mln_smoke._clauses WHERE chunk = 0),
          '_array_le: the literals of a clause chunk decode back to the array');
SELECT is(mln._array_le(ARRAY[1, -2]), '\x01000000feffffff'::bytea, '_array_le: int4 little-endian bytes');
SELECT is(mln._array_le(ARRAY[1.5::float8]), '\x000000000000f83f'::bytea, '_array_le: float8 little-endian bytes');
SELECT throws_ok($$SELECT mln._array_le(ARRAY[1, NULL])$$, '22004', NULL, '_array_le refuses NULL elements');
SELECT throws_ok($$SELECT mln._array_le(ARRAY['a'])$$, '42804', NULL, '_array_le takes only int4[] and float8[]');
SELECT ok((SELECT grounded_at IS NOT NULL FROM mln.programs WHERE name = 'smoke'), 'grounded_at is set');

-- New evidence makes the network stale.
SELECT mln.load_evidence('smoke', 'Smokes(Gary)');
SELECT ok((SELECT grounded_at IS NULL FROM mln.programs WHERE name = 'smoke'), 'new evidence marks the network stale');
SELECT throws_ok($$SELECT mln.infer('smoke')$$, '55000', NULL, 'infer on a stale network is refused');

-- Binding a predicate to an existing table: same network as loaded evidence.
SELECT mln.create_program('bound', $p$
*Friends(person, person)
Smokes(person)
Cancer(person)
0.5  !Smokes(a1) v Cancer(a1)
0.4  !Friends(a1,a2) v !Smokes(a1) v Smokes(a2)
0.4  !Friends(a1,a2) v !Smokes(a2) v Smokes(a1)
$p$);
CREATE TABLE people_friends(a text, b text, known boolean);
INSERT INTO people_friends VALUES ('Anna','Bob',true), ('Anna','Edward',true), ('Anna','Frank',true),
  ('Edward','Frank',true), ('Gary','Helen',true), ('Gary','Frank',false);
CREATE VIEW smokers AS SELECT * FROM (VALUES ('Anna'), ('Edward')) v(who);
SELECT throws_ok($$SELECT mln.bind_predicate('bound', 'Friends', 'people_friends', ARRAY['a', 'nope'])$$, '42703', NULL,
                 'binding a missing column is an error');
SELECT throws_ok($$SELECT mln.bind_predicate('bound', 'Friends', 'people_friends', ARRAY['a'])$$, '22023', NULL,
                 'binding with the wrong number of columns is an error');
SELECT throws_ok($$SELECT mln.bind_predicate('bound', 'Nope', 'people_friends', ARRAY['a'])$$, '42704', NULL,
                 'binding an undeclared predicate is an error');
SELECT lives_ok($$SELECT mln.bind_predicate('bound', 'Friends', 'people_friends', ARRAY['a', 'b'], 'known')$$,
                'bind Friends to a table with a truth column');
SELECT lives_ok($$SELECT mln.bind_predicate('bound', 'Smokes', 'smokers', ARRAY['who'])$$, 'bind Smokes to a view');
SELECT mln.set_query('bound', 'Cancer(x)');
SELECT is((SELECT count(*)::int FROM mln_bound."Friends"), 0, 'nothing is copied at bind time');
SELECT is(mln.ground('bound', 'cpu')->'clauses', '6'::jsonb, 'bound evidence grounds to the same 6 clauses');

SELECT * FROM finish();
ROLLBACK;
