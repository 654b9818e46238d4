// Every error the language reports: kind, line, column, token and message.
#include <gtest/gtest.h>

#include <functional>

#include "lang/program.hpp"

namespace mln::lang {
namespace {

using K = LangError::Kind;

struct Expected {
  K kind;
  int line, col;
  std::string token;
  std::string in_message;  // substring of what()
};

// Runs `f`, which must throw a LangError matching `want`.
void expect_error(const std::function<void()>& f, const Expected& want, const std::string& what) {
  SCOPED_TRACE(what);
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const LangError& e) {
    EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(want.kind)) << e.where_what();
    EXPECT_EQ(e.line(), want.line) << e.where_what();
    EXPECT_EQ(e.col(), want.col) << e.where_what();
    EXPECT_EQ(e.token(), want.token) << e.where_what();
    EXPECT_NE(std::string(e.what()).find(want.in_message), std::string::npos) << e.what();
  }
}

void expect_program_error(const std::string& text, const Expected& want) {
  expect_error([&] { parse_program(text); }, want, text);
}

TEST(LangErrors, WhereWhat) {
  LangError e(K::Syntax, 3, 7, "foo", "syntax error at or near \"foo\"");
  EXPECT_EQ(e.where_what(), "line 3, column 7: syntax error at or near \"foo\"");
}

TEST(LangErrors, SyntaxErrorsNameTheToken) {
  expect_program_error("P(t)\n1 P(x) v )\n", {K::Syntax, 2, 10, ")", "syntax error at or near \")\""});
  expect_program_error("P(t)\n1 P(x) v\n", {K::Syntax, 3, 1, "", "syntax error at end of input"});
  expect_program_error("P(t)\n1 P(x) ? \n", {K::Syntax, 2, 8, "?", "at or near \"?\""});
  expect_program_error("P(t)\n1 P(x, )\n", {K::Syntax, 2, 8, ")", "at or near \")\""});
  expect_program_error("P(t)\n1 P(x) foo\n", {K::Syntax, 2, 8, "foo", "at or near \"foo\""});
}

TEST(LangErrors, WeightedRuleEndingWithDotIsASyntaxError) {
  expect_program_error("P(t)\n1 P(x).\n", {K::Syntax, 2, 7, ".", "must not end with"});
}

TEST(LangErrors, HardRuleWithoutDot) {
  expect_program_error("P(t)\nQ(t)\nP(x) v Q(y)\n", {K::Syntax, 4, 1, "", "expected \".\""});
}

// A hard unit rule and its hard opposite (issue #60): refused, naming both
// lines (merged, they summed to weight 0 and MAP called the answer optimal
// with no hard clause violated).  Opposites with variables, or one of them
// soft, stay (a MAP then pays for one).
TEST(LangErrors, AHardRuleAndItsHardOppositeAreRefused) {
  expect_program_error("P(t)\nP(A).\n!P(A).\n",
                       {K::BadValue, 3, 1, "P(A)", "contradicts the hard rule P(A). at line 2"});
  expect_program_error("P(t, t)\n!P(A, \"B c\").\n1 P(x, x)\nP(A, \"B c\").\n",
                       {K::BadValue, 4, 1, "P(A,\"B c\")", "at line 2"});
  EXPECT_NO_THROW(parse_program("P(t)\nP(A).\n-1 P(A)\n"));
  EXPECT_NO_THROW(parse_program("P(t)\nP(A).\n!P(B).\n"));
  EXPECT_NO_THROW(parse_program("P(t)\nP(x).\n!P(A).\n"));
}

TEST(LangErrors, DeclarationAfterRule) {
  expect_program_error("P(t)\n1 P(x)\nQ(t)\n1 Q(x)\n", {K::Syntax, 3, 1, "Q", "declaration after the rules"});
  expect_program_error("P(t)\n1 P(x)\n*Q(t)\n", {K::Syntax, 3, 1, "*", "declaration after the rules"});
}

TEST(LangErrors, ReservedWords) {
  expect_program_error("P(t)\n1 P(v)\n", {K::Syntax, 2, 5, "v", "at or near \"v\""});
  expect_program_error("v(t)\n", {K::Syntax, 1, 1, "v", "at or near \"v\""});
  expect_program_error("P(t)\n1 P(EXIST)\n", {K::Syntax, 2, 5, "EXIST", "at or near \"EXIST\""});
  expect_program_error("P(NOT)\n", {K::Syntax, 1, 3, "NOT", "argument type"});
}

TEST(LangErrors, LexicalErrors) {
  expect_program_error("P(t)\n1 P(\"abc\n", {K::Syntax, 2, 5, "\"abc", "unterminated string"});
  expect_program_error("P(t)\n1 P(\"a\\qb\")\n", {K::Syntax, 2, 7, "\\q", "invalid escape"});
  expect_program_error("P(t)\n/* open\n\n", {K::Syntax, 2, 1, "/*", "unterminated comment"});
}

