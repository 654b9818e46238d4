// The Datalog program's static checks (docs/datalog.md): safety (every
// variable of a head, a negated atom or a comparison is bound by a positive
// body atom, or by `V = expr` over bound variables), stratification (strata
// are the strongly connected components of the dependency graph, dependencies
// first; negation, or an aggregate, inside a component is refused with the
// cycle named) and column types (integer or text, one per variable and
// column; aggregates give integers, sum/min/max read them).
#include <algorithm>
#include <deque>
#include <functional>

#include "lang/datalog.hpp"
#include "lang/scc.hpp"

namespace mln::lang::datalog {

const char* type_name(ColType t) { return t == ColType::Int ? "integer" : t == ColType::Text ? "text" : "unknown"; }

const char* agg_name(Agg a) {
  static const char* const s[] = {"", "count", "sum", "min", "max"};
  return s[static_cast<int>(a)];
}

const char* cmp_text(Cmp c) {
  static const char* const s[] = {"=", "!=", "<", "<=", ">", ">="};
  return s[static_cast<int>(c)];
}

int Program::find(std::string_view name) const {
  for (size_t i = 0; i < rels.size(); ++i)
    if (rels[i].name == name) return static_cast<int>(i);
  return -1;
}

std::string column_phrase(const Relation& rel, size_t c) {
  const size_t hidden = static_cast<size_t>(rel.hidden_columns);
  if (c < hidden) return "column " + std::to_string(c + 1) + " of \"" + rel.name + "\"";
  return (hidden ? "argument " : "column ") + std::to_string(c + 1 - hidden) + " of \"" + rel.name + "\"";
}

namespace {

LangError unsafe(const Rule& r, const Term& t, const char* where) {
  const std::string& v = r.vars[t.var];
  return LangError(LangError::Kind::UnsafeVariable, t.pos.line, t.pos.col, v,
                   "variable \"" + v + "\" " + where + " is not bound by a positive body atom");
}

// Calls f on every variable term of an expression.
void each_var(const Expr& e, const std::function<void(const Term&)>& f) {
  if (e.op == 0) {
    if (e.leaf.kind == Term::Kind::Var) f(e.leaf);
    return;
  }
  for (const Expr& k : e.kids) each_var(k, f);
}

bool all_bound(const Expr& e, const std::vector<char>& bound) {
  bool ok = true;
  each_var(e, [&](const Term& t) { ok = ok && bound[t.var]; });
  return ok;
}

bool unbound_var(const Expr& e, const std::vector<char>& bound) {
  return e.op == 0 && e.leaf.kind == Term::Kind::Var && !bound[e.leaf.var];
}

void check_rule(Rule& r) {
  std::vector<char> bound(r.vars.size(), 0);
  for (const Atom& a : r.pos)
    for (const Term& t : a.args)
      if (t.kind == Term::Kind::Var) bound[t.var] = 1;
  // `V = expr` binds V once expr's variables are bound; chains resolve in turn.
  for (bool more = true; more;) {
    more = false;
    for (Compare& c : r.cmps) {
      if (c.op != Cmp::Eq || c.assigns >= 0) continue;
      if (unbound_var(c.lhs, bound) && all_bound(c.rhs, bound)) {
        std::swap(c.lhs, c.rhs);  // the bound side first: rhs is the assigned variable
      } else if (!(unbound_var(c.rhs, bound) && all_bound(c.lhs, bound))) {
        continue;
      }
      c.assigns = c.rhs.leaf.var;
      bound[c.assigns] = 1;
      more = true;
    }
  }
  for (const Compare& c : r.cmps) {
    if (c.assigns >= 0) continue;
    for (const Expr* e : {&c.lhs, &c.rhs})
      each_var(*e, [&](const Term& t) {
        if (!bound[t.var]) throw unsafe(r, t, "in a comparison");
      });
  }
  for (const Atom& a : r.neg)
    for (const Term& t : a.args)
      if (t.kind == Term::Kind::Var && !bound[t.var]) throw unsafe(r, t, "in a negated atom");
  for (const Term& t : r.head.args) {
    if (t.kind == Term::Kind::Anon)
      throw LangError(LangError::Kind::UnsafeVariable, t.pos.line, t.pos.col, "_", "_ cannot appear in a rule's head");
    if (t.kind == Term::Kind::Var && !bound[t.var]) throw unsafe(r, t, "in the head");
  }
}

}  // namespace

namespace detail {

void check_safety(Program& p) {
  for (Rule& r : p.rules) check_rule(r);
}

// Tarjan's components over "head depends on body relation": a component is
// complete only after every component it depends on, so the order in which
// they complete is an evaluation order.
void stratify(Program& p) {
  const int n = static_cast<int>(p.rels.size());
  std::vector<std::vector<int>> deps(n);
  for (const Rule& r : p.rules) {
    for (const Atom& a : r.pos) deps[r.head.rel].push_back(a.rel);
    for (const Atom& a : r.neg) deps[r.head.rel].push_back(a.rel);
  }
  const Components scc = strongly_connected(n, [&](int v) -> const std::vector<int>& { return deps[v]; },
                                            [](int) { return true; });
  const std::vector<int>& comp = scc.of;
  const std::vector<std::vector<int>>& comps = scc.members;
  // A negated or aggregated atom inside its head's component: name the cycle through it.
  auto refuse = [&](const Rule& r, const Atom& a, const std::string& how, const std::string& edge) {
    std::vector<int> from(n, -1);  // BFS from the body relation back to the head
    std::deque<int> q{a.rel};
    from[a.rel] = a.rel;
    while (!q.empty() && from[r.head.rel] < 0) {
      int v = q.front();
      q.pop_front();
      for (int w : deps[v])
        if (comp[w] == comp[a.rel] && from[w] < 0) from[w] = v, q.push_back(w);
    }
    std::vector<int> path;
    for (int v = r.head.rel; v != a.rel; v = from[v]) path.push_back(v);
    std::string cycle = p.rels[r.head.rel].name + " -> " + edge;
    for (auto it = path.rbegin(); it != path.rend(); ++it) cycle += " -> " + p.rels[*it].name;
    throw LangError(LangError::Kind::BadValue, a.pos.line, a.pos.col, p.rels[a.rel].name,
                    "the program is not stratifiable: \"" + p.rels[a.rel].name + "\" is " + how +
                        " inside its own recursion (cycle " + cycle + ")");
  };
  for (const Rule& r : p.rules) {
    for (const Atom& a : r.neg)
      if (comp[a.rel] == comp[r.head.rel]) refuse(r, a, "negated", "!" + p.rels[a.rel].name);
    if (!r.aggregates()) continue;
    std::string agg;
    for (const Term& t : r.head.args)
      if (t.agg != Agg::None && agg.empty()) agg = agg_name(t.agg);
    for (const Atom& a : r.pos)
      if (comp[a.rel] == comp[r.head.rel])
        refuse(r, a, "aggregated (" + agg + ")", agg + "(" + p.rels[a.rel].name + ")");
  }
  std::vector<int> stratum_of(comps.size(), -1);
  for (size_t c = 0; c < comps.size(); ++c) {
    std::vector<int> derived;
    for (int v : comps[c])
      if (p.rels[v].derived) derived.push_back(v);
    if (derived.empty()) continue;
    std::sort(derived.begin(), derived.end());
    stratum_of[c] = static_cast<int>(p.strata.size());
    p.strata.push_back(std::move(derived));
  }
  p.stratum_rules.assign(p.strata.size(), {});
  for (size_t i = 0; i < p.rules.size(); ++i)
    p.stratum_rules[stratum_of[comp[p.rules[i].head.rel]]].push_back(static_cast<int>(i));
}

}  // namespace detail

namespace {

// Unifies the known type `have` (of what is at `pos`) into `slot`; a clash
// is an error naming both.
void unify(ColType& slot, ColType have, const SourcePos& pos, const std::string& what, bool& changed) {
  if (have == ColType::Unknown || slot == have) return;
  if (slot == ColType::Unknown) {
    slot = have;
    changed = true;
    return;
  }
  throw LangError(LangError::Kind::TypeClash, pos.line, pos.col, what,
                  what + " is used as " + type_name(have) + " here but as " + type_name(slot) + " elsewhere");
}

ColType term_type(const Term& t) {
  return t.kind == Term::Kind::Int ? ColType::Int : t.kind == Term::Kind::Str ? ColType::Text : ColType::Unknown;
}

class Typer {
 public:
  explicit Typer(Program& p) : p_(p) {}

