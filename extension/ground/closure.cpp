// Closure of active atoms (reference §5.4) as a semi-naive fixpoint: round 1
// evaluates every relevant clause; later rounds evaluate, for each literal on
// a predicate that gained active atoms, the clause with that literal joined
// against the delta only.  Also -activateAll (§5.8) and the atom table (§5.5.1).
#include <algorithm>

#include "ground/plan.hpp"

namespace mln::ground::detail {
namespace {

class Closure {
 public:
  explicit Closure(Ctx& c) : c_(c), n_(c.preds.size()) {
    st_.resize(n_);
    act_.resize(n_);
    delta_.resize(n_);
    round_.resize(n_);
    for (size_t p = 0; p < n_; ++p) {
      st_[p] = static_sets(c, static_cast<int>(p));
      const PredState& s = c.preds[p];
      if (s.has_soft) {  // soft evidence starts active (prior >= softT = 0)
        act_[p] = c.eng.distinct(c.eng.project(c.eng.select(c.full(static_cast<int>(p)),
                                 {gpu::Predicate{s.cols().prior(), gpu::CmpOp::EQ, false, 1, 0}}),
                                 {s.cols().tid()}));
      } else {
        act_[p] = c.eng.empty(1);
      }
    }
  }

  // Runs rounds until no clause activates a new atom; returns the round count.
  int run() {
    std::vector<uint8_t> changed(n_, 1);
    int rounds = 0;
    for (;;) {
      ++rounds;
      for (auto& r : round_) r = RoundSets{};
      std::vector<std::vector<gpu::Relation>> fresh(n_);
      const auto& clauses = c_.prog.clauses;
      for (size_t ci = 0; ci < clauses.size(); ++ci) {
        c_.progress("closure", static_cast<double>(ci) / static_cast<double>(clauses.size()));
        if (!c_.relevant[ci]) continue;
        const lang::Clause& cl = clauses[ci];
        std::vector<bool> signs;
        if (!cl.weight_var.empty()) signs = {true, false};
        else signs = {cl.weight > 0};
        for (bool pos : signs) visit(cl, pos, rounds == 1, changed, fresh);
      }
      bool any = false;
      std::fill(changed.begin(), changed.end(), 0);
      for (size_t p = 0; p < n_; ++p) {
        if (fresh[p].empty()) continue;
        gpu::Relation nw = fresh[p][0];
        for (size_t i = 1; i < fresh[p].size(); ++i) nw = c_.eng.union_all(nw, fresh[p][i]);
        nw = c_.eng.difference(c_.eng.distinct(nw), act_[p]);
        if (nw.rows() == 0) continue;
        act_[p] = c_.eng.union_all(act_[p], nw);
        delta_[p] = nw;
        changed[p] = 1;
        any = true;
      }
      if (!any || !more_to_ground()) break;
    }
    return rounds;
  }

  std::vector<gpu::Relation>& active() { return act_; }

 private:
  struct RoundSets {
    bool ready = false;
    gpu::Relation active, pos_pass, pos_fail, neg_pass_pos, neg_pass_neg, unk_not_act;
  };

  // Per-round literal sets of predicate p under the current active set.
  RoundSets& sets(int p) {
    RoundSets& r = round_[p];
    if (r.ready) return r;
    const StaticSets& s = st_[p];
    bool ow = !c_.preds[p].closed_world;
    int nc = c_.preds[p].arity + 2;
    r.active = with_tids(c_, s.view, p, act_[p]);
    std::vector<gpu::Relation> pp{s.ev_false, r.active};
    if (ow) pp.push_back(s.unknown);
    r.pos_pass = union_distinct(c_, pp, nc);
    r.pos_fail = without_tids(c_, s.view, p, c_.eng.project(r.pos_pass, {c_.preds[p].arity}));
    r.neg_pass_pos = union_distinct(c_, {s.ev_true, r.active}, nc);
    r.neg_pass_neg = ow ? union_distinct(c_, {s.ev_true, r.active, s.unknown}, nc) : r.neg_pass_pos;
    r.unk_not_act = without_tids(c_, s.unknown, p, act_[p]);
    r.ready = true;
    return r;
  }

  // One clause, one weight sign: Tuffy's worth/fresh tests, then the plans.
  void visit(const lang::Clause& cl, bool pos, bool first_round, const std::vector<uint8_t>& changed,
             std::vector<std::vector<gpu::Relation>>& fresh) {
    bool worth = false, is_fresh = first_round, neg_ow = false;
    for (const auto& l : cl.lits) {
      const PredState& s = c_.preds[l.pred];
      if (l.positive == pos && !s.immutable()) worth = true;
      if (changed[l.pred]) is_fresh = true;
      if (!l.positive && !s.closed_world) neg_ow = true;
    }
    if (!worth || !is_fresh || (!pos && !neg_ow)) return;
    if (first_round || !cl.exist_vars.empty()) {
      activate(cl, pos, evaluate(cl, pos, -1), fresh);
      return;
    }
    for (size_t i = 0; i < cl.lits.size(); ++i)
      if (changed[cl.lits[i].pred]) activate(cl, pos, evaluate(cl, pos, static_cast<int>(i)), fresh);
  }

