// The 'sql' grounding path's clause work (see sql_ground_internal.hpp):
// Tuffy's FROM lists and per-literal conditions (§5.4, §5.5 tables), the
// closure of active atoms, the atom table, clause grounding, soft evidence,
// key constraints and consolidation, each a set-at-a-time SQL statement.
#include <algorithm>
#include <string>
#include <vector>

#include "pg/sql_ground_internal.hpp"

namespace mln::pg::sql_ground_detail {

VarTypes SqlGrounder::var_types(const std::vector<lang::Literal>& lits) const {
  VarTypes vt;
  for (const auto& l : lits) {
    const lang::PredicateDecl& d = prog_.preds[l.pred];
    for (size_t i = 0; i < l.args.size(); ++i)
      if (l.args[i].is_var() && !vt.count(l.args[i].text)) vt[l.args[i].text] = {d.arg_types[i], d.arg_kinds[i]};
  }
  return vt;
}

// Tuffy's literal order: negative literals first, then positive.
std::vector<int> SqlGrounder::plan_order(const std::vector<lang::Literal>& lits) {
  std::vector<int> order;
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < static_cast<int>(lits.size()); ++i)
      if (lits[i].positive == (pass == 1)) order.push_back(i);
  return order;
}

bool SqlGrounder::all_bound(const FromList& f, const lang::Literal& l) const {
  for (const auto& t : l.args)
    if (t.is_var() && !f.vars.count(t.text)) return false;
  return true;
}

// Join conditions of literal `l` aliased `alias`: constants, variables bound
// before it, repeated variables; binds its new variables into `f`.
std::string SqlGrounder::join_on(FromList& f, const lang::Literal& l, const std::string& alias, bool bind) const {
  const lang::PredicateDecl& d = prog_.preds[l.pred];
  std::vector<std::string> on;
  std::map<std::string, std::string> local;
  for (size_t k = 0; k < l.args.size(); ++k) {
    const lang::Term& t = l.args[k];
    std::string c = col(alias, static_cast<int>(k));
    if (!t.is_var()) on.push_back(c + " = " + std::to_string(constant_id(t, d.arg_kinds[k])));
    else if (f.vars.count(t.text)) on.push_back(c + " = " + f.vars.at(t.text));
    else if (local.count(t.text)) on.push_back(c + " = " + local.at(t.text));
    else local[t.text] = c;
  }
  if (bind) f.vars.insert(local.begin(), local.end());
  return on.empty() ? "true" : sql_join(on, " AND ");
}

// Tuffy's FROM list (Clause.generateSQL): literals in plan order aliased
// t<i>; a positive literal whose variables are all bound is LEFT JOINed
// (absent tuples read as false), unless its predicate is '**'.
FromList SqlGrounder::from_list(const std::vector<lang::Literal>& lits) const {
  FromList f;
  f.sql = "(SELECT 1) AS u";
  f.left.assign(lits.size(), 0);
  for (int i : plan_order(lits)) {
    const lang::Literal& l = lits[i];
    std::string alias = "t" + std::to_string(i);
    bool left = l.positive && all_bound(f, l) && !preds_[l.pred].completely_specified;
    std::string on = join_on(f, l, alias, true);
    f.sql += (left ? " LEFT JOIN " : " JOIN ") + tab(l.pred) + " AS " + alias + " ON " + on;
    f.left[i] = left;
  }
  return f;
}

// §5.4 condition of literal i during the closure (clause weight sign `pos`).
std::string SqlGrounder::closure_cond(const lang::Clause& cl, const FromList& f, int i, bool pos) const {
  const lang::Literal& l = cl.lits[i];
  std::string a = alias(i);
  bool ow = !preds_[l.pred].closed_world;
  std::vector<std::string> parts;
  parts.push_back(a + (l.positive ? ".truth IS FALSE" : ".truth IS TRUE"));
  parts.push_back(active_sql(l.pred, a));
  if (ow && (l.positive || !pos)) parts.push_back(a + ".club < 2");
  return any_of(parts, f.left[i], a);
}

// "Unknown" cell of the §5.5 table for literal i.
std::vector<std::string> SqlGrounder::unknown_parts(int p, const std::string& a) const {
  if (!preds_[p].closed_world) return {a + ".club < 2", a + ".prior IS NOT NULL"};
  if (preds_[p].has_soft) return {active_sql(p, a)};
  return {};
}

