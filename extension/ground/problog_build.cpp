// Steps 2 and 3 of grounding a ProbLog program (problog_ground.hpp): the
// ground rules from the instance relations, relevance backwards from the
// query and evidence atoms, and the firing order.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "ground/problog_ground.hpp"
#include "ground/problog_internal.hpp"

namespace mln::ground::problog {

namespace {

// An atom of a rule with its arguments read from an instance row: column
// `col` (1-based: column 0 is the leading 0) or a constant.
struct ArgSrc {
  int col = -1;
  int32_t value = 0;
};
struct AtomPat {
  int pred = -1;
  std::vector<ArgSrc> args;
};

int32_t encode(const pl::Term& t, dl::Symbols& syms) {
  return t.kind == pl::Term::Kind::Int ? static_cast<int32_t>(t.ival) : syms.intern(t.name);
}

AtomPat pattern(const pl::Program& p, const pl::Atom& a, const std::vector<std::string>& vars, int* fresh,
                dl::Symbols& syms) {
  AtomPat at;
  at.pred = a.pred;
  const bool derived = p.preds[static_cast<size_t>(a.pred)].derived;
  for (const pl::Term& t : a.args) {
    ArgSrc s;
    std::string name = t.name;
    if (t.kind == pl::Term::Kind::Anon && derived && fresh) name = detail::fresh_var((*fresh)++);
    if (t.kind == pl::Term::Kind::Var || (t.kind == pl::Term::Kind::Anon && derived && fresh))
      s.col = 1 + static_cast<int>(std::find(vars.begin(), vars.end(), name) - vars.begin());
    else if (t.is_const())
      s.value = encode(t, syms);
    at.args.push_back(s);
  }
  return at;
}

// The ground atoms, each (predicate, values) once; a nullary atom by its
// predicate alone (GROWINGBODY 400 reads 10.7 million of them).
class Atoms {
 public:
  explicit Atoms(size_t preds) : nullary_(preds, -1) {}
  int32_t find(int pred, const std::vector<int32_t>& v) const {
    if (v.empty()) return nullary_[static_cast<size_t>(pred)];
    auto it = ids_.find(key(pred, v));
    return it == ids_.end() ? -1 : it->second;
  }
  int32_t get(int pred, const std::vector<int32_t>& v) {
    if (v.empty()) {
      int32_t& id = nullary_[static_cast<size_t>(pred)];
      if (id < 0) id = n_++;
      return id;
    }
    auto [it, fresh] = ids_.emplace(key(pred, v), n_);
    if (fresh) ++n_;
    return it->second;
  }
  size_t size() const { return static_cast<size_t>(n_); }

 private:
  static std::string key(int pred, const std::vector<int32_t>& v) {
    std::string k(reinterpret_cast<const char*>(&pred), sizeof pred);
    k.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int32_t));
    return k;
  }
  std::vector<int32_t> nullary_;
  std::unordered_map<std::string, int32_t> ids_;
  int32_t n_ = 0;
};

std::vector<int32_t> values(const AtomPat& a, const gpu::HostTable& t, size_t row) {
  std::vector<int32_t> v(a.args.size());
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = a.args[i].col >= 0 ? t.cols[static_cast<size_t>(a.args[i].col)][row] : a.args[i].value;
  return v;
}

std::string render(const pl::Program& p, const dl::Program& dp, const dl::Symbols& syms, int pred,
                   const std::vector<int32_t>& v) {
  const pl::Predicate& pr = p.preds[static_cast<size_t>(pred)];
  const dl::Relation& rel = dp.rels[static_cast<size_t>(dp.find(pr.name))];
  std::string s = pr.name;
  for (size_t i = 0; i < v.size(); ++i) {
    s += i ? "," : "(";
    if (rel.types[i + (pr.derived ? 1 : 0)] != dl::ColType::Text) {
      s += std::to_string(v[i]);
      continue;
    }
    pl::Term t;
    t.kind = pl::Term::Kind::Str;
    t.name = syms.text(v[i]);
    s += pl::constant_text(t);
  }
  return v.empty() ? s : s + ")";
}

const gpu::HostTable& rows_of(const dl::Program& dp, const std::vector<gpu::HostTable>& rows, const std::string& name) {
  return rows[static_cast<size_t>(dp.find(name))];
}

