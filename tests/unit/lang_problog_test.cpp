// The ProbLog front end: syntax (probabilistic facts, annotated
// disjunctions, negation, comparisons, evidence, queries, .input), and each
// error's kind, line and column.
#include <gtest/gtest.h>

#include "lang/problog.hpp"

namespace mln::lang::problog {
namespace {

using K = LangError::Kind;

void expect_error(const std::string& text, K kind, int line, int col, const std::string& in_message) {
  SCOPED_TRACE(text);
  try {
    parse(text);
    ADD_FAILURE() << "no error";
  } catch (const LangError& e) {
    EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(kind)) << e.where_what();
    EXPECT_EQ(e.line(), line) << e.where_what();
    EXPECT_EQ(e.col(), col) << e.where_what();
    EXPECT_NE(std::string(e.what()).find(in_message), std::string::npos) << e.what();
  }
}

TEST(ProbLog, ParsesFactsDisjunctionsRulesEvidenceQueries) {
  Program p = parse(
      "% burglary and earthquake\n"
      "0.1::burglary. 0.2::earthquake.\n"
      "0.9::alarm :- burglary, earthquake.\n"
      "0.8::alarm :- burglary, \\+earthquake.\n"
      "1/10::alarm :- \\+ burglary, earthquake.\n"
      "person(john). person('Mary Ann').\n"
      "0.8::calls(X); 0.1::texts(X) :- person(X), alarm.\n"
      "evidence(calls(john)). evidence(\\+texts('Mary Ann')). evidence(earthquake, false).\n"
      "query(burglary). query(calls(_)).\n");
  ASSERT_EQ(p.rules.size(), 8u);
  EXPECT_DOUBLE_EQ(p.rules[0].head[0].prob, 0.1);
  EXPECT_DOUBLE_EQ(p.rules[4].head[0].prob, 0.1);  // 1/10
  EXPECT_EQ(p.rules[3].neg.size(), 1u);
  const Rule& ad = p.rules[7];
  ASSERT_EQ(ad.head.size(), 2u);
  EXPECT_DOUBLE_EQ(ad.head[1].prob, 0.1);
  EXPECT_EQ(p.preds[ad.head[1].atom.pred].name, "texts");
  EXPECT_EQ(ad.pos.size(), 2u);
  EXPECT_EQ(p.rules[6].head[0].atom.args[0].name, "Mary Ann");
  ASSERT_EQ(p.evidence.size(), 3u);
  EXPECT_TRUE(p.evidence[0].value);
  EXPECT_FALSE(p.evidence[1].value);
  EXPECT_FALSE(p.evidence[2].value);
  ASSERT_EQ(p.queries.size(), 2u);
  EXPECT_EQ(p.queries[1].args[0].kind, Term::Kind::Anon);
  // Strata: negation reads a lower stratum.
  EXPECT_TRUE(p.preds[p.find("alarm")].derived);
  EXPECT_EQ(rule_stratum(p, p.rules[3]), p.preds[p.find("earthquake")].stratum + 1);
}

TEST(ProbLog, InputsComparisonsAndStrata) {
  Program p = parse(
      ".input edge(a int, b int) from public.edges(src, dst)\n"
      "0.5::path(X, Y) :- edge(X, Y), X \\== Y.\n"
      "path(X, Y) :- path(X, Z), path(Z, Y), X =< Y.\n"
      "cut(X) :- edge(X, _), \\+ path(X, 1).\n"
      "query(cut(X)).\n");
  ASSERT_EQ(p.inputs.size(), 1u);
  EXPECT_EQ(p.inputs[0].pos.line, 1);
  EXPECT_TRUE(p.preds[p.find("edge")].input);
  EXPECT_EQ(p.rules[0].cmps[0].op, "!=");
  EXPECT_EQ(p.rules[1].cmps[0].op, "<=");
  EXPECT_EQ(p.preds[p.find("cut")].stratum, p.preds[p.find("path")].stratum + 1);
  EXPECT_EQ(p.num_strata, 2);
}

TEST(ProbLog, Errors) {
  expect_error("0.5::a. query(a)", K::Syntax, 1, 17, "end of input");
  expect_error("0.5::a.\n0.5:a. query(a).", K::Syntax, 2, 4, "expected '::'");
  expect_error("1.5::a. query(a).", K::BadValue, 1, 1, "outside [0, 1]");
  expect_error("0.6::a; 0.6::b. query(a).", K::BadValue, 1, 1, "add up to");
  expect_error("a; b. query(a).", K::Syntax, 1, 2, "annotated disjunction");
  expect_error("p(1). p(1, 2). query(p(1)).", K::ArityMismatch, 1, 7, "2 argument(s) here but 1");
  expect_error("0.5::a(X). query(a(1)).", K::UnsafeVariable, 1, 8, "\"X\" in the head");
  expect_error("q(1). a(X) :- q(X), \\+ b(Y). 0.5::b(2). query(a(1)).", K::UnsafeVariable, 1, 26, "negated atom");
  expect_error("q(1). a(X) :- q(X), X < Z. query(a(1)).", K::UnsafeVariable, 1, 25, "comparison");
  expect_error("0.5::a(1). b :- \\+ a(_). query(b).", K::UnsafeVariable, 1, 22, "'_' in a negated atom");
  expect_error("0.5::a.\nb :- a, \\+ c.\nc :- b.\nquery(c).", K::TypeClash, 2, 12,
               "\"c\" is negated inside its own recursion (cycle b -> \\+c -> b)");
  expect_error("0.5::a. evidence(a(X)). query(a).", K::ArityMismatch, 1, 18, "");
  expect_error("0.5::a(1). evidence(a(X)). query(a(1)).", K::VariableInEvidence, 1, 23, "ground");
  expect_error("0.5::a.", K::EmptyProgram, 1, 1, "no query");
  expect_error("b :- c. query(b).", K::UnknownPredicate, 1, 6, "\"c\"");
  expect_error(".input e(a int) from t\ne(1). query(e(1)).", K::DuplicateDeclaration, 1, 1, ".input");
  expect_error("0.5::a. query(a). $", K::Syntax, 1, 19, "unexpected character");
  expect_error("0.5::a. /* query(a).", K::Syntax, 1, 9, "unterminated comment");
  expect_error("p(\"x). query(p(1)).", K::Syntax, 1, 3, "unterminated string");
  expect_error(".output x\n", K::Syntax, 1, 1, "unknown directive");
}

// A dependency chain as long as the program (issue #59): stratified
// without recursion, in time linear in its length.
TEST(ProbLog, AChainOfAHundredThousandRulesParses) {
  std::string chain = "0.5::p0.\n";
  for (int i = 0; i < 100000; ++i) chain += "p" + std::to_string(i + 1) + " :- p" + std::to_string(i) + ".\n";
  chain += "query(p100000).\n";
  const Program p = parse(chain);
  EXPECT_EQ(p.rules.size(), 100001u);
}

}  // namespace
}  // namespace mln::lang::problog
