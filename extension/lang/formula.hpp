// Formulas as parsed (before CNF), clauses as produced by the CNF conversion,
// and the steps between them.  Internal to extension/lang.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "lang/program.hpp"

namespace mln::lang::detail {

// Deepest nesting the parser and the converters accept (parentheses,
// negations, quantifiers, operator chains): bounds stack use on hostile input.
constexpr int kMaxNesting = 200;
// Most formula nodes / clause literals the CNF conversion may create.
constexpr size_t kMaxCnfSize = 200000;

// A formula tree.  Atom and Cond are leaves; `positive` is their sign.
struct Formula {
  enum class Kind { Atom, Cond, Not, And, Or, Implies, Iff, Exist, Forall };
  Kind kind = Kind::Atom;
  bool positive = true;              // Atom / Cond sign (Atom also keeps lit.positive in step)
  Literal lit;                       // Atom
  std::vector<SourcePos> arg_pos;    // Atom: position of each argument
  Expr cond;                         // Cond: a boolean expression
  std::vector<Formula> kids;         // Not: 1; Implies/Iff: 2; And/Or: n
  std::vector<std::string> vars;     // Exist / Forall
  SourcePos pos;
};

// A condition inside a clause under construction: the clause holds the
// disjunct `positive ? e : !e`.
struct CondLit {
  Expr e;
  bool positive = true;
  SourcePos pos;
};

// A clause as the CNF conversion produces it.
struct RawClause {
  std::vector<Literal> lits;
  std::vector<CondLit> conds;
  std::vector<std::string> exist;
};

// Converts a formula to clauses the way Alchemy does (rename bound variables
// apart, negation normal form, distribute OR over AND); existentials stay as
// clause-level EXIST where possible.  Throws LangError.
std::vector<RawClause> formula_to_cnf(const Program& prog, const Formula& f,
                                      std::vector<std::string>& warnings);

// Lower-cased name if `name` is a built-in condition function, else "".
std::string builtin_function(std::string_view name);

// Checks that every variable keeps one argument type across `f` (after its
// bound variables were renamed apart).  Throws LangError(TypeClash).
void check_variable_types(const Program& prog, const Formula& f);

// Names of the variables that occur in `e`, appended to `out`.
void collect_expr_vars(const Expr& e, std::vector<std::string>& out);

// The negation of a condition (comparisons flip, "!" cancels).
Expr negate_condition(const Expr& e);

// Variable renaming used by the clause signature (x -> v0, ...).
using RenameMap = std::unordered_map<std::string, std::string>;

// Text of a term: bare identifier/number, or a quoted Java-escaped string.
std::string term_text(const Term& t);
// Text of a literal with renamed variables (rename may be null).
std::string literal_text(const Program& prog, const Literal& l,
                         const RenameMap* rename = nullptr);
// Text of an expression, variables renamed through `rename` when given.
std::string expr_text(const Expr& e, const RenameMap* rename = nullptr);

// Clause text: EXIST prefix, literals, negated conditions as "v [..]".
std::string clause_body_text(const Program& prog, const Clause& c,
                             const RenameMap* rename = nullptr);

// What a rule contributes to each of its clauses.
struct RuleInfo {
  double weight = 0;          // per clause, already divided
  bool hard = false;
  std::string weight_var;
  std::string label;
  SourcePos pos;
  bool drop = false;          // zero weight: check the clauses, keep none
  bool fixed = false;         // '@': not learned
};

// Adds rule clauses to a program: dedups literals, checks variable safety,
// drops zero weights and merges same-signature clauses (Tuffy §2.6).
class ClauseMerger {
 public:
  explicit ClauseMerger(Program& prog);
  // Normalises and adds the clauses of one rule.  Throws LangError.
  void add(std::vector<RawClause> clauses, const RuleInfo& info);
  // The merge key of a clause (weight sign, EXIST, literals, conditions, renamed).
  static std::string signature(const Program& prog, const Clause& c);

 private:
  // A hard ground unit clause (P(A).) beside its hard opposite (!P(A).):
  // no world satisfies both, and merged they summed to weight 0 (Tuffy's
  // merge: MAP then said "optimal, no hard clause violated").  Refused,
  // naming both lines.  Keyed by the atom's text; the value: sign, where.
  void refuse_hard_opposites(const Clause& c);
  std::unordered_map<std::string, std::pair<bool, SourcePos>> hard_units_;

  Program& prog_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace mln::lang::detail
