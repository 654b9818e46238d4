// Clause-body plans over the engine (Tuffy's Clause.generateSQL FROM list).
#include "ground/plan.hpp"

#include <algorithm>

#include "ground/expr.hpp"

namespace mln::ground::detail {

gpu::Relation lit_view(Ctx& c, const gpu::Relation& full, int pred) {
  PredCols pc = c.preds[pred].cols();
  std::vector<int> cols;
  for (int i = 0; i < pc.k; ++i) cols.push_back(i);
  cols.push_back(pc.tid());
  cols.push_back(pc.zero());
  return c.eng.project(full, cols);
}

gpu::Relation restrict_literal(Ctx& c, const gpu::Relation& view, const lang::Literal& lit) {
  const lang::PredicateDecl& d = c.prog.preds[lit.pred];
  std::vector<gpu::Predicate> preds;
  for (int i = 0; i < static_cast<int>(lit.args.size()); ++i) {
    const lang::Term& t = lit.args[i];
    gpu::Predicate p;
    p.col = i;
    p.op = gpu::CmpOp::EQ;
    if (!t.is_var()) {
      p.rhs_const = c.constant_id(t, d.arg_kinds[i]);
      preds.push_back(p);
      continue;
    }
    for (int j = 0; j < i; ++j) {
      if (lit.args[j].is_var() && lit.args[j].text == t.text) {
        p.rhs_is_col = true;
        p.rhs_col = j;
        preds.push_back(p);
        break;
      }
    }
  }
  return preds.empty() ? view : c.eng.select(view, preds);
}

VarTypes var_types(const Ctx& c, const std::vector<lang::Literal>& lits) {
  VarTypes vt;
  for (const auto& l : lits) {
    const lang::PredicateDecl& d = c.prog.preds[l.pred];
    for (size_t i = 0; i < l.args.size(); ++i)
      if (l.args[i].is_var() && !vt.count(l.args[i].text)) vt[l.args[i].text] = VarType{d.arg_types[i], d.arg_kinds[i]};
  }
  return vt;
}

std::vector<int> plan_order(const std::vector<lang::Literal>& lits) {
  std::vector<int> order;
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < static_cast<int>(lits.size()); ++i)
      if (lits[i].positive == (pass == 1)) order.push_back(i);
  return order;
}

bool all_bound(const Bindings& b, const lang::Literal& lit) {
  for (const auto& t : lit.args)
    if (t.is_var() && b.col(t.text) < 0) return false;
  return true;
}

std::string tid_var(int lit_index) { return "#tid" + std::to_string(lit_index); }

void join_literal(Ctx& c, Bindings& b, const lang::Literal& lit, const gpu::Relation& src, JoinMode mode,
                  int carry_tid) {
  gpu::Relation r = restrict_literal(c, src, lit);
  int k = static_cast<int>(lit.args.size());
  std::vector<int> lkeys, rkeys;
  std::vector<std::string> new_vars;
  std::vector<int> new_pos;
  for (int i = 0; i < k; ++i) {
    const lang::Term& t = lit.args[i];
    if (!t.is_var()) continue;
    bool first = true;
    for (int j = 0; j < i; ++j)
      if (lit.args[j].is_var() && lit.args[j].text == t.text) first = false;
    if (!first) continue;
    int bc = b.col(t.text);
    if (bc >= 0) {
      lkeys.push_back(bc);
      rkeys.push_back(i);
    } else {
      new_vars.push_back(t.text);
      new_pos.push_back(i);
    }
  }
  if (lkeys.empty()) {  // no shared variable: cross product through the zero columns
    lkeys.push_back(0);
    rkeys.push_back(k + 1);
  }
  if (mode == JoinMode::Semi) {
    b.rel = c.eng.semi_join(b.rel, r, lkeys, rkeys);
  } else if (mode == JoinMode::Anti) {
    b.rel = c.eng.anti_join(b.rel, r, lkeys, rkeys);
  } else {
    std::vector<gpu::OutCol> out;
    for (int i = 0; i <= static_cast<int>(b.vars.size()); ++i) out.push_back({0, i});
    for (int p : new_pos) out.push_back({1, p});
    if (carry_tid >= 0) out.push_back({1, k});
    b.rel = c.eng.join(b.rel, r, lkeys, rkeys, out);
    for (auto& v : new_vars) b.vars.push_back(v);
    if (carry_tid >= 0) b.vars.push_back(tid_var(carry_tid));
  }
}

