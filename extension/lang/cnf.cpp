// Alchemy-style conversion of a formula to clauses: rename bound variables
// apart, check argument types, push negations inward (NNF), distribute OR
// over AND.  Existentials become clause-level EXIST variables (Tuffy §2.5)
// where the clause semantics allows it, and are rejected otherwise.
#include <algorithm>
#include <map>
#include <set>

#include "lang/formula.hpp"

namespace mln::lang::detail {

namespace {

using Kind = Formula::Kind;

// Collects every variable name used anywhere in `f`.
void collect_names(const Formula& f, std::set<std::string>& out) {
  if (f.kind == Kind::Atom) {
    for (const Term& t : f.lit.args)
      if (t.is_var()) out.insert(t.text);
  } else if (f.kind == Kind::Cond) {
    std::vector<std::string> v;
    collect_expr_vars(f.cond, v);
    out.insert(v.begin(), v.end());
  }
  for (const std::string& v : f.vars) out.insert(v);
  for (const Formula& k : f.kids) collect_names(k, out);
}

// Collects the variables of `f` that no enclosing quantifier binds.
void collect_free(const Formula& f, std::vector<std::string>& bound, std::set<std::string>& out) {
  auto note = [&](const std::string& v) {
    if (std::find(bound.begin(), bound.end(), v) == bound.end()) out.insert(v);
  };
  if (f.kind == Kind::Atom) {
    for (const Term& t : f.lit.args)
      if (t.is_var()) note(t.text);
  } else if (f.kind == Kind::Cond) {
    std::vector<std::string> v;
    collect_expr_vars(f.cond, v);
    for (const std::string& x : v) note(x);
  }
  size_t mark = bound.size();
  bound.insert(bound.end(), f.vars.begin(), f.vars.end());
  for (const Formula& k : f.kids) collect_free(k, bound, out);
  bound.resize(mark);
}

// Renames variables in an expression through `map`.
void rename_expr(Expr& e, const std::map<std::string, std::string>& map) {
  if (e.kind == Expr::Kind::Var) {
    auto it = map.find(e.text);
    if (it != map.end()) e.text = it->second;
  }
  for (Expr& a : e.args) rename_expr(a, map);
}

// Gives every quantified variable a name of its own (standardising apart),
// so that quantifiers can later be dropped or moved to clause level.
class Renamer {
 public:
  explicit Renamer(const Formula& f) {
    collect_names(f, used_);
    std::vector<std::string> bound;
    collect_free(f, bound, taken_);
  }

  // Renames in place, `map` holding the renamings in scope.
  void run(Formula& f, std::map<std::string, std::string> map) {
    if (f.kind == Kind::Atom) {
      for (Term& t : f.lit.args)
        if (t.is_var()) {
          auto it = map.find(t.text);
          if (it != map.end()) t.text = it->second;
        }
      return;
    }
    if (f.kind == Kind::Cond) {
      rename_expr(f.cond, map);
      return;
    }
    for (std::string& v : f.vars) {
      std::string name = v;
      if (taken_.count(name)) {
        for (int k = 1;; ++k) {
          name = v + "_" + std::to_string(k);
          if (!used_.count(name)) break;
        }
        used_.insert(name);
      }
      taken_.insert(name);
      map[v] = name;
      v = name;
    }
    for (Formula& k : f.kids) run(k, map);
  }