std::vector<int32_t> constants(const pl::Atom& a, dl::Symbols& syms) {
  std::vector<int32_t> v;
  v.reserve(a.args.size());
  for (const pl::Term& t : a.args) v.push_back(encode(t, syms));
  return v;
}

// A host rule's one instance (problog_internal.hpp, HostPart), as the
// Datalog rows would give it: heads of probability 0 left out, a negated
// atom that cannot be true dropped.  Its positive atoms are all possible.
void host_instance(const pl::Program& p, const pl::Rule& r, dl::Symbols& syms, Atoms& atoms, mln::problog::CpProgram& all,
                   std::vector<int>& stratum) {
  std::vector<int32_t> hv, pv, nv;
  std::vector<double> probs;
  for (const pl::HeadAlt& h : r.head)
    if (h.prob > 0) hv.push_back(atoms.get(h.atom.pred, constants(h.atom, syms))), probs.push_back(h.prob);
  if (hv.empty()) return;
  for (const pl::Atom& a : r.pos) pv.push_back(atoms.get(a.pred, constants(a, syms)));
  for (const pl::Atom& a : r.neg) {
    const int32_t id = atoms.find(a.pred, constants(a, syms));
    if (id >= 0) nv.push_back(id);
  }
  all.add_rule(pv, nv, hv, probs);
  stratum.push_back(pl::rule_stratum(p, r));
}

// Every rule's ground instances into `all` (strata ignored; stratum[r]
// kept), in the program's order.
void instances(const pl::Program& p, const detail::HostPart& host, const dl::Program& dp,
               const std::vector<gpu::HostTable>& rows, dl::Symbols& syms, Atoms& atoms, mln::problog::CpProgram& all,
               std::vector<int>& stratum) {
  for (size_t i = 0; i < p.rules.size(); ++i) {
    const pl::Rule& r = p.rules[i];
    if (host.rule[i]) {
      if (host.fires[i]) host_instance(p, r, syms, atoms, all, stratum);
      continue;
    }
    const std::vector<std::string> vars = detail::rule_vars(p, r);
    std::vector<AtomPat> heads, pos, neg;
    std::vector<double> probs;
    for (const pl::HeadAlt& h : r.head)
      if (h.prob > 0) heads.push_back(pattern(p, h.atom, vars, nullptr, syms)), probs.push_back(h.prob);
    int fresh = 0;
    for (const pl::Atom& a : r.pos) {
      AtomPat at = pattern(p, a, vars, &fresh, syms);
      if (p.preds[static_cast<size_t>(a.pred)].derived) pos.push_back(std::move(at));
    }
    for (const pl::Atom& a : r.neg)
      if (p.preds[static_cast<size_t>(a.pred)].derived) neg.push_back(pattern(p, a, vars, nullptr, syms));
    const gpu::HostTable& t = rows_of(dp, rows, rule_relation(i));
    const int s = pl::rule_stratum(p, r);
    std::vector<int32_t> hv, pv, nv;
    for (size_t row = 0; row < t.rows(); ++row) {
      hv.clear(), pv.clear(), nv.clear();
      for (const AtomPat& a : heads) hv.push_back(atoms.get(a.pred, values(a, t, row)));
      for (const AtomPat& a : pos) pv.push_back(atoms.get(a.pred, values(a, t, row)));
      for (const AtomPat& a : neg) {
        const int32_t id = atoms.find(a.pred, values(a, t, row));
        if (id >= 0) nv.push_back(id);  // an atom that cannot be true: its negation holds
      }
      if (hv.empty()) continue;
      all.add_rule(pv, nv, hv, probs);
      stratum.push_back(s);
    }
  }
}

