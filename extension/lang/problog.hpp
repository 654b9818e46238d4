// The ProbLog / CP-logic front end (docs/problog.md): probabilistic facts,
// annotated disjunctions, rules with stratified negation, evidence and
// queries.  Pure C++ (no PostgreSQL): the grounder
// (extension/ground/problog_ground.*) turns a program into Datalog for the
// operator engine and then into a ground CP-theory; the SQL glue
// (extension/pg/problog_fn.cpp) reads the caller's tables.  Every error is a
// LangError with line and column.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lang/program.hpp"

namespace mln::lang::problog {

// An argument: a variable (upper-case initial, or `_name`), `_` (each one a
// different variable), an integer, or a text constant (a lower-case name
// like `ann`, or a quoted string).
struct Term {
  enum class Kind { Var, Anon, Int, Str } kind = Kind::Var;
  std::string name;  // Var: its name; Str: the text
  int64_t ival = 0;  // Int
  SourcePos pos;
  bool is_const() const { return kind == Kind::Int || kind == Kind::Str; }
};

struct Atom {
  int pred = -1;  // index into Program::preds
  std::vector<Term> args;
  SourcePos pos;
};

// A comparison of two terms: op is Datalog's spelling (=, !=, <, <=, >, >=)
// of ProbLog's (==, \==, <, =<, >, >=; = and \= as == and \==).
struct Compare {
  std::string op;
  Term lhs, rhs;
  SourcePos pos;
};

// One alternative of a rule's head and its probability.
struct HeadAlt {
  double prob = 1.0;
  Atom atom;
};

// A CP-law: `p1::h1; ...; pn::hn :- body.` (a fact has no body; a plain rule
// one head of probability 1).  Each ground instance of the rule (every
// variable given a value) is one event that chooses at most one head.
struct Rule {
  std::vector<HeadAlt> head;
  std::vector<Atom> pos, neg;
  std::vector<Compare> cmps;
  SourcePos at;
};

struct Evidence {
  Atom atom;  // ground
  bool value = true;
};

// `.input name(...) from ...` as Datalog reads it (docs/datalog.md), kept as
// written and passed on at its own line and column.
struct InputDirective {
  std::string text;
  int pred = -1;
  SourcePos pos;
};

struct Predicate {
  std::string name;
  int arity = -1;
  bool derived = false;  // some rule's head: its atoms are random
  bool input = false;    // no rule defines it: read from a table, certain
  int stratum = 0;       // derived: negation reads only lower strata
  SourcePos first;
};

struct Program {
  std::vector<Predicate> preds;
  std::vector<Rule> rules;
  std::vector<Evidence> evidence;
  std::vector<Atom> queries;
  std::vector<InputDirective> inputs;
  int num_strata = 0;
  // The predicate named `name`, or -1.  Through pred_index, which the parser
  // keeps (a linear search made parsing quadratic: GROWINGBODY 400 names
  // 401 predicates 10.7 million times); a table built otherwise is searched.
  int find(std::string_view name) const;
  std::unordered_map<std::string, int> pred_index;
};

// Parses `text`, checks arities, probabilities, safety and stratification.
// Throws LangError.
Program parse(std::string_view text);

// The rule's stratum: the lowest at which its body is final (its negated
// atoms' strata + 1, its positive atoms' strata); every head's stratum is at
// least this, so firing it there never changes an atom a finished stratum
// has read.
int rule_stratum(const Program& p, const Rule& r);

// `name(arg,...)` as ProbLog writes it: variables by name, text in single
// quotes unless it is a plain lower-case name (the form of mln.problog's
// query column).
std::string atom_text(const Program& p, const Atom& a);
std::string constant_text(const Term& t);

}  // namespace mln::lang::problog
