// Active clauses (reference §5.5): one operator plan per first-order clause
// and weight sign, with the per-literal evidence conditions of the §5.5
// table, EXIST groups, and the signed atom-id columns that make the ground
// clause's literal list.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "ground/expr.hpp"
#include "ground/plan.hpp"

namespace mln::ground::detail {
namespace {

struct ClauseSets {
  bool ready = false, have_pos_pass = false, have_neg_pass_neg = false;
  gpu::Relation pos_pass, pos_fail, neg_pass_pos, neg_pass_neg;
  gpu::Relation atoms;  // [args..., +aid, -aid, zero] of active atoms
};

class ActiveClauses {
 public:
  ActiveClauses(Ctx& c, RawClauses& raw) : c_(c), raw_(raw), st_(c.preds.size()), sets_(c.preds.size()) {}

  void run() {
    const auto& clauses = c_.prog.clauses;
    for (size_t ci = 0; ci < clauses.size(); ++ci) {
      c_.progress("clauses", static_cast<double>(ci) / static_cast<double>(clauses.size()));
      if (!c_.relevant[ci]) continue;
      const lang::Clause& cl = clauses[ci];
      bool any_mutable = false;
      for (const auto& l : cl.lits) any_mutable |= !c_.preds[l.pred].immutable();
      if (!any_mutable) continue;  // Tuffy: no atom ids, nothing to ground
      origin_ = learnable_clause(cl) ? static_cast<int32_t>(ci) + 1 : 0;
      if (!cl.weight_var.empty()) {
        ground_clause(cl, true);
        ground_clause(cl, false);
      } else {
        ground_clause(cl, cl.weight > 0);
      }
    }
  }

 private:
  // Literal sets of predicate p after the closure (fixed from here on).
  // pos_pass and neg_pass_neg hold an open-world predicate's every unknown
  // atom (a query predicate's candidate domain): they are built only for a
  // plan that reads them (pass_sets); pos_fail, the rest of the view, is
  // built on the host (issue #63).
  ClauseSets& sets(int p) {
    ClauseSets& r = sets_[p];
    if (r.ready) return r;
    st_[p] = static_sets(c_, p);
    const StaticSets& s = st_[p];
    const PredState& ps = c_.preds[p];
    active_[p] = view_rows_of(c_, p, ps.act);
    const std::vector<uint8_t>& act = ps.active;  // by tid, from the closure (store_active)
    // The view minus pos_pass: not evidence false, and not in the unknown cell.
    r.pos_fail = view_rows_where(c_, p, [&](size_t t) {
      if (ps.truth[t] == 0) return false;
      if (!ps.closed_world) return ps.club[t] >= 2 && std::isnan(ps.prior[t]);
      return !(ps.has_soft && act[t]);
    });
    r.neg_pass_pos = union_distinct(c_, {s.ev_true, active_[p]}, ps.arity + 2);
    r.atoms = atom_relation(p);
    r.ready = true;
    return r;
  }

  // sets(p) with the pass sets cut to the active atoms (pass_sets), built on
  // the host from the predicate's columns, once.
  ClauseSets active_pass_sets(int p, const ClauseSets& r) {
    if (!have_active_pass_[p]) {
      const PredState& ps = c_.preds[p];
      const std::vector<uint8_t>& act = ps.active;
      auto unknown_cell = [&](size_t t) {
        if (!ps.closed_world) return ps.club[t] < 2 || !std::isnan(ps.prior[t]);
        return ps.has_soft && act[t] != 0;
      };
      active_pass_[p] = r;
      active_pass_[p].pos_pass =
          view_rows_where(c_, p, [&](size_t t) { return act[t] && (ps.truth[t] == 0 || unknown_cell(t)); });
      active_pass_[p].neg_pass_neg =
          view_rows_where(c_, p, [&](size_t t) { return act[t] && (ps.truth[t] == 1 || unknown_cell(t)); });
      active_pass_[p].neg_pass_pos = active_[p];
      have_active_pass_[p] = 1;
    }
    return active_pass_[p];
  }