TEST(LangErrors, DeepNestingIsRefused) {
  std::string deep = "P(t)\n1 ";
  for (int i = 0; i < 5000; ++i) deep += "(";
  deep += "P(x)";
  expect_error([&] { parse_program(deep); }, {K::Syntax, 2, 69, "(", "nesting deeper"}, "parens");
}

TEST(LangErrors, UnknownPredicate) {
  expect_program_error("P(t)\n1 P(x) v Q(x)\n", {K::UnknownPredicate, 2, 10, "Q", "unknown predicate Q"});
  expect_program_error("Smokes(t)\n1 smokes(x)\n", {K::UnknownPredicate, 2, 3, "smokes", "did you mean Smokes"});
  expect_program_error("P(t)\nK(x) :- P(x).\n", {K::UnknownPredicate, 2, 1, "K", "unknown predicate K"});
}

TEST(LangErrors, ArityMismatch) {
  expect_program_error("P(t)\n\n  1 P(x, y)\n", {K::ArityMismatch, 3, 5, "P", "takes 1 argument, got 2"});
}

TEST(LangErrors, TypeClash) {
  expect_program_error("N(t, int_)\n1 N(x, Foo)\n", {K::TypeClash, 2, 8, "Foo", "numeric type int_"});
  expect_program_error("N(t, float_)\n1 N(x, \"abc\")\n", {K::TypeClash, 2, 8, "abc", "not a number"});
  expect_program_error("P(person)\nQ(paper)\n1 P(x) v Q(x)\n", {K::TypeClash, 3, 12, "x", "type person"});
  expect_program_error("P(person)\nQ(paper)\nK(person)\nK(x) :- P(x), Q(x).\n", {K::TypeClash, 4, 17, "x", "type paper"});
  EXPECT_NO_THROW(parse_program("N(t, int_)\n1 N(x, 3) v N(x, \"4\")\n"));
}

TEST(LangErrors, DuplicateDeclarations) {
  expect_program_error("P(t)\nQ(t)\nP(t)\n", {K::DuplicateDeclaration, 3, 1, "P", "already declared"});
  expect_program_error("Smokes(t)\n*smokes(t)\n", {K::DuplicateDeclaration, 2, 2, "smokes", "differing only in case"});
  expect_program_error("P(t a, u a)\n", {K::DuplicateDeclaration, 1, 10, "a", "duplicate argument name"});
  expect_program_error("P(t)\nQ(T)\n", {K::DuplicateDeclaration, 2, 3, "T", "collides with type"});
  // A second file may not redeclare either.
  Program p = parse_program("P(t)\n");
  expect_error([&] { parse_program_into(p, "P(t)\n"); }, {K::DuplicateDeclaration, 1, 1, "P", "already"},
               "second file");
}

TEST(LangErrors, EmptyProgram) {
  expect_program_error("", {K::EmptyProgram, 1, 1, "", "no predicate"});
  expect_program_error("// nothing\n", {K::EmptyProgram, 2, 1, "", "no predicate"});
}

TEST(LangErrors, UnsafeVariables) {
  expect_program_error("P(t)\n1 P(x) v [x != y]\n", {K::UnsafeVariable, 2, 10, "y", "does not occur"});
  expect_program_error("P(t)\nQ(t)\nQ(x) :- P(x), y > 2.\n", {K::UnsafeVariable, 3, 15, "y", "does not occur"});
  expect_program_error("P(t)\nW(float_)\nw: P(x)\n", {K::UnsafeVariable, 3, 1, "w", "embedded weight"});
}

TEST(LangErrors, BadValues) {
  expect_program_error("P(t)\n[priorProb = 1.5] P(x) := P(x).\n", {K::BadValue, 2, 14, "1.5", "[0, 1]"});
  expect_program_error("P(t)\n1e999 P(x)\n", {K::BadValue, 2, 1, "1e999", "not a finite number"});
  expect_program_error("P(t)\nQ(t)\n2 Q(x)\n1e300 P(x) v Q(x)\n", {K::BadValue, 4, 1, "1e300", "out of range"});
  expect_program_error("P(t)\n-2e15 P(x)\n", {K::BadValue, 2, 1, "-2e15", "out of range"});
}

TEST(LangErrors, UnderflowingWeightIsTooSmall) {
  // Read as 0 it would drop the rule; it used to be "not a finite number".
  expect_program_error("P(t)\n1e-400 P(x)\n", {K::BadValue, 2, 1, "1e-400", "too small: it underflows a double"});
  expect_program_error("P(t)\n  -0.0001e-320 P(x)\n",
                       {K::BadValue, 2, 3, "-0.0001e-320", "too small: it underflows a double"});
  expect_program_error("P(t)\n@1e-999 P(x)\n", {K::BadValue, 2, 2, "1e-999", "underflows"});
  expect_program_error("P(t)\n1e400 P(x)\n", {K::BadValue, 2, 1, "1e400", "not a finite number: it overflows"});
  // The smallest subnormal still parses (and is a weight like any other).
  EXPECT_EQ(parse_program("P(t)\n5e-324 P(x)\n").clauses.size(), 1u);
}

