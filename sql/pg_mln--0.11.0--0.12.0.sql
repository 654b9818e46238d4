-- pg_mln 0.11.0 -> 0.12.0
\echo Use "ALTER EXTENSION pg_mln UPDATE TO '0.12.0'" to load this file. \quit

-- == The streaming evidence path stores its chunks uncompressed ==
-- A staged chunk is read once, by mln.ingest_evidence, and then the table is
-- emptied: compressing it (TOAST's default for text) only costs time, 61 of
-- the 250 ms that class's evidence took to load (2.5 MB in one chunk;
-- CHANGELOG.md, 0.12.0).  Tables made before this version are altered the
-- next time they are asked for.
CREATE OR REPLACE FUNCTION mln.evidence_staging(name text) RETURNS regclass
LANGUAGE plpgsql VOLATILE STRICT AS $$
DECLARE r mln.programs;
BEGIN
  r := mln._program(name);
  EXECUTE format('CREATE UNLOGGED TABLE IF NOT EXISTS %I._staging (seq int4 NOT NULL, first_line int4 NOT NULL, body text NOT NULL)',
                 r.schema_name);
  IF (SELECT attstorage FROM pg_attribute
      WHERE attrelid = format('%I._staging', r.schema_name)::regclass AND attname = 'body') <> 'e' THEN
    EXECUTE format('ALTER TABLE %I._staging ALTER COLUMN body SET STORAGE EXTERNAL', r.schema_name);
  END IF;
  RETURN format('%I._staging', r.schema_name)::regclass;
END $$;
COMMENT ON FUNCTION mln.evidence_staging(text) IS
  'creates (if needed) and returns the staging table that COPY fills for mln.ingest_evidence (chunks stored uncompressed)';
