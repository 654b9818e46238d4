// The Datalog front end (docs/datalog.md): program model, parser, safety,
// stratification and column types.  Pure C++ (no PostgreSQL): the SQL glue
// (extension/pg/datalog_fn.cpp) resolves input relations from the catalog,
// the evaluator (extension/ground/datalog_eval.*) runs the rules on the
// operator engine.  Every error is a LangError with line and column.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lang/program.hpp"

namespace mln::lang::datalog {

// A column's type: integers are stored as they are, text as symbol ids.
enum class ColType { Unknown, Int, Text };
const char* type_name(ColType t);

// A head argument's aggregate (`deg(X, count(Y))`): the term is its variable.
enum class Agg { None, Count, Sum, Min, Max };
const char* agg_name(Agg a);

// An argument of an atom or a leaf of an expression.
struct Term {
  enum class Kind { Var, Anon, Int, Str } kind = Kind::Var;
  Agg agg = Agg::None;  // heads only: an aggregate of the variable `var`
  int var = -1;        // Var: index into Rule::vars
  int64_t ival = 0;    // Int; Str after encode_constants: the symbol id
  std::string sval;    // Str: the decoded text
  SourcePos pos;
  bool is_const() const { return kind == Kind::Int || kind == Kind::Str; }
};

// Integer arithmetic: a leaf term, a unary minus ('n') or a binary operator
// ('+', '-', '*', '/', '%').
struct Expr {
  char op = 0;  // 0: leaf
  Term leaf;
  std::vector<Expr> kids;
  SourcePos pos;
};

enum class Cmp { Eq, Ne, Lt, Le, Gt, Ge };
const char* cmp_text(Cmp c);

struct Atom {
  int rel = -1;
  std::vector<Term> args;
  SourcePos pos;
};

// A comparison.  `assigns` >= 0 when it is `V = expr` (or `expr = V`) with V
// bound by no positive atom: it binds V (set by the safety check).
struct Compare {
  Cmp op = Cmp::Eq;
  Expr lhs, rhs;
  SourcePos pos;
  int assigns = -1;
};

struct Rule {
  Atom head;
  std::vector<Atom> pos;   // positive body atoms
  std::vector<Atom> neg;   // negated body atoms
  std::vector<Compare> cmps;
  std::vector<std::string> vars;  // variable names, indexed by Term::var
  SourcePos at;
  // Whether the head holds an aggregate: the rule's rows are then the
  // groups of the distinct bindings of the body's variables (docs/datalog.md).
  bool aggregates() const {
    for (const Term& t : head.args)
      if (t.agg != Agg::None) return true;
    return false;
  }
};

// Where an input relation's rows come from: `.input r(a int, b text) from
// s.t(x, y)`.  Empty table: the relation's own name, looked up through the
// search_path; empty columns: the table's columns in order.
struct InputSource {
  std::string schema, table;
  std::vector<std::string> columns;
};

struct Relation {
  std::string name;
  int arity = -1;
  std::vector<ColType> types;     // per column; Unknown until resolved
  std::vector<std::string> cols;  // column names (declared, or c1..cN)
  bool derived = false;           // defined by rules or facts (an output)
  bool input = false;             // read from a table (declared or not)
  bool declared_input = false;    // named by .input
  bool declared = false;          // .decl or .input gave its columns
  InputSource source;
  SourcePos first;                // first mention
  // Leading columns that the program's author did not write (ProbLog's
  // random relations carry their rule's id first): messages count the
  // columns after them as arguments, from 1 (column_phrase).
  int hidden_columns = 0;
};

// How a message names column c (from 0) of `rel`: `column 2 of "r"`, or
// for a relation with hidden leading columns `argument 1 of "r"`, as the
// author wrote it.
std::string column_phrase(const Relation& rel, size_t c);

// The program after parse(): relations, rules and the strata, each a set of
// derived relations evaluated together, dependencies first.
struct Program {
  std::vector<Relation> rels;
  std::vector<Rule> rules;
  std::vector<std::vector<int>> strata;       // relation indices
  std::vector<std::vector<int>> stratum_rules;  // rule indices whose head is in the stratum
  int find(std::string_view name) const;
};

// Parses `text` and checks arities, safety and stratification.  Input
// relations not named by .input have Unknown column types: the caller fills
// them (from the catalog) before infer_types().  Throws LangError.
Program parse(std::string_view text);

// A program assembled from objects rather than text, for a front end that
// translates another language (ProbLog's grounding, problog_ground.cpp):
// `.input` and `.decl` directives as their text where they were written,
// relations by name, rules whose atoms name relations by relation()'s
// index and whose terms carry the source positions errors will name.  The
// rules for relations and directives are the parser's; finish() runs
// parse()'s checks (inputs against derived relations, safety, strata).
// Throws LangError as parse() does.
class ProgramBuilder {
 public:
  ProgramBuilder();
  ~ProgramBuilder();
  ProgramBuilder(const ProgramBuilder&) = delete;
  ProgramBuilder& operator=(const ProgramBuilder&) = delete;
  // One or more directives, their text's first character at `at`.
  void directives(std::string_view text, SourcePos at);
  // The relation `name` with `arity` columns, created at `at` on first
  // mention; another arity than an earlier one is an ArityMismatch at `at`.
  int relation(const std::string& name, int arity, SourcePos at);
  // A rule; its head's relation becomes derived.
  void add_rule(Rule r);
  // The program so far (a caller marks relations' hidden columns).
  const Program& program() const;
  Program& program();
  Program finish();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Gives every column of every derived relation a type from the rules, and
// checks that each variable, constant, comparison and arithmetic expression
// is used with one type.  Input relations' types must be known.  Throws
// LangError(TypeClash).
void infer_types(Program& p);

// Text <-> symbol id, shared by the input tables, the program's constants
// and the output.  Ids are dense from 0 (joins on them take the engine's
// dense form).
class Symbols {
 public:
  int32_t intern(const std::string& s);
  const std::string& text(int32_t id) const { return names_.at(static_cast<size_t>(id)); }
  size_t size() const { return names_.size(); }

 private:
  std::unordered_map<std::string, int32_t> ids_;
  std::vector<std::string> names_;
};

// Replaces every string constant's ival by its symbol id.
void encode_constants(Program& p, Symbols& syms);

namespace detail {
// Safety and stratification (datalog_check.cpp), run by parse().
void check_safety(Program& p);
void stratify(Program& p);
}  // namespace detail

}  // namespace mln::lang::datalog