  void run() {
    vt_.resize(p_.rules.size());
    for (size_t i = 0; i < p_.rules.size(); ++i) vt_[i].assign(p_.rules[i].vars.size(), ColType::Unknown);
    for (changed_ = true; changed_;) {
      changed_ = false;
      for (size_t i = 0; i < p_.rules.size(); ++i) rule(p_.rules[i], vt_[i]);
    }
    for (Relation& r : p_.rels)
      for (ColType& t : r.types)
        if (t == ColType::Unknown) t = ColType::Int;  // never constrained: p(X) :- p(X).
  }

 private:
  Program& p_;
  std::vector<std::vector<ColType>> vt_;
  bool changed_ = true;

  // An aggregate's column is an integer; sum, min and max read integers.
  void aggregate(const Rule& r, const Term& t, ColType& slot, const std::string& col, std::vector<ColType>& vt) {
    const std::string v = r.vars[t.var];
    if (t.agg != Agg::Count) {
      if (vt[t.var] == ColType::Text)
        throw LangError(LangError::Kind::TypeClash, t.pos.line, t.pos.col, agg_name(t.agg),
                        std::string(agg_name(t.agg)) + "(" + v + ") over text: sum, min and max take integers (count takes any)");
      unify(vt[t.var], ColType::Int, t.pos, "variable \"" + v + "\"", changed_);
    }
    unify(slot, ColType::Int, t.pos, col, changed_);
  }

