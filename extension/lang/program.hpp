// The MLN program model: what the parser produces and the grounder consumes.
//
// Pure C++ (no PostgreSQL): compiled into the extension and into the unit
// tests.  Language: Tuffy's (docs/tuffy-reference.md §2) plus Alchemy-style
// formulas, which are converted to clauses before they reach this model.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace mln::lang {

// Every error in program, evidence or query text.  line/col are 1-based and
// 0 when unknown.  `token` is the offending token for syntax errors.
class LangError : public std::runtime_error {
 public:
  enum class Kind {
    Syntax,             // unexpected token / bad character / unterminated string
    UnknownPredicate,   // atom or -cw name of an undeclared predicate
    ArityMismatch,      // wrong number of arguments
    TypeClash,          // e.g. non-numeric constant in a numeric-typed argument
    DuplicateDeclaration,
    EmptyProgram,       // no predicate declared (no rules: only a warning)
    VariableInEvidence, // lower-case term in an evidence or (closed) context
    BadValue,           // prior outside [0,1], bad number, ...
    UnsafeVariable,     // variable used only in a condition / embedded weight unbound
  };
  LangError(Kind kind, int line, int col, std::string token, const std::string& message)
      : std::runtime_error(visible_nul(message)),
        kind_(kind),
        line_(line),
        col_(col),
        token_(visible_nul(std::move(token))) {}
  Kind kind() const noexcept { return kind_; }
  int line() const noexcept { return line_; }
  int col() const noexcept { return col_; }
  const std::string& token() const noexcept { return token_; }
  // "line 3, column 7: <message>"
  std::string where_what() const;
  // `s` with each NUL byte written \0: what() is a C string, and a NUL from
  // the text (in a quoted token) cut the message short there.
  static std::string visible_nul(std::string s) {
    for (size_t i = s.find('\0'); i != std::string::npos; i = s.find('\0', i + 2)) s.replace(i, 1, "\\0");
    return s;
  }

 private:
  Kind kind_;
  int line_, col_;
  std::string token_;
};

struct SourcePos {
  int line = 0, col = 0;
};

// Argument types.  A type whose name starts with int/float/double and ends
// with '_' holds raw numbers (Tuffy's non-symbolic types).
enum class TypeKind { Symbol, Int, Float };

struct PredicateDecl {
  std::string name;                   // as written (case preserved)
  std::vector<std::string> arg_types; // type names
  std::vector<std::string> arg_names; // explicit or <type><pos>
  std::vector<TypeKind> arg_kinds;
  std::vector<bool> dependent;        // '!' marker: label attribute of a key constraint
  bool closed_world = false;          // '*' prefix (or -cw later)
  bool completely_specified = false;  // '**' prefix
  SourcePos pos;
  int arity() const { return static_cast<int>(arg_types.size()); }
  bool has_key_constraint() const {
    for (bool d : dependent) if (d) return true;
    return false;
  }
};

// A term in a rule, query or condition.
struct Term {
  enum class Kind { Variable, Constant };
  Kind kind = Kind::Constant;
  std::string text;       // variable name, or the constant's string (quotes removed)
  bool is_number = false; // constant written as a number
  bool is_var() const { return kind == Kind::Variable; }
};

struct Literal {
  int pred = -1;          // index into Program::preds
  bool positive = true;
  std::vector<Term> args;
  SourcePos pos;
};

// Expression tree for built-in conditions ([x != y], a > 3, contains(a,"b")).
struct Expr {
  enum class Kind { Var, Num, Str, Unary, Binary, Call };
  Kind kind = Kind::Num;
  std::string text;       // Var: name; Str: value; Unary/Binary: operator ("=", "!=", "<",
                          // "&&", "||", "!", "+", "-", "*", "/", "%", "&", "|", "^", "<<",
                          // ">>", "~", "fact"); Call: lower-cased function name
  double num = 0;         // Num
  std::vector<Expr> args; // operands / call arguments
};

