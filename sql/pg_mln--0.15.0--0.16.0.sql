-- pg_mln 0.15.0 -> 0.16.0
\echo Use "ALTER EXTENSION pg_mln UPDATE TO '0.16.0'" to load this file. \quit

-------------------------------------------------------------------------------
-- Maintained Datalog outputs (issue #62): docs/datalog.md, "Maintained outputs"
-------------------------------------------------------------------------------
-- mln.datalog(program, target_schema, '{"maintain": true}') writes the
-- derived relations and registers the program here; statement-level
-- triggers on its input tables (mln._datalog_maintain) apply each change to
-- the target schema's tables in the writer's transaction, the program
-- running as its owner (extension/pg/datalog_maintain_fn.cpp).  version is
-- the state's tag: a value of mln.datalog_version, which a rollback never
-- hands out again.
CREATE SEQUENCE mln.datalog_version;
GRANT USAGE ON SEQUENCE mln.datalog_version TO PUBLIC;
COMMENT ON SEQUENCE mln.datalog_version IS 'internal: tags of maintained Datalog states (mln.datalog_maintained.version)';

CREATE TABLE mln.datalog_maintained (
  target_schema name PRIMARY KEY,
  owner         regrole NOT NULL DEFAULT current_user::regrole,
  program       text NOT NULL,
  options       jsonb NOT NULL DEFAULT '{}',
  inputs        oid[] NOT NULL,
  version       bigint NOT NULL DEFAULT nextval('mln.datalog_version'),
  changed_at    timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE mln.datalog_maintained IS
  'Datalog programs whose target schema''s tables follow their input tables (mln.datalog with maintain)';
COMMENT ON COLUMN mln.datalog_maintained.inputs IS
  'the table each input relation reads, in the program''s order (renames are followed; a dropped one is an error)';
COMMENT ON COLUMN mln.datalog_maintained.version IS
  'the maintained state''s tag: a new value of mln.datalog_version after each change applied';
ALTER TABLE mln.datalog_maintained ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_datalog_maintained ON mln.datalog_maintained USING (pg_has_role(owner, 'MEMBER'));
GRANT SELECT, INSERT, UPDATE, DELETE ON mln.datalog_maintained TO PUBLIC;

CREATE FUNCTION mln._datalog_changed() RETURNS trigger
  AS 'MODULE_PATHNAME', 'mln_datalog_changed' LANGUAGE C;
COMMENT ON FUNCTION mln._datalog_changed() IS
  'internal: the trigger of a maintained Datalog program''s input tables: applies a statement''s rows to its outputs';

-- The owner of target's row, only when relid is one of its inputs: the
-- trigger switches to that role, so a trigger someone else puts on their
-- own table gets nothing (the row is hidden from the writer by row-level
-- security; this reads it as the extension's owner and says no more).
CREATE FUNCTION mln._datalog_owner(target name, relid oid) RETURNS regrole
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT m.owner FROM mln.datalog_maintained m WHERE m.target_schema = target AND relid = ANY (m.inputs)
$$;
COMMENT ON FUNCTION mln._datalog_owner(name, oid) IS
  'internal: the owner of a maintained Datalog program, for a table it reads (its triggers run the program as that role)';

-- Registers target's program (mln.datalog calls it after writing the
-- tables): its row, and three triggers per input table (transition tables
-- need one event each) and one for TRUNCATE, replacing earlier ones.
CREATE FUNCTION mln._datalog_maintain(target name, program text, options jsonb, inputs oid[]) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  t oid;
  base text := 'mln_datalog_' || (SELECT oid FROM pg_namespace WHERE nspname = target)::text;
BEGIN
  FOREACH t IN ARRAY inputs LOOP
    IF (SELECT relkind FROM pg_class WHERE oid = t) NOT IN ('r', 'p') THEN
      RAISE EXCEPTION 'maintain: % is not a table', t::regclass
        USING HINT = 'a maintained program reads tables, whose changes triggers see; read a view''s tables instead',
              ERRCODE = 'wrong_object_type';
    END IF;
    IF NOT has_table_privilege(t, 'TRIGGER') THEN
      RAISE EXCEPTION 'maintain: permission denied to create triggers on %', t::regclass
        USING HINT = 'a maintained program''s triggers go on its input tables: their owner, or a role with the TRIGGER privilege, registers it',
              ERRCODE = 'insufficient_privilege';
    END IF;
  END LOOP;
  PERFORM mln.datalog_stop(target, quiet => true);
  INSERT INTO mln.datalog_maintained (target_schema, program, options, inputs)
    VALUES (target, program, coalesce(options, '{}') - 'maintain', inputs);
  FOR t IN SELECT DISTINCT u FROM unnest(inputs) u LOOP
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %s REFERENCING NEW TABLE AS pg_mln_new_rows '
                   'FOR EACH STATEMENT EXECUTE FUNCTION mln._datalog_changed(%L)', base || '_i', t::regclass, target);
    EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON %s REFERENCING OLD TABLE AS pg_mln_old_rows NEW TABLE AS '
                   'pg_mln_new_rows FOR EACH STATEMENT EXECUTE FUNCTION mln._datalog_changed(%L)', base || '_u',
                   t::regclass, target);
    EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON %s REFERENCING OLD TABLE AS pg_mln_old_rows '
                   'FOR EACH STATEMENT EXECUTE FUNCTION mln._datalog_changed(%L)', base || '_d', t::regclass, target);
    EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION mln._datalog_changed(%L)',
                   base || '_t', t::regclass, target);
  END LOOP;
END $$;
COMMENT ON FUNCTION mln._datalog_maintain(name, text, jsonb, oid[]) IS
  'internal: registers a maintained Datalog program and puts its triggers on its input tables';

CREATE FUNCTION mln.datalog_stop(target_schema name, quiet boolean DEFAULT false) RETURNS boolean
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  m mln.datalog_maintained;
  t oid;
  base text := 'mln_datalog_' || (SELECT oid FROM pg_namespace WHERE nspname = target_schema)::text;
  s text;
BEGIN
  SELECT * INTO m FROM mln.datalog_maintained d WHERE d.target_schema = datalog_stop.target_schema FOR UPDATE;
  IF NOT FOUND THEN
    IF NOT quiet THEN
      RAISE NOTICE 'no maintained Datalog program writes schema "%"', target_schema;
    END IF;
    RETURN false;
  END IF;
  FOR t IN SELECT DISTINCT u FROM unnest(m.inputs) u WHERE EXISTS (SELECT 1 FROM pg_class WHERE oid = u) LOOP
    FOREACH s IN ARRAY ARRAY['_i', '_u', '_d', '_t'] LOOP
      EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', base || s, t::regclass);
    END LOOP;
  END LOOP;
  DELETE FROM mln.datalog_maintained d WHERE d.target_schema = datalog_stop.target_schema;
  RETURN true;
END $$;
COMMENT ON FUNCTION mln.datalog_stop(name, boolean) IS
  'stops maintaining a target schema''s Datalog outputs (its tables stay as they are): drops the triggers on its '
  'input tables and its row of mln.datalog_maintained; false when none was maintained';

COMMENT ON FUNCTION mln.datalog(text, name, jsonb) IS
  'evaluates a Datalog program over the caller''s tables and writes each derived relation as a table of '
  'target_schema (replacing one of that name); options: device (auto, cpu, gpu), max_rows (0: no limit), verbose, '
  'maintain (true: the tables follow the input tables'' changes; mln.datalog_stop ends it)';