  // The "unknown" cell of the §5.5 table.
  std::vector<gpu::Relation> unknown_cell(int p) {
    const PredState& ps = c_.preds[p];
    if (!ps.closed_world) return {st_[p].unknown, st_[p].prior};
    if (ps.has_soft) return {active_[p]};
    return {};
  }

  // sets(p) with pos_pass (a positive literal joined with a variable still
  // unbound, or on a completely specified predicate) and neg_pass_neg (a
  // negative literal of a negative clause) built where literal i reads them.
  // The clause's only literal on a mutable predicate, joined unbound, reads
  // its pass set's active atoms alone: a binding to an inactive one leaves
  // no literal, and RawClauses::add drops an empty clause (a query
  // predicate's unit clause would otherwise bind its whole domain).
  ClauseSets pass_sets(const lang::Clause& cl, bool pos, const std::vector<int>& order, int i) {
    const lang::Literal& l = cl.lits[i];
    const int p = l.pred;
    ClauseSets& r = sets(p);
    const int nc = c_.preds[p].arity + 2;
    const bool bound = bound_at(cl.lits, order, i);
    int mutable_lits = 0;
    for (const auto& o : cl.lits) mutable_lits += !c_.preds[o.pred].immutable();
    if (!bound && mutable_lits == 1 && !c_.preds[p].immutable() && !c_.preds[p].completely_specified &&
        cl.exist_vars.empty())
      return active_pass_sets(p, r);
    if (l.positive && !r.have_pos_pass && (!bound || c_.preds[p].completely_specified)) {
      std::vector<gpu::Relation> pp{st_[p].ev_false}, u = unknown_cell(p);
      pp.insert(pp.end(), u.begin(), u.end());
      r.pos_pass = union_distinct(c_, pp, nc);
      r.have_pos_pass = true;
    }
    if (!l.positive && !pos && !r.have_neg_pass_neg) {
      std::vector<gpu::Relation> nn{st_[p].ev_true}, u = unknown_cell(p);
      nn.insert(nn.end(), u.begin(), u.end());
      r.neg_pass_neg = union_distinct(c_, nn, nc);
      r.have_neg_pass_neg = true;
    }
    return r;
  }

  // [args..., +aid, -aid, zero] for the active atoms of p.
  gpu::Relation atom_relation(int p) {
    const PredState& s = c_.preds[p];
    gpu::HostTable t;
    t.cols.resize(s.arity + 3);
    for (size_t r = 0; r < s.rows(); ++r) {
      if (!s.atom_id[r]) continue;
      for (int k = 0; k < s.arity; ++k) t.cols[k].push_back(s.args[k][r]);
      t.cols[s.arity].push_back(s.atom_id[r]);
      t.cols[s.arity + 1].push_back(-s.atom_id[r]);
      t.cols[s.arity + 2].push_back(0);
    }
    return c_.eng.upload(t);
  }

  // Grounds one clause for one weight sign into raw clauses.
  void ground_clause(const lang::Clause& cl, bool pos) {
    std::vector<lang::Expr> conds = clause_conditions(cl, pos);
    VarTypes types = var_types(c_, cl.lits);
    std::vector<int> order = plan_order(cl.lits);
    auto lit_sets = [&](int i) {
      const lang::Literal& l = cl.lits[i];
      return literal_sets(pass_sets(cl, pos, order, i), l, c_.preds[l.pred].completely_specified, pos);
    };
    // Without EXIST groups, the plan carries only what the ids and the weight read.
    std::vector<std::string> keep = id_columns(cl, order);
    Bindings b = run_plan(c_, cl.lits, conds, types, lit_sets, order, true, cl.exist_vars.empty() ? &keep : nullptr);
    if (!cl.exist_vars.empty()) {
      auto all_rows = [&](int i) {
        sets(cl.lits[i].pred);  // makes the predicate's view ready
        return all_row_sets(st_[cl.lits[i].pred].view, cl.lits[i]);
      };
      Bindings rows = run_plan(c_, cl.lits, conds, types, all_rows, order, true);
      drop_satisfied_groups(c_, b, rows, cl.exist_vars);
    }
    if (b.rel.rows() == 0) return;
    if (cl.exist_vars.empty()) keep_needed(cl, b);
    std::vector<IdSource> ids = add_atom_columns(cl, b);
    if (!cl.exist_vars.empty()) {  // groups span the whole table: one host copy
      gpu::HostTable t = c_.eng.download(b.rel);
      b.rel = gpu::Relation();
      emit(cl, b, types, t, ids);
      return;
    }
    // Otherwise each row is one ground clause: the table comes down in
    // pieces through one reused host buffer, in row order (the raw clauses
    // are those of one whole download, in the same order).
    const size_t n = b.rel.rows(), piece = std::min(n, kPieceRows);
    gpu::HostTable t;
    t.cols.assign(static_cast<size_t>(b.rel.ncols()), std::vector<int32_t>(piece));
    std::vector<int32_t*> dst;
    for (auto& col : t.cols) dst.push_back(col.data());
    for (size_t r0 = 0; r0 < n; r0 += piece) {
      const size_t m = std::min(piece, n - r0);
      c_.eng.download_rows(b.rel, r0, m, dst.data());
      if (m < piece)
        for (auto& col : t.cols) col.resize(m);
      emit(cl, b, types, t, ids);
    }
  }

