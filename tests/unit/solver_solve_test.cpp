// solve_map: determinism, query skipping, cancel and timeout, options.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "core/instance_gen.hpp"
#include "core/maxwalksat.hpp"
#include "solver_test_util.hpp"

namespace mln::solver {
namespace {

using testing::add_clause;

// Many components of different sizes: disjoint random networks side by side.
mln::Network many_components(int count, uint64_t seed) {
  mln::Network net;
  for (int k = 0; k < count; ++k) {
    mln::Network part = testing::random_mixed_network(3 + k % 12, 4 + 2 * (k % 12), seed + k);
    int32_t base = net.num_atoms;
    for (size_t c = 0; c < part.clauses.size(); ++c) {
      std::vector<int32_t> lits;
      for (int64_t i = part.clauses.offsets[c]; i < part.clauses.offsets[c + 1]; ++i) {
        int32_t l = part.clauses.lits[i];
        lits.push_back(l > 0 ? l + base : l - base);
      }
      add_clause(net, lits, part.clauses.weights[c]);
    }
    net.num_atoms += part.num_atoms;
  }
  net.is_query.assign(net.num_atoms + 1, 1);
  return net;
}

TEST(SolverSolve, SameSeedSameTruthWithOneAndTwoThreads) {
  mln::Network net = many_components(60, 3);
  SolveOptions o;
  o.device = "cpu";
  o.seed = 11;
  o.threads = 1;
  SolveResult r1 = solve_map(net, o);
  o.threads = 2;
  SolveResult r2 = solve_map(net, o);
  SolveResult r3 = solve_map(net, o);
  EXPECT_GT(r1.components, 40);
  EXPECT_EQ(r1.truth, r2.truth);
  EXPECT_EQ(r2.truth, r3.truth);
  EXPECT_DOUBLE_EQ(r1.cost, r2.cost);
  EXPECT_EQ(r1.flips, r2.flips);
  o.seed = 12;  // and the seed does matter
  SolveResult r4 = solve_map(net, o);
  EXPECT_NE(r1.truth, r4.truth);
}

TEST(SolverSolve, ComponentsWithoutQueryAtomsAreSkipped) {
  mln::Network net;
  net.num_atoms = 4;
  add_clause(net, {1, -2}, 1.0);
  add_clause(net, {2}, 1.0);
  add_clause(net, {3, 4}, 1.0);
  add_clause(net, {3}, 2.0);
  add_clause(net, {4}, 2.0);
  net.is_query = {0, 1, 0, 0, 0};  // only atom 1 is a query atom
  SolveOptions o;
  o.device = "cpu";
  SolveResult r = solve_map(net, o);
  EXPECT_EQ(r.components, 2);
  EXPECT_EQ(r.solved_components, 1);
  EXPECT_EQ(r.truth[1], 1);
  EXPECT_EQ(r.truth[2], 1);
  EXPECT_EQ(r.truth[3], 0);  // never inferred
  EXPECT_EQ(r.truth[4], 0);
  EXPECT_DOUBLE_EQ(r.cost, 0.0);  // the skipped component's cost is not counted
  o.skip_components_without_query = false;
  r = solve_map(net, o);
  EXPECT_EQ(r.solved_components, 2);
  EXPECT_EQ(r.truth[3], 1);
  EXPECT_EQ(r.truth[4], 1);
  EXPECT_DOUBLE_EQ(r.cost, 0.0);
}

// A network with no zero-cost state (conflicting unit clauses), searched
// with a budget far beyond the test's time.
struct Big {
  mln::Network net;
};
Big big_instance() {
  Big b{testing::random_mixed_network(20000, 80000, 4)};
  testing::add_clause(b.net, {1}, 1.0);
  testing::add_clause(b.net, {-1}, 1.0);
  return b;
}

TEST(SolverSolve, CancelFlagStopsEarly) {
  Big g = big_instance();
  std::atomic<bool> cancel{false};
  SolveOptions o;
  o.device = "cpu";
  o.max_flips = int64_t{1} << 40;
  o.cancel = &cancel;
  std::atomic<int> calls{0};
  o.progress = [&](double, int64_t) { ++calls; };
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel = true;
  });
  SolveResult r = solve_map(g.net, o);
  stopper.join();
  EXPECT_TRUE(r.cancelled);
  EXPECT_LT(r.seconds, 5.0);
  EXPECT_GT(r.flips, 0);
  EXPECT_GT(calls.load(), 0);
  EXPECT_NEAR(r.cost, total_cost(g.net.clauses, r.truth), 1e-6 * r.cost);
}

TEST(SolverSolve, TimeoutStopsTheSearch) {
  Big g = big_instance();
  SolveOptions o;
  o.device = "cpu";
  o.max_flips = int64_t{1} << 40;
  o.timeout_s = 0.3;
  SolveResult r = solve_map(g.net, o);
  EXPECT_TRUE(r.cancelled);
  EXPECT_GE(r.seconds, 0.3);
  EXPECT_LT(r.seconds, 5.0);
  EXPECT_NEAR(r.cost, total_cost(g.net.clauses, r.truth), 1e-6 * r.cost);
}

TEST(SolverSolve, BadOptionsAreRejected) {
  mln::Network net = testing::smoke_network();
  SolveOptions o;
  o.device = "tpu";
  EXPECT_THROW(solve_map(net, o), std::invalid_argument);
  o.device = "cpu";
  o.max_tries = 0;
  EXPECT_THROW(solve_map(net, o), std::invalid_argument);
}

TEST(SolverSolve, EmptyNetwork) {
  mln::Network net;
  SolveResult r = solve_map(net, SolveOptions{});
  EXPECT_EQ(r.truth.size(), 1u);
  EXPECT_EQ(r.components, 0);
  EXPECT_DOUBLE_EQ(r.cost, 0.0);
}

}  // namespace
}  // namespace mln::solver
