-- mln.explain_ground: a plan per clause and an estimate before grounding.
BEGIN;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_mln;
SELECT plan(6);
SELECT mln.create_program('ex', $p$
*Friends(person, person)
Smokes(person)
Cancer(person)
0.5  !Smokes(a1) v Cancer(a1)
0.4  !Friends(a1,a2) v !Smokes(a1) v Smokes(a2)
$p$);
SELECT mln.load_evidence('ex', E'Friends(Anna, Bob)\nFriends(Anna, Edward)\nSmokes(Anna)\nSmokes(Edward)');
SELECT is((SELECT count(*)::int FROM mln.explain_ground('ex')), 2, 'one row per clause');
SELECT alike((SELECT plan FROM mln.explain_ground('ex') WHERE clause = 1), '1. scan !Smokes%',
            'negative literals are scanned first');
SELECT alike((SELECT plan FROM mln.explain_ground('ex') WHERE clause = 2), '%join !Smokes on (a1)%',
            'joins name their variables');
SELECT ok((SELECT bool_and(estimated_groundings > 0) FROM mln.explain_ground('ex')), 'estimates are positive');
SELECT ok((SELECT estimated_groundings FROM mln.explain_ground('ex') WHERE clause = 2) <= 27,
          'an estimate never exceeds the product of the variables'' domains');
SELECT throws_ok($$SELECT * FROM mln.explain_ground('nope')$$, '42704', NULL, 'unknown program');
SELECT * FROM finish();
ROLLBACK;
