-- Live grounding (issue #62): a program grounded again after its tables
-- change moves the session's live state instead of grounding from scratch,
-- and stores the network a grounding from scratch gives.  mln.refresh and
-- CALL mln.solve ground a stale program through mln.ground (the file is
-- one transaction, in which its own changes do not make a program stale,
-- so it calls mln.ground).
-- Two programs over the same views: 'live' (the live path) and 'ref'
-- (mln.live_grounding off: from scratch); after every random change their
-- networks, read as literal texts and weights, are the same.
BEGIN;
SELECT plan(29);
SET mln.regress = on;
SET client_min_messages = warning;

CREATE TABLE records (id text PRIMARY KEY, name text NOT NULL, zip text NOT NULL);
SELECT setseed(0.62);
INSERT INTO records SELECT 'r' || i, (ARRAY['an', 'ber', 'ca'])[1 + (random() * 2)::int] || (ARRAY['x', 'y'])[1 + (random())::int],
                           'z' || (random() * 3)::int FROM generate_series(1, 30) i;
CREATE VIEW sim AS SELECT a.id AS a, b.id AS b FROM records a JOIN records b ON a.name = b.name AND a.id <> b.id;
CREATE VIEW samezip AS SELECT a.id AS a, b.id AS b FROM records a JOIN records b
  ON a.zip = b.zip AND left(a.name, 1) = left(b.name, 1) AND a.id <> b.id;
CREATE FUNCTION pg_temp.er(p text) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
  PERFORM mln.create_program(p, $p$
*Sim(rec, rec)
*SameZip(rec, rec)
Same(rec, rec)
2.0  Sim(a, b) => Same(a, b)
1.0  SameZip(a, b) => Same(a, b)
-1.5 Same(a, b)
3.0  Same(a, b), Same(b, c) => Same(a, c)
Same(a, b) => Same(b, a).
$p$);
  PERFORM mln.bind_predicate(p, 'Sim', 'sim', ARRAY['a', 'b']);
  PERFORM mln.bind_predicate(p, 'SameZip', 'samezip', ARRAY['a', 'b']);
  PERFORM mln.set_query(p, 'Same(x, y)');
END $f$;
SELECT pg_temp.er('live');
SELECT pg_temp.er('ref');

-- A network as text: each clause's weight and its sorted literal texts.
CREATE FUNCTION pg_temp.net(p text) RETURNS text LANGUAGE sql AS $f$
  SELECT coalesce(md5(string_agg(x, E'\n' ORDER BY x)), 'empty') FROM (
    SELECT round(weight::numeric, 9)::text || ':' || (SELECT string_agg(l, ',' ORDER BY l) FROM unnest(literals) l) x
    FROM mln.ground_clauses(p)) c $f$;
CREATE FUNCTION pg_temp.ref() RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
  SET LOCAL mln.live_grounding = off;
  PERFORM mln.ground('ref', 'cpu');
  SET LOCAL mln.live_grounding = on;
END $f$;
-- One random single-row change: an update, an insert or a delete.
CREATE FUNCTION pg_temp.change(k int) RETURNS void LANGUAGE plpgsql AS $f$
DECLARE victim text := (SELECT id FROM records ORDER BY md5(id || k) LIMIT 1);
BEGIN
  CASE k % 3
    WHEN 0 THEN UPDATE records SET name = (ARRAY['an', 'ber', 'ca'])[1 + k % 3] || (ARRAY['x', 'y'])[1 + k % 2] WHERE id = victim;
    WHEN 1 THEN INSERT INTO records VALUES ('n' || k, (ARRAY['an', 'ber'])[1 + k % 2] || 'x', 'z' || k % 4);
    ELSE DELETE FROM records WHERE id = victim;
  END CASE;
END $f$;

SELECT is(mln.ground('live', 'cpu')->'live'->>'why_not', 'a program''s first grounding is from scratch (few KBMC candidates)',
          'a program''s first grounding is from scratch where KBMC''s candidates are few');
SELECT is(mln.ground('live', 'cpu')->'live'->>'built', 'true', 'the next one builds the live state');
SELECT pg_temp.ref();
SELECT is((SELECT ground_stats->'live'->>'used' FROM mln.programs WHERE name = 'ref'), 'false',
          'with mln.live_grounding off the grounding is from scratch');
SELECT is(pg_temp.net('live'), pg_temp.net('ref'), 'the live network equals the one from scratch');

-- Twelve random changes, each grounded live and compared.
CREATE TEMP TABLE steps (k int, used text, built text, same boolean, current boolean);
DO $$
BEGIN
  FOR k IN 1..12 LOOP
    PERFORM pg_temp.change(k);
    PERFORM mln.ground('live', 'cpu');
    PERFORM pg_temp.ref();
    INSERT INTO steps SELECT k, ground_stats->'live'->>'used', ground_stats->'live'->>'built',
                             pg_temp.net('live') = pg_temp.net('ref'), mln.program_state('live') = 'grounded'
      FROM mln.programs WHERE name = 'live';
  END LOOP;
END $$;
SELECT is((SELECT count(*)::int FROM steps WHERE used = 'true' AND built = 'false'), 12,
          'each grounding after a change moves the live state (no build)');
SELECT is((SELECT count(*)::int FROM steps WHERE same), 12, 'after each of 12 random changes: the same network');
SELECT is((SELECT count(*)::int FROM steps WHERE current), 12, 'and the program is current after each one');
SELECT ok((SELECT (ground_stats->'live'->>'tuples_changed')::int > 0 FROM mln.programs WHERE name = 'live'),
          'ground_stats.live counts the changed tuples');

-- A refresh rolled back: the stored network is the old one again, so the
-- state (moved by the rolled-back refresh) is not trusted: built again.
SAVEPOINT s;
SELECT pg_temp.change(20);
SELECT is(mln.ground('live', 'cpu')->'live'->>'built', 'false', 'a live grounding inside a savepoint');
ROLLBACK TO SAVEPOINT s;
SELECT pg_temp.change(21);
SELECT mln.ground('live', 'cpu');
SELECT is((SELECT ground_stats->'live'->>'built' FROM mln.programs WHERE name = 'live'), 'true',
          'after the rollback the state is built again');
SELECT pg_temp.ref();
SELECT is(pg_temp.net('live'), pg_temp.net('ref'), 'and the network is still the one from scratch');

-- Another session's grounding (here: one from scratch) leaves a network the
-- state is not: the next live grounding builds again.
SELECT pg_temp.change(22);
SET mln.live_grounding = off;
SELECT mln.ground('live', 'cpu');
SET mln.live_grounding = on;
SELECT pg_temp.change(23);
SELECT mln.ground('live', 'cpu');
SELECT is((SELECT ground_stats->'live'->>'built' FROM mln.programs WHERE name = 'live'), 'true',
          'a network stored by another grounding is not the state''s: built again');
SELECT pg_temp.ref();
SELECT is(pg_temp.net('live'), pg_temp.net('ref'), 'the same network again');

-- A program the live path does not maintain says why and grounds from scratch.
SELECT mln.create_program('exist', $p$
p(t)
q(t)
1 EXIST y p(x) v q(y)
$p$);
SELECT mln.load_evidence('exist', 'p(A)');
SELECT mln.set_query('exist', 'q(x)');
SELECT mln.ground('exist', 'cpu');
SELECT is(mln.ground('exist', 'cpu')->'live'->>'why_not', 'an EXIST clause', 'an EXIST clause is grounded from scratch');
SELECT is(mln.ground('live', 'sql')->'live'->>'used', 'false', 'device sql is grounded by SQL, not live');

-- A grounding on the SQL path leaves a network the state is not.
SELECT pg_temp.change(24);
SELECT mln.ground('live', 'cpu');
SELECT is((SELECT ground_stats->'live'->>'built' FROM mln.programs WHERE name = 'live'), 'true',
          'after a grounding on the SQL path the state is built again');
SELECT pg_temp.ref();
SELECT is(pg_temp.net('live'), pg_temp.net('ref'), 'and the network is the one from scratch');
SELECT is((SELECT ground_stats->'live'->>'used' FROM mln.programs WHERE name = 'live'), 'true', 'live again');

-- The MAP answer goes to the new network (live_ground.hpp): a MAP answer
-- as the worker writes it (_map's true atoms, _map_info's cost and bound),
-- then a change.  The live update carries it by id, with the atoms it
-- touched; the grounding from scratch compares the stored network with the
-- new one (carry.hpp).  Either way the true atoms are those of the new
-- network with the arguments of an atom true before.
CREATE FUNCTION pg_temp.answer(p text, sch text) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
  EXECUTE format('INSERT INTO %I._map SELECT id, true FROM %I._atoms WHERE id %% 3 = 0', sch, sch);
  EXECUTE format('INSERT INTO %I._map_info VALUES (7, 12.5, 10.25, false)', sch);
  EXECUTE format('CREATE TEMP TABLE was_%s AS SELECT x.pred, x.args FROM %I._atoms x JOIN %I._map m ON m.atom = x.id',
                 p, sch, sch);
  EXECUTE format('CREATE TABLE %I._marginal (atom int4 PRIMARY KEY, probability float8 NOT NULL)', sch);
  EXECUTE format('INSERT INTO %I._marginal SELECT id, (id %% 7) / 7.0 FROM %I._atoms', sch, sch);
  EXECUTE format('CREATE TEMP TABLE wasp_%s AS SELECT x.pred, x.args, m.probability FROM %I._atoms x '
                 'JOIN %I._marginal m ON m.atom = x.id', p, sch, sch);
END $f$;
-- The marginals carried: each atom of the new network with the arguments
-- of one before has its probability, and no other atom has one.
CREATE FUNCTION pg_temp.marginals_ok(p text, sch text) RETURNS boolean LANGUAGE plpgsql AS $f$
DECLARE got text; want text;
BEGIN
  EXECUTE format('SELECT string_agg(atom || ''='' || probability, '','' ORDER BY atom) FROM %I._carried '
                 'WHERE probability IS NOT NULL', sch) INTO got;
  EXECUTE format('SELECT string_agg(x.id || ''='' || w.probability, '','' ORDER BY x.id) FROM %I._atoms x '
                 'JOIN wasp_%s w ON w.pred = x.pred AND w.args = x.args', sch, p) INTO want;
  RETURN got IS NOT NULL AND got = want;
END $f$;
CREATE FUNCTION pg_temp.carried_ok(p text, sch text) RETURNS boolean LANGUAGE plpgsql AS $f$
DECLARE got int[]; want int[];
BEGIN
  EXECUTE format('SELECT array_agg(atom ORDER BY atom) FROM %I._carried WHERE truth', sch) INTO got;
  EXECUTE format('SELECT array_agg(x.id ORDER BY x.id) FROM %I._atoms x JOIN was_%s w ON w.pred = x.pred AND w.args = x.args',
                 sch, p) INTO want;
  RETURN got IS NOT NULL AND got = want;
END $f$;
SELECT pg_temp.answer('live', 'mln_live');
SELECT pg_temp.answer('ref', 'mln_ref');
INSERT INTO mln_live._marginal_info VALUES (8);
SELECT is((SELECT string_agg(answer || ':' || job || ':' || (ground_xid = (SELECT ground_xid FROM mln.programs WHERE name = 'live'))::text,
                             ',' ORDER BY answer) FROM mln.answer_versions('live')),
          'map:7:true,marginal:8:true', 'mln.answer_versions: the job and the grounding each answer was computed on');
SELECT pg_temp.change(31);
-- A record in a Sim pair goes: the atoms after its own are renumbered.
DELETE FROM records WHERE id = (SELECT min(a) FROM sim);
SELECT mln.ground('live', 'cpu');
SELECT pg_temp.ref();
SELECT ok(pg_temp.carried_ok('live', 'mln_live') AND pg_temp.carried_ok('ref', 'mln_ref'),
          'the previous answer is carried to the new network, live by id and from scratch by arguments');
SELECT ok(pg_temp.marginals_ok('live', 'mln_live') AND pg_temp.marginals_ok('ref', 'mln_ref'),
          'and so are the previous marginals');
SELECT is((SELECT (ground_stats->'live'->>'built') || ' ' || (ground_stats->'carried'->>'how') || ' ' || (ground_stats->'carried'->'map'->>'cost') || ' ' ||
                  (ground_stats->'carried'->'map'->>'bound') || ' ' ||
                  ((ground_stats->'carried'->>'touched_atoms')::int = (SELECT count(*) FROM mln_live._carried WHERE touched))::text
             FROM mln.programs WHERE name = 'live'), 'false live update 12.5 10.25 true',
          'live: ground_stats.carried has the answer''s cost and bound and counts the touched atoms in _carried');
SELECT is((SELECT (ground_stats->'carried'->>'how') || ' ' ||
                  ((ground_stats->'carried'->>'touched_atoms')::int = (SELECT count(*) FROM mln_ref._carried WHERE touched))::text
             FROM mln.programs WHERE name = 'ref'), 'compared true',
          'from scratch: the touched atoms are found by comparing the stored network with the new one');
SELECT is((SELECT array_agg(atom ORDER BY atom) FROM mln_ref._carried c JOIN mln_ref._atoms x ON x.id = c.atom WHERE c.touched
            AND NOT EXISTS (SELECT 1 FROM mln_live._carried d JOIN mln_live._atoms y ON y.id = d.atom
                             WHERE d.touched AND y.pred = x.pred AND y.args = x.args)), NULL,
          'and each of them is one the live update touched too');
SELECT mln.ground('live', 'cpu');
SELECT is((SELECT count(*) FROM mln.answer_versions('live')), 0::bigint, 'a network grounded again has no answer yet');
-- An answer in a table with row-level security (a policy is a function the
-- grounding role would run) is not read, so not carried.
INSERT INTO mln_live._map SELECT id, true FROM mln_live._atoms WHERE id % 2 = 0;
INSERT INTO mln_live._map_info VALUES (9, 1.5, 1.0, false);
ALTER TABLE mln_live._map ENABLE ROW LEVEL SECURITY;
CREATE POLICY p ON mln_live._map USING (true);
SELECT mln.ground('live', 'cpu');
SELECT is((SELECT ground_stats->'carried'->'map' FROM mln.programs WHERE name = 'live'), NULL,
          'an answer table with row-level security is not read');
SELECT is((SELECT coalesce(ground_stats->>'carried', 'none') || ' ' || (to_regclass('mln_live._carried') IS NULL)::text
             FROM mln.programs WHERE name = 'live'), 'none true', 'a network without a MAP answer carries nothing');

-- A first grounding with many KBMC candidates (1,100 records: 1.2M pairs
-- of Same) goes through the live build, and gives the network from scratch.
CREATE TABLE many (id text PRIMARY KEY, name text NOT NULL);
INSERT INTO many SELECT 'm' || i, 'n' || (i % 400) FROM generate_series(1, 1100) i;
CREATE VIEW many_sim AS SELECT a.id AS a, b.id AS b FROM many a JOIN many b ON a.name = b.name AND a.id <> b.id;
CREATE FUNCTION pg_temp.many(p text) RETURNS void LANGUAGE plpgsql AS $f$
BEGIN
  PERFORM mln.create_program(p, E'*Sim(rec, rec)\nSame(rec, rec)\n2 Sim(a, b) => Same(a, b)\n-1 Same(a, b)\n'
                                || E'Same(a, b) => Same(b, a).\n');
  PERFORM mln.bind_predicate(p, 'Sim', 'many_sim', ARRAY['a', 'b']);
  PERFORM mln.set_query(p, 'Same(x, y)');
END $f$;
SELECT pg_temp.many('many_live');
SELECT pg_temp.many('many_ref');
SELECT is(mln.ground('many_live', 'cpu')->'live'->>'built', 'true', 'a first grounding with 1.2M candidates builds the live state');
SET mln.live_grounding = off;
SELECT mln.ground('many_ref', 'cpu');
SET mln.live_grounding = on;
SELECT is(pg_temp.net('many_live'), pg_temp.net('many_ref'), 'and its network is the one from scratch');

SELECT * FROM finish();
ROLLBACK;
