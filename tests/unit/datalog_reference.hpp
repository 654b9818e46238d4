// The Datalog tests' naive reference and harness (ground_datalog_test.cpp,
// ground_datalog_split_test.cpp): a nested-loop fixpoint over std::set,
// stratum by stratum; check(), which compares the evaluator with it on every
// engine; and the random program generator.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ground/datalog_eval.hpp"
#include "ground_util.hpp"

namespace mln::ground::datalog::reference {

using dl::Term;
using Tuple = std::vector<int32_t>;
using Set = std::set<Tuple>;

// ------------------------------------------------------------- reference

class Reference {
 public:
  Reference(const dl::Program& p, std::vector<Set> rels) : p_(p), rels_(std::move(rels)) {}

  std::vector<Set> run() {
    for (size_t s = 0; s < p_.strata.size(); ++s)
      for (bool changed = true; changed;) {  // naive: every rule on everything until nothing is new
        changed = false;
        for (int ri : p_.stratum_rules[s]) {
          const dl::Rule& r = p_.rules[ri];
          Set out;
          Tuple vals(r.vars.size(), 0);
          std::vector<char> bound(r.vars.size(), 0);
          enumerate(r, 0, vals, bound, out);
          if (r.aggregates()) out = aggregate(r, out);
          for (const Tuple& t : out) changed = rels_[r.head.rel].insert(t).second || changed;
        }
      }
    return rels_;
  }

 private:
  const dl::Program& p_;
  std::vector<Set> rels_;

  // Whether tuple t matches atom a under the bindings; binds a's unbound
  // variables from t into vals/bound (a repeated variable must repeat).
  static bool matches(const dl::Atom& a, const Tuple& t, Tuple& vals, std::vector<char>& bound) {
    for (size_t c = 0; c < t.size(); ++c) {
      const Term& x = a.args[c];
      if (x.is_const() && t[c] != x.ival) return false;
      if (x.kind != Term::Kind::Var) continue;
      if (bound[x.var] && vals[x.var] != t[c]) return false;
      bound[x.var] = 1, vals[x.var] = t[c];
    }
    return true;
  }

  void enumerate(const dl::Rule& r, size_t k, Tuple& vals, std::vector<char>& bound, Set& out) {
    if (k == r.pos.size()) return finish(r, vals, bound, out);
    const dl::Atom& a = r.pos[k];
    for (const Tuple& t : rels_[a.rel]) {
      std::vector<char> b2 = bound;
      Tuple v2 = vals;
      if (matches(a, t, v2, b2)) enumerate(r, k + 1, v2, b2, out);
    }
  }

  static bool expr_bound(const dl::Expr& e, const std::vector<char>& bound) {
    if (e.op == 0) return e.leaf.kind != Term::Kind::Var || bound[e.leaf.var];
    for (const auto& k : e.kids)
      if (!expr_bound(k, bound)) return false;
    return true;
  }

  void finish(const dl::Rule& r, Tuple vals, std::vector<char> bound, Set& out) {
    auto value = [&](int v) { return vals[v]; };
    for (bool more = true; more;) {
      more = false;
      for (const auto& c : r.cmps)
        if (c.assigns >= 0 && !bound[c.assigns] && expr_bound(c.lhs, bound)) {
          vals[c.assigns] = detail::eval_expr(c.lhs, value);
          bound[c.assigns] = 1;
          more = true;
        }
    }
    for (const auto& c : r.cmps)
      if (c.assigns < 0 && !detail::eval_cmp(c.op, detail::eval_expr(c.lhs, value), detail::eval_expr(c.rhs, value)))
        return;
    for (const dl::Atom& a : r.neg)
      for (const Tuple& t : rels_[a.rel]) {
        Tuple v2 = vals;  // a negated atom's variables are bound; its _ match anything
        std::vector<char> b2 = bound;
        if (matches(a, t, v2, b2)) return;
      }
    if (r.aggregates()) {  // the binding of every variable, grouped by aggregate()
      out.insert(vals);
      return;
    }
    Tuple h;
    for (const Term& t : r.head.args) h.push_back(t.kind == Term::Kind::Var ? vals[t.var] : static_cast<int32_t>(t.ival));
    out.insert(h);
  }