// The rules that reach a target atom backwards (heads to bodies).
std::vector<char> relevant_rules(const mln::problog::CpProgram& all, size_t num_atoms, const std::vector<int32_t>& targets,
                                 const std::vector<char>& dropped) {
  std::vector<std::vector<int32_t>> defs(num_atoms);
  for (size_t r = 0; r < all.num_rules(); ++r)
    for (int64_t k = all.head_off[r]; k < all.head_off[r + 1]; ++k) defs[static_cast<size_t>(all.head[k])].push_back(static_cast<int32_t>(r));
  std::vector<char> seen(num_atoms, 0), keep(all.num_rules(), 0);
  std::vector<int32_t> queue;
  for (int32_t a : targets)
    if (!seen[a]) seen[a] = 1, queue.push_back(a);
  for (size_t qi = 0; qi < queue.size(); ++qi)
    for (int32_t r : defs[static_cast<size_t>(queue[qi])]) {
      if (keep[r] || dropped[r]) continue;
      keep[r] = 1;
      for (const auto* v : {&all.pos, &all.neg}) {
        const auto& off = v == &all.pos ? all.pos_off : all.neg_off;
        for (int64_t k = off[r]; k < off[r + 1]; ++k)
          if (!seen[(*v)[k]]) seen[(*v)[k]] = 1, queue.push_back((*v)[k]);
      }
    }
  return keep;
}

// The kept rules of each stratum, each after the rules defining its
// positive body atoms (a depth-first post-order; a cycle is cut anywhere).
std::vector<int32_t> firing_order(const mln::problog::CpProgram& all, size_t num_atoms, const std::vector<char>& keep,
                                  const std::vector<int>& stratum, int num_strata) {
  std::vector<std::vector<int32_t>> defs(num_atoms);
  for (size_t r = 0; r < all.num_rules(); ++r)
    if (keep[r])
      for (int64_t k = all.head_off[r]; k < all.head_off[r + 1]; ++k) defs[static_cast<size_t>(all.head[k])].push_back(static_cast<int32_t>(r));
  std::vector<char> done(all.num_rules(), 0);
  std::vector<int32_t> order;
  struct Frame {
    int32_t r;
    int64_t k;   // next positive atom
    size_t d;    // next definition of it
  };
  for (int s = 0; s < num_strata; ++s)
    for (size_t r0 = 0; r0 < all.num_rules(); ++r0) {
      if (!keep[r0] || done[r0] || stratum[r0] != s) continue;
      std::vector<Frame> st{{static_cast<int32_t>(r0), all.pos_off[r0], 0}};
      done[r0] = 1;
      while (!st.empty()) {
        Frame& f = st.back();
        if (f.k >= all.pos_off[f.r + 1]) {
          order.push_back(f.r);
          st.pop_back();
          continue;
        }
        const auto& ds = defs[static_cast<size_t>(all.pos[f.k])];
        if (f.d >= ds.size()) {
          ++f.k, f.d = 0;
          continue;
        }
        const int32_t d = ds[f.d++];
        if (!done[d] && stratum[d] == s) done[d] = 1, st.push_back({d, all.pos_off[d], 0});
      }
    }
  return order;
}

[[noreturn]] void evidence_fails(const pl::Program& p, const pl::Evidence& e, const std::string& why) {
  throw lang::LangError(lang::LangError::Kind::BadValue, e.atom.pos.line, e.atom.pos.col, pl::atom_text(p, e.atom),
                        "evidence " + pl::atom_text(p, e.atom) + (e.value ? " = true" : " = false") +
                            " cannot hold: " + why);
}

// The same atom observed true and false: no world satisfies both, and
// rejection would keep no sample, or, where one is applied exactly, the
// other none (P = 1 was answered).  Refused, naming both lines.
void refuse_contradicting_evidence(const pl::Program& p) {
  std::map<std::string, size_t> observed;
  for (size_t k = 0; k < p.evidence.size(); ++k) {
    const pl::Evidence& e = p.evidence[k];
    const auto [it, fresh] = observed.emplace(pl::atom_text(p, e.atom), k);
    const pl::Evidence& first = p.evidence[it->second];
    if (!fresh && first.value != e.value)
      evidence_fails(p, e, "line " + std::to_string(first.atom.pos.line) + " observes it " +
                               (first.value ? "true" : "false"));
  }
}

