-- pg_mln 0.6.0 -> 0.7.0: one table of job options.
--
-- * Every option of inference and learning jobs (name, the tasks it
--   applies to, type, allowed values or range, default, what it does) is
--   one C++ table (mln/options.hpp) that the checks below, the worker and
--   the command line all read.  mln.options() lists it.
-- * mln._check_infer_options and mln._check_learn_options validate through
--   it (C functions), with the messages and SQLSTATE they had; JSON null is
--   an option's default for every option (0.6.0 refused it for solver,
--   method, init and a learning job's device).  mln._check_option_range,
--   which only they called, is gone.
\echo Use "ALTER EXTENSION pg_mln UPDATE TO '0.7.0'" to load this file. \quit

CREATE FUNCTION mln.options(OUT name text, OUT task text, OUT type text, OUT "default" text, OUT allowed text,
                            OUT doc text) RETURNS SETOF record
  AS 'MODULE_PATHNAME', 'mln_options' LANGUAGE C IMMUTABLE STRICT;
COMMENT ON FUNCTION mln.options() IS
  'the options of mln.infer and mln.learn_weights: name, the tasks it applies to (map: map and dual jobs; marginal: '
  'marginal and dual jobs; infer: every inference job; learn; all: inference and learning), type, default, the '
  'values allowed and what it does';

CREATE OR REPLACE FUNCTION mln._check_infer_options(task text, options jsonb) RETURNS void
  AS 'MODULE_PATHNAME', 'mln_check_infer_options' LANGUAGE C IMMUTABLE;
CREATE OR REPLACE FUNCTION mln._check_learn_options(options jsonb) RETURNS void
  AS 'MODULE_PATHNAME', 'mln_check_learn_options' LANGUAGE C IMMUTABLE;

DROP FUNCTION mln._check_option_range(jsonb, text, text, boolean, numeric, boolean, numeric, text);
