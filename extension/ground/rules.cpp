// Datalog (':-') and scoping (':=') rules (reference §2.7), run once each in
// file order after KBMC, and query marking (club += 1, §3.2).
#include <algorithm>

#include "ground/expr.hpp"
#include "ground/plan.hpp"

namespace mln::ground::detail {
namespace {

// Evaluates a rule body and inserts the new head tuples into the head table.
void run_rule(Ctx& c, const lang::Rule& rule) {
  std::vector<lang::Literal> all = rule.body;
  all.push_back(rule.head);
  VarTypes types = var_types(c, all);
  Bindings b;
  b.rel = c.unit;
  std::vector<uint8_t> done(rule.conditions.size(), 0);
  // Positive body literals match every row of the table, whatever its truth.
  for (const auto& l : rule.body) {
    if (!l.positive) continue;
    gpu::Relation v = lit_view(c, c.full(l.pred), l.pred);
    join_literal(c, b, l, v, all_bound(b, l) ? JoinMode::Semi : JoinMode::Inner);
    apply_ready_conditions(c, b, rule.conditions, done, types);
  }
  // Negative body literals: no matching tuple in the table (on the bound arguments).
  for (const auto& l : rule.body) {
    if (l.positive) continue;
    join_literal(c, b, l, lit_view(c, c.full(l.pred), l.pred), JoinMode::Anti);
  }
  // Head variables the body leaves unbound range over their type's domain.
  const lang::Literal& h = rule.head;
  const lang::PredicateDecl& hd = c.prog.preds[h.pred];
  for (size_t i = 0; i < h.args.size(); ++i) {
    const lang::Term& t = h.args[i];
    if (!t.is_var() || b.col(t.text) >= 0) continue;
    std::vector<gpu::OutCol> out;
    for (int j = 0; j <= static_cast<int>(b.vars.size()); ++j) out.push_back({0, j});
    out.push_back({1, 1});
    b.rel = c.eng.join(b.rel, c.domain(hd.arg_types[i]), {0}, {0}, out);
    b.vars.push_back(t.text);
  }
  apply_ready_conditions(c, b, rule.conditions, done, types);
  if (std::find(done.begin(), done.end(), 0) != done.end())
    throw lang::LangError(lang::LangError::Kind::UnsafeVariable, rule.pos.line, rule.pos.col, "",
                          "unsafe constraints in a rule: a condition uses an unbound variable");
  // Head constants become columns of one-row relations joined through zero.
  std::vector<int> proj;
  int ncols = static_cast<int>(b.vars.size()) + 1;
  for (size_t i = 0; i < h.args.size(); ++i) {
    const lang::Term& t = h.args[i];
    if (t.is_var()) { proj.push_back(b.col(t.text)); continue; }
    gpu::HostTable k;
    k.cols = {{0}, {c.constant_id(t, hd.arg_kinds[i])}};
    std::vector<gpu::OutCol> out;
    for (int j = 0; j < ncols; ++j) out.push_back({0, j});
    out.push_back({1, 1});
    b.rel = c.eng.join(b.rel, c.eng.upload(k), {0}, {0}, out);
    proj.push_back(ncols++);
  }
  gpu::Relation heads = c.eng.distinct(c.eng.project(b.rel, proj));
  std::vector<int> keys(h.args.size());
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = static_cast<int>(i);
  gpu::Relation fresh = c.eng.anti_join(heads, c.full(h.pred), keys, keys);
  gpu::HostTable t = c.eng.download(fresh);
  const PredState& s = c.preds[h.pred];
  if (!rule.scoping) {
    if (rule.head_plus) c.append(h.pred, std::move(t.cols), -1, 0, std::nan(""));
    else c.append(h.pred, std::move(t.cols), 1, s.has_query ? 3 : 2, std::nan(""));
  } else if (!std::isnan(rule.prior)) {
    c.append(h.pred, std::move(t.cols), 1, 0, rule.prior);
  } else if (s.closed_world) {
    c.append(h.pred, std::move(t.cols), 0, 2, std::nan(""));
  } else {
    c.append(h.pred, std::move(t.cols), -1, 0, std::nan(""));
  }
}

}  // namespace

void run_rules(Ctx& c) {
  const auto& rules = c.prog.rules;
  for (const auto& r : rules)
    if (!r.scoping && r.prefix == 0) run_rule(c, r);
  for (int pass = 0; pass < 2; ++pass)  // closed-world scoped heads first
    for (const auto& r : rules)
      if (r.scoping && r.prefix == 0 && c.preds[r.head.pred].closed_world == (pass == 0)) run_rule(c, r);
}

void mark_queries(Ctx& c) {
  for (auto& s : c.preds) {
    if (s.closed_world || s.queries.empty() || s.rows() == 0) continue;
    PredCols pc = s.cols();
    std::vector<uint8_t> hit(s.rows(), 0);
    for (const auto& q : s.queries) {
      std::vector<gpu::Predicate> preds;
      for (int i = 0; i < s.arity; ++i) {
        gpu::Predicate p;
        p.col = i;
        if (q.args[i] >= 0) {
          p.rhs_const = q.args[i];
          preds.push_back(p);
          continue;
        }
        for (int j = 0; j < i; ++j)
          if (q.args[j] == q.args[i]) { p.rhs_is_col = true; p.rhs_col = j; preds.push_back(p); break; }
      }
      gpu::Relation m = preds.empty() ? c.full(s.index) : c.eng.select(c.full(s.index), preds);
      gpu::HostTable t = c.eng.download(c.eng.project(m, {pc.tid()}));
      for (int32_t tid : t.cols[0]) hit[tid] = 1;
    }
    for (size_t r = 0; r < s.rows(); ++r)
      if (hit[r] && (s.club[r] == 0 || s.club[r] == 2)) s.club[r] += 1;
    s.full_valid = false;
  }
}

}  // namespace mln::ground::detail
