// Cost semantics (Tuffy section 7.1) and the search layout's bookkeeping.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "solver_test_util.hpp"
#include "core/base/gap.hpp"
#include "core/base/network_cost.hpp"
#include "core/map/solve_map_run.hpp"
#include "core/walk/walksat_cpu.hpp"

namespace mln::solver {
namespace {

using testing::add_clause;

// The one gap formula against the table that SQL's mln._gap is checked
// against too (tests/e2e/gap.sh): the solver stops where the user's gap says.
TEST(SolverCost, RelativeGapFollowsTheOneTable) {
  std::ifstream in(MLN_TEST_DATA_DIR "/gap_cases.tsv");
  ASSERT_TRUE(in) << "tests/data/gap_cases.tsv";
  std::string line;
  int cases = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream f(line);
    double cost, bound, gap;
    ASSERT_TRUE(f >> cost >> bound >> gap) << line;
    EXPECT_NEAR(relative_gap(cost, bound), gap, 1e-12) << line;
    if (gap > 0) EXPECT_NEAR(gap_target(cost, gap), bound, 1e-6 * gap_scale(cost)) << line;
    ++cases;
  }
  EXPECT_GE(cases, 10);
}

TEST(SolverCost, PositiveClauseCostsWeightOnlyWhenViolated) {
  mln::Network net;
  net.num_atoms = 2;
  add_clause(net, {-2, 1}, 1.5);
  EXPECT_DOUBLE_EQ(total_cost(net.clauses, {0, 0, 1}), 1.5);  // 1 false, 2 true: violated
  EXPECT_DOUBLE_EQ(total_cost(net.clauses, {0, 1, 1}), 0.0);
  EXPECT_DOUBLE_EQ(total_cost(net.clauses, {0, 0, 0}), 0.0);
}

TEST(SolverCost, NegativeClauseCostsAbsWeightWhenAnyLiteralTrue) {
  mln::Network net;
  net.num_atoms = 2;
  add_clause(net, {1, 2}, -0.7);
  EXPECT_DOUBLE_EQ(total_cost(net.clauses, {0, 0, 0}), 0.0);
  EXPECT_DOUBLE_EQ(total_cost(net.clauses, {0, 1, 0}), 0.7);
  EXPECT_DOUBLE_EQ(total_cost(net.clauses, {0, 1, 1}), 0.7);  // once, not per literal
}

TEST(SolverCost, HardClausesAreJustLargeWeights) {
  mln::Network net;
  net.num_atoms = 1;
  add_clause(net, {1}, kHardWeight);
  add_clause(net, {-1}, 2.0);
  EXPECT_DOUBLE_EQ(total_cost(net.clauses, {0, 0}), kHardWeight);
  EXPECT_DOUBLE_EQ(total_cost(net.clauses, {0, 1}), 2.0);
}

// The incremental bookkeeping must agree with full recomputation: the best
// cost reported equals the cheapest state on the flip trajectory, and the
// best state returned has that cost (random mixed-weight networks).
TEST(SolverCost, BestStateIsTheCheapestStateVisited) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    mln::Network net = testing::random_mixed_network(10, 30, seed);
    WalkInstance inst = build_walk_instance(net);
    WalkParams p;
    p.flips_per_try = 200;
    p.max_tries = 1;
    p.seed = seed;
    std::vector<uint8_t> truth(net.num_atoms + 1, 0);
    std::vector<uint8_t> init(net.num_atoms, 0);
    double before = total_cost(net.clauses, truth);
    int flips = 0;
    // Replays each flip on a shadow state; best cost reported must equal the
    // minimum of the recomputed costs along the trajectory.
    double min_seen = before;
    p.on_flip = [&](uint32_t a) {
      truth[a + 1] ^= 1;
      min_seen = std::min(min_seen, total_cost(net.clauses, truth));
      ++flips;
    };
    WalkOutcome out = walksat_cpu(inst, init, p);
    std::vector<uint8_t> best(net.num_atoms + 1, 0);
    std::copy(out.best.begin(), out.best.end(), best.begin() + 1);
    EXPECT_NEAR(out.best_cost, min_seen, 1e-6 * (1 + min_seen)) << "seed " << seed;
    EXPECT_NEAR(total_cost(net.clauses, best), min_seen, 1e-6 * (1 + min_seen)) << "seed " << seed;
    EXPECT_GT(flips, 0);
  }
}

