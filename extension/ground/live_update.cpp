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

// A clause variable set to a domain value that came or went: the bindings
// with it are the ones whose candidate rows (KBMC's cross products over the
// domains) can differ, and extend() finds them through the other literals'
// indexes, where enumerating the candidate tuples with the value would visit
// a query predicate's whole row of the domain (3,000 tuples for one record).
struct ValueSeed {
  int shape, var;
  int32_t value;
};

std::vector<ValueSeed> value_seeds(const LiveGrounder::State& s) {
  std::vector<ValueSeed> out;
  for (size_t ci = 0; ci < s.shapes.size(); ++ci) {
    const live::ClauseShape& c = s.shapes[ci];
    for (int v = 0; v < c.nvars; ++v) {
      auto d = s.domains.find(c.var_types[v]);
      if (d == s.domains.end()) continue;
      for (int32_t k : d->second.added) out.push_back({static_cast<int>(ci), v, k});
      for (int32_t k : d->second.removed) out.push_back({static_cast<int>(ci), v, k});
    }
  }
  return out;
}

void for_value_seeds(LiveGrounder::State& s, const std::vector<ValueSeed>& seeds, bool closure, View view,
                     const std::function<void(const live::ClauseShape&, const LiveGrounder::State::Binding&)>& f) {
  for (const ValueSeed& x : seeds) {
    const live::ClauseShape& c = s.shapes[x.shape];
    if (closure ? !c.worth : !c.any_mutable) continue;
    LiveGrounder::State::Binding b(c.nvars, 0);
    std::vector<uint8_t> bound(c.nvars, 0);
    b[x.var] = x.value;
    bound[x.var] = 1;
    s.extend(c, -1, b, bound, view, closure ? Phase::Closure : Phase::Clauses,
             [&](const LiveGrounder::State::Binding& y) { f(c, y); });
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
    std::vector<live::TupleMap<int8_t>> ev = live::evidence_maps(in, np);
    for (size_t p = 0; p < np; ++p) {
      live::Pred& P = s.preds[p];
      auto set = [&](const Tuple& t, int8_t from, int8_t to) {
        P.note_old_ev(t, from);
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
    std::map<std::string, std::unordered_set<int32_t>> dom = live::domain_sets(in);
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
    // An active atom whose candidate row went with a domain value (its
    // other rows changed with the evidence, above; a value that came has no
    // active atom yet).
    for (size_t p = 0; p < np; ++p) {
      live::Pred& P = s.preds[p];
      if (!P.materialised || P.active.size() == 0) continue;
      for (int a = 0; a < P.arity; ++a) {
        const auto& D = s.domains[P.arg_types[a]];
        for (int32_t k : D.removed) {
          Tuple key(P.arity, 0);
          key[a] = k;
          P.active.for_each_match(1u << a, key, [&](const Tuple& t) {
            if (!P.old_ev.count(t) && !same_row(s.row(static_cast<int>(p), t, View::Old),
                                                s.row(static_cast<int>(p), t, View::New)))
              changed[p].push_back(t);
          });
        }
      }
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
std::vector<live::TupleSet> overdelete(LiveGrounder::State& s, const Changed& changed,
                                       const std::vector<ValueSeed>& seeds, LiveDelta& d) {
  const size_t np = s.preds.size();
  std::vector<live::TupleSet> over(np);
  std::deque<Atomref> work;
  for (size_t p = 0; p < np; ++p)
    for (const Tuple& t : changed[p]) {
      if (s.preds[p].active.contains(t) && over[p].insert(t).second) ++d.atoms_overdeleted;
      work.push_back({static_cast<int>(p), t});
    }
  std::vector<Atomref> fired;
  auto admit = [&](std::vector<Atomref>& f) {
    for (Atomref& a : f)
      if (s.preds[a.pred].active.contains(a.tuple) && over[a.pred].insert(a.tuple).second) {
        ++d.atoms_overdeleted;
        work.push_back(std::move(a));
      }
  };
  for_value_seeds(s, seeds, true, View::Old, [&](const live::ClauseShape& c, const LiveGrounder::State::Binding& b) {
    s.fires(c, b, View::Old, &fired);
  });
  admit(fired);
  s.closure_from(work, View::Old, admit);
  for (size_t p = 0; p < np; ++p)
    for (const Tuple& t : over[p]) {
      s.preds[p].note_old_active(t, true);
      s.preds[p].active.erase(t);
    }
  return over;
}

// 3. Re-derivation and insertion, in the new state, to the fixpoint: from
// every changed tuple and every over-deleted atom, then from each atom that
// becomes active.
void rederive(LiveGrounder::State& s, const Changed& changed, const std::vector<ValueSeed>& seeds,
              const std::vector<live::TupleSet>& over) {
  const size_t np = s.preds.size();
  std::deque<Atomref> work;
  std::vector<Atomref> fired;
  for (size_t p = 0; p < np; ++p) {
    for (const Tuple& t : changed[p]) work.push_back({static_cast<int>(p), t});
    for (const Tuple& t : over[p]) work.push_back({static_cast<int>(p), t});
  }
  auto activate = [&](std::vector<Atomref>& f) {
    for (Atomref& a : f) {
      live::Pred& P = s.preds[a.pred];
      if (P.active.contains(a.tuple)) continue;
      P.note_old_active(a.tuple, false);  // keeps true where it was over-deleted
      P.active.insert(a.tuple);
      work.push_back(std::move(a));
    }
  };
  for_value_seeds(s, seeds, true, View::New, [&](const live::ClauseShape& c, const LiveGrounder::State::Binding& b) {
    s.fires(c, b, View::New, &fired);
  });
  activate(fired);
  s.closure_from(work, View::New, activate);
}

// 4. The clause delta: every binding that reads a changed tuple or an atom
// whose activity changed, grounded in both states; the consolidated clauses
// lose the old ground clause's weight and gain the new one's.
void clause_delta(LiveGrounder::State& s, Changed& changed, const std::vector<ValueSeed>& seeds, LiveDelta& d) {
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
  auto collect = [&](const live::ClauseShape& c, const LiveGrounder::State::Binding& b) {
    Tuple k;
    k.reserve(b.size() + 1);
    k.push_back(static_cast<int32_t>(&c - s.shapes.data()));
    k.insert(k.end(), b.begin(), b.end());
    bindings.insert(std::move(k));
  };
  for (size_t p = 0; p < np; ++p)
    for (const Tuple& t : changed[p]) {
      const bool cand_only = s.candidate_only(static_cast<int>(p), t);
      for (const auto& [ci, lit] : s.uses[p]) {
        const live::ClauseShape& c = s.shapes[ci];
        if (!c.any_mutable || (cand_only && !c.clause_reads_candidates[lit])) continue;
        for (View v : {View::Old, View::New})
          s.seeded(c, lit, t, v, Phase::Clauses, [&](const LiveGrounder::State::Binding& b) { collect(c, b); });
      }
    }
  for (View v : {View::Old, View::New}) for_value_seeds(s, seeds, false, v, collect);
  d.bindings = static_cast<int64_t>(bindings.size());
  Tuple lo, ln;
  double wo = 0, wn = 0;
  auto touch = [&](const Tuple& lits) {
    for (int32_t x : lits) d.touched_atoms.push_back(std::abs(x));
  };
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
      touch(lo);
    }
    if (hn) {
      auto [it, fresh] = s.clauses.try_emplace(ln);
      ++it->second[wn];
      ++(fresh ? d.clauses_added : d.clauses_reweighted);
      touch(ln);
    }
  }
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
  s.progress_at = 0.5;
  Changed changed = apply_tables(s, in, d);
  const std::vector<ValueSeed> seeds = value_seeds(s);
  rederive(s, changed, seeds, overdelete(s, changed, seeds, d));
  clause_delta(s, changed, seeds, d);
  s.check_size();
  // 5. The update is complete: the old state goes.
  for (live::Pred& P : s.preds) {
    P.clear_old();
  }
  for (auto& [type, D] : s.domains) {
    D.added.clear();
    D.removed.clear();
  }
  d.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return d;
}

}  // namespace mln::ground