// §5.5 condition of literal i when grounding clauses.
std::string SqlGrounder::clause_cond(const lang::Clause& cl, const FromList& f, int i, bool pos) const {
  const lang::Literal& l = cl.lits[i];
  std::string a = alias(i);
  std::vector<std::string> parts;
  parts.push_back(a + (l.positive ? ".truth IS FALSE" : ".truth IS TRUE"));
  if (!l.positive && pos) {
    parts.push_back(active_sql(l.pred, a));
  } else {
    auto u = unknown_parts(l.pred, a);
    parts.insert(parts.end(), u.begin(), u.end());
  }
  return any_of(parts, f.left[i], a);
}

// Columns of the non-existential variables (the EXIST group key).
std::vector<std::string> SqlGrounder::group_cols(const lang::Clause& cl, const FromList& f) const {
  std::vector<std::string> g;
  for (const auto& [v, c] : f.vars)
    if (std::find(cl.exist_vars.begin(), cl.exist_vars.end(), v) == cl.exist_vars.end()) g.push_back(c);
  return g;
}

// Rounds of INSERT ... SELECT DISTINCT over the fresh clauses; returns the round count.
int SqlGrounder::closure() {
  size_t np = preds_.size();
  for (size_t p = 0; p < np; ++p) {
    int pi = static_cast<int>(p);
    preds_[p].active = static_cast<int64_t>(
        exec("INSERT INTO " + act(pi) + " SELECT id FROM " + tab(pi) + " WHERE prior IS NOT NULL"));
    Rows r = spi_.query("SELECT count(*) FROM " + tab(pi) + " WHERE club < 2");
    preds_[p].unknown = r.int8(0, 0);
  }
  std::vector<uint8_t> changed(np, 1);
  int rounds = 0;
  for (;;) {
    ++rounds;
    const auto& clauses = prog_.clauses;
    for (size_t ci = 0; ci < clauses.size(); ++ci) {
      progress("closure", static_cast<double>(ci) / static_cast<double>(clauses.size()));
      if (!relevant_[ci]) continue;
      const lang::Clause& cl = clauses[ci];
      std::vector<bool> signs = cl.weight_var.empty() ? std::vector<bool>{cl.weight > 0} : std::vector<bool>{true, false};
      for (bool pos : signs) closure_clause(cl, pos, rounds == 1, changed);
    }
    bool any = false;
    std::fill(changed.begin(), changed.end(), 0);
    for (size_t p = 0; p < np; ++p) {
      int pi = static_cast<int>(p);
      uint64_t n = exec("INSERT INTO " + act(pi) + " SELECT DISTINCT f.id FROM pg_temp.mln_sql_fresh AS f WHERE f.pred = " +
                        std::to_string(pi) + " AND NOT EXISTS (SELECT 1 FROM " + act(pi) + " AS a WHERE a.id = f.id)");
      if (n == 0) continue;
      preds_[p].active += static_cast<int64_t>(n);
      changed[p] = 1;
      any = true;
    }
    exec("TRUNCATE pg_temp.mln_sql_fresh");
    if (!any || !more_to_ground()) break;
  }
  return rounds;
}

// Tuffy's second stop test: some mutable predicate has inactive unknown atoms.
bool SqlGrounder::more_to_ground() const {
  for (const auto& s : preds_)
    if (!s.immutable() && s.unknown > s.active) return true;
  return false;
}

