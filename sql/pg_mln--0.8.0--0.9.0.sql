-- pg_mln 0.8.0 -> 0.9.0: learning rules from the caller's tables (issue #42)
-- and probabilistic logic programs by forward sampling (issue #43).
\echo Use "ALTER EXTENSION pg_mln UPDATE TO '0.9.0'" to load this file. \quit

-- == Rule learning (issue #42): docs/rules.md ==

CREATE FUNCTION mln.learn_rules(target text, positives text, negatives text, background text[],
                                options jsonb DEFAULT '{}')
  RETURNS TABLE(rule text, positives bigint, negatives bigint, new_positives bigint, score float8, weight float8)
  AS 'MODULE_PATHNAME', 'mln_learn_rules' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION mln.learn_rules(text, text, text, text[], jsonb) IS
  'learns Datalog rules for target from the positive and negative example tables over the background tables '
  '(each a predicate named by its relation), coverage computed on the operator engine; score coverage: Datalog '
  'rules (Aleph), wpll: weighted MLN formulas; options: device, score, link (type, name), max_body, max_vars, beam, '
  'min_pos, noise, max_rules, recursion, max_constants, max_rows, min_gain, penalty, l2, negatives_per_positive, '
  'seed, verbose; negatives NULL: closed-world negatives sampled';

CREATE FUNCTION mln.learn_rules_from(program text, target text, options jsonb DEFAULT '{}')
  RETURNS TABLE(rule text, positives bigint, negatives bigint, new_positives bigint, score float8, weight float8)
  AS 'MODULE_PATHNAME', 'mln_learn_rules_from' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION mln.learn_rules_from(text, text, jsonb) IS
  'learns rules for one predicate of an MLN program from its evidence: the predicate''s true atoms are the '
  'positives, its false ones the negatives (closed-world ones sampled when there are none), the other '
  'predicates'' true atoms the background, linked by declared argument types; options as mln.learn_rules';

-- == Probabilistic logic programs (issue #43): docs/problog.md ==

CREATE FUNCTION mln.problog(program text, options jsonb DEFAULT '{}')
  RETURNS TABLE(query text, probability float8, ci_low float8, ci_high float8, samples bigint)
  AS 'MODULE_PATHNAME', 'mln_problog' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION mln.problog(text, jsonb) IS
  'answers the queries of a ProbLog / CP-logic program (probabilistic facts, annotated disjunctions, stratified '
  'negation, evidence; relations no rule defines are the caller''s tables) by forward sampling: one row per ground '
  'query atom with its probability, 95% Wilson interval and the samples it rests on; options: device (auto, cpu, '
  'gpu), samples (0: the stopping rule), delta (0.01), max_samples, seed, threads, max_rows, verbose';
