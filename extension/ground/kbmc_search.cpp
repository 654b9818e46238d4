// KBMC pattern search (see kbmc_search.hpp).
#include "ground/kbmc_search.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace mln::ground::kbmc {
namespace {

}  // namespace

int dimension(const Pattern& t) {
  int64_t m = 0;
  for (int64_t x : t)
    if (is_var(x)) m = std::max(m, x);
  return static_cast<int>(m);
}

namespace {

// Renumbers variables 1, 2, ... by first occurrence.
Pattern canonical(const std::vector<int64_t>& raw_vars_negative_or_const) {
  std::map<int64_t, int64_t> ren;
  Pattern out;
  for (int64_t x : raw_vars_negative_or_const) {
    if (x >= kConst / 2) { out.push_back(x); continue; }
    auto it = ren.find(x);
    if (it == ren.end()) it = ren.emplace(x, static_cast<int64_t>(ren.size()) + 1).first;
    out.push_back(it->second);
  }
  return out;
}

// True when some substitution of a's variables yields b.
bool subsumes(const Pattern& a, const Pattern& b) {
  std::map<int64_t, int64_t> m;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!is_var(a[i])) {
      if (a[i] != b[i]) return false;
      continue;
    }
    auto it = m.find(a[i]);
    if (it == m.end()) m.emplace(a[i], b[i]);
    else if (it->second != b[i]) return false;
  }
  return true;
}

// Tuffy's AtomCutSet: patterns by dimension, no pattern subsuming another of
// lower dimension; "complete" once the all-variables pattern is in.
struct CutSet {
  int arity = 0;
  bool complete = false;
  std::vector<std::set<Pattern>> strata;
  explicit CutSet(int k = 0) : arity(k), strata(k + 1) {}
  bool empty() const {
    for (const auto& s : strata) if (!s.empty()) return false;
    return true;
  }
  const Pattern* top() const {
    for (int i = arity; i >= 0; --i)
      if (!strata[i].empty()) return &*strata[i].begin();
    return nullptr;
  }
  bool contains(const Pattern& t) const { return strata[dimension(t)].count(t) > 0; }
  void remove(const Pattern& t) { strata[dimension(t)].erase(t); }
  bool subsumes_pattern(const Pattern& t) const {
    int dim = dimension(t);
    if (complete) return true;
    if (dim == arity) return false;
    for (int i = arity; i >= dim; --i)
      for (const auto& a : strata[i])
        if (subsumes(a, t)) return true;
    return false;
  }
  void add(const Pattern& t) {
    int dim = dimension(t);
    if (dim == arity) {
      for (auto& s : strata) s.clear();
      strata[dim].insert(t);
      complete = true;
      return;
    }
    strata[dim].insert(t);
    for (int i = dim - 1; i >= 0; --i)
      for (auto it = strata[i].begin(); it != strata[i].end();)
        it = subsumes(t, *it) ? strata[i].erase(it) : std::next(it);
  }
};

// Union-find over clause variables, seed variables and constants (an MGU).
struct Unifier {
  std::vector<int> parent;
  std::vector<int64_t> konst;  // kConst-coded constant of a class, or 0
  std::map<std::string, int> cvar;
  std::map<int64_t, int> svar;
  int node() { parent.push_back(static_cast<int>(parent.size())); konst.push_back(0); return parent.back(); }
  int find(int x) { while (parent[x] != x) x = parent[x] = parent[parent[x]]; return x; }
  int clause_var(const std::string& v) { auto it = cvar.find(v); return it != cvar.end() ? it->second : cvar[v] = node(); }
  int seed_var(int64_t v) { auto it = svar.find(v); return it != svar.end() ? it->second : svar[v] = node(); }
  int constant(int64_t code) { int n = node(); konst[n] = code; return n; }
  bool unite(int a, int b) {
    a = find(a); b = find(b);
    if (a == b) return true;
    if (konst[a] && konst[b] && konst[a] != konst[b]) return false;
    if (!konst[b]) konst[b] = konst[a];
    parent[a] = b;
    return true;
  }
};

}  // namespace

std::string pattern_text(const lang::Program& prog, int pred, const Pattern& t) {
  std::string s = prog.preds[pred].name + "(";
  for (size_t i = 0; i < t.size(); ++i) {
    if (i) s += ", ";
    s += is_var(t[i]) ? "v" + std::to_string(t[i]) : "C" + std::to_string(t[i] - kConst);
  }
  return s + ")";
}

