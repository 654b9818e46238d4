// Alchemy formulas: conversion to clauses (NNF, distribution, weight split,
// existentials at clause level) and what cannot be represented.
#include <gtest/gtest.h>

#include "lang/program.hpp"
#include "format/network.hpp"

namespace mln::lang {
namespace {

const char* kDecls = "A(t)\nB(t)\nC(t)\nF(t,t)\nS(t)\n";

// Parses `rules` after the common declarations.
Program parse(const std::string& rules) { return parse_program(std::string(kDecls) + rules); }

// "weight text" for every clause, hard ones as "text.".
std::vector<std::string> listing(const Program& p) {
  std::vector<std::string> out;
  for (const Clause& c : p.clauses) out.push_back(format_clause(c));
  return out;
}

using V = std::vector<std::string>;

TEST(LangCnf, ConjunctionSplitsTheWeightEqually) {
  EXPECT_EQ(listing(parse("2 A(x) ^ B(x)\n")), (V{"1.0000 A(x)", "1.0000 B(x)"}));
  EXPECT_EQ(listing(parse("3 A(x) ^ B(x) ^ C(x)\n")), (V{"1.0000 A(x)", "1.0000 B(x)", "1.0000 C(x)"}));
}

TEST(LangCnf, HardFormulasStayHard) {
  Program p = parse("A(x) ^ B(x).\n");
  ASSERT_EQ(p.clauses.size(), 2u);
  for (const Clause& c : p.clauses) {
    EXPECT_TRUE(c.hard);
    EXPECT_DOUBLE_EQ(c.weight, kHardWeight);
  }
  EXPECT_EQ(listing(p), (V{"A(x).", "B(x)."}));
}

TEST(LangCnf, Equivalence) {
  EXPECT_EQ(listing(parse("1 A(x) <=> B(x)\n")), (V{"0.5000 !A(x) v B(x)", "0.5000 A(x) v !B(x)"}));
  EXPECT_EQ(listing(parse("1 !(A(x) <=> B(x))\n")), (V{"0.5000 A(x) v B(x)", "0.5000 !A(x) v !B(x)"}));
}

TEST(LangCnf, NegationOfParenthesisedFormulas) {
  EXPECT_EQ(listing(parse("3 !(A(x) ^ B(x))\n")), (V{"3.0000 !A(x) v !B(x)"}));
  EXPECT_EQ(listing(parse("2 !(A(x) v !B(x))\n")), (V{"1.0000 !A(x)", "1.0000 B(x)"}));
  EXPECT_EQ(listing(parse("1 !!A(x)\n")), (V{"1.0000 A(x)"}));
}

TEST(LangCnf, DistributesOrOverAnd) {
  EXPECT_EQ(listing(parse("1 (A(x) ^ B(x)) v C(x)\n")), (V{"0.5000 A(x) v C(x)", "0.5000 B(x) v C(x)"}));
  EXPECT_EQ(listing(parse("4 (A(x) ^ B(x)) v (C(x) ^ S(x))\n")),
            (V{"1.0000 A(x) v C(x)", "1.0000 A(x) v S(x)", "1.0000 B(x) v C(x)", "1.0000 B(x) v S(x)"}));
}

TEST(LangCnf, ImplicationsNestAndConjunctiveBodies) {
  EXPECT_EQ(listing(parse("1 A(x) => (B(x) => C(x))\n")), (V{"1.0000 !A(x) v !B(x) v C(x)"}));
  EXPECT_EQ(listing(parse("1 A(x) ^ B(x) => C(x)\n")), (V{"1.0000 !A(x) v !B(x) v C(x)"}));
  EXPECT_EQ(listing(parse("2 A(x) => B(x) ^ C(x)\n")), (V{"1.0000 !A(x) v B(x)", "1.0000 !A(x) v C(x)"}));
}

TEST(LangCnf, SameClauseTwiceMergesBack) {
  EXPECT_EQ(listing(parse("2 A(x) ^ A(x)\n")), (V{"2.0000 A(x)"}));
}

TEST(LangCnf, ForallIsDropped) {
  EXPECT_EQ(listing(parse("1 FORALL x, y F(x,y) => S(x)\n")), (V{"1.0000 !F(x,y) v S(x)"}));
  EXPECT_EQ(listing(parse("1 forall x A(x) v B(x)\n")), (V{"1.0000 A(x) v B(x)"}));
}

TEST(LangCnf, ExistentialAtClauseLevel) {
  Program p = parse("1 S(x) => EXIST y F(x,y)\n");
  ASSERT_EQ(p.clauses.size(), 1u);
  EXPECT_EQ(p.clauses[0].exist_vars, (V{"y"}));
  EXPECT_EQ(p.clauses[0].text, "EXIST y !S(x) v F(x,y)");
  // A negated universal is an existential.
  Program q = parse("1 !FORALL y F(x,y)\n");
  EXPECT_EQ(q.clauses[0].text, "EXIST y !F(x,y)");
  // Inside a conjunction, only the clause that mentions y keeps it.
  Program r = parse("2 EXIST y (F(x,y) ^ A(x))\n");
  EXPECT_EQ(listing(r), (V{"1.0000 EXIST y F(x,y)", "1.0000 A(x)"}));
  // Distribution copies the existential into each clause.
  Program s = parse("2 (EXIST y F(x,y)) v (A(x) ^ B(x))\n");
  EXPECT_EQ(listing(s), (V{"1.0000 EXIST y F(x,y) v A(x)", "1.0000 EXIST y F(x,y) v B(x)"}));
}

TEST(LangCnf, BoundVariablesAreRenamedApart) {
  Program p = parse("1 A(x) v EXIST x F(x,x)\n");
  ASSERT_EQ(p.clauses.size(), 1u);
  EXPECT_EQ(p.clauses[0].text, "EXIST x_1 A(x) v F(x_1,x_1)");
  Program q = parse("2 (EXIST y F(x,y)) ^ (EXIST y F(y,x))\n");
  EXPECT_EQ(listing(q), (V{"1.0000 EXIST y F(x,y)", "1.0000 EXIST y_1 F(y_1,x)"}));
}

TEST(LangCnf, UnrepresentableExistentialsAreErrors) {
  try {
    parse("1 EXIST y (F(x,y) ^ S(y))\n");
    FAIL() << "no error";
  } catch (const LangError& e) {
    EXPECT_EQ(e.kind(), LangError::Kind::Syntax);
    EXPECT_EQ(e.line(), 6);
    EXPECT_EQ(e.col(), 3);
    EXPECT_EQ(e.token(), "EXIST");
    EXPECT_NE(std::string(e.what()).find("conjunction"), std::string::npos);
  }
  try {
    parse("1 EXIST y FORALL x F(x,y)\n");
    FAIL() << "no error";
  } catch (const LangError& e) {
    EXPECT_EQ(e.kind(), LangError::Kind::Syntax);
    EXPECT_EQ(e.col(), 11);
    EXPECT_EQ(e.token(), "FORALL");
  }
  // !EXIST is a universal: fine.  !FORALL under EXIST: an EXIST inside EXIST, fine.
  EXPECT_NO_THROW(parse("1 !EXIST y (F(x,y) ^ S(y))\n"));
  EXPECT_NO_THROW(parse("1 EXIST y !FORALL z (F(x,y) ^ F(y,z))\n"));
}

TEST(LangCnf, ConditionsInsideFormulas) {
  Program p = parse("1 F(x,y) ^ x != y => S(x)\n");
  ASSERT_EQ(p.clauses.size(), 1u);
  EXPECT_EQ(format_expr(p.clauses[0].conditions[0]), "x != y");
  // A head conjunct "x = y" becomes the clause !F(x,y) v x = y.
  Program q = parse("2 F(x,y) => (S(x) ^ [x = y])\n");
  ASSERT_EQ(q.clauses.size(), 2u);
  EXPECT_EQ(q.clauses[1].text, "!F(x,y) v [x = y]");
  EXPECT_EQ(format_expr(q.clauses[1].conditions[0]), "x != y");
  // A conjunct condition alone becomes a clause without literals.
  try {
    parse("1 A(x) ^ x > 3\n");
    FAIL() << "no error";
  } catch (const LangError& e) {
    EXPECT_EQ(e.kind(), LangError::Kind::UnsafeVariable);
    EXPECT_EQ(e.token(), "x");
    EXPECT_EQ(e.col(), 10);
  }
}

TEST(LangCnf, ExplosionIsBounded) {
  std::string f = "1 A(x)";
  for (int i = 0; i < 40; ++i) f += " <=> A(x)";
  try {
    parse(f + "\n");
    FAIL() << "no error";
  } catch (const LangError& e) {
    EXPECT_EQ(e.kind(), LangError::Kind::BadValue);
    EXPECT_NE(std::string(e.what()).find("too large"), std::string::npos);
  }
}

TEST(LangCnf, EmbeddedWeightMustStayOneClause) {
  EXPECT_THROW(parse_program("W(t, float_)\nA(t)\nw: W(x,w) ^ A(x)\n"), LangError);
  EXPECT_NO_THROW(parse_program("W(t, float_)\nA(t)\nw: W(x,w) => A(x)\n"));
}

}  // namespace
}  // namespace mln::lang