// Evidence on an atom that only probabilistic facts of one head define is
// applied exactly instead of by rejection: those facts' choices touch no
// other atom, so conditioning on the atom is setting it (true: one of its
// facts made certain, the others dropped; false: all dropped).  Every
// sample then satisfies it (likelihood weighting whose weight, the same
// for every sample, cancels).  Returns the evidence left to rejection.
std::vector<std::pair<int32_t, size_t>> fix_fact_evidence(const pl::Program& p, mln::problog::CpProgram& all,
                                                          const std::vector<std::pair<int32_t, size_t>>& evidence,
                                                          std::vector<char>& dropped) {
  std::vector<std::pair<int32_t, size_t>> left;
  for (const auto& [a, k] : evidence) {
    std::vector<size_t> rules;
    bool facts = true;
    for (size_t r = 0; r < all.num_rules(); ++r)
      for (int64_t h = all.head_off[r]; h < all.head_off[r + 1]; ++h)
        if (all.head[h] == a) {
          rules.push_back(r);
          facts = facts && all.pos_off[r] == all.pos_off[r + 1] && all.neg_off[r] == all.neg_off[r + 1] &&
                  all.head_off[r + 1] - all.head_off[r] == 1;
        }
    if (!facts) {
      left.emplace_back(a, k);
      continue;
    }
    const pl::Evidence& e = p.evidence[k];
    for (size_t r : rules)
      if (!e.value && all.head_cum[all.head_off[r]] >= 1.0) evidence_fails(p, e, "a certain fact makes it true");
    if (e.value && rules.empty()) evidence_fails(p, e, "no rule can make it true");
    for (size_t r : rules) dropped[r] = 1;
    if (e.value) {
      dropped[rules[0]] = 0;
      all.head_cum[all.head_off[rules[0]]] = all.head_cond[all.head_off[rules[0]]] = 1.0;
    }
  }
  return left;
}

}  // namespace

