// Closure of active atoms (reference §5.4) as a semi-naive fixpoint: round 1
// evaluates every relevant clause; later rounds evaluate, for each literal on
// a predicate that gained active atoms, the clause with that literal joined
// against the delta only.  Also -activateAll (§5.8) and the atom table (§5.5.1).
#include <algorithm>
#include <climits>
#include <cstdint>
#include <utility>
#include <vector>

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
    static_fail_.resize(n_);
    fail_ready_.assign(n_, 0);
    ix_ready_.assign(n_, 0);
    sorted_.assign(n_, -1);
    unknown_ix_.resize(n_);
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
  // A predicate's literal sets under the current active set.  The ones that
  // hold a query predicate's whole candidate domain (pos_pass, and
  // neg_pass_neg on an open-world predicate: every unknown atom) are built
  // only for a plan that reads them, never once per round: the domain
  // (1,500 records: 2.25M pairs) dwarfs the active atoms, and per-round
  // copies of it were the closure's cost (issue #63).  pos_fail is the
  // static part (no evidence false, not unknown) minus the active atoms.
  struct RoundSets {
    bool ready = false, have_pos_pass = false, have_neg_pass_neg = false;
    gpu::Relation active, pos_pass, pos_fail, neg_pass_pos, neg_pass_neg;
  };

  RoundSets& sets(int p) {
    RoundSets& r = round_[p];
    if (r.ready) return r;
    const StaticSets& s = st_[p];
    const int nc = c_.preds[p].arity + 2;
    if (!fail_ready_[p]) {  // view minus (evidence false, unknown if open world): the same every round
      const PredState& ps = c_.preds[p];
      static_fail_[p] = view_rows_where(c_, p, [&](size_t t) {
        return ps.truth[t] != 0 && (ps.closed_world || ps.club[t] >= 2);
      });
      fail_ready_[p] = true;
    }
    r.active = view_rows_of(c_, p, act_[p]);
    r.pos_fail = without_tids(c_, static_fail_[p], p, act_[p]);
    r.neg_pass_pos = union_distinct(c_, {s.ev_true, r.active}, nc);
    r.ready = true;
    return r;
  }

  // Evidence false, active, and (open world) unknown: a positive literal's pass set.
  const gpu::Relation& pos_pass(int p) {
    RoundSets& r = sets(p);
    if (!r.have_pos_pass) {
      std::vector<gpu::Relation> pp{st_[p].ev_false, r.active};
      if (!c_.preds[p].closed_world) pp.push_back(st_[p].unknown);
      r.pos_pass = union_distinct(c_, pp, c_.preds[p].arity + 2);
      r.have_pos_pass = true;
    }
    return r.pos_pass;
  }

  // Evidence true, active, and (open world) unknown: a negative literal's pass set in a negative clause.
  const gpu::Relation& neg_pass_neg(int p) {
    RoundSets& r = sets(p);
    if (!r.have_neg_pass_neg) {
      r.neg_pass_neg = c_.preds[p].closed_world
                           ? r.neg_pass_pos
                           : union_distinct(c_, {st_[p].ev_true, r.active, st_[p].unknown}, c_.preds[p].arity + 2);
      r.have_neg_pass_neg = true;
    }
    return r.neg_pass_neg;
  }

  // The literal sets of literal i of `cl`, with the domain-sized pass sets
  // only where the plan reads them: a literal joined while some variable is
  // still unbound reads `pass` (variables are bound by the literals before
  // it in `order`; conditions bind none).
  LiteralSets literal_sets_of(const lang::Clause& cl, bool pos, const std::vector<int>& order, int i) {
    const lang::Literal& l = cl.lits[i];
    const int p = l.pred;
    const bool all_bound = bound_at(cl.lits, order, i);
    struct Sets {
      gpu::Relation pos_pass, pos_fail, neg_pass_pos, neg_pass_neg;
    } v;
    RoundSets& r = sets(p);
    v.pos_fail = r.pos_fail;
    v.neg_pass_pos = r.neg_pass_pos;
    const bool spec = c_.preds[p].completely_specified;
    if (l.positive && (!all_bound || spec)) v.pos_pass = pos_pass(p);
    if (!l.positive && !pos) v.neg_pass_neg = neg_pass_neg(p);
    return literal_sets(v, l, spec, pos);
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
      const int p = cl.lits[i].pred;
      LiteralSets s;
      if (i == delta_lit) {
        s.pass = view_rows_of(c_, p, delta_[p]);
        return s;
      }
      return literal_sets_of(cl, pos, order, i);
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

  // Collects the unknown atoms of the activatable literals; run() drops the
  // ones already active (one difference with the active set, where a
  // per-round "unknown and not active" set would copy the domain).
  void activate(const lang::Clause& cl, bool pos, const Bindings& b, std::vector<std::vector<gpu::Relation>>& fresh) {
    if (b.rel.rows() == 0) return;
    for (size_t i = 0; i < cl.lits.size(); ++i) {
      const lang::Literal& l = cl.lits[i];
      if (l.positive != pos || c_.preds[l.pred].immutable()) continue;
      int tc = b.col(tid_var(static_cast<int>(i)));
      gpu::Relation t = tc >= 0 ? unknown_of_tids(l.pred, c_.eng.distinct(c_.eng.project(b.rel, {tc})))
                                : unknown_of_bindings(b, l);
      if (t.rows() > 0) fresh[l.pred].push_back(t);
    }
  }

  // The tids among `tids` ([tid]) of unknown atoms (club < 2), in their
  // order: a host pass over a few rows, where a semi-join with the unknown
  // atoms would index the whole candidate domain at each call.
  gpu::Relation unknown_of_tids(int p, const gpu::Relation& tids) {
    gpu::HostTable t = c_.eng.download(tids);
    const std::vector<uint8_t>& club = c_.preds[p].club;
    gpu::HostTable keep;
    keep.cols.resize(1);
    if (!t.cols.empty())
      for (int32_t tid : t.cols[0])
        if (club[static_cast<size_t>(tid)] < 2) keep.cols[0].push_back(tid);
    return c_.eng.upload(keep);
  }

  // The tids of the unknown atoms of literal `l` under bindings `b` (every
  // variable of l bound), through a host index of the unknown atoms by
  // their arguments' hash, built once per predicate.
  gpu::Relation unknown_of_bindings(const Bindings& b, const lang::Literal& l) {
    const int p = l.pred;
    const PredState& ps = c_.preds[p];
    const int k = static_cast<int>(l.args.size());
    std::vector<int> var_col(k, -1);
    std::vector<int32_t> konst(k, 0);
    std::vector<int> cols;
    for (int a = 0; a < k; ++a) {
      if (l.args[a].is_var()) {
        const int col = b.col(l.args[a].text);
        auto at = std::find(cols.begin(), cols.end(), col);
        var_col[a] = static_cast<int>(at - cols.begin());
        if (at == cols.end()) cols.push_back(col);
      } else {
        konst[a] = c_.constant_id(l.args[a], c_.prog.preds[p].arg_kinds[a]);
      }
    }
    gpu::HostTable rows;
    if (!cols.empty()) rows = c_.eng.download(c_.eng.distinct(c_.eng.project(b.rel, cols)));
    const size_t n = cols.empty() ? 1 : rows.rows();
    gpu::HostTable out;
    out.cols.resize(1);
    std::vector<int32_t> args(k);
    if (rows_sorted(p)) {  // one block of rows in argument order (a query predicate's domain): binary search
      auto less_row = [&](size_t row, const std::vector<int32_t>& key) {
        for (int a = 0; a < k; ++a)
          if (ps.args[a][row] != key[a]) return ps.args[a][row] < key[a];
        return false;
      };
      for (size_t r = 0; r < n; ++r) {
        for (int a = 0; a < k; ++a) args[a] = var_col[a] >= 0 ? rows.cols[var_col[a]][r] : konst[a];
        size_t lo = 0, hi = ps.rows();
        while (lo < hi) {
          const size_t mid = lo + (hi - lo) / 2;
          if (less_row(mid, args)) lo = mid + 1;
          else hi = mid;
        }
        if (lo < ps.rows() && !less_row(lo, args) && ps.club[lo] < 2) {
          bool same = true;
          for (int a = 0; a < k && same; ++a) same = ps.args[a][lo] == args[a];
          if (same) out.cols[0].push_back(static_cast<int32_t>(lo));
        }
      }
      return c_.eng.upload(out);
    }
    const std::vector<std::pair<uint64_t, int32_t>>& index = unknown_index(p);
    for (size_t r = 0; r < n; ++r) {
      for (int a = 0; a < k; ++a) args[a] = var_col[a] >= 0 ? rows.cols[var_col[a]][r] : konst[a];
      const uint64_t h = args_hash(args.data(), k);
      for (auto it = std::lower_bound(index.begin(), index.end(), std::make_pair(h, INT32_MIN));
           it != index.end() && it->first == h; ++it) {
        bool same = true;
        for (int a = 0; a < k && same; ++a) same = ps.args[a][static_cast<size_t>(it->second)] == args[a];
        if (same) out.cols[0].push_back(it->second);
      }
    }
    return c_.eng.upload(out);
  }

  // Whether p's rows are in strictly increasing argument order (checked once).
  bool rows_sorted(int p) {
    if (sorted_[p] < 0) {
      const PredState& ps = c_.preds[p];
      sorted_[p] = 1;
      for (size_t r = 1; r < ps.rows() && sorted_[p]; ++r) {
        int cmp = 0;
        for (int a = 0; a < ps.arity && cmp == 0; ++a)
          cmp = ps.args[a][r - 1] < ps.args[a][r] ? -1 : ps.args[a][r - 1] > ps.args[a][r] ? 1 : 0;
        if (cmp >= 0) sorted_[p] = 0;
      }
    }
    return sorted_[p] == 1;
  }

  static uint64_t args_hash(const int32_t* a, int k) {
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < k; ++i) h = (h ^ static_cast<uint32_t>(a[i])) * 0x100000001B3ull + (h >> 29);
    return h;
  }

  const std::vector<std::pair<uint64_t, int32_t>>& unknown_index(int p) {
    std::vector<std::pair<uint64_t, int32_t>>& ix = unknown_ix_[p];
    if (!ix_ready_[p]) {
      const PredState& ps = c_.preds[p];
      const int k = ps.arity;
      std::vector<int32_t> args(k);
      for (size_t r = 0; r < ps.rows(); ++r) {
        if (ps.club[r] >= 2) continue;
        for (int a = 0; a < k; ++a) args[a] = ps.args[a][r];
        ix.emplace_back(args_hash(args.data(), k), static_cast<int32_t>(r));
      }
      std::sort(ix.begin(), ix.end());
      ix_ready_[p] = true;
    }
    return ix;
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
  std::vector<gpu::Relation> static_fail_;
  std::vector<uint8_t> fail_ready_, ix_ready_;
  std::vector<int8_t> sorted_;
  std::vector<std::vector<std::pair<uint64_t, int32_t>>> unknown_ix_;
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
