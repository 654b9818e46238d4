-- pg_mln 0.7.0 -> 0.8.0: Datalog over the caller's own tables (issue #41).
--
-- * mln.datalog(program, target_schema, options) evaluates a Datalog
--   program (facts, rules, recursion, stratified negation, comparisons and
--   integer arithmetic) on the operator engine and writes every derived
--   relation as a table of target_schema, replacing a table of that name
--   in the caller's transaction.
-- * mln.datalog_query(program, relation, options) returns one derived
--   relation's rows under a column definition list.
-- * mln.datalog_explain(program) shows the strata and each rule's plan
--   without evaluating anything.
-- Input relations are the caller's tables and views, read with the caller's
-- privileges.  docs/datalog.md has the language and the options.
\echo Use "ALTER EXTENSION pg_mln UPDATE TO '0.8.0'" to load this file. \quit

CREATE FUNCTION mln.datalog(program text, target_schema name, options jsonb DEFAULT '{}')
  RETURNS TABLE(relation text, "rows" bigint)
  AS 'MODULE_PATHNAME', 'mln_datalog' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION mln.datalog(text, name, jsonb) IS
  'evaluates a Datalog program over the caller''s tables and writes each derived relation as a table of '
  'target_schema (replacing one of that name); options: device (auto, cpu, gpu), max_rows (0: no limit), verbose';

CREATE FUNCTION mln.datalog_query(program text, relation text, options jsonb DEFAULT '{}')
  RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'mln_datalog_query' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION mln.datalog_query(text, text, jsonb) IS
  'evaluates a Datalog program over the caller''s tables and returns the rows of one derived relation: '
  'SELECT * FROM mln.datalog_query(program, ''tc'') AS t(a int, b int)';

CREATE FUNCTION mln.datalog_explain(program text)
  RETURNS TABLE(stratum int, relation text, recursive boolean, rule int, line int, est_rows bigint, plan text)
  AS 'MODULE_PATHNAME', 'mln_datalog_explain' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION mln.datalog_explain(text) IS
  'the strata of a Datalog program and each rule''s plan (join order, delta variants, anti-joins, filters, '
  'aggregates) from the input tables'' estimated sizes, one row per rule; checks the program as mln.datalog '
  'does and evaluates nothing';