TEST(LangErrors, ZeroWeightRuleIsDroppedWithAWarning) {
  Program p = parse_program("P(t)\nQ(t)\n0 P(x)\n  -0 Q(x)\n1 P(x) v Q(x)\n@0.0 Q(y)\n");
  ASSERT_EQ(p.clauses.size(), 1u);
  EXPECT_EQ(p.clauses[0].text, "P(x) v Q(x)");
  ASSERT_EQ(p.warnings.size(), 3u);
  EXPECT_EQ(p.warnings[0], "line 3, column 1: zero weight: the rule is dropped, as in Tuffy");
  EXPECT_EQ(p.warnings[1], "line 4, column 3: zero weight: the rule is dropped, as in Tuffy");
  EXPECT_EQ(p.warnings[2], "line 6, column 1: zero weight: the rule is dropped, as in Tuffy");
}

TEST(LangErrors, NulByteIsNamedNotCutShort) {
  // what() is a C string: a NUL quoted in the message used to end it there.
  const std::string text("P(t)\n1 P(x)\0 v P(y)\n", 20);
  expect_program_error(text, {K::Syntax, 2, 7, "\\0", "unexpected NUL byte (\\0): a program text cannot hold"});
  try {
    parse_program(text);
  } catch (const LangError& e) {
    EXPECT_EQ(e.where_what(), "line 2, column 7: unexpected NUL byte (\\0): a program text cannot hold NUL bytes");
  }
  expect_program_error(std::string("P(t)\n1 P(\"A\0B\")\n", 16), {K::Syntax, 2, 7, "\\0", "NUL bytes (in a string)"});
  // Any message: the NUL shows as \0 and the rest is kept.
  LangError e(K::Syntax, 1, 1, std::string("a\0b", 3), std::string("near \"a\0b\" here", 15));
  EXPECT_EQ(std::string(e.what()), "near \"a\\0b\" here");
  EXPECT_EQ(e.token(), "a\\0b");
}

TEST(LangErrors, EvidenceErrors) {
  Program p = parse_program("P(t)\nN(int_)\n");
  auto ev = [&](const std::string& text) {
    return [&p, text] { parse_evidence(p, text, [](const EvidenceAtom&) {}); };
  };
  expect_error(ev("P(A)\n  Q(B)\n"), {K::UnknownPredicate, 2, 3, "Q", "undeclared predicate Q"}, "unknown");
  expect_error(ev("P(A)\nP(A, B)\n"), {K::ArityMismatch, 2, 1, "P", "takes 1 argument"}, "arity");
  expect_error(ev("1.5 P(A)\n"), {K::BadValue, 1, 1, "1.5", "outside [0, 1]"}, "prior high");
  expect_error(ev("P(A)\n-0.2 !P(B)\n"), {K::BadValue, 2, 1, "-0.2", "outside [0, 1]"}, "prior low");
  expect_error(ev("N(Ten)\n"), {K::TypeClash, 1, 3, "Ten", "numeric type"}, "numeric");
  expect_error(ev("P(A) P(B\n"), {K::Syntax, 2, 1, "", "syntax error at end of input"}, "eof");
  expect_error(ev("P(A)\nP(A;\n"), {K::Syntax, 2, 4, ";", "at or near \";\""}, "semicolon");
  expect_error(ev("P(A).\n"), {K::Syntax, 1, 5, ".", "at or near \".\""}, "period");
  expect_error(ev("P(\"A\n"), {K::Syntax, 1, 3, "\"", "unterminated string"}, "string");
}

TEST(LangErrors, QueryErrors) {
  Program p = parse_program("P(t)\nN(int_)\n");
  auto q = [&](const std::string& text) { return [&p, text] { parse_queries(p, text); }; };
  expect_error(q(""), {K::Syntax, 1, 1, "", "at least one query"}, "empty");
  expect_error(q("// only a comment\n"), {K::Syntax, 2, 1, "", "at least one query"}, "comment only");
  expect_error(q("P(x)\n Q(x)"), {K::UnknownPredicate, 2, 2, "Q", "undeclared predicate Q"}, "unknown");
  expect_error(q("P(x, y)"), {K::ArityMismatch, 1, 1, "P", "takes 1 argument"}, "arity");
  expect_error(q("N(Foo)"), {K::TypeClash, 1, 3, "Foo", "numeric type"}, "type");
  expect_error(q("P(x),"), {K::Syntax, 1, 6, "", "after \",\""}, "trailing comma");
  expect_error(q("!P(x)"), {K::Syntax, 1, 1, "!", "at or near \"!\""}, "negated");
}

}  // namespace
}  // namespace mln::lang