  // Bindings of the clause passing every literal's closure condition; with
  // delta_lit >= 0, only those whose literal delta_lit is newly active.
  Bindings evaluate(const lang::Clause& cl, bool pos, int delta_lit) {
    std::vector<lang::Expr> conds = clause_conditions(cl, pos);
    VarTypes types = var_types(c_, cl.lits);
    std::vector<int> order = plan_order(cl.lits);
    auto lit_sets = [&](int i) {
      const lang::Literal& l = cl.lits[i];
      int p = l.pred;
      LiteralSets s;
      if (i == delta_lit) {
        s.pass = with_tids(c_, st_[p].view, p, delta_[p]);
        return s;
      }
      return literal_sets(sets(p), l, c_.preds[p].completely_specified, pos);
    };
    Bindings b = run_plan(c_, cl.lits, conds, types, lit_sets, order, true);
    if (!cl.exist_vars.empty()) {
      auto all_rows = [&](int i) { return all_row_sets(st_[cl.lits[i].pred].view, cl.lits[i]); };
      Bindings rows = run_plan(c_, cl.lits, conds, types, all_rows, order, true);
      drop_satisfied_groups(c_, b, rows, cl.exist_vars);
    }
    if (!pos) {  // some negative literal on an open-world predicate must be unknown
      std::vector<gpu::Relation> keep;
      for (const auto& l : cl.lits) {
        if (l.positive || c_.preds[l.pred].closed_world) continue;
        Bindings k = b;
        join_literal(c_, k, l, st_[l.pred].unknown, JoinMode::Semi);
        keep.push_back(k.rel);
      }
      b.rel = union_distinct(c_, keep, static_cast<int>(b.vars.size()) + 1);
    }
    return b;
  }

  // Collects the unknown, inactive atoms of the activatable literals.
  void activate(const lang::Clause& cl, bool pos, const Bindings& b, std::vector<std::vector<gpu::Relation>>& fresh) {
    if (b.rel.rows() == 0) return;
    for (size_t i = 0; i < cl.lits.size(); ++i) {
      const lang::Literal& l = cl.lits[i];
      if (l.positive != pos || c_.preds[l.pred].immutable()) continue;
      RoundSets& r = sets(l.pred);
      int tc = b.col(tid_var(static_cast<int>(i)));
      gpu::Relation t =
          tc >= 0 ? c_.eng.semi_join(c_.eng.distinct(c_.eng.project(b.rel, {tc})), r.unk_not_act, {0},
                                     {c_.preds[l.pred].arity})
                  : literal_matches(c_, b, l, r.unk_not_act, {c_.preds[l.pred].arity});
      if (t.rows() > 0) fresh[l.pred].push_back(t);
    }
  }

  // Tuffy's second stop test: some mutable predicate has unknown atoms left.
  bool more_to_ground() {
    for (size_t p = 0; p < n_; ++p) {
      const PredState& s = c_.preds[p];
      if (s.immutable()) continue;
      size_t unknown = 0;
      for (uint8_t cl : s.club) unknown += cl < 2;
      if (unknown > act_[p].rows()) return true;
    }
    return false;
  }

  Ctx& c_;
  size_t n_;
  std::vector<StaticSets> st_;
  std::vector<gpu::Relation> act_, delta_;
  std::vector<RoundSets> round_;
};

// Stores the final active sets in the predicate states.
void store_active(Ctx& c, std::vector<gpu::Relation>& act) {
  for (size_t p = 0; p < c.preds.size(); ++p) {
    PredState& s = c.preds[p];
    s.act = act[p];
    s.active.assign(s.rows(), 0);
    gpu::HostTable t = c.eng.download(act[p]);
    if (!t.cols.empty())
      for (int32_t tid : t.cols[0]) s.active[tid] = 1;
  }
}

}  // namespace

void compute_closure(Ctx& c, GroundOutput& out) {
  Closure cl(c);
  out.closure_rounds = cl.run();
  store_active(c, cl.active());
}

void activate_all(Ctx& c) {
  std::vector<gpu::Relation> act(c.preds.size());
  for (size_t p = 0; p < c.preds.size(); ++p) {
    PredCols pc = c.preds[p].cols();
    act[p] = c.eng.project(c.eng.select(c.full(static_cast<int>(p)),
                                        {gpu::Predicate{pc.club(), gpu::CmpOp::LT, false, 2, 0}}),
                           {pc.tid()});
  }
  store_active(c, act);
}

void build_atom_table(Ctx& c, GroundOutput& out) {
  for (auto& s : c.preds) {
    s.atom_id.assign(s.rows(), 0);
    if (s.immutable() && !s.has_query) continue;  // Tuffy: "Not using atoms from"
    for (size_t r = 0; r < s.rows(); ++r) {
      if (!s.active[r]) continue;
      Atom a;
      a.pred = s.index;
      a.args.resize(s.arity);
      for (int k = 0; k < s.arity; ++k) a.args[k] = s.args[k][r];
      a.evidence = s.truth[r];
      a.prior = s.prior[r];
      a.is_query = s.club[r] == 1 || s.club[r] == 3;
      out.atoms.push_back(std::move(a));
      s.atom_id[r] = static_cast<int32_t>(out.atoms.size());
    }
  }
}

}  // namespace mln::ground::detail
