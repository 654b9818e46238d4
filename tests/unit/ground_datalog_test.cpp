// Datalog on the engine against a naive reference: a nested-loop fixpoint
// over std::set, stratum by stratum, on fixed programs and on random ones
// (random input relations; rules with linear, non-linear and mutual
// recursion, constants, comparisons, arithmetic, and negation of lower
// strata).  CPU always, CUDA where a device is (ground_util.hpp engines()).
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "ground/datalog_eval.hpp"
#include "ground_util.hpp"

namespace mln::ground::datalog {
namespace {

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

Set to_set(gpu::Engine& eng, const gpu::Relation& r) {
  gpu::HostTable t = eng.download(r);
  Set s;
  for (size_t i = 0; i < t.rows(); ++i) {
    Tuple row;
    for (int c = 0; c < t.ncols(); ++c) row.push_back(t.cols[c][i]);
    s.insert(row);
  }
  return s;
}

gpu::HostTable to_table(const Set& s, int arity) {
  gpu::HostTable t;
  t.cols.assign(arity, {});
  for (const Tuple& row : s)
    for (int c = 0; c < arity; ++c) t.cols[c].push_back(row[c]);
  return t;
}

// Parses `text` (every input column an integer), evaluates it on each
// engine and on the reference, and compares every derived relation.
// Returns the reference's relations by name.
std::map<std::string, Set> check(const std::string& text, const std::map<std::string, Set>& inputs) {
  SCOPED_TRACE(text);
  dl::Program p = dl::parse(text);
  std::vector<Set> in(p.rels.size());
  for (auto& rel : p.rels)
    if (rel.input)
      for (auto& t : rel.types) t = dl::ColType::Int;
  dl::infer_types(p);
  dl::Symbols syms;
  dl::encode_constants(p, syms);
  for (size_t r = 0; r < p.rels.size(); ++r) {
    auto it = inputs.find(p.rels[r].name);
    if (p.rels[r].input && it != inputs.end()) in[r] = it->second;
  }
  std::vector<Set> want = Reference(p, in).run();
  for (auto& eng : test::engines()) {
    SCOPED_TRACE(eng->name());
    std::vector<gpu::Relation> rels(p.rels.size());
    for (size_t r = 0; r < p.rels.size(); ++r)
      if (p.rels[r].input) rels[r] = eng->upload(to_table(in[r], p.rels[r].arity));
    std::vector<gpu::Relation> got = evaluate(*eng, p, rels, {});
    for (size_t r = 0; r < p.rels.size(); ++r) {
      if (!p.rels[r].derived) continue;
      EXPECT_EQ(got[r].rows(), want[r].size()) << p.rels[r].name << ": duplicates or missing rows";
      EXPECT_EQ(to_set(*eng, got[r]), want[r]) << p.rels[r].name;
    }
  }
  std::map<std::string, Set> out;
  for (size_t r = 0; r < p.rels.size(); ++r) out[p.rels[r].name] = want[r];
  return out;
}

Set random_rel(std::mt19937& rng, int arity, int rows, int domain) {
  std::uniform_int_distribution<int> v(0, domain - 1);
  Set s;
  for (int i = 0; i < rows; ++i) {
    Tuple t;
    for (int c = 0; c < arity; ++c) t.push_back(v(rng));
    s.insert(t);
  }
  return s;
}

// ------------------------------------------------------------- fixed programs

TEST(Datalog, TransitiveClosureOfAChain) {
  Set edge;
  for (int i = 0; i < 50; ++i) edge.insert({i, i + 1});
  auto got = check("tc(X,Y) :- e(X,Y). tc(X,Y) :- tc(X,Z), e(Z,Y).", {{"e", edge}});
  EXPECT_EQ(got["tc"].size(), 51u * 50u / 2u);
}

TEST(Datalog, NonLinearAndSameGeneration) {
  std::mt19937 rng(7);
  Set e = random_rel(rng, 2, 60, 25);
  check("tc(X,Y) :- e(X,Y). tc(X,Y) :- tc(X,Z), tc(Z,Y).", {{"e", e}});
  check("sg(X,Y) :- e(P,X), e(P,Y), X != Y. sg(X,Y) :- e(A,X), sg(A,B), e(B,Y), X != Y.", {{"e", e}});
}

TEST(Datalog, NegationArithmeticFactsAndGuards) {
  std::mt19937 rng(11);
  Set e = random_rel(rng, 2, 30, 10);
  check("node(X) :- e(X,_). node(Y) :- e(_,Y).\n"
        "tc(X,Y) :- e(X,Y). tc(X,Y) :- tc(X,Z), e(Z,Y).\n"
        "gap(X,Y) :- node(X), node(Y), !tc(X,Y), X < Y.\n"
        "far(X, D) :- node(X), D = (X * 3 + 1) % 7, D >= 2.\n"
        "seed(3, 4). seed(5, -1). one(Y) :- Y = 2 + 2.\n"
        "only(X) :- node(X), seed(3, _), !seed(X, 4), !e(X, X).\n"
        "none(X) :- node(X), seed(9, _).",
        {{"e", e}});
}

TEST(Datalog, CountingWithALimitStops) {
  dl::Program p = dl::parse("n(0). n(Y) :- n(X), Y = X + 1.");
  dl::infer_types(p);
  auto eng = gpu::make_cpu_engine();
  EvalOptions o;
  o.max_rows = 1000;
  int iterations = 0;
  o.progress = [&](int, int it, uint64_t) { iterations = it; };
  EXPECT_THROW(evaluate(*eng, p, std::vector<gpu::Relation>(p.rels.size()), o), LimitExceeded);
  EXPECT_GE(iterations, 999);
  o.progress = [](int, int it, uint64_t) {
    if (it == 5) throw std::runtime_error("cancelled");
  };
  EXPECT_THROW(evaluate(*eng, p, std::vector<gpu::Relation>(p.rels.size()), o), std::runtime_error);
  dl::Program q = dl::parse("d(0). q(Y) :- d(X), Y = 1 / X.");
  dl::infer_types(q);
  EXPECT_THROW(evaluate(*eng, q, std::vector<gpu::Relation>(q.rels.size()), {}), ArithmeticError);
}

TEST(Datalog, AggregatesGroupTheDistinctBindings) {
  std::mt19937 rng(41);
  Set e = random_rel(rng, 2, 40, 9);
  e.insert({8, -5});
  auto got = check("deg(X, count(Y)) :- e(X, Y).\n"
                   "stats(sum(Y), max(Y), min(X), count(X)) :- e(X, Y).\n"
                   "k(3, X, sum(Y)) :- e(X, _), e(_, Y), X < 2.\n"  // Y over the distinct (X, Y)
                   "none(count(X)) :- e(X, X), X > 100.\n"          // no binding: no row, not 0
                   "hub(X) :- deg(X, N), N >= 5.\n"
                   "reach(X, Y) :- hub(X), e(X, Y). reach(X, Z) :- reach(X, Y), e(Y, Z).\n"
                   "far(X, max(N)) :- reach(X, Y), deg(Y, N).",
                   {{"e", e}});
  EXPECT_TRUE(got["none"].empty());
  ASSERT_EQ(got["stats"].size(), 1u);
  int64_t sum = 0;
  for (const Tuple& t : e) sum += t[1];
  EXPECT_EQ((*got["stats"].begin())[0], sum);
  EXPECT_EQ((*got["stats"].begin())[3], static_cast<int32_t>(e.size()));
  dl::Program p = dl::parse("v(2000000000). v(1000000000). s(sum(X)) :- v(X).");
  dl::infer_types(p);
  auto eng = gpu::make_cpu_engine();
  EXPECT_THROW(evaluate(*eng, p, std::vector<gpu::Relation>(p.rels.size()), {}), ArithmeticError);
}

// ------------------------------------------------------------- random programs

// Writes an aggregate rule `name(...)` whose body reads `lower` relations
// only (so it is stratified): 0 to 2 group variables and 1 or 2 of count,
// sum, min, max.  Returns the relation.
std::pair<std::string, int> aggregate_rule(std::mt19937& rng, const std::string& name,
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
std::string random_program(std::mt19937& rng) {
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

TEST(Datalog, RandomProgramsMatchTheReference) {
  std::mt19937 rng(20240541);
  int checked = 0, nonempty = 0, aggregated = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const std::string text = random_program(rng);
    std::map<std::string, Set> in = {{"e0", random_rel(rng, 2, 1 + trial % 25, 8)},
                                     {"e1", random_rel(rng, 2, 1 + trial % 17, 8)},
                                     {"e2", random_rel(rng, 1, 1 + trial % 5, 8)}};
    dl::Program probe;
    try {
      probe = dl::parse(text);
    } catch (const lang::LangError&) {
      continue;  // a head without a rule or an arity the generator reused differently
    }
    auto got = check(text, in);
    ++checked;
    for (const auto& [name, rows] : got) {
      if (name[0] == 'p' && !rows.empty()) ++nonempty;
      if (name[0] == 'g' && !rows.empty()) ++aggregated;
    }
    if (HasFailure()) break;
  }
  EXPECT_GE(checked, 300);
  EXPECT_GE(nonempty, 300);  // the programs derive something
  EXPECT_GE(aggregated, 300);  // and aggregate something
}

}  // namespace
}  // namespace mln::ground::datalog