// One first-order clause after normalisation (Tuffy §2.6): a disjunction of
// literals, with existential variables, grounding conditions, and a weight.
struct Clause {
  std::vector<Literal> lits;            // in written order, duplicates removed
  std::vector<std::string> exist_vars;  // EXIST variables
  std::vector<Expr> conditions;         // conjunction; the clause is grounded only where all hold
                                        // (head disjunct conditions are stored negated)
  double weight = 0;                    // hard clauses: kHardWeight (5.2e7)
  bool hard = false;
  bool fixed = false;                   // '@' before the weight: weight learning leaves it as written
  std::string weight_var;               // embedded weight `w: clause` (weight then unused)
  std::string label;
  SourcePos pos;                        // of the first rule that produced it
  std::string text;                     // normalised clause text, e.g. "!Smokes(a1) v Cancer(a1)"
};

// Datalog (':-') and scoping (':=') rules.
struct Rule {
  bool scoping = false;                 // ':='
  char prefix = 0;                      // '@' or '#' (never run) or 0
  Literal head;
  bool head_plus = false;               // '+' on the head: inserted tuples are unknown
  std::vector<Literal> body;
  std::vector<Expr> conditions;
  double prior = std::nan("");          // [priorProb = p] on scoping rules
  SourcePos pos;
};

struct Program {
  std::vector<PredicateDecl> preds;
  std::vector<Clause> clauses;          // merged by signature (weights summed), zero weights dropped
  std::vector<Rule> rules;
  std::vector<std::string> warnings;    // e.g. "FD is still in development"

  int find_pred(std::string_view name) const;  // -1 if absent (exact, case-sensitive)
};

struct ParseOptions {
  bool alchemy = true;  // accept Alchemy formulas (^, <=>, =>, FORALL/EXIST anywhere, nesting)
};

// One clause as Tuffy lists it: "%.4f <text>" for soft clauses, "<text>."
// for hard ones, "<w>: <text>" for embedded weights.
std::string format_clause(const Clause& c);
// A condition in the program's surface syntax.
std::string format_expr(const Expr& e);

// Parses (possibly several concatenated) program texts.  Throws LangError.
Program parse_program(std::string_view text, const ParseOptions& opts = {});
// Parses one more program file into an existing program (Tuffy's comma-separated -i).
void parse_program_into(Program& prog, std::string_view text, const ParseOptions& opts = {});

// One evidence line.
struct EvidenceAtom {
  int pred = -1;
  std::vector<std::string> args;  // constants as strings (quotes removed)
  bool truth = true;              // after '!'; soft evidence: true (see prior)
  double prior = std::nan("");    // soft evidence: probability the atom is true; NaN = hard
  int line = 0;
};

// Streams evidence atoms to `sink`; returns the count.  Throws LangError
// (UnknownPredicate, ArityMismatch, BadValue, VariableInEvidence -- no,
// Tuffy treats every evidence argument as a constant -- Syntax).
template <typename Sink>
size_t parse_evidence(const Program& prog, std::string_view text, Sink&& sink);

// Non-template form used by the template above.
class EvidenceReader {
 public:
  EvidenceReader(const Program& prog, std::string_view text);
  // Fills `out` with the next atom; false at end of text.  Throws LangError.
  bool next(EvidenceAtom& out);

 private:
  const Program& prog_;
  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
  int last_pred_ = -1;  // predicate of the previous atom (evidence is usually grouped)
};

template <typename Sink>
size_t parse_evidence(const Program& prog, std::string_view text, Sink&& sink) {
  EvidenceReader r(prog, text);
  EvidenceAtom a;
  size_t n = 0;
  while (r.next(a)) {
    sink(a);
    ++n;
  }
  return n;
}

// A query: an atom pattern (variables lower-case) or a bare predicate name
// (args empty: every atom of the predicate).
struct Query {
  int pred = -1;
  std::vector<Term> args;
};
// Parses a query file or a -q list (comma-separated).  A query file must
// hold at least one query.
std::vector<Query> parse_queries(const Program& prog, std::string_view text);

}  // namespace mln::lang