// One clause and weight sign in one round: worth/fresh tests, then the INSERT.
void SqlGrounder::closure_clause(const lang::Clause& cl, bool pos, bool first_round, const std::vector<uint8_t>& changed) {
  bool worth = false, fresh = first_round, neg_ow = false;
  for (const auto& l : cl.lits) {
    const PredInfo& s = preds_[l.pred];
    if (l.positive == pos && !s.immutable()) worth = true;
    if (changed[l.pred]) fresh = true;
    if (!l.positive && !s.closed_world) neg_ow = true;
  }
  if (!worth || !fresh || (!pos && !neg_ow)) return;
  FromList f = from_list(cl.lits);
  VarTypes vt = var_types(cl.lits);
  std::vector<std::string> lit_conds, hits, values, neg_unknown;
  for (size_t i = 0; i < cl.lits.size(); ++i) {
    const lang::Literal& l = cl.lits[i];
    int ii = static_cast<int>(i);
    lit_conds.push_back(closure_cond(cl, f, ii, pos));
    if (!l.positive && !preds_[l.pred].closed_world) neg_unknown.push_back(alias(ii) + ".club < 2");
    if (l.positive != pos || preds_[l.pred].immutable()) continue;
    std::string h = "h" + std::to_string(hits.size());
    hits.push_back("CASE WHEN " + alias(ii) + ".club < 2 THEN " + alias(ii) + ".id END AS " + h);
    values.push_back("(" + std::to_string(l.pred) + ", b." + h + ")");
  }
  std::vector<std::string> conds = conditions(cl, f, vt, pos);
  std::string neg = pos ? "" : "(" + sql_join(neg_unknown, " OR ") + ")";
  std::string inner;
  if (cl.exist_vars.empty()) {
    std::vector<std::string> w = lit_conds;
    w.insert(w.end(), conds.begin(), conds.end());
    if (!pos) w.push_back(neg);
    inner = "SELECT DISTINCT " + sql_join(hits, ", ") + " FROM " + f.sql + " WHERE " + sql_join(w, " AND ");
  } else {  // EXIST: a group activates only if every one of its rows passes
    std::vector<std::string> g = group_cols(cl, f);
    inner = "SELECT * FROM (SELECT " + sql_join(hits, ", ") + ", bool_and(" + sql_join(lit_conds, " AND ") +
            ") OVER (" + (g.empty() ? "" : "PARTITION BY " + sql_join(g, ", ")) + ") AS gok" +
            (pos ? "" : ", " + neg + " AS nx") + " FROM " + f.sql +
            (conds.empty() ? "" : " WHERE " + sql_join(conds, " AND ")) + ") AS r WHERE r.gok" + (pos ? "" : " AND r.nx");
  }
  exec("INSERT INTO pg_temp.mln_sql_fresh (pred, id) SELECT DISTINCT x.pred, x.id FROM (" + inner +
       ") AS b CROSS JOIN LATERAL (VALUES " + sql_join(values, ", ") + ") AS x(pred, id) WHERE x.id IS NOT NULL");
}

// -activateAll (§5.8): every club < 2 row is active.
void SqlGrounder::activate_all() {
  for (size_t p = 0; p < preds_.size(); ++p)
    exec("INSERT INTO " + act(static_cast<int>(p)) + " SELECT id FROM " + tab(static_cast<int>(p)) + " WHERE club < 2");
}

// Atom ids 1, 2, ... by predicate (declaration order) and tuple id.
void SqlGrounder::build_atom_table() {
  int64_t next = 0;
  for (size_t p = 0; p < preds_.size(); ++p) {
    const PredInfo& s = preds_[p];
    if (s.immutable() && !s.has_query) continue;  // Tuffy: "Not using atoms from"
    int pi = static_cast<int>(p);
    next += static_cast<int64_t>(exec("UPDATE " + tab(pi) + " AS t SET atom = n.atom FROM (SELECT id, (" +
                                      std::to_string(next) + " + row_number() OVER (ORDER BY id))::int4 AS atom FROM " +
                                      act(pi) + ") AS n WHERE n.id = t.id"));
  }
  analyze();
}

void SqlGrounder::ground_active_clauses() {
  const auto& clauses = prog_.clauses;
  for (size_t ci = 0; ci < clauses.size(); ++ci) {
    progress("clauses", static_cast<double>(ci) / static_cast<double>(clauses.size()));
    if (!relevant_[ci]) continue;
    const lang::Clause& cl = clauses[ci];
    bool any_mutable = false;
    for (const auto& l : cl.lits) any_mutable |= !preds_[l.pred].immutable();
    if (!any_mutable) continue;
    if (!cl.weight_var.empty()) {
      ground_clause(cl, true);
      ground_clause(cl, false);
    } else {
      ground_clause(cl, cl.weight > 0);
    }
  }
}