  void atom(const Rule& r, const Atom& a, std::vector<ColType>& vt) {
    Relation& rel = p_.rels[a.rel];
    for (size_t c = 0; c < a.args.size(); ++c) {
      const Term& t = a.args[c];
      const std::string col = column_phrase(rel, c);
      if (t.agg != Agg::None) {
        aggregate(r, t, rel.types[c], col, vt);
      } else if (t.kind == Term::Kind::Var) {
        unify(vt[t.var], rel.types[c], t.pos, "variable \"" + r.vars[t.var] + "\"", changed_);
        unify(rel.types[c], vt[t.var], t.pos, col, changed_);
      } else if (t.is_const()) {
        unify(rel.types[c], term_type(t), t.pos, col, changed_);
      }
    }
  }

  ColType expr(const Rule& r, const Expr& e, std::vector<ColType>& vt) {
    if (e.op == 0) return e.leaf.kind == Term::Kind::Var ? vt[e.leaf.var] : term_type(e.leaf);
    for (const Expr& k : e.kids) {
      if (k.op == 0 && k.leaf.kind == Term::Kind::Var)
        unify(vt[k.leaf.var], ColType::Int, k.pos, "variable \"" + r.vars[k.leaf.var] + "\" (in arithmetic)", changed_);
      else if (expr(r, k, vt) == ColType::Text)
        throw LangError(LangError::Kind::TypeClash, k.pos.line, k.pos.col, "", "arithmetic on text: only integers add, subtract, ...");
    }
    return ColType::Int;
  }

  void compare(const Rule& r, const Compare& c, std::vector<ColType>& vt) {
    ColType lt = expr(r, c.lhs, vt), rt = expr(r, c.rhs, vt);
    for (const Expr* side : {&c.lhs, &c.rhs}) {
      if (side->op != 0 || side->leaf.kind != Term::Kind::Var) continue;
      const ColType other = side == &c.lhs ? rt : lt;
      unify(vt[side->leaf.var], other, side->pos, "variable \"" + r.vars[side->leaf.var] + "\"", changed_);
    }
    lt = expr(r, c.lhs, vt), rt = expr(r, c.rhs, vt);
    if (lt != ColType::Unknown && rt != ColType::Unknown && lt != rt)
      throw LangError(LangError::Kind::TypeClash, c.pos.line, c.pos.col, cmp_text(c.op),
                      std::string("comparison of ") + type_name(lt) + " with " + type_name(rt));
    if ((lt == ColType::Text || rt == ColType::Text) && c.op != Cmp::Eq && c.op != Cmp::Ne)
      throw LangError(LangError::Kind::TypeClash, c.pos.line, c.pos.col, cmp_text(c.op),
                      std::string("text is compared only with = and != (not ") + cmp_text(c.op) + ")");
  }

  void rule(const Rule& r, std::vector<ColType>& vt) {
    for (const Atom& a : r.pos) atom(r, a, vt);
    for (const Atom& a : r.neg) atom(r, a, vt);
    for (const Compare& c : r.cmps) compare(r, c, vt);
    atom(r, r.head, vt);
  }
};

void encode_term(Term& t, Symbols& syms) {
  if (t.kind == Term::Kind::Str) t.ival = syms.intern(t.sval);
}

void encode_expr(Expr& e, Symbols& syms) {
  encode_term(e.leaf, syms);
  for (Expr& k : e.kids) encode_expr(k, syms);
}

}  // namespace

void infer_types(Program& p) { Typer(p).run(); }

int32_t Symbols::intern(const std::string& s) {
  auto [it, fresh] = ids_.emplace(s, static_cast<int32_t>(names_.size()));
  if (fresh) names_.push_back(s);
  return it->second;
}

void encode_constants(Program& p, Symbols& syms) {
  for (Rule& r : p.rules) {
    for (Term& t : r.head.args) encode_term(t, syms);
    for (auto* atoms : {&r.pos, &r.neg})
      for (Atom& a : *atoms)
        for (Term& t : a.args) encode_term(t, syms);
    for (Compare& c : r.cmps) {
      encode_expr(c.lhs, syms);
      encode_expr(c.rhs, syms);
    }
  }
}

}  // namespace mln::lang::datalog
