// Live grounding (live.hpp): the build from scratch, the update (DRed over
// the active set, the clause delta) and the network it gives.
#include "ground/live.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>

#include "ground/internal.hpp"
#include "ground/live_state.hpp"

namespace mln::ground {

using live::Atomref;
using live::Phase;
using live::Tuple;
using live::View;

std::string live_unsupported(const GroundInput& in, const GroundOptions& opts) {
  if (!in.program) return "no program";
  const lang::Program& p = *in.program;
  if (opts.learning) return "weight learning";
  if (opts.activate_all) return "-activateAll";
  if (!opts.extra_closed_world.empty()) return "-cw";
  if (!p.rules.empty()) return "':-' or scoping rules";
  for (const auto& d : p.preds)
    if (d.has_key_constraint()) return "a key constraint on " + d.name;
  for (const auto& c : p.clauses) {
    if (!c.exist_vars.empty()) return "an EXIST clause";
    if (!c.weight_var.empty()) return "an embedded weight";
    if (!c.conditions.empty()) return "a clause condition";
  }
  for (const auto& e : in.evidence)
    for (double pr : e.prior)
      if (!std::isnan(pr) && pr > 0 && pr < 1) return "soft evidence";
  return "";
}

namespace live {

std::vector<TupleMap<int8_t>> evidence_maps(const GroundInput& in, size_t npreds) {
  std::vector<TupleMap<int8_t>> out(npreds);
  for (size_t p = 0; p < npreds && p < in.evidence.size(); ++p) {
    const PredEvidence& ev = in.evidence[p];
    const int arity = in.program->preds[p].arity();
    if (ev.rows() > 0 && static_cast<int>(ev.args.size()) != arity)
      throw lang::LangError(lang::LangError::Kind::ArityMismatch, 0, 0, in.program->preds[p].name,
                            "evidence arity mismatch");
    out[p].reserve(ev.rows());
    Tuple t(arity);
    for (size_t r = 0; r < ev.rows(); ++r) {
      for (int k = 0; k < arity; ++k) t[k] = ev.args[k][r];
      const double pr = r < ev.prior.size() ? ev.prior[r] : std::nan("");
      out[p][t] = (std::isnan(pr) ? ev.truth[r] != 0 : pr >= 1) ? 1 : 0;
    }
  }
  return out;
}

std::map<std::string, std::unordered_set<int32_t>> domain_sets(const GroundInput& in) {
  std::map<std::string, std::unordered_set<int32_t>> dom;
  for (const auto& [type, vals] : in.type_domains) dom[type].insert(vals.begin(), vals.end());
  return dom;
}

}  // namespace live

double LiveGrounder::candidate_tuples(const GroundInput& in, const GroundOptions& opts) {
  if (!live_unsupported(in, opts).empty()) return 0;
  State s(in, opts);
  std::map<std::string, std::unordered_set<int32_t>> dom = live::domain_sets(in);
  double n = 0;
  for (const live::Pred& p : s.preds)
    for (const kbmc::Pattern& pat : p.patterns) {
      double m = 1;
      for (size_t i = 0; i < pat.size(); ++i)
        if (kbmc::is_var(pat[i]) && std::find(pat.begin(), pat.end(), pat[i]) - pat.begin() == static_cast<long>(i))
          m *= static_cast<double>(dom[p.arg_types[i]].size());
      n += m;
    }
  return n;
}

LiveGrounder::LiveGrounder(const GroundInput& in, const GroundOptions& opts, int64_t max_clauses) {
  const std::string why = live_unsupported(in, opts);
  if (!why.empty())
    throw lang::LangError(lang::LangError::Kind::BadValue, 0, 0, "", "live grounding does not maintain " + why);
  s_ = std::make_unique<State>(in, opts);
  State& s = *s_;
  s.max_clauses = max_clauses;
  std::vector<live::TupleMap<int8_t>> ev = live::evidence_maps(in, s.preds.size());
  for (size_t p = 0; p < s.preds.size(); ++p) {
    for (const auto& [t, e] : ev[p]) (e ? s.preds[p].ev_true : s.preds[p].ev_false).insert(t);
    s.preds[p].ev = std::move(ev[p]);
  }
  for (auto& [type, vals] : live::domain_sets(in)) {
    State::Domain& d = s.domains[type];
    d.list.assign(vals.begin(), vals.end());
    std::sort(d.list.begin(), d.list.end());  // as update() keeps it
    d.set = std::move(vals);
  }
  // The closure: every clause once, then the clauses touching each newly active atom.
  std::deque<Atomref> work;
  std::vector<Atomref> fired;
  auto activate = [&](std::vector<Atomref>& f) {
    for (Atomref& a : f)
      if (!s.preds[a.pred].active.contains(a.tuple)) {
        s.preds[a.pred].active.insert(a.tuple);
        s.id_of(a.pred, a.tuple);
        work.push_back(std::move(a));
      }
    f.clear();
  };
  const double nshapes = static_cast<double>(std::max<size_t>(s.shapes.size(), 1));
  for (const live::ClauseShape& c : s.shapes) {
    s.progress_at = 0.3 * static_cast<double>(&c - s.shapes.data()) / nshapes;
    if (!c.worth) continue;
    State::Binding b(c.nvars, 0);
    std::vector<uint8_t> bound(c.nvars, 0);
    s.extend(c, -1, b, bound, View::New, Phase::Closure, [&](const State::Binding& x) { s.fires(c, x, View::New, &fired); });
    activate(fired);
  }
  s.progress_at = 0.3;
  s.closure_from(work, View::New, activate);
  // The clauses.
  Tuple lits;
  double w = 0;
  for (const live::ClauseShape& c : s.shapes) {
    s.progress_at = 0.6 + 0.4 * static_cast<double>(&c - s.shapes.data()) / nshapes;
    if (!c.any_mutable) continue;
    State::Binding b(c.nvars, 0);
    std::vector<uint8_t> bound(c.nvars, 0);
    s.extend(c, -1, b, bound, View::New, Phase::Clauses, [&](const State::Binding& x) {
      if (!s.ground_clause(c, x, View::New, lits, w)) return;
      ++s.clauses[lits][w];
      if ((s.clauses.size() & 4095) == 0) s.check_size();
    });
    s.check_size();
  }
}

LiveGrounder::~LiveGrounder() = default;

int64_t LiveGrounder::active_atoms() const {
  int64_t n = 0;
  for (const live::Pred& p : s_->preds) n += static_cast<int64_t>(p.active.size());
  return n;
}

int64_t LiveGrounder::clauses() const { return static_cast<int64_t>(s_->clauses.size()); }

GroundOutput LiveGrounder::output(bool dense, std::vector<int32_t>* id_map) const {
  const State& s = *s_;
  GroundOutput out;
  // Atom ids: this object's, or (dense) ground()'s own, by predicate and
  // then tuple (build_atom_table numbers a predicate's active rows in table
  // order, and its candidates are appended in tuple order).
  std::vector<int32_t> order;  // this object's ids, in output order
  for (size_t i = 0; i < s.atom_of.size(); ++i)
    if (!dense || s.preds[s.atom_of[i].pred].active.contains(s.atom_of[i].tuple)) order.push_back(static_cast<int32_t>(i + 1));
  if (dense)
    std::sort(order.begin(), order.end(), [&](int32_t x, int32_t y) {
      const Atomref& a = s.atom_of[x - 1];
      const Atomref& b = s.atom_of[y - 1];
      return a.pred != b.pred ? a.pred < b.pred : a.tuple < b.tuple;
    });
  std::vector<int32_t> map(s.atom_of.size() + 1, 0);
  for (int32_t id : order) {
    const Atomref& a = s.atom_of[id - 1];
    Atom o;
    o.evidence = -1;
    o.prior = std::nan("");
    o.is_query = false;
    o.pred = -1;
    if (s.preds[a.pred].active.contains(a.tuple)) {
      o.pred = a.pred;
      o.args = a.tuple;
      o.is_query = s.row(a.pred, a.tuple, View::New).club == 1;
    }
    out.atoms.push_back(std::move(o));
    if (out.atoms.back().pred >= 0) map[id] = static_cast<int32_t>(out.atoms.size());
  }
  // Clauses: their literals over the output's ids, each weight the sum of
  // its multiset in ascending order; in consolidate()'s order, by the
  // literals' hash and then the literals, so that a dense output is
  // ground()'s network array for array (the seeded answers too).
  // One buffer of literals and an index sorted by (hash, literals): no
  // allocation per clause (ER at 1,500 records: 42,000 clauses).
  const size_t m = s.clauses.size();
  std::vector<int32_t> buf;
  std::vector<size_t> off;
  std::vector<uint64_t> hash;
  std::vector<double> w;
  off.reserve(m + 1);
  hash.reserve(m);
  w.reserve(m);
  off.push_back(0);
  for (const auto& [key, weights] : s.clauses) {
    double x = 0;
    for (const auto& [v, n] : weights)
      for (int64_t k = 0; k < n; ++k) x += v;
    const size_t b = buf.size();
    for (int32_t l : key) buf.push_back(l > 0 ? map[l] : -map[-l]);
    std::sort(buf.begin() + static_cast<std::ptrdiff_t>(b), buf.end());
    hash.push_back(detail::RawClauses::clause_hash(buf.data() + b, buf.size() - b));
    off.push_back(buf.size());
    w.push_back(x);
  }
  std::vector<size_t> idx(m);
  for (size_t i = 0; i < m; ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    if (hash[a] != hash[b]) return hash[a] < hash[b];
    return std::lexicographical_compare(buf.begin() + static_cast<std::ptrdiff_t>(off[a]),
                                        buf.begin() + static_cast<std::ptrdiff_t>(off[a + 1]),
                                        buf.begin() + static_cast<std::ptrdiff_t>(off[b]),
                                        buf.begin() + static_cast<std::ptrdiff_t>(off[b + 1]));
  });
  for (size_t i : idx) out.network.clauses.add(buf.data() + off[i], off[i + 1] - off[i], w[i]);
  out.network.num_atoms = static_cast<int32_t>(out.atoms.size());
  out.network.is_query.assign(out.atoms.size() + 1, 0);
  for (size_t i = 0; i < out.atoms.size(); ++i) out.network.is_query[i + 1] = out.atoms[i].is_query;
  for (size_t p = 0; p < s.preds.size(); ++p)  // true evidence of query atoms (club 3), printed with MAP answers
    for (const Tuple& t : s.preds[p].ev_true.all())
      if (s.row(static_cast<int>(p), t, View::New).club == 3) out.true_query_evidence.emplace_back(static_cast<int32_t>(p), t);
  std::sort(out.true_query_evidence.begin(), out.true_query_evidence.end());
  for (const live::ClauseShape& c : s.shapes) out.relevant_clauses.push_back(c.index);
  out.relevant_clauses.erase(std::unique(out.relevant_clauses.begin(), out.relevant_clauses.end()),
                             out.relevant_clauses.end());
  if (s.opts.unit_propagate) out.unit_propagation = unit_propagate(out.network);
  if (id_map) *id_map = std::move(map);
  return out;
}

}  // namespace mln::ground
