// Normalisation and merging of first-order clauses (Tuffy §2.6): literal
// dedup, variable safety, zero-weight drop, same-signature weight sums.
#include <algorithm>
#include <unordered_set>

#include "lang/formula.hpp"
#include "format/network.hpp"

namespace mln::lang::detail {

ClauseMerger::ClauseMerger(Program& prog) : prog_(prog) {
  for (size_t i = 0; i < prog_.clauses.size(); ++i)
    if (prog_.clauses[i].weight_var.empty()) index_.emplace(signature(prog_, prog_.clauses[i]), i);
}

std::string ClauseMerger::signature(const Program& prog, const Clause& c) {
  // Rename variables v0, v1, ... in order of first appearance.
  RenameMap rename;
  auto note = [&](const std::string& v) {
    if (!rename.count(v)) {
      std::string to = "v" + std::to_string(rename.size());
      rename.emplace(v, std::move(to));
    }
  };
  for (const std::string& v : c.exist_vars) note(v);
  for (const Literal& l : c.lits)
    for (const Term& t : l.args)
      if (t.is_var()) note(t.text);
  std::vector<std::string> cond_vars;
  for (const Expr& e : c.conditions) collect_expr_vars(e, cond_vars);
  for (const std::string& v : cond_vars) note(v);
  return std::string(c.weight < 0 ? "-" : "+") + " " + clause_body_text(prog, c, &rename);
}

void ClauseMerger::refuse_hard_opposites(const Clause& c) {
  if (!c.hard || c.lits.size() != 1 || !c.conditions.empty() || !c.weight_var.empty()) return;
  const Literal& l = c.lits[0];
  for (const Term& t : l.args)
    if (t.is_var()) return;
  Literal atom = l;
  atom.positive = true;
  const std::string key = literal_text(prog_, atom);
  const auto [it, fresh] = hard_units_.emplace(key, std::make_pair(l.positive, c.pos));
  if (fresh || it->second.first == l.positive) return;
  throw LangError(LangError::Kind::BadValue, c.pos.line, c.pos.col, key,
                  "hard rule " + std::string(l.positive ? "" : "!") + key + ". contradicts the hard rule " +
                      (it->second.first ? "" : "!") + key + ". at line " + std::to_string(it->second.second.line) +
                      ": no world satisfies both");
}

void ClauseMerger::add(std::vector<RawClause> clauses, const RuleInfo& info) {
  for (RawClause& raw : clauses) {
    Clause c;
    std::unordered_set<std::string> seen_lits;
    for (Literal& l : raw.lits)
      if (seen_lits.insert(literal_text(prog_, l)).second) c.lits.push_back(std::move(l));
    std::unordered_set<std::string> lit_vars;
    for (const Literal& l : c.lits)
      for (const Term& t : l.args)
        if (t.is_var()) lit_vars.insert(t.text);
    auto mentions = [&](const std::string& v) { return lit_vars.count(v) > 0; };
    std::vector<std::string> seen_conds;
    for (CondLit& k : raw.conds) {
      std::vector<std::string> vars;
      collect_expr_vars(k.e, vars);
      for (const std::string& v : vars)
        if (!mentions(v))
          throw LangError(LangError::Kind::UnsafeVariable, k.pos.line, k.pos.col, v,
                          "variable " + v + " in a condition does not occur in any literal of the clause");
      // The clause holds the disjunct `positive ? e : !e`; it is grounded
      // only where that disjunct is false.
      Expr stored = k.positive ? negate_condition(k.e) : std::move(k.e);
      std::string text = expr_text(stored);
      if (std::find(seen_conds.begin(), seen_conds.end(), text) != seen_conds.end()) continue;
      seen_conds.push_back(text);
      c.conditions.push_back(std::move(stored));
    }
    if (c.lits.empty())
      throw LangError(LangError::Kind::Syntax, info.pos.line, info.pos.col, "",
                      "a clause needs at least one literal (this one has only conditions)");
    for (const std::string& v : raw.exist)
      if (mentions(v) && std::find(c.exist_vars.begin(), c.exist_vars.end(), v) == c.exist_vars.end())
        c.exist_vars.push_back(v);
    if (!info.weight_var.empty() && !mentions(info.weight_var))
      throw LangError(LangError::Kind::UnsafeVariable, info.pos.line, info.pos.col, info.weight_var,
                      "embedded weight " + info.weight_var + " does not occur in any literal of the clause");
    c.weight = info.weight;
    c.hard = info.hard;
    c.fixed = info.fixed;
    c.weight_var = info.weight_var;
    c.label = info.label;
    c.pos = info.pos;
    c.text = clause_body_text(prog_, c);
    if (info.drop) continue;  // checked, then dropped (zero weight)
    refuse_hard_opposites(c);
    if (!c.weight_var.empty()) {  // embedded weights are never merged (Tuffy §2.4)
      prog_.clauses.push_back(std::move(c));
      continue;
    }
    std::string sig = signature(prog_, c);
    auto it = index_.find(sig);
    if (it != index_.end()) {
      Clause& old = prog_.clauses[it->second];
      old.weight += c.weight;
      old.hard = old.weight >= kHardWeight;
      old.fixed = old.fixed || c.fixed;  // a fixed part keeps the merged clause fixed
      continue;
    }
    c.hard = c.weight >= kHardWeight;
    index_.emplace(std::move(sig), prog_.clauses.size());
    prog_.clauses.push_back(std::move(c));
  }
}

}  // namespace mln::lang::detail
