// LiveGrounder::update: the change to the tables, DRed over the active set,
// and the clause delta (live.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>

#include "ground/live_state.hpp"

namespace mln::ground {

using live::Atomref;
using live::Phase;
using live::Tuple;
using live::View;

namespace {

// Tuples of predicate p whose pattern rows may differ because a value of a
// domain changed: each pattern with one of its variables set to a changed
// value and the others over the old and new domains.
void domain_tuples(LiveGrounder::State& s, int p, const std::function<void(const Tuple&)>& f) {
  const live::Pred& P = s.preds[p];
  for (const kbmc::Pattern& pat : P.patterns) {
    std::vector<int> firsts;
    for (int i = 0; i < P.arity; ++i)
      if (kbmc::is_var(pat[i]) && std::find(pat.begin(), pat.end(), pat[i]) - pat.begin() == i) firsts.push_back(i);
    for (int fi : firsts) {
      auto d = s.domains.find(P.arg_types[fi]);
      if (d == s.domains.end()) continue;
      std::vector<int32_t> changed(d->second.added.begin(), d->second.added.end());
      changed.insert(changed.end(), d->second.removed.begin(), d->second.removed.end());
      if (changed.empty()) continue;
      Tuple t(P.arity, 0);
      for (int i = 0; i < P.arity; ++i)
        if (!kbmc::is_var(pat[i])) t[i] = static_cast<int32_t>(pat[i] - kbmc::kConst);
      std::function<void(size_t)> rec = [&](size_t k) {
        if (k == firsts.size()) {
          for (int i = 0; i < P.arity; ++i)
            if (kbmc::is_var(pat[i])) t[i] = t[std::find(pat.begin(), pat.end(), pat[i]) - pat.begin()];
          f(t);
          return;
        }
        const int i = firsts[k];
        if (i == fi) {
          for (int32_t v : changed) {
            t[i] = v;
            rec(k + 1);
          }
          return;
        }
        auto e = s.domains.find(P.arg_types[i]);
        if (e == s.domains.end()) return;
        for (int32_t v : e->second.list) {
          t[i] = v;
          rec(k + 1);
        }
        for (int32_t v : e->second.removed) {
          t[i] = v;
          rec(k + 1);
        }
      };
      rec(0);
    }
  }
}

bool same_row(const live::Row& a, const live::Row& b) {
  return a.exists == b.exists && a.truth == b.truth && a.club == b.club;
}

using Changed = std::vector<std::vector<Tuple>>;  // per predicate

// 1. The tables move to the new input; the old rows stay readable
// (View::Old).  Returns the tuples whose row differs.  Nothing changes
// before the input has been read whole.
Changed apply_tables(LiveGrounder::State& s, const GroundInput& in, LiveDelta& d) {
  const size_t np = s.preds.size();
  Changed changed(np);
  {
    std::vector<live::TupleMap<int8_t>> ev(np);
    for (size_t p = 0; p < np && p < in.evidence.size(); ++p) {
      const PredEvidence& e = in.evidence[p];
      const int arity = s.preds[p].arity;
      if (e.rows() > 0 && static_cast<int>(e.args.size()) != arity)
        throw lang::LangError(lang::LangError::Kind::ArityMismatch, 0, 0, s.prog.preds[p].name,
                              "evidence arity mismatch");
      Tuple t(arity);
      for (size_t r = 0; r < e.rows(); ++r) {
        for (int k = 0; k < arity; ++k) t[k] = e.args[k][r];
        const double pr = r < e.prior.size() ? e.prior[r] : std::nan("");
        ev[p][t] = (std::isnan(pr) ? e.truth[r] != 0 : pr >= 1) ? 1 : 0;
      }
    }
    for (size_t p = 0; p < np; ++p) {
      live::Pred& P = s.preds[p];
      auto set = [&](const Tuple& t, int8_t from, int8_t to) {
        P.old_ev.emplace(t, from);
        if (from >= 0) (from ? P.ev_true : P.ev_false).erase(t);
        if (to >= 0) {
          (to ? P.ev_true : P.ev_false).insert(t);
          P.ev[t] = to;
        } else {
          P.ev.erase(t);
        }
        changed[p].push_back(t);
      };
      std::vector<std::pair<Tuple, int8_t>> gone;
      for (const auto& [t, e] : P.ev)
        if (!ev[p].count(t)) gone.emplace_back(t, e);
      for (const auto& [t, e] : gone) set(t, e, -2);
      for (const auto& [t, e] : ev[p]) {
        auto it = P.ev.find(t);
        if (it == P.ev.end()) set(t, -2, e);
        else if (it->second != e) set(t, it->second, e);
      }
    }
    std::map<std::string, std::unordered_set<int32_t>> dom;
    for (const auto& [type, vals] : in.type_domains) dom[type].insert(vals.begin(), vals.end());
    for (auto& [type, vals] : dom) s.domains[type];
    for (auto& [type, D] : s.domains) {
      const std::unordered_set<int32_t>& nw = dom[type];
      for (int32_t v : D.set)
        if (!nw.count(v)) D.removed.insert(v);
      for (int32_t v : nw)
        if (!D.set.count(v)) D.added.insert(v);
      if (D.added.empty() && D.removed.empty()) continue;
      D.set = nw;
      D.list.assign(nw.begin(), nw.end());
      std::sort(D.list.begin(), D.list.end());
    }
    for (size_t p = 0; p < np; ++p) {
      if (!s.preds[p].materialised) continue;
      domain_tuples(s, static_cast<int>(p), [&](const Tuple& t) {
        if (!s.preds[p].old_ev.count(t) &&
            !same_row(s.row(static_cast<int>(p), t, View::Old), s.row(static_cast<int>(p), t, View::New)))
          changed[p].push_back(t);
      });
    }
    for (auto& c : changed) {
      std::sort(c.begin(), c.end());
      c.erase(std::unique(c.begin(), c.end()), c.end());
      d.tuples_changed += static_cast<int64_t>(c.size());
    }
  }
  return changed;
}

// 2. DRed's over-deletion: the active atoms with a derivation (in the old
// state) that reads a changed tuple or an over-deleted atom; they leave the
// active set.
std::vector<live::TupleSet> overdelete(LiveGrounder::State& s, const Changed& changed, LiveDelta& d) {
  const size_t np = s.preds.size();
  std::vector<live::TupleSet> over(np);
  std::deque<Atomref> work;
  for (size_t p = 0; p < np; ++p)
    for (const Tuple& t : changed[p]) {
      if (s.preds[p].active.contains(t) && over[p].insert(t).second) ++d.atoms_overdeleted;
      work.push_back({static_cast<int>(p), t});
    }
  std::vector<Atomref> fired;
  while (!work.empty()) {
    const Atomref x = std::move(work.front());
    work.pop_front();
    const bool cand_only = s.candidate_only(x.pred, x.tuple);
    for (const auto& [ci, lit] : s.uses[x.pred]) {
      const live::ClauseShape& c = s.shapes[ci];
      if (!c.worth || (cand_only && !c.closure_reads_candidates[lit])) continue;
      s.seeded(c, lit, x.tuple, View::Old, Phase::Closure, [&](const LiveGrounder::State::Binding& b) { s.fires(c, b, View::Old, &fired); });
    }
    for (Atomref& a : fired)
      if (s.preds[a.pred].active.contains(a.tuple) && over[a.pred].insert(a.tuple).second) {
        ++d.atoms_overdeleted;
        work.push_back(std::move(a));
      }
    fired.clear();
  }
  for (size_t p = 0; p < np; ++p)
    for (const Tuple& t : over[p]) {
      s.preds[p].old_active.emplace(t, 1);
      s.preds[p].active.erase(t);
    }
  return over;
}

// 3. Re-derivation and insertion, in the new state, to the fixpoint: from
// every changed tuple and every over-deleted atom, then from each atom that
// becomes active.
void rederive(LiveGrounder::State& s, const Changed& changed, const std::vector<live::TupleSet>& over) {
  const size_t np = s.preds.size();
  std::deque<Atomref> work;
  std::vector<Atomref> fired;
  for (size_t p = 0; p < np; ++p) {
    for (const Tuple& t : changed[p]) work.push_back({static_cast<int>(p), t});
    for (const Tuple& t : over[p]) work.push_back({static_cast<int>(p), t});
  }
  while (!work.empty()) {
    const Atomref x = std::move(work.front());
    work.pop_front();
    const bool cand_only = s.candidate_only(x.pred, x.tuple);
    for (const auto& [ci, lit] : s.uses[x.pred]) {
      const live::ClauseShape& c = s.shapes[ci];
      if (!c.worth || (cand_only && !c.closure_reads_candidates[lit])) continue;
      s.seeded(c, lit, x.tuple, View::New, Phase::Closure, [&](const LiveGrounder::State::Binding& b) { s.fires(c, b, View::New, &fired); });
    }
    for (Atomref& a : fired) {
      live::Pred& P = s.preds[a.pred];
      if (P.active.contains(a.tuple)) continue;
      P.old_active.emplace(a.tuple, 0);  // keeps 1 where it was over-deleted
      P.active.insert(a.tuple);
      work.push_back(std::move(a));
    }
    fired.clear();
  }
}

// 4. The clause delta: every binding that reads a changed tuple or an atom
// whose activity changed, grounded in both states; the consolidated clauses
// lose the old ground clause's weight and gain the new one's.
void clause_delta(LiveGrounder::State& s, Changed& changed, LiveDelta& d) {
  const size_t np = s.preds.size();
  for (size_t p = 0; p < np; ++p)
    for (const auto& [t, was] : s.preds[p].old_active) {
      const bool now = s.preds[p].active.contains(t);
      if ((was != 0) == now) continue;
      changed[p].push_back(t);
      const int32_t id = s.id_of(static_cast<int>(p), t);
      d.touched_atoms.push_back(id);
      (now ? d.atoms_added : d.atoms_removed) += 1;
    }
  live::TupleSet bindings;  // shape index, then the values
  for (size_t p = 0; p < np; ++p)
    for (const Tuple& t : changed[p]) {
      const bool cand_only = s.candidate_only(static_cast<int>(p), t);
      for (const auto& [ci, lit] : s.uses[p]) {
        const live::ClauseShape& c = s.shapes[ci];
        if (!c.any_mutable || (cand_only && !c.clause_reads_candidates[lit])) continue;
        for (View v : {View::Old, View::New})
          s.seeded(c, lit, t, v, Phase::Clauses, [&](const LiveGrounder::State::Binding& b) {
            Tuple k;
            k.reserve(b.size() + 1);
            k.push_back(ci);
            k.insert(k.end(), b.begin(), b.end());
            bindings.insert(std::move(k));
          });
      }
    }
  d.bindings = static_cast<int64_t>(bindings.size());
  Tuple lo, ln;
  double wo = 0, wn = 0;
  std::vector<Tuple> touched;
  for (const Tuple& k : bindings) {
    const live::ClauseShape& c = s.shapes[k[0]];
    const LiveGrounder::State::Binding b(k.begin() + 1, k.end());
    const bool ho = s.ground_clause(c, b, View::Old, lo, wo);
    const bool hn = s.ground_clause(c, b, View::New, ln, wn);
    if (ho == hn && (!ho || (lo == ln && wo == wn))) continue;
    if (ho) {
      auto it = s.clauses.find(lo);
      auto wt = it->second.find(wo);
      if (--wt->second == 0) it->second.erase(wt);
      if (it->second.empty()) {
        s.clauses.erase(it);
        ++d.clauses_removed;
      } else {
        ++d.clauses_reweighted;
      }
      touched.push_back(lo);
    }
    if (hn) {
      auto [it, fresh] = s.clauses.try_emplace(ln);
      ++it->second[wn];
      ++(fresh ? d.clauses_added : d.clauses_reweighted);
      touched.push_back(ln);
    }
  }
  for (const Tuple& l : touched)
    for (int32_t x : l) d.touched_atoms.push_back(std::abs(x));
  std::sort(d.touched_atoms.begin(), d.touched_atoms.end());
  d.touched_atoms.erase(std::unique(d.touched_atoms.begin(), d.touched_atoms.end()), d.touched_atoms.end());
}

}  // namespace

LiveDelta LiveGrounder::update(const GroundInput& in) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  State& s = *s_;
  const std::string why = live_unsupported(in, s.opts);
  if (!why.empty())
    throw lang::LangError(lang::LangError::Kind::BadValue, 0, 0, "", "live grounding does not maintain " + why);
  LiveDelta d;
  Changed changed = apply_tables(s, in, d);
  rederive(s, changed, overdelete(s, changed, d));
  clause_delta(s, changed, d);
  // 5. The update is complete: the old state goes.
  for (live::Pred& P : s.preds) {
    P.old_ev.clear();
    P.old_active.clear();
  }
  for (auto& [type, D] : s.domains) {
    D.added.clear();
    D.removed.clear();
  }
  d.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return d;
}

}  // namespace mln::ground