  // The head rows of an aggregate rule from its distinct bindings: for each
  // value of the head's plain arguments, the aggregates over its bindings.
  static Set aggregate(const dl::Rule& r, const Set& bindings) {
    std::map<Tuple, std::vector<int32_t>> groups;  // head row without aggregates -> aggregated values
    for (const Tuple& v : bindings) {
      Tuple key;
      for (const Term& t : r.head.args)
        if (t.agg == dl::Agg::None) key.push_back(t.kind == Term::Kind::Var ? v[t.var] : static_cast<int32_t>(t.ival));
      for (const Term& t : r.head.args)
        if (t.agg != dl::Agg::None) groups[key].push_back(v[t.var]);
    }
    Set out;
    for (const auto& [key, vals] : groups) {
      Tuple h;
      size_t k = 0, a = 0, naggs = 0;
      for (const Term& t : r.head.args) naggs += t.agg != dl::Agg::None;
      for (const Term& t : r.head.args) {
        if (t.agg == dl::Agg::None) {
          h.push_back(key[k++]);
          continue;
        }
        int64_t sum = 0, count = 0;
        int32_t lo = INT32_MAX, hi = INT32_MIN;
        for (size_t i = a; i < vals.size(); i += naggs) {
          sum += vals[i], ++count;
          lo = std::min(lo, vals[i]), hi = std::max(hi, vals[i]);
        }
        ++a;
        const int64_t res = t.agg == dl::Agg::Count ? count : t.agg == dl::Agg::Sum ? sum : t.agg == dl::Agg::Min ? lo : hi;
        if (res > INT32_MAX || res < INT32_MIN) throw ArithmeticError("integer out of range");
        h.push_back(static_cast<int32_t>(res));
      }
      out.insert(h);
    }
    return out;
  }
};

// ------------------------------------------------------------- harness

inline Set to_set(gpu::Engine& eng, const gpu::Relation& r) {
  gpu::HostTable t = eng.download(r);
  Set s;
  for (size_t i = 0; i < t.rows(); ++i) {
    Tuple row;
    for (int c = 0; c < t.ncols(); ++c) row.push_back(t.cols[c][i]);
    s.insert(row);
  }
  return s;
}

inline gpu::HostTable to_table(const Set& s, int arity) {
  gpu::HostTable t;
  t.cols.assign(arity, {});
  for (const Tuple& row : s)
    for (int c = 0; c < arity; ++c) t.cols[c].push_back(row[c]);
  return t;
}

// `text` parsed with every input column an integer, types inferred and
// constants encoded: ready for evaluate().
inline dl::Program int_program(const std::string& text) {
  dl::Program p = dl::parse(text);
  for (auto& rel : p.rels)
    if (rel.input)
      for (auto& t : rel.types) t = dl::ColType::Int;
  dl::infer_types(p);
  dl::Symbols syms;
  dl::encode_constants(p, syms);
  return p;
}

// Parses `text` (every input column an integer), evaluates it on each
// engine (and `also`), once per split_rows value (EvalOptions; 0: the
// default), and on the reference, and compares every derived relation.
// Returns the reference's relations by name.
inline std::map<std::string, Set> check(const std::string& text, const std::map<std::string, Set>& inputs,
                                        const std::vector<uint64_t>& split_rows = {0}, gpu::Engine* also = nullptr) {
  SCOPED_TRACE(text);
  const dl::Program p = int_program(text);
  std::vector<Set> in(p.rels.size());
  for (size_t r = 0; r < p.rels.size(); ++r) {
    auto it = inputs.find(p.rels[r].name);
    if (p.rels[r].input && it != inputs.end()) in[r] = it->second;
  }
  std::vector<Set> want = Reference(p, in).run();
  std::vector<std::unique_ptr<gpu::Engine>> engines = test::engines();
  std::vector<gpu::Engine*> all;
  for (auto& e : engines) all.push_back(e.get());
  if (also) all.push_back(also);
  for (gpu::Engine* eng : all) {
    SCOPED_TRACE(eng->name());
    std::vector<gpu::Relation> rels(p.rels.size());
    for (size_t r = 0; r < p.rels.size(); ++r)
      if (p.rels[r].input) rels[r] = eng->upload(to_table(in[r], p.rels[r].arity));
    for (uint64_t split : split_rows) {
      SCOPED_TRACE("split_rows " + std::to_string(split));
      EvalOptions o;
      o.split_rows = split;
      std::vector<gpu::Relation> got = evaluate(*eng, p, rels, o);
      for (size_t r = 0; r < p.rels.size(); ++r) {
        if (!p.rels[r].derived) continue;
        EXPECT_EQ(got[r].rows(), want[r].size()) << p.rels[r].name << ": duplicates or missing rows";
        EXPECT_EQ(to_set(*eng, got[r]), want[r]) << p.rels[r].name;
      }
    }
  }
  std::map<std::string, Set> out;
  for (size_t r = 0; r < p.rels.size(); ++r) out[p.rels[r].name] = want[r];
  return out;
}

inline Set random_rel(std::mt19937& rng, int arity, int rows, int domain) {
  std::uniform_int_distribution<int> v(0, domain - 1);
  Set s;
  for (int i = 0; i < rows; ++i) {
    Tuple t;
    for (int c = 0; c < arity; ++c) t.push_back(v(rng));
    s.insert(t);
  }
  return s;
}

// ------------------------------------------------------------- random programs

// Writes an aggregate rule `name(...)` whose body reads `lower` relations
// only (so it is stratified): 0 to 2 group variables and 1 or 2 of count,
// sum, min, max.  Returns the relation.
inline std::pair<std::string, int> aggregate_rule(std::mt19937& rng, const std::string& name,
                                           const std::vector<std::pair<std::string, int>>& lower, std::ostringstream& o) {
  std::uniform_int_distribution<int> pct(0, 99);
  const char* vars[] = {"A", "B", "C"};
  std::vector<std::string> body, bound;
  for (int a = 0, n = 1 + pct(rng) % 2; a < n || bound.empty(); ++a) {
    const auto& rel = lower[pct(rng) % lower.size()];
    std::string atom = rel.first + "(";
    for (int c = 0; c < rel.second; ++c) {
      const int roll = pct(rng);
      std::string t = roll < 15 ? "_" : roll < 22 ? std::to_string(pct(rng) % 6) : vars[pct(rng) % 3];
      if (t[0] >= 'A' && t[0] <= 'Z') bound.push_back(t);
      atom += (c ? "," : "") + t;
    }
    body.push_back(atom + ")");
  }
  if (pct(rng) < 30) body.push_back(bound[0] + " != " + std::to_string(pct(rng) % 6));
  const char* aggs[] = {"count", "sum", "min", "max"};
  std::vector<std::string> head;
  for (int g = 0, n = pct(rng) % 3; g < n; ++g) head.push_back(bound[pct(rng) % bound.size()]);
  if (pct(rng) < 10) head.push_back("7");
  for (int a = 0, n = 1 + pct(rng) % 2; a < n; ++a)
    head.push_back(std::string(aggs[pct(rng) % 4]) + "(" + bound[pct(rng) % bound.size()] + ")");
  o << name << "(";
  for (size_t c = 0; c < head.size(); ++c) o << (c ? ", " : "") << head[c];
  o << ") :- ";
  for (size_t b = 0; b < body.size(); ++b) o << (b ? ", " : "") << body[b];
  o << ".\n";
  return {name, static_cast<int>(head.size())};
}

// Writes a random stratifiable program over inputs e0..e2 (arity 2, 2, 1):
// three layers of two derived relations each; a layer's rules read
// positively its own and lower layers (recursion: linear, non-linear,
// mutual) and negate only lower ones; after each layer, most of the time,
// an aggregate rule over the layers so far, which later layers read.
inline std::string random_program(std::mt19937& rng) {
  std::vector<std::pair<std::string, int>> lower = {{"e0", 2}, {"e1", 2}, {"e2", 1}};
  std::ostringstream o;
  std::uniform_int_distribution<int> pct(0, 99);
  const char* vars[] = {"A", "B", "C", "D"};
  for (int layer = 0; layer < 3; ++layer) {
    std::vector<std::pair<std::string, int>> mine;
    for (int k = 0; k < 2; ++k) mine.push_back({"p" + std::to_string(layer) + std::to_string(k), 1 + pct(rng) % 2});
    std::vector<std::pair<std::string, int>> readable = lower;
    readable.insert(readable.end(), mine.begin(), mine.end());
    const int nrules = 2 + pct(rng) % 4;
    for (int ri = 0; ri < nrules; ++ri) {
      const auto& head = mine[static_cast<size_t>(ri) % mine.size()];
      std::vector<std::string> body, bound;
      const int natoms = 1 + pct(rng) % 3;
      for (int a = 0; a < natoms; ++a) {
        // The first atom of a rule reads a lower relation half of the time, so that layers start.
        const auto& rel = (a == 0 && pct(rng) < 35) ? lower[pct(rng) % lower.size()] : readable[pct(rng) % readable.size()];
        std::string atom = rel.first + "(";
        for (int c = 0; c < rel.second; ++c) {
          const int roll = pct(rng);
          std::string t = roll < 10 ? "_" : roll < 20 ? std::to_string(pct(rng) % 6) : vars[pct(rng) % 4];
          if (t[0] >= 'A' && t[0] <= 'Z') bound.push_back(t);
          atom += (c ? "," : "") + t;
        }
        body.push_back(atom + ")");
      }
      if (bound.empty()) continue;
      auto var = [&] { return bound[pct(rng) % bound.size()]; };
      if (pct(rng) < 40) {
        const char* ops[] = {"=", "!=", "<", "<=", ">", ">="};
        body.push_back(var() + " " + ops[pct(rng) % 6] + " " + (pct(rng) < 50 ? var() : std::to_string(pct(rng) % 6)));
      }
      if (pct(rng) < 25) {  // bounded arithmetic: a recursion through it still ends
        body.push_back("N = (" + var() + " * 2 + " + var() + ") % 7");
        bound.push_back("N");
      }
      if (pct(rng) < 20) body.push_back(var() + " + 1 > " + var());
      if (layer > 0 && pct(rng) < 50) {
        const auto& neg = lower[pct(rng) % lower.size()];
        std::string atom = (pct(rng) < 50 ? "!" : "not ") + neg.first + "(";
        for (int c = 0; c < neg.second; ++c) atom += std::string(c ? "," : "") + (pct(rng) < 20 ? "_" : var());
        body.push_back(atom + ")");
      }
      o << head.first << "(";
      for (int c = 0; c < head.second; ++c) o << (c ? "," : "") << (pct(rng) < 10 ? std::string("3") : var());
      o << ") :- ";
      for (size_t b = 0; b < body.size(); ++b) o << (b ? ", " : "") << body[b];
      o << ".\n";
    }
    lower.insert(lower.end(), mine.begin(), mine.end());
    if (pct(rng) < 70) lower.push_back(aggregate_rule(rng, "g" + std::to_string(layer), lower, o));
  }
  return o.str();
}

}  // namespace mln::ground::datalog::reference