namespace {

// Drops the columns of the variables that no literal from order[next] on,
// no pending condition and no name in `keep` reads.  The bindings are a
// bag: the rows and their order stay as they are; the joins after it copy
// fewer columns.
void drop_dead_columns(Ctx& c, Bindings& b, const std::vector<lang::Literal>& lits, const std::vector<int>& order,
                       size_t next, const std::vector<lang::Expr>& conds, const std::vector<uint8_t>& done,
                       const std::vector<std::string>& keep) {
  std::vector<uint8_t> live(b.vars.size() + 1, 0);
  auto mark = [&](const std::string& v) {
    const int col = b.col(v);
    if (col >= 0) live[col] = 1;
  };
  for (const std::string& v : keep) mark(v);
  for (size_t k = next; k < order.size(); ++k)
    for (const lang::Term& t : lits[order[k]].args)
      if (t.is_var()) mark(t.text);
  std::vector<std::string> vs;
  for (size_t i = 0; i < conds.size(); ++i)
    if (!done[i]) expr_vars(conds[i], vs);
  for (const std::string& v : vs) mark(v);
  keep_live_columns(c.eng, b, live);
}

}  // namespace

void keep_live_columns(gpu::Engine& eng, Bindings& b, const std::vector<uint8_t>& live) {
  std::vector<int> cols{0};
  std::vector<std::string> vars;
  for (size_t i = 0; i < b.vars.size(); ++i)
    if (live[i + 1]) cols.push_back(static_cast<int>(i) + 1), vars.push_back(b.vars[i]);
  if (vars.size() == b.vars.size()) return;
  b.rel = eng.project(b.rel, cols);
  b.vars = std::move(vars);
}

Bindings run_plan(Ctx& c, const std::vector<lang::Literal>& lits, const std::vector<lang::Expr>& conds,
                  const VarTypes& types, const std::function<LiteralSets(int)>& sets,
                  const std::vector<int>& order, bool carry_tids, const std::vector<std::string>* keep) {
  Bindings b;
  b.rel = c.unit;
  std::vector<uint8_t> done(conds.size(), 0);
  apply_ready_conditions(c, b, conds, done, types);
  for (size_t step = 0; step < order.size(); ++step) {
    const int i = order[step];
    if (keep) drop_dead_columns(c, b, lits, order, step, conds, done, *keep);
    const lang::Literal& lit = lits[i];
    LiteralSets s = sets(i);
    if (!all_bound(b, lit)) {
      join_literal(c, b, lit, s.pass, JoinMode::Inner, carry_tids ? i : -1);
    } else if (s.use == LiteralSets::Use::AntiFail) {
      if (s.fail.rows() > 0) join_literal(c, b, lit, s.fail, JoinMode::Anti);
    } else if (s.use == LiteralSets::Use::Pass) {
      join_literal(c, b, lit, s.pass, JoinMode::Semi);
    }
    apply_ready_conditions(c, b, conds, done, types);
  }
  for (size_t i = 0; i < conds.size(); ++i) {
    if (!done[i]) {
      throw lang::LangError(lang::LangError::Kind::UnsafeVariable, 0, 0, "",
                            "unsafe constraints: a condition uses a variable that no literal binds");
    }
  }
  return b;
}

StaticSets static_sets(Ctx& c, int pred) {
  const gpu::Relation& f = c.full(pred);
  PredCols pc = c.preds[pred].cols();
  auto sel = [&](int col, gpu::CmpOp op, int32_t v) {
    return lit_view(c, c.eng.select(f, {gpu::Predicate{col, op, false, v, 0}}), pred);
  };
  StaticSets s;
  s.view = lit_view(c, f, pred);
  s.ev_true = sel(pc.truth(), gpu::CmpOp::EQ, 1);
  s.ev_false = sel(pc.truth(), gpu::CmpOp::EQ, 0);
  s.unknown = sel(pc.club(), gpu::CmpOp::LT, 2);
  s.prior = sel(pc.prior(), gpu::CmpOp::EQ, 1);
  return s;
}

gpu::Relation with_tids(Ctx& c, const gpu::Relation& view, int pred, const gpu::Relation& tids) {
  return c.eng.semi_join(view, tids, {c.preds[pred].arity}, {0});
}

gpu::Relation without_tids(Ctx& c, const gpu::Relation& view, int pred, const gpu::Relation& tids) {
  return c.eng.anti_join(view, tids, {c.preds[pred].arity}, {0});
}

gpu::Relation view_rows_where(Ctx& c, int pred, const std::function<bool(size_t)>& keep) {
  const PredState& s = c.preds[pred];
  gpu::HostTable t;
  t.cols.resize(static_cast<size_t>(s.arity) + 2);
  for (size_t r = 0; r < s.rows(); ++r) {
    if (!keep(r)) continue;
    for (int k = 0; k < s.arity; ++k) t.cols[k].push_back(s.args[k][r]);
    t.cols[s.arity].push_back(static_cast<int32_t>(r));
    t.cols[s.arity + 1].push_back(0);
  }
  return c.eng.upload(t);
}