 private:
  std::set<std::string> used_, taken_;
};

// The CNF conversion proper, with a size budget.
class Converter {
 public:
  // Negation normal form of `f` (negated when `neg`): only Atom, Cond, And,
  // Or, Exist and Forall remain.
  Formula nnf(const Formula& f, bool neg, int depth) {
    if (depth > 4 * kMaxNesting) too_large(f.pos);
    charge(1, f.pos);
    Formula out;
    out.pos = f.pos;
    switch (f.kind) {
      case Kind::Atom:
        out = f;
        if (neg) out.lit.positive = !out.lit.positive;
        return out;
      case Kind::Cond:
        out = f;
        if (neg) out.positive = !out.positive;
        return out;
      case Kind::Not:
        return nnf(f.kids[0], !neg, depth + 1);
      case Kind::And:
      case Kind::Or:
        out.kind = (f.kind == Kind::And) != neg ? Kind::And : Kind::Or;
        for (const Formula& k : f.kids) out.kids.push_back(nnf(k, neg, depth + 1));
        return out;
      case Kind::Implies:  // a => b  ==  !a v b
        out.kind = neg ? Kind::And : Kind::Or;
        out.kids.push_back(nnf(f.kids[0], !neg, depth + 1));
        out.kids.push_back(nnf(f.kids[1], neg, depth + 1));
        return out;
      case Kind::Iff: {  // (!a v b) ^ (a v !b);  negated: (a v b) ^ (!a v !b)
        out.kind = Kind::And;
        for (int side = 0; side < 2; ++side) {
          Formula d;
          d.kind = Kind::Or;
          d.pos = f.pos;
          bool neg_a = neg ? side == 1 : side == 0;
          bool neg_b = side == 1;
          d.kids.push_back(nnf(f.kids[0], neg_a, depth + 1));
          d.kids.push_back(nnf(f.kids[1], neg_b, depth + 1));
          out.kids.push_back(std::move(d));
        }
        return out;
      }
      case Kind::Exist:
      case Kind::Forall:
        out.kind = (f.kind == Kind::Exist) != neg ? Kind::Exist : Kind::Forall;
        out.vars = f.vars;
        out.kids.push_back(nnf(f.kids[0], neg, depth + 1));
        return out;
    }
    return out;
  }

  // Clauses of an NNF formula.  `in_exist` is true under an existential.
  std::vector<RawClause> cnf(const Formula& f, bool in_exist, int depth) {
    if (depth > 4 * kMaxNesting) too_large(f.pos);
    std::vector<RawClause> out;
    switch (f.kind) {
      case Kind::Atom:
        out.emplace_back();
        out.back().lits.push_back(f.lit);
        charge(1, f.pos);
        return out;
      case Kind::Cond:
        out.emplace_back();
        out.back().conds.push_back(CondLit{f.cond, f.positive, f.pos});
        charge(1, f.pos);
        return out;
      case Kind::And:
        for (const Formula& k : f.kids) {
          std::vector<RawClause> part = cnf(k, in_exist, depth + 1);
          for (RawClause& c : part) out.push_back(std::move(c));
        }
        return out;
      case Kind::Or: {
        out.emplace_back();
        for (const Formula& k : f.kids) {
          std::vector<RawClause> part = cnf(k, in_exist, depth + 1);
          if (part.size() == 1) {  // the common case: extend every clause in place
            const RawClause& b = part[0];
            for (RawClause& c : out) {
              charge(b.lits.size() + b.conds.size(), f.pos);
              c.lits.insert(c.lits.end(), b.lits.begin(), b.lits.end());
              c.conds.insert(c.conds.end(), b.conds.begin(), b.conds.end());
              c.exist.insert(c.exist.end(), b.exist.begin(), b.exist.end());
            }
            continue;
          }
          std::vector<RawClause> next;
          for (const RawClause& a : out)
            for (const RawClause& b : part) {
              charge(a.lits.size() + b.lits.size() + a.conds.size() + b.conds.size(), f.pos);
              RawClause c = a;
              c.lits.insert(c.lits.end(), b.lits.begin(), b.lits.end());
              c.conds.insert(c.conds.end(), b.conds.begin(), b.conds.end());
              c.exist.insert(c.exist.end(), b.exist.begin(), b.exist.end());
              next.push_back(std::move(c));
            }
          out = std::move(next);
        }
        return out;
      }
      case Kind::Forall:
        if (in_exist)
          throw LangError(LangError::Kind::Syntax, f.pos.line, f.pos.col, "FORALL",
                          "a universal quantifier inside the scope of EXIST cannot be represented "
                          "(clause-level EXIST means: for all the other variables, there exists)");
        return cnf(f.kids[0], in_exist, depth + 1);
      case Kind::Exist: {
        out = cnf(f.kids[0], true, depth + 1);
        int holders = 0;
        for (RawClause& c : out) {
          std::vector<std::string> mine;
          for (const std::string& v : f.vars)
            if (clause_mentions(c, v)) mine.push_back(v);
          if (mine.empty()) continue;
          ++holders;
          c.exist.insert(c.exist.begin(), mine.begin(), mine.end());
        }
        if (holders > 1)
          throw LangError(LangError::Kind::Syntax, f.pos.line, f.pos.col, "EXIST",
                          "EXIST " + f.vars[0] +
                              " ranges over a conjunction; only an existential over a single clause "
                              "can be represented (as a clause-level EXIST)");
        return out;
      }
      default:
        throw LangError(LangError::Kind::Syntax, f.pos.line, f.pos.col, "", "internal: formula not in NNF");
    }
  }

