-- pg_mln 0.4.0 -> 0.5.0: the decoded answers are views.
--
-- mln_<name>.map_result and marginal_result were tables that the worker
-- rebuilt after each job by decoding every query atom's arguments (RC at
-- 565,000 papers: 5.6M rows, most of the 21 s write-back of a 10^8-clause
-- job).  They are now views over the answers the worker writes (_map: the
-- true query atoms; _marginal: a probability per atom), decoded when they
-- are read, so a job's write-back is the COPY of its answer.  The columns,
-- their rows and who may read them are unchanged.  A program's old result
-- table is replaced by the view when its next job finishes; mln.ground
-- drops the view with the network it reads (it depends on _map or
-- _marginal).
\echo Use "ALTER EXTENSION pg_mln UPDATE TO '0.5.0'" to load this file. \quit

-- Replaces schema `sch`'s result relation `rel` by a view of `query`
-- unless it is one already (a view reads the new answer by itself).
CREATE FUNCTION mln._result_view(sch name, rel name, query text, note text) RETURNS void
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE k "char";
BEGIN
  SELECT c.relkind INTO k FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname = sch AND c.relname = rel;
  IF k = 'v' THEN RETURN; END IF;
  IF k IS NOT NULL THEN
    EXECUTE format('DROP TABLE %I.%I', sch, rel);
  END IF;
  EXECUTE format('CREATE VIEW %I.%I AS ', sch, rel) || query;
  EXECUTE format('COMMENT ON VIEW %I.%I IS %L', sch, rel, note);
END $$;
COMMENT ON FUNCTION mln._result_view(name, name, text, text) IS
  'internal: makes a program''s result relation a view of the given query (replacing a result table of 0.4.0 or older)';

CREATE OR REPLACE FUNCTION mln._materialize_map(name text) RETURNS void
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE r mln.programs;
BEGIN
  r := mln._program(name);
  PERFORM mln._result_view(r.schema_name, 'map_result', mln._map_sql(name, r.schema_name),
                           'MAP truth of the query atoms, decoded from the last MAP or dual job''s answer (see mln.map)');
END $$;
COMMENT ON FUNCTION mln._materialize_map(text) IS
  'internal: called by the worker after writing _map; makes the program''s map_result a view of the answer';

CREATE OR REPLACE FUNCTION mln._materialize_marginal(name text) RETURNS void
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE r mln.programs;
BEGIN
  r := mln._marginal_program(name);
  PERFORM mln._result_view(r.schema_name, 'marginal_result', mln._marginal_sql(name, r.schema_name),
                           'marginal probabilities of the query atoms, written by the last marginal or dual job (see mln.marginals)');
END $$;
COMMENT ON FUNCTION mln._materialize_marginal(text) IS
  'internal: called by the worker after writing _marginal; makes the program''s marginal_result a view of the answer';

-- The owner is granted the worker's result relations, views included.
CREATE OR REPLACE FUNCTION mln._share_results(name text) RETURNS void
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE
  r mln.programs;
  t record;
BEGIN
  r := mln._program(name);
  FOR t IN SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = r.schema_name AND c.relkind IN ('r', 'v')
              AND c.relname IN ('_marginal', 'map_result', 'marginal_result')
              AND c.relowner = current_user::regrole AND c.relowner <> r.owner
  LOOP
    IF t.relkind = 'v' THEN
      EXECUTE format('GRANT SELECT ON %I.%I TO %s', r.schema_name, t.relname, r.owner);
    ELSE
      EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON %I.%I TO %s', r.schema_name, t.relname, r.owner);
    END IF;
  END LOOP;
END $$;
COMMENT ON FUNCTION mln._share_results(text) IS
  'internal: grants the program''s owner the result tables and views the calling worker created';

-- A spread plan's part_of is kept as runs where that is shorter (a plan of
-- atom id ranges: a few runs, not an int4 per atom).
COMMENT ON COLUMN mln.job_plans.part_of IS
  'internal: each atom''s part (-1: not searched), a little-endian int4 per atom id, or ''RUN1'' then little-endian int4 (part, atoms in a row) pairs';

-- A part's MAP state is kept a bit per atom (a byte per atom before).
COMMENT ON COLUMN mln.job_parts.state IS
  'internal: MAP: the part''s state, a bit per atom of the part in ascending atom id, least significant bit first';

-- A marginal job asked for more partitions than its plan has parts samples
-- each part in slices, one worker each; round 0's part is then the unit
-- part * slices + slice.
ALTER TABLE mln.job_plans ADD COLUMN slices int NOT NULL DEFAULT 1 CHECK (slices >= 1);
COMMENT ON COLUMN mln.job_plans.slices IS
  'internal: marginal jobs: each part is sampled in this many slices (round 0''s part = part * slices + slice)';