// start_costs sums what total_cost gives the coin flips and the all-false
// state, over every clause or a list of them, in more than one chunk.
TEST(SolverCost, StartCostsAreTheCoinFlipsAndTheAllFalseStatesCosts) {
  const mln::Network net = testing::random_mixed_network(500, 3 * static_cast<int>(kCostChunk) + 17, 5);
  std::vector<uint8_t> coin(net.num_atoms + 1, 0), none(net.num_atoms + 1, 0);
  Rng rng(9);
  for (int32_t a = 1; a <= net.num_atoms; ++a) coin[a] = static_cast<uint8_t>(rng.next() >> 63);
  const StartCosts all = start_costs(net.clauses, nullptr, static_cast<int64_t>(net.clauses.size()), coin);
  EXPECT_NEAR(all.coin, total_cost(net.clauses, coin), testing::tol(all.coin) * 100);
  EXPECT_NEAR(all.all_false, total_cost(net.clauses, none), testing::tol(all.all_false) * 100);
  std::vector<int64_t> third;
  double coin3 = 0, none3 = 0;
  for (int64_t c = 0; c < static_cast<int64_t>(net.clauses.size()); c += 3) {
    third.push_back(c);
    coin3 += clause_cost_of(net.clauses, c, coin);
    none3 += clause_cost_of(net.clauses, c, none);
  }
  const StartCosts some = start_costs(net.clauses, third.data(), static_cast<int64_t>(third.size()), coin);
  EXPECT_NEAR(some.coin, coin3, testing::tol(coin3) * 100);
  EXPECT_NEAR(some.all_false, none3, testing::tol(none3) * 100);
  EXPECT_EQ(all.false_is_cheaper(), all.all_false < all.coin);
}

// One component of p papers with c categories each (RC's shape: at most
// one category per paper at weight 10, categories carried along citations
// at weight 2, small positive priors), where coin flips cost some hundred
// times the all-false state.  `prior`: each category atom's unit weight.
mln::Network papers(int p, int c, double prior) {
  mln::Network net;
  net.num_atoms = p * c;
  net.is_query.assign(net.num_atoms + 1, 1);
  auto atom = [c](int x, int a) { return 1 + x * c + a; };
  for (int x = 0; x < p; ++x)
    for (int a = 0; a < c; ++a) {
      for (int b = a + 1; b < c; ++b) testing::add_clause(net, {-atom(x, a), -atom(x, b)}, 10);
      if (x + 1 < p) testing::add_clause(net, {atom(x + 1, a), -atom(x, a)}, 2);
      testing::add_clause(net, {atom(x, a)}, prior);
    }
  return net;
}

// solve_map starts a component all false where that costs less than its
// coin flips, and from the coin flips where they cost less; the start's
// cost is what the progress counts it at.
TEST(SolverCost, AComponentStartsAllFalseWhereThatCostsLessThanItsCoinFlips) {
  SolveOptions o;
  for (double prior : {0.1, 30.0}) {  // all false: 180 (coin flips cost more), 54,000 (coin flips about half)
    const mln::Network net = papers(300, 6, prior);
    map_detail::Run run(net, o);
    ASSERT_EQ(run.comps.count, 1);
    run.choose_starts();
    const std::vector<uint8_t> coin = run.coin_state(0), start = run.initial_state(0);
    std::vector<uint8_t> by_id(net.num_atoms + 1, 0), none(net.num_atoms + 1, 0);
    for (int64_t i = 0; i < run.comps.num_atoms(0); ++i) by_id[run.comps.atoms[i]] = coin[i + 1];
    const double coin_cost = total_cost(net.clauses, by_id), false_cost = total_cost(net.clauses, none);
    EXPECT_EQ(std::count(coin.begin() + 1, coin.end(), 1) > 0, true);
    if (false_cost < coin_cost) {
      EXPECT_EQ(std::count(start.begin(), start.end(), 1), 0) << "prior " << prior;
      EXPECT_NEAR(run.start_cost[0], false_cost, testing::tol(false_cost));
    } else {
      EXPECT_EQ(start, coin) << "prior " << prior;
      EXPECT_NEAR(run.start_cost[0], coin_cost, testing::tol(coin_cost));
    }
    EXPECT_EQ(false_cost < coin_cost, prior < 1) << "the network's shape: coin " << coin_cost << ", all false " << false_cost;
  }
}

}  // namespace
}  // namespace mln::solver
