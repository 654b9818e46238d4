// Evidence reader and query parser (Tuffy §3.1, §3.2).
#include <gtest/gtest.h>

#include <cmath>

#include "lang/program.hpp"

namespace mln::lang {
namespace {

// All atoms of an evidence text.
std::vector<EvidenceAtom> read_all(const Program& p, const std::string& text) {
  std::vector<EvidenceAtom> out;
  size_t n = parse_evidence(p, text, [&](const EvidenceAtom& a) { out.push_back(a); });
  EXPECT_EQ(n, out.size());
  return out;
}

TEST(LangEvidence, HardAndSoftForms) {
  Program p = parse_program("F(t,t)\nS(t)\n");
  auto a = read_all(p, "F(A,B)\n!F(A, C)\n0.7 S(A)\n0.7 !S(B)\n1 S(C)\n0 S(D)\n0 !S(E)\n1.0 !S(F)\n");
  ASSERT_EQ(a.size(), 8u);
  EXPECT_EQ(a[0].pred, 0);
  EXPECT_EQ(a[0].args, (std::vector<std::string>{"A", "B"}));
  EXPECT_TRUE(a[0].truth);
  EXPECT_TRUE(std::isnan(a[0].prior));
  EXPECT_EQ(a[1].args, (std::vector<std::string>{"A", "C"}));
  EXPECT_FALSE(a[1].truth);
  EXPECT_TRUE(std::isnan(a[1].prior));
  EXPECT_EQ(a[2].pred, 1);
  EXPECT_DOUBLE_EQ(a[2].prior, 0.7);
  EXPECT_NEAR(a[3].prior, 0.3, 1e-12);  // "p !P" means prior 1 - p
  EXPECT_TRUE(a[4].truth);              // prior 1: hard true
  EXPECT_TRUE(std::isnan(a[4].prior));
  EXPECT_FALSE(a[5].truth);             // prior 0: hard false
  EXPECT_TRUE(std::isnan(a[5].prior));
  EXPECT_TRUE(a[6].truth);              // 0 !S: prior 1
  EXPECT_TRUE(std::isnan(a[6].prior));
  EXPECT_FALSE(a[7].truth);             // 1 !S: prior 0
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].line, static_cast<int>(i) + 1);
}

TEST(LangEvidence, ArgumentsCommentsAndLayout) {
  Program p = parse_program("F(t,t)\nN(t, int_)\nX(t, float_)\n");
  auto a = read_all(p,
                    "// comment\n"
                    "F(anna, Bob) F(\"Anna Lee\", \"x\\\"y\\u00e9\")  /* block\n comment */\n"
                    "\r\n"
                    "N(A, -12)\tX(B, 1.5e3)\n"
                    "N(C, \"7\")\n"
                    "F(x-1, Some_Thing-2)\n"
                    "  0.25\n  F(A,\n B)  // trailing comment without newline");
  ASSERT_EQ(a.size(), 7u);
  EXPECT_EQ(a[0].args, (std::vector<std::string>{"anna", "Bob"}));  // any case is a constant
  EXPECT_EQ(a[0].line, 2);
  EXPECT_EQ(a[1].args, (std::vector<std::string>{"Anna Lee", "x\"y\xc3\xa9"}));
  EXPECT_EQ(a[2].args, (std::vector<std::string>{"A", "-12"}));
  EXPECT_EQ(a[2].line, 5);
  EXPECT_EQ(a[3].args, (std::vector<std::string>{"B", "1.5e3"}));
  EXPECT_EQ(a[4].args, (std::vector<std::string>{"C", "7"}));
  EXPECT_EQ(a[5].args, (std::vector<std::string>{"x-1", "Some_Thing-2"}));
  EXPECT_DOUBLE_EQ(a[6].prior, 0.25);
  EXPECT_EQ(a[6].line, 8);
}

TEST(LangEvidence, ReaderReusesTheAtom) {
  Program p = parse_program("F(t,t)\nS(t)\n");
  EvidenceReader r(p, "F(A,B)\nS(C)\nF(D,E)\n");
  EvidenceAtom a;
  ASSERT_TRUE(r.next(a));
  ASSERT_TRUE(r.next(a));
  EXPECT_EQ(a.pred, 1);
  EXPECT_EQ(a.args, (std::vector<std::string>{"C"}));
  ASSERT_TRUE(r.next(a));
  EXPECT_EQ(a.args, (std::vector<std::string>{"D", "E"}));
  EXPECT_FALSE(r.next(a));
  EXPECT_FALSE(r.next(a));
}

TEST(LangEvidence, EmptyEvidenceIsFine) {
  Program p = parse_program("S(t)\n");
  EXPECT_EQ(read_all(p, "").size(), 0u);
  EXPECT_EQ(read_all(p, "  // nothing\n/* */\n").size(), 0u);
}

TEST(LangQuery, AtomsAndBareNames) {
  Program p = parse_program("F(t,t)\nS(t)\nN(t, int_)\n");
  auto q = parse_queries(p, "F(x, Anna)\nS\nN(\"b c\", 3), S(y)  // comment\nF(x,y)");
  ASSERT_EQ(q.size(), 5u);
  EXPECT_EQ(q[0].pred, 0);
  ASSERT_EQ(q[0].args.size(), 2u);
  EXPECT_TRUE(q[0].args[0].is_var());
  EXPECT_FALSE(q[0].args[1].is_var());
  EXPECT_EQ(q[0].args[1].text, "Anna");
  EXPECT_EQ(q[1].pred, 1);
  EXPECT_TRUE(q[1].args.empty());
  EXPECT_EQ(q[2].args[0].text, "b c");
  EXPECT_TRUE(q[2].args[1].is_number);
  EXPECT_EQ(q[3].pred, 1);
  EXPECT_EQ(q[4].pred, 0);
}

TEST(LangQuery, CommaListLikeDashQ) {
  Program p = parse_program("F(t,t)\nS(t)\n");
  auto q = parse_queries(p, "S(x),F(A,y),S");
  ASSERT_EQ(q.size(), 3u);
  EXPECT_EQ(q[1].args[0].text, "A");
  EXPECT_TRUE(q[2].args.empty());
}

}  // namespace
}  // namespace mln::lang
