// Live grounding: the predicate tables as Tuffy has them (rows, candidates,
// query marks, activity) under either view, and binding enumeration.
#include <algorithm>
#include <cmath>

#include "ground/live_state.hpp"

namespace mln::ground {

using live::Arg;
using live::ClauseShape;
using live::Pred;
using live::Tuple;

namespace {
constexpr unsigned kEvTrue = 1, kEvFalse = 2, kActive = 4, kCand = 8;
}  // namespace

LiveGrounder::State::State(const GroundInput& in, const GroundOptions& o) : prog(*in.program), opts(o) {
  const size_t np = prog.preds.size();
  preds.resize(np);
  ids.resize(np);
  uses.resize(np);
  kbmc::PredicateUse u = kbmc::predicate_use(prog);
  std::vector<std::vector<std::vector<int32_t>>> queries(np);
  std::vector<uint8_t> no_need(np);
  std::vector<uint8_t> has_query(np, 0);
  for (const QueryPattern& q : in.queries) {
    std::vector<int32_t> a = q.args;
    if (a.empty())
      for (int k = 0; k < prog.preds[q.pred].arity(); ++k) a.push_back(-(k + 1));
    queries[q.pred].push_back(a);
    has_query[q.pred] = 1;
  }
  for (size_t p = 0; p < np; ++p) {
    const lang::PredicateDecl& d = prog.preds[p];
    Pred& P = preds[p];
    P.arity = d.arity();
    P.cw = d.closed_world;
    P.cs = d.completely_specified;
    P.immutable = P.cw;  // no soft evidence on the live path
    P.arg_types = d.arg_types;
    P.queries = P.cw ? std::vector<std::vector<int32_t>>() : queries[p];  // mark_queries skips closed-world
    no_need[p] = ((u.safe_ref_only[p] && P.cw) || P.cs) ? 1 : 0;
  }
  kbmc::SearchResult r = kbmc::search(prog, queries, no_need, [&in](const lang::Term& t, lang::TypeKind k) {
    return static_cast<int64_t>(rule_constant_id(t, k, in.symbols));
  });
  for (size_t p = 0; p < np; ++p) {
    preds[p].materialised = !no_need[p] && !u.scoped[p] && !r.patterns[p].empty();
    if (preds[p].materialised) preds[p].patterns = r.patterns[p];
  }
  for (size_t ci = 0; ci < prog.clauses.size(); ++ci) {
    if (!r.relevant[ci]) continue;
    const lang::Clause& cl = prog.clauses[ci];
    ClauseShape c;
    c.index = static_cast<int>(ci);
    c.pos = cl.weight > 0;
    c.weight = cl.hard && cl.weight == 0 ? kHardWeight : cl.weight;
    std::vector<std::string> names;
    bool neg_ow = false;
    for (const lang::Literal& l : cl.lits) {
      const Pred& P = preds[l.pred];
      c.preds.push_back(l.pred);
      c.positive.push_back(l.positive);
      if (l.positive == c.pos && !P.immutable) c.worth = true;
      if (!l.positive && !P.cw) neg_ow = true;
      if (!P.immutable) {
        c.any_mutable = true;
        ++c.mutable_lits;
      }
      std::vector<Arg> args;
      for (size_t a = 0; a < l.args.size(); ++a) {
        Arg x;
        if (l.args[a].is_var()) {
          auto at = std::find(names.begin(), names.end(), l.args[a].text);
          x.var = static_cast<int>(at - names.begin());
          if (at == names.end()) {
            names.push_back(l.args[a].text);
            c.var_types.push_back(prog.preds[l.pred].arg_types[a]);
          }
        } else {
          x.konst = rule_constant_id(l.args[a], prog.preds[l.pred].arg_kinds[a], in.symbols);
        }
        args.push_back(x);
      }
      c.args.push_back(std::move(args));
    }
    c.worth = c.worth && (c.pos || neg_ow);
    c.nvars = static_cast<int>(names.size());
    const int n = static_cast<int>(cl.lits.size());
    std::vector<uint8_t> seen(names.size(), 0);
    c.inner.assign(n, false);
    for (int pass = 0; pass < 2; ++pass)  // Tuffy's FROM list: negative literals, then positive
      for (int i = 0; i < n; ++i) {
        if (c.positive[i] != (pass == 1)) continue;
        c.order.push_back(i);
        bool fresh = false;
        for (const Arg& x : c.args[i])
          if (x.var >= 0 && !seen[x.var]) fresh = seen[x.var] = 1;
        c.inner[i] = !c.positive[i] || fresh;
      }
    c.closure_reads_candidates.assign(n, false);
    c.clause_reads_candidates.assign(n, false);
    for (int i = 0; i < n; ++i) {
      const Pred& P = preds[c.preds[i]];
      const bool reads = (c.inner[i] && (c.positive[i] || (!c.pos && !P.cw))) || (c.positive[i] && P.cs);
      c.closure_reads_candidates[i] = reads || (c.positive[i] == c.pos && !P.immutable);
      c.clause_reads_candidates[i] = reads && !(c.mutable_lits == 1 && !P.immutable);
      uses[c.preds[i]].push_back({static_cast<int>(shapes.size()), i});
    }
    shapes.push_back(std::move(c));
  }
}

bool LiveGrounder::State::in_domain(const std::string& type, int32_t v, View view) const {
  auto it = domains.find(type);
  if (it == domains.end()) return false;
  const Domain& d = it->second;
  if (view == View::New) return d.set.count(v) > 0;
  return (d.set.count(v) > 0 && !d.added.count(v)) || d.removed.count(v) > 0;
}

bool LiveGrounder::State::matches(const kbmc::Pattern& pat, const Pred& p, const Tuple& t, View view) const {
  for (size_t i = 0; i < pat.size(); ++i) {
    bool ok;
    if (!kbmc::is_var(pat[i])) {
      ok = t[i] == static_cast<int32_t>(pat[i] - kbmc::kConst);
    } else {
      const size_t first = static_cast<size_t>(std::find(pat.begin(), pat.end(), pat[i]) - pat.begin());
      ok = first == i ? in_domain(p.arg_types[i], t[i], view) : t[i] == t[first];
    }
    if (!ok) return false;
  }
  return true;
}

bool LiveGrounder::State::candidate(const Pred& p, const Tuple& t, View view) const {
  for (const kbmc::Pattern& pat : p.patterns)
    if (matches(pat, p, t, view)) return true;
  return false;
}

bool LiveGrounder::State::query_match(const Pred& p, const Tuple& t) const {
  for (const std::vector<int32_t>& q : p.queries) {
    bool ok = true;
    for (size_t i = 0; i < q.size() && ok; ++i) {
      if (q[i] >= 0) ok = t[i] == q[i];
      else ok = t[std::find(q.begin(), q.end(), q[i]) - q.begin()] == t[i];
    }
    if (ok) return true;
  }
  return false;
}

int8_t LiveGrounder::State::explicit_truth(const Pred& P, const Tuple& t, View view) const {
  if (view == View::Old) {
    auto o = P.old_ev.find(t);
    if (o != P.old_ev.end()) return o->second;
  }
  auto it = P.ev.find(t);
  return it == P.ev.end() ? int8_t{-2} : it->second;
}

live::Row LiveGrounder::State::row(int pred, const Tuple& t, View view) const {
  const Pred& P = preds[pred];
  const int8_t e = explicit_truth(P, t, view);
  Row r;
  if (e >= 0) {
    r.exists = true;
    r.truth = e;
    r.club = query_match(P, t) ? 3 : 2;
  } else if (P.materialised && candidate(P, t, view)) {
    r.exists = true;
    if (P.cw) {
      r.truth = 0;
      r.club = 2;
    } else {
      r.club = query_match(P, t) ? 1 : 0;
    }
  }
  return r;
}

bool LiveGrounder::State::active(int pred, const Tuple& t, View view) const {
  const Pred& P = preds[pred];
  if (view == View::Old) {
    auto o = P.old_active.find(t);
    if (o != P.old_active.end()) return o->second != 0;
  }
  return P.active.contains(t);
}

bool LiveGrounder::State::candidate_only(int pred, const Tuple& t) const {
  const Pred& P = preds[pred];
  return !P.old_ev.count(t) && !P.ev.count(t) && !active(pred, t, View::Old) && !active(pred, t, View::New);
}

int32_t LiveGrounder::State::id_of(int pred, const Tuple& t) {
  auto [it, fresh] = ids[pred].emplace(t, 0);
  if (fresh) {
    atom_of.push_back({pred, t});
    it->second = static_cast<int32_t>(atom_of.size());
  }
  return it->second;
}

// The implicit candidate rows (KBMC's cross products over the domains,
// minus the explicit evidence), each once although several patterns hold it.
void LiveGrounder::State::for_candidates(int pred, uint32_t mask, const Tuple& key, View view,
                                         const std::function<void(const Tuple&)>& f) {
  const Pred& P = preds[pred];
  for (size_t pi = 0; pi < P.patterns.size(); ++pi) {
    const kbmc::Pattern& pat = P.patterns[pi];
    Tuple t(P.arity, 0);
    std::vector<int> free_pos;  // first positions of variables left to enumerate
    bool ok = true;
    for (int i = 0; i < P.arity && ok; ++i) {
      const bool is_bound = mask >> i & 1u;
      if (!kbmc::is_var(pat[i])) {
        t[i] = static_cast<int32_t>(pat[i] - kbmc::kConst);
        ok = !is_bound || key[i] == t[i];
        continue;
      }
      const int first = static_cast<int>(std::find(pat.begin(), pat.end(), pat[i]) - pat.begin());
      if (is_bound) {
        t[i] = key[i];
        if (first != i && (mask >> first & 1u)) ok = key[first] == key[i];
      } else if (first == i) {
        bool later_bound = false;
        for (int j = i + 1; j < P.arity; ++j)
          if (pat[j] == pat[i] && (mask >> j & 1u)) { later_bound = true; t[i] = key[j]; }
        if (!later_bound) free_pos.push_back(i);
      }
    }
    if (!ok) continue;
    auto emit = [&](Tuple& u) {
      for (int i = 0; i < P.arity; ++i)  // repeated variables take their first position's value
        if (kbmc::is_var(pat[i])) u[i] = u[std::find(pat.begin(), pat.end(), pat[i]) - pat.begin()];
      if (!matches(pat, P, u, view)) return;
      for (int i = 0; i < P.arity; ++i)
        if ((mask >> i & 1u) && u[i] != key[i]) return;
      if (explicit_truth(P, u, view) >= 0) return;  // an evidence row, not a candidate
      for (size_t pj = 0; pj < pi; ++pj)  // an earlier pattern holds it: emitted there
        if (matches(P.patterns[pj], P, u, view)) return;
      f(u);
    };
    std::function<void(size_t)> rec = [&](size_t k) {
      if (k == free_pos.size()) {
        emit(t);
        return;
      }
      const int i = free_pos[k];
      auto d = domains.find(P.arg_types[i]);
      if (d == domains.end()) return;
      for (int32_t v : d->second.list) {
        t[i] = v;
        rec(k + 1);
      }
      if (view == View::Old)
        for (int32_t v : d->second.removed) {
          t[i] = v;
          rec(k + 1);
        }
    };
    rec(0);
  }
}

void LiveGrounder::State::for_rows(int pred, uint32_t mask, const Tuple& key, unsigned kinds, View view,
                                   const std::function<void(const Tuple&)>& f) {
  Pred& P = preds[pred];
  const bool old = view == View::Old;
  if (kinds & kCand) kinds &= ~kActive;  // an active atom is a candidate row: enumerated once, there
  for (int8_t truth : {int8_t{1}, int8_t{0}}) {
    if (!(kinds & (truth ? kEvTrue : kEvFalse))) continue;
    live::TupleIndex& ix = truth ? P.ev_true : P.ev_false;
    ix.for_each_match(mask, key, [&](const Tuple& t) {
      if (!old || !P.old_ev.count(t)) f(t);
    });
    if (old) (truth ? P.old_ev_true : P.old_ev_false).for_each_match(mask, key, f);
  }
  if (kinds & kActive) {
    P.active.for_each_match(mask, key, [&](const Tuple& t) {
      if (!old || !P.old_active.count(t)) f(t);
    });
    if (old) P.old_active_on.for_each_match(mask, key, f);
  }
  if (kinds & kCand) for_candidates(pred, mask, key, view, f);
}

Tuple LiveGrounder::State::tuple_of(const ClauseShape& c, int lit, const Binding& b) const {
  Tuple t;
  t.reserve(c.args[lit].size());
  for (const Arg& x : c.args[lit]) t.push_back(x.var >= 0 ? b[x.var] : x.konst);
  return t;
}

// The join order adapts to what the seed bound: next comes the remaining
// inner literal (the ones Tuffy's FROM list inner-joins) with the most bound
// arguments, so that a seeded binding probes indexes instead of scanning a
// table.  A positive literal Tuffy left-joins is never enumerated (an absent
// tuple passes it); the caller tests it with the whole binding.
void LiveGrounder::State::extend(const ClauseShape& c, int skip, Binding& b, std::vector<uint8_t>& bound,
                                 View view, Phase phase, const Visit& f) {
  const int n = static_cast<int>(c.preds.size());
  std::vector<uint8_t> done(n, 0);
  for (int i = 0; i < n; ++i) done[i] = i == skip || !c.inner[i];
  std::function<void()> step = [&] {
    int j = -1, best = -1;
    uint32_t mask = 0;
    for (int i : c.order) {
      if (done[i]) continue;
      uint32_t m = 0;
      int nb = 0;
      for (size_t a = 0; a < c.args[i].size(); ++a) {
        const int v = c.args[i][a].var;
        if (v < 0 || bound[v]) {
          m |= 1u << a;
          ++nb;
        }
      }
      if (nb == static_cast<int>(c.args[i].size())) continue;  // bound already: tested with the binding
      if (nb > best) {
        best = nb;
        j = i;
        mask = m;
      }
    }
    if (j < 0) {
      tick();
      f(b);
      return;
    }
    const std::vector<Arg>& args = c.args[j];
    Tuple key(args.size(), 0);
    for (size_t a = 0; a < args.size(); ++a)
      if (mask >> a & 1u) key[a] = args[a].var < 0 ? args[a].konst : b[args[a].var];
    const Pred& P = preds[c.preds[j]];
    unsigned kinds;
    if (phase == Phase::Clauses && c.mutable_lits == 1 && !P.immutable && !P.cs) {
      kinds = kActive;  // the clause's only mutable literal: an inactive atom leaves the clause empty
    } else if (c.positive[j]) {
      kinds = kEvFalse | kCand;
    } else {
      kinds = kEvTrue | kActive;
      if (!c.pos && !P.cw) kinds |= kCand;
    }
    done[j] = 1;
    for_rows(c.preds[j], mask, key, kinds, view, [&](const Tuple& t) {
      std::vector<int> set;
      bool ok = true;
      for (size_t a = 0; a < args.size() && ok; ++a) {
        const int v = args[a].var;
        if (v < 0 || (mask >> a & 1u)) continue;
        if (bound[v]) {
          ok = b[v] == t[a];
        } else {
          b[v] = t[a];
          bound[v] = 1;
          set.push_back(v);
        }
      }
      if (ok) step();
      for (int v : set) bound[v] = 0;
    });
    done[j] = 0;
  };
  step();
}

void LiveGrounder::State::seeded(const ClauseShape& c, int lit, const Tuple& t, View view, Phase phase,
                                 const Visit& f) {
  tick();
  Binding b(c.nvars, 0);
  std::vector<uint8_t> bound(c.nvars, 0);
  const std::vector<Arg>& args = c.args[lit];
  for (size_t a = 0; a < args.size(); ++a) {
    const int v = args[a].var;
    if (v < 0) {
      if (args[a].konst != t[a]) return;
    } else if (bound[v]) {
      if (b[v] != t[a]) return;
    } else {
      b[v] = t[a];
      bound[v] = 1;
    }
  }
  extend(c, lit, b, bound, view, phase, f);
}

void LiveGrounder::State::closure_from(std::deque<live::Atomref>& work, View view,
                                       const std::function<void(std::vector<live::Atomref>&)>& admit) {
  std::vector<live::Atomref> fired;
  while (!work.empty()) {
    const live::Atomref x = std::move(work.front());
    work.pop_front();
    const bool cand_only = candidate_only(x.pred, x.tuple);
    for (const auto& [ci, lit] : uses[x.pred]) {
      const ClauseShape& c = shapes[ci];
      if (!c.worth || (cand_only && !c.closure_reads_candidates[lit])) continue;
      seeded(c, lit, x.tuple, view, Phase::Closure, [&](const Binding& b) { fires(c, b, view, &fired); });
    }
    admit(fired);
    fired.clear();
  }
}

bool LiveGrounder::State::fires(const ClauseShape& c, const Binding& b, View view, std::vector<live::Atomref>* out) {
  const size_t n = c.preds.size();
  std::vector<Row> rows(n);
  std::vector<Tuple> ts(n);
  bool neg_unknown = false;
  for (size_t i = 0; i < n; ++i) {
    const int p = c.preds[i];
    const Pred& P = preds[p];
    ts[i] = tuple_of(c, static_cast<int>(i), b);
    const Row& r = rows[i] = row(p, ts[i], view);
    bool pass;
    if (!r.exists) {
      if (c.inner[i]) return false;
      pass = c.positive[i] && !P.cs;
    } else if (c.positive[i]) {
      pass = r.truth == 0 || active(p, ts[i], view) || (!P.cw && r.club < 2);
    } else {
      pass = r.truth == 1 || active(p, ts[i], view) || (!P.cw && !c.pos && r.club < 2);
    }
    if (!pass) return false;
    neg_unknown |= !c.positive[i] && !P.cw && r.unknown();
  }
  if (!c.pos && !neg_unknown) return false;
  if (out)
    for (size_t i = 0; i < n; ++i)
      if (c.positive[i] == c.pos && !preds[c.preds[i]].immutable && rows[i].unknown())
        out->push_back({c.preds[i], std::move(ts[i])});
  return true;
}

bool LiveGrounder::State::ground_clause(const ClauseShape& c, const Binding& b, View view, Tuple& lits, double& w) {
  const size_t n = c.preds.size();
  lits.clear();
  bool ok_neg = c.pos;
  for (size_t i = 0; i < n; ++i) {
    const int p = c.preds[i];
    const Pred& P = preds[p];
    const Tuple t = tuple_of(c, static_cast<int>(i), b);
    const Row r = row(p, t, view);
    const bool act = !P.immutable && r.exists && active(p, t, view);
    const bool unk = !P.cw && r.unknown();  // no soft evidence on the live path
    bool pass;
    if (!r.exists) {
      if (c.inner[i]) return false;
      pass = c.positive[i] && !P.cs;
    } else if (c.positive[i]) {
      pass = r.truth == 0 || unk;
    } else {
      pass = r.truth == 1 || (c.pos ? act : unk);
    }
    if (!pass) return false;
    ok_neg |= act || (!c.positive[i] && !P.cw && r.unknown());
    if (act) {
      const int32_t id = id_of(p, t);
      lits.push_back(c.positive[i] ? id : -id);
    }
  }
  if (!ok_neg) return false;
  std::sort(lits.begin(), lits.end());
  lits.erase(std::unique(lits.begin(), lits.end()), lits.end());
  if (lits.empty()) return false;
  w = c.weight;
  if (lits.size() == 1 && lits[0] < 0) {  // unit flipping, as RawClauses::add
    lits[0] = -lits[0];
    w = -w;
  }
  return true;
}

}  // namespace mln::ground