 private:
  static bool clause_mentions(const RawClause& c, const std::string& v) {
    for (const Literal& l : c.lits)
      for (const Term& t : l.args)
        if (t.is_var() && t.text == v) return true;
    std::vector<std::string> vars;
    for (const CondLit& k : c.conds) collect_expr_vars(k.e, vars);
    return std::find(vars.begin(), vars.end(), v) != vars.end();
  }

  [[noreturn]] static void too_large(SourcePos pos) {
    throw LangError(LangError::Kind::BadValue, pos.line, pos.col, "",
                    "formula too large to convert to clauses (more than " +
                        std::to_string(kMaxCnfSize) + " literals)");
  }

  void charge(size_t n, SourcePos pos) {
    spent_ += n;
    if (spent_ > kMaxCnfSize) too_large(pos);
  }

  size_t spent_ = 0;
};

// Walks the atoms of `f`, recording the type of each variable.
void check_types(const Program& prog, const Formula& f,
                 std::map<std::string, std::pair<std::string, SourcePos>>& seen) {
  if (f.kind == Kind::Atom) {
    const PredicateDecl& d = prog.preds[f.lit.pred];
    for (size_t i = 0; i < f.lit.args.size(); ++i) {
      const Term& t = f.lit.args[i];
      if (!t.is_var()) continue;
      SourcePos at = i < f.arg_pos.size() ? f.arg_pos[i] : f.pos;
      auto it = seen.find(t.text);
      if (it == seen.end()) {
        seen.emplace(t.text, std::make_pair(d.arg_types[i], at));
      } else if (it->second.first != d.arg_types[i]) {
        throw LangError(LangError::Kind::TypeClash, at.line, at.col, t.text,
                        "variable " + t.text + " is used as type " + it->second.first + " (line " +
                            std::to_string(it->second.second.line) + ") and as type " +
                            d.arg_types[i] + " (argument " + std::to_string(i + 1) + " of " + d.name + ")");
      }
    }
  }
  for (const Formula& k : f.kids) check_types(prog, k, seen);
}

}  // namespace

void check_variable_types(const Program& prog, const Formula& f) {
  std::map<std::string, std::pair<std::string, SourcePos>> seen;
  check_types(prog, f, seen);
}

std::vector<RawClause> formula_to_cnf(const Program& prog, const Formula& f,
                                      std::vector<std::string>& warnings) {
  Formula renamed = f;
  Renamer(renamed).run(renamed, {});
  check_variable_types(prog, renamed);
  Converter conv;
  Formula n = conv.nnf(renamed, false, 0);
  std::vector<RawClause> clauses = conv.cnf(n, false, 0);
  // Warn about quantified variables that no clause uses.
  std::vector<const Formula*> stack{&renamed};
  while (!stack.empty()) {
    const Formula* g = stack.back();
    stack.pop_back();
    if (g->kind == Kind::Exist)
      for (const std::string& v : g->vars) {
        bool used = false;
        for (const RawClause& c : clauses)
          for (const Literal& l : c.lits)
            for (const Term& t : l.args) used = used || (t.is_var() && t.text == v);
        if (!used)
          warnings.push_back("line " + std::to_string(g->pos.line) + ": EXIST variable " + v +
                             " occurs in no literal and is ignored");
      }
    for (const Formula& k : g->kids) stack.push_back(&k);
  }
  return clauses;
}

}  // namespace mln::lang::detail