gpu::Relation view_rows_of(Ctx& c, int pred, const gpu::Relation& tids) {
  const PredState& s = c.preds[pred];
  gpu::HostTable in = c.eng.download(tids);
  std::vector<int32_t> ts = in.cols.empty() ? std::vector<int32_t>() : std::move(in.cols[0]);
  std::sort(ts.begin(), ts.end());  // the view's order
  ts.erase(std::unique(ts.begin(), ts.end()), ts.end());
  gpu::HostTable t;
  t.cols.resize(static_cast<size_t>(s.arity) + 2);
  for (auto& col : t.cols) col.reserve(ts.size());
  for (int32_t r : ts) {
    for (int k = 0; k < s.arity; ++k) t.cols[k].push_back(s.args[k][static_cast<size_t>(r)]);
    t.cols[s.arity].push_back(r);
    t.cols[s.arity + 1].push_back(0);
  }
  return c.eng.upload(t);
}

bool bound_at(const std::vector<lang::Literal>& lits, const std::vector<int>& order, int i) {
  std::vector<std::string> bound;
  for (int j : order) {
    if (j == i) break;
    for (const auto& t : lits[j].args)
      if (t.is_var()) bound.push_back(t.text);
  }
  for (const auto& t : lits[i].args)
    if (t.is_var() && std::find(bound.begin(), bound.end(), t.text) == bound.end()) return false;
  return true;
}

gpu::Relation literal_matches(Ctx& c, const Bindings& b, const lang::Literal& lit, const gpu::Relation& src,
                              const std::vector<int>& src_cols) {
  gpu::Relation r = restrict_literal(c, src, lit);
  int k = static_cast<int>(lit.args.size());
  std::vector<int> lkeys, rkeys;
  for (int i = 0; i < k; ++i) {
    const lang::Term& t = lit.args[i];
    if (!t.is_var()) continue;
    bool first = true;
    for (int j = 0; j < i; ++j)
      if (lit.args[j].is_var() && lit.args[j].text == t.text) first = false;
    if (!first) continue;
    lkeys.push_back(b.col(t.text));
    rkeys.push_back(i);
  }
  if (lkeys.empty()) {
    lkeys.push_back(0);
    rkeys.push_back(k + 1);
  }
  std::vector<gpu::OutCol> out;
  for (int sc : src_cols) out.push_back({1, sc});
  return c.eng.join(b.rel, r, lkeys, rkeys, out);
}

std::vector<int> group_columns(const Bindings& b, const std::vector<std::string>& exist_vars) {
  std::vector<int> cols;
  for (size_t i = 0; i < b.vars.size(); ++i)
    if (b.vars[i][0] != '#' && std::find(exist_vars.begin(), exist_vars.end(), b.vars[i]) == exist_vars.end())
      cols.push_back(static_cast<int>(i) + 1);
  if (cols.empty()) cols.push_back(0);
  return cols;
}

void drop_satisfied_groups(Ctx& c, Bindings& pass, const Bindings& rows,
                           const std::vector<std::string>& exist_vars) {
  std::vector<int> g = group_columns(pass, exist_vars);
  gpu::Relation fail = c.eng.difference(rows.rel, pass.rel);
  if (fail.rows() == 0) return;
  gpu::Relation groups = c.eng.distinct(c.eng.project(fail, g));
  std::vector<int> rk(g.size());
  for (size_t i = 0; i < g.size(); ++i) rk[i] = static_cast<int>(i);
  pass.rel = c.eng.anti_join(pass.rel, groups, g, rk);
}

std::vector<lang::Expr> clause_conditions(const lang::Clause& cl, bool positive) {
  std::vector<lang::Expr> conds = cl.conditions;
  if (!cl.weight_var.empty()) {
    lang::Expr v, zero, cmp;
    v.kind = lang::Expr::Kind::Var;
    v.text = cl.weight_var;
    zero.kind = lang::Expr::Kind::Num;
    cmp.kind = lang::Expr::Kind::Binary;
    cmp.text = positive ? ">" : "<";
    cmp.args = {v, zero};
    conds.push_back(cmp);
  }
  return conds;
}

gpu::Relation union_distinct(Ctx& c, const std::vector<gpu::Relation>& rs, int ncols) {
  if (rs.empty()) return c.eng.empty(ncols);
  if (rs.size() == 1) return rs[0];
  gpu::Relation u = rs[0];
  for (size_t i = 1; i < rs.size(); ++i) u = c.eng.union_all(u, rs[i]);
  return c.eng.distinct(u);
}

}  // namespace mln::ground::detail
