// Cost semantics (Tuffy section 7.1) and the search layout's bookkeeping.
#include <gtest/gtest.h>

#include <algorithm>

#include "solver_test_util.hpp"
#include "core/walk/walksat_cpu.hpp"

namespace mln::solver {
namespace {

using testing::add_clause;

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

}  // namespace
}  // namespace mln::solver