PredicateUse predicate_use(const lang::Program& prog) {
  PredicateUse u;
  u.safe_ref_only.assign(prog.preds.size(), 1);
  u.scoped.assign(prog.preds.size(), 0);
  for (const auto& cl : prog.clauses) {
    std::set<std::string> safe;
    for (const auto& l : cl.lits)
      if (!l.positive)
        for (const auto& t : l.args) if (t.is_var()) safe.insert(t.text);
    for (const auto& l : cl.lits) {
      if (!l.positive) continue;
      for (const auto& t : l.args) {
        if (!t.is_var() || safe.count(t.text)) continue;
        u.safe_ref_only[l.pred] = 0;
        safe.insert(t.text);  // Tuffy: the order of positive literals matters
      }
    }
  }
  for (const auto& r : prog.rules)
    if (r.scoping && r.prefix == 0) u.scoped[r.head.pred] = 1;
  return u;
}

SearchResult search(const lang::Program& prog, const std::vector<std::vector<std::vector<int32_t>>>& queries,
                    const std::vector<uint8_t>& no_need_to_ground,
                    const std::function<int64_t(const lang::Term&, lang::TypeKind)>& constant_id) {
  SearchResult res;
  const size_t np = prog.preds.size();
  res.relevant.assign(prog.clauses.size(), 0);
  std::vector<CutSet> to_exp, rel;
  for (size_t p = 0; p < np; ++p) {
    to_exp.emplace_back(prog.preds[p].arity());
    rel.emplace_back(prog.preds[p].arity());
  }
  std::vector<std::vector<int>> related(np);
  for (size_t k = 0; k < prog.clauses.size(); ++k) {
    std::set<int> ps;
    for (const auto& l : prog.clauses[k].lits) ps.insert(l.pred);
    for (int p : ps) related[p].push_back(static_cast<int>(k));
  }
  for (size_t p = 0; p < np; ++p) {
    for (const auto& q : queries[p]) {
      std::vector<int64_t> raw;
      for (int32_t a : q) raw.push_back(a < 0 ? a : kConst + a);
      Pattern t = canonical(raw);
      to_exp[p].add(t);
      res.seeds.push_back(pattern_text(prog, static_cast<int>(p), t));
    }
  }
  for (;;) {
    int pred = -1;
    for (size_t p = 0; p < np && pred < 0; ++p)
      if (to_exp[p].top()) pred = static_cast<int>(p);
    if (pred < 0) break;
    Pattern seed = *to_exp[pred].top();
    bool restart = false;
    for (int ci : related[pred]) {
      const lang::Clause& cl = prog.clauses[ci];
      res.relevant[ci] = 1;
      for (size_t li = 0; li < cl.lits.size() && !restart; ++li) {
        const lang::Literal& lit = cl.lits[li];
        if (lit.pred != pred) continue;
        const lang::PredicateDecl& d = prog.preds[pred];
        Unifier u;
        bool ok = true;
        for (size_t i = 0; i < lit.args.size() && ok; ++i) {
          int a = lit.args[i].is_var() ? u.clause_var(lit.args[i].text)
                                       : u.constant(kConst + constant_id(lit.args[i], d.arg_kinds[i]));
          int b = is_var(seed[i]) ? u.seed_var(seed[i]) : u.constant(seed[i]);
          ok = u.unite(a, b);
        }
        if (!ok) continue;
        for (size_t oi = 0; oi < cl.lits.size() && !restart; ++oi) {
          if (oi == li) continue;
          const lang::Literal& ol = cl.lits[oi];
          if (no_need_to_ground[ol.pred]) continue;
          const lang::PredicateDecl& od = prog.preds[ol.pred];
          std::vector<int64_t> raw;
          for (size_t i = 0; i < ol.args.size(); ++i) {
            const lang::Term& t = ol.args[i];
            if (!t.is_var()) { raw.push_back(kConst + constant_id(t, od.arg_kinds[i])); continue; }
            int r = u.find(u.clause_var(t.text));
            raw.push_back(u.konst[r] ? u.konst[r] : -1 - r);
          }
          Pattern na = canonical(raw);
          if (to_exp[ol.pred].subsumes_pattern(na) || rel[ol.pred].subsumes_pattern(na)) continue;
          to_exp[ol.pred].add(na);
          if (ol.pred == pred && !to_exp[pred].contains(seed)) restart = true;  // Tuffy's short cut
        }
      }
      if (restart) break;
    }
    if (restart) continue;
    to_exp[pred].remove(seed);
    rel[pred].add(seed);
  }
  res.patterns.resize(np);
  for (size_t p = 0; p < np; ++p)
    for (const auto& st : rel[p].strata) res.patterns[p].insert(res.patterns[p].end(), st.begin(), st.end());
  return res;
}

}  // namespace mln::ground::kbmc