  static constexpr size_t kPieceRows = size_t{1} << 19;

  // The binding columns the atom ids and the weight read: the tid of each
  // literal on a mutable predicate that the plan joins in (run_plan: some
  // variable not yet bound, in plan order), the variables of the others
  // (their ids are joined in by add_atom_columns), and the weight variable.
  std::vector<std::string> id_columns(const lang::Clause& cl, const std::vector<int>& order) const {
    std::vector<std::string> keep, bound;
    auto is_bound = [&](const std::string& v) { return std::find(bound.begin(), bound.end(), v) != bound.end(); };
    for (int li : order) {
      const lang::Literal& l = cl.lits[li];
      bool joins = false;
      for (const lang::Term& t : l.args) joins |= t.is_var() && !is_bound(t.text);
      if (!c_.preds[l.pred].immutable()) {
        if (joins) keep.push_back(tid_var(li));
        else
          for (const lang::Term& t : l.args)
            if (t.is_var()) keep.push_back(t.text);
      }
      for (const lang::Term& t : l.args)
        if (t.is_var() && !is_bound(t.text)) bound.push_back(t.text);
    }
    if (!cl.weight_var.empty()) keep.push_back(cl.weight_var);
    return keep;
  }

  // Drops the binding columns that neither the atom ids nor the weight read
  // (the variables and tids of evidence-only literals, the join variables
  // the ids do not need), before the id columns widen the table; the rows
  // and their order stay as they are.
  void keep_needed(const lang::Clause& cl, Bindings& b) {
    std::vector<uint8_t> need(b.vars.size() + 1, 0);
    auto want = [&](const std::string& v) {
      const int col = b.col(v);
      if (col >= 0) need[col] = 1;
    };
    for (size_t li = 0; li < cl.lits.size(); ++li) {
      const lang::Literal& l = cl.lits[li];
      if (c_.preds[l.pred].immutable()) continue;
      if (b.col(tid_var(static_cast<int>(li))) >= 0) {
        want(tid_var(static_cast<int>(li)));
        continue;
      }
      for (const lang::Term& t : l.args)
        if (t.is_var()) want(t.text);
    }
    if (!cl.weight_var.empty()) want(cl.weight_var);
    keep_live_columns(c_.eng, b, need);
  }

  // Where a literal's signed atom id comes from: a signed-id column, or a
  // tid column carried by the plan (mapped through the atom table on the host).
  struct IdSource {
    int col;
    int pred = -1;  // >= 0: `col` holds a tid of this predicate
    bool positive = true;
  };

