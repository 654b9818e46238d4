-- pg_mln 0.8.0 -> 0.9.0: learning rules from the caller's tables (issue #42)
-- and probabilistic logic programs by forward sampling (issue #43).
\echo Use "ALTER EXTENSION pg_mln UPDATE TO '0.9.0'" to load this file. \quit

-- == Rule learning (issue #42): docs/rules.md ==

CREATE FUNCTION mln.learn_rules(target text, positives text, negatives text, background text[],
                                options jsonb DEFAULT '{}')
  RETURNS TABLE(rule text, positives bigint, negatives bigint, new_positives bigint, score float8)
  AS 'MODULE_PATHNAME', 'mln_learn_rules' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION mln.learn_rules(text, text, text, text[], jsonb) IS
  'learns Datalog rules for target from the positive and negative example tables over the background tables '
  '(each a predicate named by its relation), coverage computed on the operator engine; options: device, link '
  '(type, name), max_body, max_vars, beam, min_pos, noise, max_rules, recursion, max_constants, max_rows, verbose';

-- == Probabilistic logic programs (issue #43): docs/problog.md ==
