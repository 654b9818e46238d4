// mln.datalog_explain's planner (explain_program) and the join order rule it
// shares with the evaluator (detail::next_atom): strata, delta variants,
// the join order following the estimated sizes, negation, arithmetic and
// aggregates.  Pure C++: no engine, nothing evaluated.
#include <gtest/gtest.h>

#include "ground/datalog_eval.hpp"

namespace mln::ground::datalog {
namespace {

std::vector<double> sizes(const dl::Program& p, std::initializer_list<std::pair<const char*, double>> est) {
  std::vector<double> out(p.rels.size(), 0);
  for (const auto& [name, n] : est) out[static_cast<size_t>(p.find(name))] = n;
  return out;
}

TEST(DatalogNextAtom, SmallestSharingFirst) {
  const std::vector<std::vector<int>> vars = {{0, 1}, {1, 2}, {3}};
  EXPECT_EQ(detail::next_atom(vars, {50, 20, 10}, nullptr), 2u);  // nothing joined: the smallest
  std::vector<char> bound = {1, 1, 0, 0};
  EXPECT_EQ(detail::next_atom(vars, {50, 20, 10}, &bound), 1u);  // the smallest that shares a variable
  bound = {0, 0, 0, 0};
  EXPECT_EQ(detail::next_atom(vars, {50, 20, 10}, &bound), 2u);  // none shares: the smallest (a cross join)
  EXPECT_EQ(detail::next_atom(vars, {10, 10, 10}, nullptr), 0u);  // a tie: the first
}

TEST(DatalogExplain, TransitiveClosure) {
  const dl::Program p = dl::parse("tc(X, Y) :- edge(X, Y).\ntc(X, Y) :- tc(X, Z), edge(Z, Y).");
  const auto ex = explain_program(p, sizes(p, {{"edge", 300}}));
  ASSERT_EQ(ex.size(), 2u);
  EXPECT_EQ(ex[0].stratum, 0);
  EXPECT_EQ(ex[1].stratum, 0);
  EXPECT_FALSE(ex[0].recursive);
  EXPECT_TRUE(ex[1].recursive);
  EXPECT_EQ(ex[0].est_rows, 300);
  EXPECT_EQ(ex[1].plan,
            "each iteration, delta on tc(X, Z) (atom 1):\n"
            "  -> scan delta tc(X, Z) (~300 rows, estimated)\n"
            "  -> join edge(Z, Y) (~300 rows, input) on Z\n"
            "  -> project -> tc(X, Y)");
}

TEST(DatalogExplain, JoinOrderFollowsSizes) {
  const dl::Program p = dl::parse("r(X, W) :- big(X, Y), small(Y, Z), mid(Z, W).");
  const auto ex = explain_program(p, sizes(p, {{"big", 1000}, {"small", 5}, {"mid", 50}}), {});
  ASSERT_EQ(ex.size(), 1u);
  const std::string& plan = ex[0].plan;
  const auto at = [&](const char* s) { return plan.find(s); };
  ASSERT_NE(at("scan small(Y, Z)"), std::string::npos) << plan;
  EXPECT_LT(at("scan small"), at("join mid(Z, W)")) << plan;  // mid shares Z and is smaller than big
  EXPECT_LT(at("join mid"), at("join big(X, Y)")) << plan;
}

TEST(DatalogExplain, NonLinearHasOneVariantPerAtom) {
  const dl::Program p = dl::parse("tc(X, Y) :- e(X, Y).\ntc(X, Y) :- tc(X, Z), tc(Z, Y).");
  const auto ex = explain_program(p, sizes(p, {{"e", 10}}));
  ASSERT_EQ(ex.size(), 2u);
  EXPECT_NE(ex[1].plan.find("delta on tc(X, Z) (atom 1)"), std::string::npos) << ex[1].plan;
  EXPECT_NE(ex[1].plan.find("delta on tc(Z, Y) (atom 2)"), std::string::npos) << ex[1].plan;
}

TEST(DatalogExplain, NegationArithmeticAggregates) {
  const dl::Program p = dl::parse(
      "top(X) :- e(_, X), !e(X, _).\n"
      "d(X, count(Y)) :- top(X), e(X, Y), N = Y + 1, N > 2.");
  const auto ex = explain_program(p, sizes(p, {{"e", 40}}));
  ASSERT_EQ(ex.size(), 2u);
  EXPECT_EQ(ex[0].stratum, 0);
  EXPECT_EQ(ex[1].stratum, 1);  // d reads top, computed first
  EXPECT_NE(ex[0].plan.find("-> anti-join e(X, _) on X"), std::string::npos) << ex[0].plan;
  EXPECT_NE(ex[1].plan.find("-> compute N = Y + 1 (host)\n  -> filter N > 2\n"), std::string::npos) << ex[1].plan;
  EXPECT_NE(ex[1].plan.find("-> aggregate d(X, count(Y)) over the distinct bindings, grouped by X (host)"),
            std::string::npos)
      << ex[1].plan;
}

}  // namespace
}  // namespace mln::ground::datalog