  // Appends one signed atom-id column per literal on a mutable predicate
  // whose tid the plan did not carry (0 where the tuple is absent or
  // inactive); returns where every literal's id comes from.
  std::vector<IdSource> add_atom_columns(const lang::Clause& cl, Bindings& b) {
    int ncols = static_cast<int>(b.vars.size()) + 1;
    std::vector<IdSource> ids;
    for (size_t li = 0; li < cl.lits.size(); ++li) {
      const lang::Literal& l = cl.lits[li];
      if (c_.preds[l.pred].immutable()) continue;
      int tc = b.col(tid_var(static_cast<int>(li)));
      if (tc >= 0) {
        ids.push_back(IdSource{tc, l.pred, l.positive});
        continue;
      }
      gpu::Relation a = restrict_literal(c_, sets(l.pred).atoms, l);
      int k = static_cast<int>(l.args.size());
      std::vector<int> lk, rk;
      for (int i = 0; i < k; ++i) {
        if (!l.args[i].is_var()) continue;
        int bc = b.col(l.args[i].text);
        if (std::find(lk.begin(), lk.end(), bc) == lk.end()) { lk.push_back(bc); rk.push_back(i); }
      }
      if (lk.empty()) { lk.push_back(0); rk.push_back(k + 2); }
      std::vector<gpu::OutCol> out;
      std::vector<int> keep;
      for (int i = 0; i < ncols; ++i) { out.push_back({0, i}); keep.push_back(i); }
      out.push_back({1, l.positive ? k : k + 1});
      keep.push_back(0);  // the zero column stands for "no active atom"
      gpu::Relation hit = c_.eng.join(b.rel, a, lk, rk, out);
      gpu::Relation miss = c_.eng.project(c_.eng.anti_join(b.rel, a, lk, rk), keep);
      b.rel = gpu::Relation();  // the input goes before the union is built
      b.rel = c_.eng.union_all(hit, miss);
      ids.push_back(IdSource{ncols++});
    }
    return ids;
  }

  // Builds the ground clauses from the downloaded binding table.
  void emit(const lang::Clause& cl, const Bindings& b, const VarTypes& types, const gpu::HostTable& t,
            const std::vector<IdSource>& ids) {
    size_t n = t.rows();
    int wcol = cl.weight_var.empty() ? -1 : b.col(cl.weight_var);
    auto weight = [&](size_t r) {
      if (wcol < 0) return cl.hard && cl.weight == 0 ? kHardWeight : cl.weight;
      const VarType& vt = types.at(cl.weight_var);
      int32_t v = t.cols[wcol][r];
      if (vt.kind == lang::TypeKind::Int) return static_cast<double>(v);
      return std::strtod(c_.symbol_text(v, vt.kind).c_str(), nullptr);
    };
    auto id = [&](const IdSource& s, size_t r) {
      int32_t v = t.cols[s.col][r];
      if (s.pred < 0) return v;
      int32_t a = c_.preds[s.pred].atom_id[v];
      return s.positive ? a : -a;
    };
    std::vector<int32_t> lits;
    if (cl.exist_vars.empty()) {
      for (size_t r = 0; r < n; ++r) {
        lits.clear();
        for (const IdSource& s : ids) lits.push_back(id(s, r));
        raw_.add(lits, weight(r), origin_);
      }
      return;
    }
    // EXIST: one ground clause per group of the non-existential variables.
    std::vector<int> g = group_columns(b, cl.exist_vars);
    std::vector<size_t> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    auto less = [&](size_t x, size_t y) {
      for (int k : g)
        if (t.cols[k][x] != t.cols[k][y]) return t.cols[k][x] < t.cols[k][y];
      return false;
    };
    std::sort(idx.begin(), idx.end(), less);
    for (size_t i = 0; i < n;) {
      size_t j = i;
      lits.clear();
      for (; j < n && !less(idx[i], idx[j]); ++j)
        for (const IdSource& s : ids) lits.push_back(id(s, idx[j]));
      raw_.add(lits, weight(idx[i]), origin_);
      i = j;
    }
  }

  Ctx& c_;
  RawClauses& raw_;
  int32_t origin_ = 0;  // learning: +(index + 1) of the clause being grounded, 0 if not learnable
  std::vector<StaticSets> st_;
  std::vector<ClauseSets> sets_;
  std::vector<gpu::Relation> active_ = std::vector<gpu::Relation>(c_.preds.size());
  std::vector<ClauseSets> active_pass_ = std::vector<ClauseSets>(c_.preds.size());
  std::vector<uint8_t> have_active_pass_ = std::vector<uint8_t>(c_.preds.size(), 0);
};

}  // namespace

void ground_active_clauses(Ctx& c, RawClauses& raw) { ActiveClauses(c, raw).run(); }

}  // namespace mln::ground::detail
