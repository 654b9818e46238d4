// Normalisation and merging of first-order clauses (Tuffy §2.6) and the
// clause listing format.
#include <gtest/gtest.h>

#include "lang/program.hpp"
#include "format/network.hpp"

namespace mln::lang {
namespace {

const char* kDecls = "S(t)\nC(t)\nF(t,t)\nP(t)\nQ(t)\nW(t, float_)\n";

Program parse(const std::string& rules) { return parse_program(std::string(kDecls) + rules); }

TEST(LangMerge, DuplicateLiteralsAreRemovedTautologiesKept) {
  Program p = parse("1 P(x) v Q(x) v P(x)\n1 P(y) v !P(y)\n");
  ASSERT_EQ(p.clauses.size(), 2u);
  EXPECT_EQ(p.clauses[0].text, "P(x) v Q(x)");
  EXPECT_EQ(p.clauses[0].lits.size(), 2u);
  EXPECT_EQ(p.clauses[1].text, "P(y) v !P(y)");
}

TEST(LangMerge, ZeroWeightRulesAreDropped) {
  Program p = parse("0 P(x)\n0.0 Q(x)\n1 S(x)\n");
  ASSERT_EQ(p.clauses.size(), 1u);
  EXPECT_EQ(p.clauses[0].text, "S(x)");
  // ... but still checked.
  EXPECT_THROW(parse("0 P(x) v [x = y]\n"), LangError);
}

TEST(LangMerge, SameSignatureAfterRenamingAddsWeights) {
  Program p = parse("1 !S(x) v C(x)\n2 !S(y) v C(y)\n0.5 !S(a1) v C(a1)\n");
  ASSERT_EQ(p.clauses.size(), 1u);
  EXPECT_DOUBLE_EQ(p.clauses[0].weight, 3.5);
  EXPECT_EQ(p.clauses[0].text, "!S(x) v C(x)");  // text and position of the first rule
  EXPECT_EQ(p.clauses[0].pos.line, 7);
}

TEST(LangMerge, LiteralOrderMatters) {
  Program p = parse("1 !S(x) v C(x)\n1 C(x) v !S(x)\n");
  EXPECT_EQ(p.clauses.size(), 2u);
}

TEST(LangMerge, VariablePatternMatters) {
  Program p = parse("1 F(x,y)\n1 F(x,x)\n2 F(y,x)\n");
  ASSERT_EQ(p.clauses.size(), 2u);
  EXPECT_DOUBLE_EQ(p.clauses[0].weight, 3);  // F(y,x) renames to F(v0,v1) too
  EXPECT_DOUBLE_EQ(p.clauses[1].weight, 1);
}

TEST(LangMerge, WeightSignIsPartOfTheSignature) {
  Program p = parse("1 P(x)\n-1 P(x)\n2 P(y)\n-0.5 P(z)\n");
  ASSERT_EQ(p.clauses.size(), 2u);
  EXPECT_DOUBLE_EQ(p.clauses[0].weight, 3);
  EXPECT_DOUBLE_EQ(p.clauses[1].weight, -1.5);
}

TEST(LangMerge, HardAndSoftWeightsAdd) {
  Program p = parse("P(x).\n0.3 P(y)\n");
  ASSERT_EQ(p.clauses.size(), 1u);
  EXPECT_DOUBLE_EQ(p.clauses[0].weight, kHardWeight + 0.3);
  EXPECT_TRUE(p.clauses[0].hard);
  Program q = parse("0.3 P(y)\nP(x).\nP(z).\n");
  ASSERT_EQ(q.clauses.size(), 1u);
  EXPECT_DOUBLE_EQ(q.clauses[0].weight, 2 * kHardWeight + 0.3);
  EXPECT_TRUE(q.clauses[0].hard);
}

TEST(LangMerge, ConstantInstancesMergeOnlyWhenIdentical) {
  Program p = parse("1 F(x,Anna)\n2 F(y,\"Anna\")\n1 F(x,Bob)\n-1 F(x,Anna)\n");
  ASSERT_EQ(p.clauses.size(), 3u);
  EXPECT_EQ(p.clauses[0].text, "F(x,Anna)");
  EXPECT_DOUBLE_EQ(p.clauses[0].weight, 3);
  EXPECT_EQ(p.clauses[1].text, "F(x,Bob)");
  EXPECT_DOUBLE_EQ(p.clauses[2].weight, -1);
}

TEST(LangMerge, ExistAndConditionsArePartOfTheSignature) {
  Program p = parse(
      "1 EXIST y F(x,y)\n1 F(x,y)\n1 EXIST z F(w,z)\n"
      "1 F(x,y), [x != y] => P(x)\n1 F(x,y) => P(x)\n1 F(a,b), a != b => P(a)\n");
  ASSERT_EQ(p.clauses.size(), 4u);
  EXPECT_DOUBLE_EQ(p.clauses[0].weight, 2);
  EXPECT_EQ(p.clauses[0].exist_vars, (std::vector<std::string>{"y"}));
  EXPECT_DOUBLE_EQ(p.clauses[1].weight, 1);
  EXPECT_DOUBLE_EQ(p.clauses[2].weight, 2);
  EXPECT_EQ(p.clauses[2].conditions.size(), 1u);
  EXPECT_DOUBLE_EQ(p.clauses[3].weight, 1);
}

TEST(LangMerge, EmbeddedWeightsAreNeverMerged) {
  Program p = parse("w: W(x,w) => P(x)\nw: W(x,w) => P(x)\n");
  EXPECT_EQ(p.clauses.size(), 2u);
}

TEST(LangMerge, ListingFormat) {
  Program p = parse("0.5 !S(a1) v C(a1)\n-3 P(A)\nS(x) => P(x).\n1.23456 Q(x)\n");
  ASSERT_EQ(p.clauses.size(), 4u);
  EXPECT_EQ(format_clause(p.clauses[0]), "0.5000 !S(a1) v C(a1)");
  EXPECT_EQ(format_clause(p.clauses[1]), "-3.0000 P(A)");
  EXPECT_EQ(format_clause(p.clauses[2]), "!S(x) v P(x).");
  EXPECT_EQ(format_clause(p.clauses[3]), "1.2346 Q(x)");
}

TEST(LangMerge, ClauseTextParsesBackToTheSameClause) {
  Program p = parse("1 F(x,y), [x != y && x > 2] => P(x) v x = \"a b\"\n");
  ASSERT_EQ(p.clauses.size(), 1u);
  Program q = parse("1 " + p.clauses[0].text + "\n");
  ASSERT_EQ(q.clauses.size(), 1u);
  EXPECT_EQ(q.clauses[0].text, p.clauses[0].text);
  ASSERT_EQ(q.clauses[0].conditions.size(), 1u);
  // Stored conditions: the body condition as written, the head disjunct negated.
  ASSERT_EQ(p.clauses[0].conditions.size(), 2u);
  EXPECT_EQ(format_expr(p.clauses[0].conditions[0]), "(x != y) && (x > 2)");
  EXPECT_EQ(format_expr(p.clauses[0].conditions[1]), "x != \"a b\"");
}

TEST(LangMerge, EveryClauseTextRoundTrips) {
  const std::string decls = "A(t)\nB(t)\nF(t,t)\nN(t, int_)\n";
  Program p = parse_program(decls +
                            "1 EXIST y (F(x,y) v !A(y)) ^ B(x)\n"
                            "2 N(x,a), [a * 2 >= -3 || ~a = 1 && a! < 7] => A(x) v a % 2 = 1\n"
                            "F(x,\"lower case\") => F(x, \"Tab\\there\").\n"
                            "-1 A(x) <=> !(B(x) v EXIST z F(x,z))\n"
                            "1 N(x, -4) v N(x, 2.5e10) v [upper(x) = \"X\" AND NOT startsWith(x, \"a\")]\n");
  ASSERT_GE(p.clauses.size(), 6u);
  for (const Clause& c : p.clauses) {
    SCOPED_TRACE(c.text);
    Program again = parse_program(decls + "1 " + c.text + "\n");
    ASSERT_EQ(again.clauses.size(), 1u);
    EXPECT_EQ(again.clauses[0].text, c.text);
    EXPECT_EQ(again.clauses[0].exist_vars, c.exist_vars);
    EXPECT_EQ(again.clauses[0].conditions.size(), c.conditions.empty() ? 0u : 1u);
  }
}

}  // namespace
}  // namespace mln::lang