// One clause, one weight sign (§5.5): sorted, de-duplicated signed atom-id
// arrays into the clause buffer, with unit clauses [-a], w flipped to [a], -w.
void SqlGrounder::ground_clause(const lang::Clause& cl, bool pos) {
  FromList f = from_list(cl.lits);
  VarTypes vt = var_types(cl.lits);
  std::vector<std::string> lit_conds, ids;
  for (size_t i = 0; i < cl.lits.size(); ++i) {
    int ii = static_cast<int>(i);
    lit_conds.push_back(clause_cond(cl, f, ii, pos));
    if (!preds_[cl.lits[i].pred].immutable()) ids.push_back((cl.lits[i].positive ? "" : "-") + alias(ii) + ".atom");
  }
  std::vector<std::string> conds = conditions(cl, f, vt, pos);
  std::string w;
  if (cl.weight_var.empty()) {
    w = sql_float8(cl.hard && cl.weight == 0 ? kHardWeight : cl.weight);
  } else {
    const std::string& c = f.vars.at(cl.weight_var);
    w = vt.at(cl.weight_var).second == TypeKind::Int ? "(" + c + ")::float8" : sql_symbol_name(symbols_, c) + "::float8";
  }
  std::string arr = "ARRAY[" + sql_join(ids, ", ") + "]::int4[]";
  std::string inner;
  if (cl.exist_vars.empty()) {
    std::vector<std::string> where = lit_conds;
    where.insert(where.end(), conds.begin(), conds.end());
    inner = "SELECT ARRAY(SELECT DISTINCT x FROM unnest(" + arr + ") AS x WHERE x IS NOT NULL ORDER BY x) AS l, " + w +
            " AS w FROM " + f.sql + " WHERE " + sql_join(where, " AND ");
  } else {  // EXIST: one ground clause per group whose rows all pass
    std::vector<std::string> g = group_cols(cl, f);
    inner = "SELECT ARRAY(SELECT DISTINCT x FROM unnest(array_agg(" + arr +
            ")) AS x WHERE x IS NOT NULL ORDER BY x) AS l, " + (cl.weight_var.empty() ? w : "min(" + w + ")") +
            " AS w FROM " + f.sql + (conds.empty() ? "" : " WHERE " + sql_join(conds, " AND ")) +
            (g.empty() ? "" : " GROUP BY " + sql_join(g, ", ")) + " HAVING bool_and(" + sql_join(lit_conds, " AND ") + ")";
  }
  const std::string flip = "cardinality(g.l) = 1 AND g.l[1] < 0";
  exec("INSERT INTO pg_temp.mln_sql_cbuf (lits, weight) SELECT CASE WHEN " + flip + " THEN ARRAY[-g.l[1]] ELSE g.l END, "
       "CASE WHEN " + flip + " THEN -g.w ELSE g.w END FROM (" + inner + ") AS g WHERE cardinality(g.l) > 0");
}

// Unit clauses of soft evidence (§5.6).
void SqlGrounder::add_soft_evidence_clauses() {
  for (size_t p = 0; p < preds_.size(); ++p) {
    if (!preds_[p].has_soft) continue;
    exec("INSERT INTO pg_temp.mln_sql_cbuf (lits, weight) SELECT ARRAY[t.atom], CASE WHEN t.prior >= 1 THEN " +
         sql_float8(kHardWeight) + " WHEN t.prior <= 0 THEN " + sql_float8(-kHardWeight) +
         " ELSE ln(t.prior / (1 - t.prior)) END FROM " + tab(static_cast<int>(p)) +
         " AS t WHERE t.atom IS NOT NULL AND t.prior IS NOT NULL");
  }
}

// Key constraints (§5.7) over active atoms: each pair once, and existence clauses.
void SqlGrounder::add_key_constraint_clauses() {
  for (size_t pi = 0; pi < preds_.size(); ++pi) {
    const lang::PredicateDecl& d = *preds_[pi].decl;
    if (!d.has_key_constraint()) continue;
    int p = static_cast<int>(pi);
    std::vector<std::string> on, keys;
    for (int k = 0; k < d.arity(); ++k) {
      if (d.dependent[k]) continue;
      on.push_back(col("x", k) + " = " + col("y", k));
      keys.push_back(col("x", k));
    }
    on.push_back("x.atom < y.atom");
    const std::string hw = sql_float8(kHardWeight);
    exec("INSERT INTO pg_temp.mln_sql_cbuf (lits, weight) SELECT ARRAY[-y.atom, -x.atom], " + hw + " FROM " + tab(p) +
         " AS x JOIN " + tab(p) + " AS y ON " + sql_join(on, " AND ") + " WHERE x.atom IS NOT NULL");
    exec("INSERT INTO pg_temp.mln_sql_cbuf (lits, weight) SELECT array_agg(x.atom ORDER BY x.atom), " + hw + " FROM " +
         tab(p) + " AS x WHERE x.atom IS NOT NULL" + (keys.empty() ? "" : " GROUP BY " + sql_join(keys, ", ")) +
         " HAVING count(*) > 0");
  }
}

// Consolidation (§4.5): GROUP BY lits, SUM(weight).
void SqlGrounder::consolidate() {
  exec("CREATE TEMP TABLE mln_sql_clauses ON COMMIT DROP AS SELECT lits, sum(weight) AS weight "
       "FROM pg_temp.mln_sql_cbuf GROUP BY lits");
}

}  // namespace mln::pg::sql_ground_detail
