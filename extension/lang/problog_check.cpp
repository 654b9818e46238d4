// The ProbLog front end's checks (docs/problog.md): which predicates are
// derived (random) and which are read from tables (certain), head
// probabilities, safety, and stratified negation with the cycle named.
#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "lang/problog_internal.hpp"
#include "lang/scc.hpp"

namespace mln::lang::problog {

namespace detail {

int declare(Program& p, const std::string& name, int arity, SourcePos at) {
  int i = p.find(name);
  if (i < 0) {
    Predicate pr;
    pr.name = name;
    pr.arity = arity;
    pr.first = at;
    p.preds.push_back(std::move(pr));
    p.pred_index.emplace(name, static_cast<int>(p.preds.size()) - 1);
    return static_cast<int>(p.preds.size()) - 1;
  }
  Predicate& pr = p.preds[static_cast<size_t>(i)];
  if (arity >= 0 && pr.arity < 0) pr.arity = arity;
  if (arity >= 0 && pr.arity != arity)
    throw LangError(LangError::Kind::ArityMismatch, at.line, at.col, name,
                    "\"" + name + "\" has " + std::to_string(arity) + " argument(s) here but " +
                        std::to_string(pr.arity) + " at line " + std::to_string(pr.first.line) + ", column " +
                        std::to_string(pr.first.col));
  return i;
}

namespace {

[[noreturn]] void fail(LangError::Kind k, SourcePos at, const std::string& tok, const std::string& msg) {
  throw LangError(k, at.line, at.col, tok, msg);
}

void check_heads_and_inputs(Program& p) {
  for (const Rule& r : p.rules) {
    double sum = 0;
    for (const HeadAlt& h : r.head) {
      p.preds[static_cast<size_t>(h.atom.pred)].derived = true;
      sum += h.prob;
    }
    if (sum > 1 + 1e-9)
      fail(LangError::Kind::BadValue, r.at, "", "the probabilities of an annotated disjunction add up to " +
                                                    std::to_string(sum) + ", more than 1");
  }
  for (const InputDirective& d : p.inputs) {
    const Predicate& pr = p.preds[static_cast<size_t>(d.pred)];
    if (pr.derived)
      fail(LangError::Kind::DuplicateDeclaration, d.pos, pr.name,
           "\"" + pr.name + "\" is declared .input but a rule or fact defines it");
  }
  for (Predicate& pr : p.preds) {
    pr.input = !pr.derived;
    if (pr.input && pr.arity == 0)
      fail(LangError::Kind::UnknownPredicate, pr.first, pr.name,
           "no rule or fact defines \"" + pr.name + "\", so it would be read from a table, and a table has columns: "
           "define it (e.g. 0.5::" + pr.name + ".) or give it arguments");
  }
  if (p.queries.empty())
    fail(LangError::Kind::EmptyProgram, SourcePos{1, 1}, "", "the program has no query: add query(atom). for each atom to answer");
}

void check_rule_safety(const Program& p, const Rule& r) {
  std::set<std::string> bound;
  for (const Atom& a : r.pos)
    for (const Term& t : a.args)
      if (t.kind == Term::Kind::Var) bound.insert(t.name);
  auto need = [&](const Term& t, const char* where) {
    if (t.kind == Term::Kind::Var && !bound.count(t.name))
      fail(LangError::Kind::UnsafeVariable, t.pos, t.name,
           "variable \"" + t.name + "\" " + where + " is not bound by a positive body atom");
  };
  for (const HeadAlt& h : r.head)
    for (const Term& t : h.atom.args) {
      if (t.kind == Term::Kind::Anon)
        fail(LangError::Kind::UnsafeVariable, t.pos, "_", "'_' cannot stand in a head: name a variable of the body");
      need(t, "in the head");
    }
  for (const Atom& a : r.neg)
    for (const Term& t : a.args) {
      if (t.kind == Term::Kind::Anon && p.preds[static_cast<size_t>(a.pred)].derived)
        fail(LangError::Kind::UnsafeVariable, t.pos, "_",
             "'_' in a negated atom of a derived relation (\"" + p.preds[static_cast<size_t>(a.pred)].name +
                 "\") is not supported: name a variable bound by a positive body atom");
      need(t, "in a negated atom");
    }
  for (const Compare& c : r.cmps) {
    for (const Term* t : {&c.lhs, &c.rhs}) {
      if (t->kind == Term::Kind::Anon) fail(LangError::Kind::UnsafeVariable, t->pos, "_", "'_' cannot be compared");
      need(*t, "in a comparison");
    }
  }
}

// A dependency of a derived head on a derived body atom.
struct Edge {
  int to;
  bool neg;
  SourcePos at;
};

void stratify(Program& p) {
  const size_t n = p.preds.size();
  std::vector<std::vector<Edge>> deps(n);
  for (const Rule& r : p.rules)
    for (const HeadAlt& h : r.head) {
      for (const Atom& a : r.pos)
        if (p.preds[static_cast<size_t>(a.pred)].derived) deps[static_cast<size_t>(h.atom.pred)].push_back({a.pred, false, a.pos});
      for (const Atom& a : r.neg)
        if (p.preds[static_cast<size_t>(a.pred)].derived) deps[static_cast<size_t>(h.atom.pred)].push_back({a.pred, true, a.pos});
    }
  // Tarjan: components are emitted dependencies first.
  std::vector<std::vector<int>> succ(n);
  for (size_t v = 0; v < n; ++v)
    for (const Edge& e : deps[v]) succ[v].push_back(e.to);
  const Components scc = strongly_connected(
      static_cast<int>(n), [&](int v) -> const std::vector<int>& { return succ[static_cast<size_t>(v)]; },
      [&](int v) { return p.preds[static_cast<size_t>(v)].derived; });
  const std::vector<int>& comp = scc.of;
  const std::vector<std::vector<int>>& comps = scc.members;
  p.num_strata = 0;
  for (const auto& members : comps) {
    int s = 0;
    for (int v : members)
      for (const Edge& e : deps[v]) {
        if (comp[e.to] == comp[v] && e.neg) {
          // The cycle: v depends negatively on e.to, which reaches v again.
          std::vector<int> prev(n, -2);
          std::vector<int> queue{e.to};
          prev[e.to] = -1;
          for (size_t qi = 0; qi < queue.size() && prev[v] == -2; ++qi)
            for (const Edge& f : deps[queue[qi]])
              if (comp[f.to] == comp[v] && prev[f.to] == -2) prev[f.to] = queue[qi], queue.push_back(f.to);
          std::vector<int> path;
          for (int x = v; x != -1 && x != e.to; x = prev[x]) path.push_back(x);
          std::string cycle = p.preds[v].name + " -> \\+" + p.preds[e.to].name;
          for (auto it = path.rbegin(); it != path.rend(); ++it) cycle += " -> " + p.preds[*it].name;
          if (e.to == v) cycle = p.preds[v].name + " -> \\+" + p.preds[v].name;
          fail(LangError::Kind::TypeClash, e.at, p.preds[e.to].name,
               "the program is not stratifiable: \"" + p.preds[e.to].name +
                   "\" is negated inside its own recursion (cycle " + cycle + ")");
        }
        if (comp[e.to] != comp[v]) s = std::max(s, p.preds[e.to].stratum + (e.neg ? 1 : 0));
      }
    for (int v : members) p.preds[v].stratum = s;
    p.num_strata = std::max(p.num_strata, s + 1);
  }
}

}  // namespace

void check(Program& p) {
  check_heads_and_inputs(p);
  for (const Rule& r : p.rules) check_rule_safety(p, r);
  stratify(p);
}

}  // namespace detail

int rule_stratum(const Program& p, const Rule& r) {
  int s = 0;
  for (const Atom& a : r.pos) {
    const Predicate& pr = p.preds[static_cast<size_t>(a.pred)];
    if (pr.derived) s = std::max(s, pr.stratum);
  }
  for (const Atom& a : r.neg) {
    const Predicate& pr = p.preds[static_cast<size_t>(a.pred)];
    if (pr.derived) s = std::max(s, pr.stratum + 1);
  }
  return s;
}

std::string constant_text(const Term& t) {
  if (t.kind == Term::Kind::Int) return std::to_string(t.ival);
  if (t.kind != Term::Kind::Str) return t.name;
  bool plain = !t.name.empty() && t.name[0] >= 'a' && t.name[0] <= 'z';
  for (char c : t.name) plain = plain && detail::is_word_char(c);
  if (plain) return t.name;
  std::string s = "'";
  for (char c : t.name) s += (c == '\'' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return s + "'";
}

std::string atom_text(const Program& p, const Atom& a) {
  std::string s = p.preds[static_cast<size_t>(a.pred)].name;
  for (size_t i = 0; i < a.args.size(); ++i) s += (i ? "," : "(") + constant_text(a.args[i]);
  return a.args.empty() ? s : s + ")";
}

}  // namespace mln::lang::problog
