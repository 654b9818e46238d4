// Internal to the ProbLog front end: its tokens, the predicate table and
// the checks parse() runs (problog_check.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lang/problog.hpp"

namespace mln::lang::problog::detail {

// Name: lower-case identifier; Var: upper-case or '_' initial; Str: quoted
// (text decoded); Punct: an operator or punctuation; Directive: '.input ...'
// to the end of its line.
enum class T { End, Name, Var, Int, Float, Str, Punct, Directive };

struct Tok {
  T kind = T::End;
  std::string text;
  int line = 0, col = 0;
};


inline bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The predicate `name` (created at its first mention); arity -1: not known
// here (.input).  Throws LangError(ArityMismatch) when it was used with
// another arity.
int declare(Program& p, const std::string& name, int arity, SourcePos at);

// Derived and input predicates, probabilities, safety, strata.
void check(Program& p);

}  // namespace mln::lang::problog::detail