GroundProgram build_ground(const pl::Program& p, const dl::Program& dp, const std::vector<gpu::HostTable>& rows,
                           dl::Symbols& syms) {
  GroundProgram g;
  Atoms atoms(p.preds.size());
  const detail::HostPart host = detail::host_part(p);
  for (size_t i = 0; i < p.rules.size(); ++i)  // every possible atom first: the host relations'
    if (host.fires[i])
      for (const pl::HeadAlt& h : p.rules[i].head) atoms.get(h.atom.pred, constants(h.atom, syms));
  for (size_t i = 0; i < p.preds.size(); ++i) {  // and the Datalog program's
    const pl::Predicate& pr = p.preds[i];
    if (!pr.derived || host.pred[i]) continue;
    const gpu::HostTable& t = rows_of(dp, rows, pr.name);
    std::vector<int32_t> v(static_cast<size_t>(pr.arity));
    for (size_t row = 0; row < t.rows(); ++row) {
      for (size_t c = 0; c < v.size(); ++c) v[c] = t.cols[c + 1][row];
      atoms.get(static_cast<int>(i), v);
    }
  }
  g.possible_atoms = atoms.size();
  mln::problog::CpProgram all;
  std::vector<int> stratum;
  instances(p, host, dp, rows, syms, atoms, all, stratum);
  g.instances = all.num_rules();
  // Queries: each matching atom that can be true; a certain (input) atom
  // gets a rule of probability 1.
  std::vector<int32_t> targets, query_atom;
  std::set<std::string> seen;
  for (size_t k = 0; k < p.queries.size(); ++k) {
    const pl::Atom& q = p.queries[k];
    std::vector<std::string> vars;
    int fresh = 0;
    for (const pl::Term& t : q.args) {
      const std::string name = t.kind == pl::Term::Kind::Anon ? detail::fresh_var(fresh++) : t.name;
      if (!t.is_const() && std::find(vars.begin(), vars.end(), name) == vars.end()) vars.push_back(name);
    }
    pl::Atom named = q;
    fresh = 0;
    for (pl::Term& t : named.args)
      if (t.kind == pl::Term::Kind::Anon) t.kind = pl::Term::Kind::Var, t.name = detail::fresh_var(fresh++);
    const AtomPat pat = pattern(p, named, vars, nullptr, syms);
    const gpu::HostTable& t = rows_of(dp, rows, query_relation(k));
    const bool derived = p.preds[static_cast<size_t>(q.pred)].derived;
    std::vector<std::pair<std::string, int32_t>> found;
    for (size_t row = 0; row < t.rows(); ++row) {
      const std::vector<int32_t> v = values(pat, t, row);
      int32_t id = atoms.find(q.pred, v);
      if (!derived && id < 0) {
        id = atoms.get(q.pred, v);
        all.add_rule({}, {}, {id}, {1.0});
        stratum.push_back(0);
      }
      found.emplace_back(render(p, dp, syms, q.pred, v), id);
    }
    std::sort(found.begin(), found.end());
    if (found.empty() && vars.empty()) found.emplace_back(pl::atom_text(p, q), -1);
    for (auto& [text, id] : found) {
      if (!seen.insert(text).second) continue;
      g.queries.push_back({text, id});
      if (id >= 0) targets.push_back(id);
    }
  }
  // Evidence: an atom that cannot be true observed true (or a certain one
  // observed false) is refused; an impossible atom observed false says nothing.
  refuse_contradicting_evidence(p);
  std::vector<std::pair<int32_t, size_t>> evidence;  // atom, index into p.evidence
  for (size_t k = 0; k < p.evidence.size(); ++k) {
    const pl::Evidence& e = p.evidence[k];
    const bool present = rows_of(dp, rows, evidence_relation(k)).rows() > 0;
    const bool derived = p.preds[static_cast<size_t>(e.atom.pred)].derived;
    if (present == e.value && !derived) continue;
    if (!present && !e.value) continue;
    if (present && derived) {
      std::vector<int32_t> v;
      for (const pl::Term& t : e.atom.args) v.push_back(encode(t, syms));
      evidence.emplace_back(atoms.find(e.atom.pred, v), k);
      continue;
    }
    evidence_fails(p, e, present ? "it is certain (a table row)" : "no rule can make it true");
  }
  std::vector<char> dropped(all.num_rules(), 0);
  evidence = fix_fact_evidence(p, all, evidence, dropped);
  for (const auto& ev : evidence) targets.push_back(ev.first);
  const std::vector<char> keep = relevant_rules(all, atoms.size(), targets, dropped);
  const std::vector<int32_t> order = firing_order(all, atoms.size(), keep, stratum, std::max(1, p.num_strata));
  // Renumber the atoms the kept rules, queries and evidence use.
  std::vector<int32_t> id(atoms.size(), -1);
  int32_t n = 0;
  auto map = [&](int32_t a) { return id[a] < 0 ? (id[a] = n++) : id[a]; };
  for (int32_t a : targets) map(a);
  for (int32_t r : order)
    for (int64_t k = all.pos_off[r]; k < all.pos_off[r + 1]; ++k) map(all.pos[k]);
  for (int32_t r : order)
    for (int64_t k = all.neg_off[r]; k < all.neg_off[r + 1]; ++k) map(all.neg[k]);
  mln::problog::CpProgram& cp = g.cp;
  std::vector<int32_t> pv, nv, hv;
  std::vector<double> probs;
  int cur = 0;
  for (int32_t r : order) {
    while (cur < stratum[r]) cp.new_stratum(), ++cur;
    pv.clear(), nv.clear(), hv.clear(), probs.clear();
    for (int64_t k = all.pos_off[r]; k < all.pos_off[r + 1]; ++k) pv.push_back(id[all.pos[k]]);
    for (int64_t k = all.neg_off[r]; k < all.neg_off[r + 1]; ++k) nv.push_back(id[all.neg[k]]);
    for (int64_t k = all.head_off[r]; k < all.head_off[r + 1]; ++k) {
      if (id[all.head[k]] < 0) continue;  // no query or evidence depends on it: as choosing no head
      hv.push_back(id[all.head[k]]);
      probs.push_back(all.head_cum[k] - (k > all.head_off[r] ? all.head_cum[k - 1] : 0.0));
    }
    cp.add_rule(pv, nv, hv, probs);
  }
  while (cur + 1 < std::max(1, p.num_strata)) cp.new_stratum(), ++cur;
  cp.num_atoms = n;
  for (GroundQuery& q : g.queries)
    if (q.index >= 0) {
      cp.queries.push_back(id[q.index]);
      q.index = static_cast<int>(cp.queries.size()) - 1;
    }
  for (const auto& [a, k] : evidence) cp.evidence.push_back(id[a]), cp.evidence_value.push_back(p.evidence[k].value ? 1 : 0);
  cp.validate();
  return g;
}

}  // namespace mln::ground::problog
