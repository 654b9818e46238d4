// solve_map: determinism, query skipping, cancel and timeout, options.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "core/base/instance_gen.hpp"
#include "core/map/solve_map.hpp"
#include "core/base/network_cost.hpp"
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
  o.device = mln::options::Device::kCpu;
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
  o.device = mln::options::Device::kCpu;
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
  o.device = mln::options::Device::kCpu;
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
  o.device = mln::options::Device::kCpu;
  o.max_flips = int64_t{1} << 40;
  o.timeout_s = 0.3;
  SolveResult r = solve_map(g.net, o);
  EXPECT_TRUE(r.cancelled);
  EXPECT_TRUE(r.walk_cut);  // the walk's flip budget is far beyond 0.3 s
  EXPECT_GE(r.seconds, 0.3);
  EXPECT_LT(r.seconds, 5.0);
  EXPECT_NEAR(r.cost, total_cost(g.net.clauses, r.truth), 1e-6 * r.cost);
}

// `count` random components of n atoms and m clauses side by side (a chain
// of implications keeps each one connected): component k holds atoms
// k * n + 1 .. (k + 1) * n.
mln::Network equal_components(int count, int32_t n, int m, uint64_t seed) {
  mln::Network net;
  for (int k = 0; k < count; ++k) {
    mln::Network part = testing::random_mixed_network(n, m, seed + k);
    for (size_t c = 0; c < part.clauses.size(); ++c) {
      std::vector<int32_t> lits;
      for (int64_t i = part.clauses.offsets[c]; i < part.clauses.offsets[c + 1]; ++i) {
        int32_t l = part.clauses.lits[i];
        lits.push_back(l > 0 ? l + k * n : l - k * n);
      }
      add_clause(net, lits, part.clauses.weights[c]);
    }
    for (int32_t a = 1; a < n; ++a) add_clause(net, {-(a + k * n), a + 1 + k * n}, 0.3);
  }
  net.num_atoms = count * n;
  net.is_query.assign(net.num_atoms + 1, 1);
  return net;
}

// Each component's cost in `truth` (equal_components' layout).
std::vector<double> component_costs(const mln::Network& net, int count, int32_t n, const std::vector<uint8_t>& truth) {
  std::vector<double> cost(count, 0.0);
  for (size_t c = 0; c < net.clauses.size(); ++c)
    cost[(std::abs(net.clauses.lits[net.clauses.offsets[c]]) - 1) / n] +=
        clause_cost_of(net.clauses, static_cast<int64_t>(c), truth);
  return cost;
}

bool has_warning(const SolveResult& r, const std::string& part) {
  for (const std::string& w : r.warnings)
    if (w.find(part) != std::string::npos) return true;
  return false;
}

// Every component gets its first try before any gets a second: with a
// huge max_tries and a short timeout, each component ends at least as low
// as with one try (the first pass is that very try).  Before, the first
// components ran all their tries and the timeout left the others unsearched
// (class: cost 3,627 against 361.56).
TEST(SolverSolve, HugeMaxTriesUnderATimeoutStillWalksEveryComponent) {
  const int count = 40;
  const int32_t n = 48;
  mln::Network net = equal_components(count, n, 144, 5);
  SolveOptions o;
  o.device = mln::options::Device::kCpu;
  o.solver = mln::options::MapSolver::kWalksat;
  o.exact_max_atoms = 0;  // every component walked
  o.threads = 2;
  o.max_tries = 1;
  SolveResult one = solve_map(net, o);
  EXPECT_FALSE(one.cancelled);
  EXPECT_FALSE(one.walk_cut);
  o.max_tries = 1000000000;
  o.timeout_s = 0.5;
  SolveResult many = solve_map(net, o);
  EXPECT_TRUE(many.cancelled);
  const std::vector<double> c1 = component_costs(net, count, n, one.truth);
  const std::vector<double> cm = component_costs(net, count, n, many.truth);
  for (int k = 0; k < count; ++k) EXPECT_LE(cm[k], c1[k] + 1e-9) << "component " << k;
  EXPECT_LE(many.cost, one.cost + 1e-9);
  EXPECT_FALSE(has_warning(many, "before every component had its first try"));
}

// Tries shorter than the walk's 4,096 steps between looks at the clock
// (100 flips per atom of a 10-atom component) still stop at the timeout.
TEST(SolverSolve, ShortTriesStopAtTheTimeout) {
  mln::Network net = equal_components(1, 10, 30, 9);
  SolveOptions o;
  o.device = mln::options::Device::kCpu;
  o.solver = mln::options::MapSolver::kWalksat;
  o.exact_max_atoms = 0;
  o.max_tries = 1000000000;
  o.timeout_s = 0.2;
  SolveResult r = solve_map(net, o);
  EXPECT_TRUE(r.cancelled);
  EXPECT_LT(r.seconds, 5.0);
}

// A time limit that ends the search before every component had one try
// says so (the answer then holds unsearched components).
TEST(SolverSolve, TimeoutBeforeEveryFirstTryIsAWarning) {
  mln::Network net = equal_components(60, 16, 48, 6);
  ASSERT_EQ(solve_map(net, SolveOptions{}).components, 60);
  SolveOptions o;
  o.device = mln::options::Device::kCpu;
  o.solver = mln::options::MapSolver::kWalksat;
  o.exact_max_atoms = 0;
  o.threads = 1;
  o.max_flips = int64_t{1} << 40;  // the first component's first try outlasts the limit
  o.timeout_s = 0.3;
  SolveResult r = solve_map(net, o);
  EXPECT_TRUE(r.cancelled);
  EXPECT_TRUE(has_warning(r, "the time limit (0.3 s) ran out before every component had its first try"));
  EXPECT_TRUE(has_warning(r, " of 60 components were not searched")) << ::testing::PrintToString(r.warnings);
  EXPECT_NEAR(r.cost, total_cost(net.clauses, r.truth), 1e-9 * r.cost);
  // Without a limit, no such warning.
  o.max_flips = 0;
  o.timeout_s = 0;
  EXPECT_FALSE(has_warning(solve_map(net, o), "before every component"));
}

// The progress figure is the whole network's best cost so far: it never
// rises, and the last one is the answer's cost.  The network has a split
// component (whose partitions' costs are not the component's), an empty
// clause (in the answer, in no component) and the exact path after the
// walks (which lowers the cost once every component has been walked).
TEST(SolverSolve, ProgressIsTheWholeNetworksBestSoFar) {
  mln::Network net = many_components(60, 7);
  mln::Network big = testing::random_mixed_network(200, 600, 8);
  for (size_t c = 0; c < big.clauses.size(); ++c) {
    std::vector<int32_t> lits;
    for (int64_t i = big.clauses.offsets[c]; i < big.clauses.offsets[c + 1]; ++i) {
      int32_t l = big.clauses.lits[i];
      lits.push_back(l > 0 ? l + net.num_atoms : l - net.num_atoms);
    }
    add_clause(net, lits, big.clauses.weights[c]);
  }
  net.num_atoms += big.num_atoms;
  add_clause(net, {}, 2.5);
  net.is_query.assign(net.num_atoms + 1, 1);
  for (const std::string solver : {"walksat", "auto"}) {
    SCOPED_TRACE(solver);
    SolveOptions o;
    o.device = mln::options::Device::kCpu;
    o.solver = mln::options::choice_named<mln::options::MapSolver>(solver);
    o.threads = 2;
    o.partition_max_atoms = 60;
    o.progress_interval_s = 0;
    std::vector<double> seen;
    o.progress = [&](double best, int64_t) { seen.push_back(best); };
    SolveResult r = solve_map(net, o);
    EXPECT_GT(r.partitions, 1);
    ASSERT_GE(seen.size(), 2u);
    for (size_t i = 1; i + 1 < seen.size(); ++i) ASSERT_LE(seen[i], seen[i - 1]) << "call " << i;
    EXPECT_LE(seen.back(), seen[seen.size() - 2] + 1e-9 * seen.back());
    EXPECT_EQ(seen.back(), r.cost);
  }
}

// cpu_walk "auto" walks a piece with the weighted walk from
// cpu_weighted_min_atoms atoms on and with MaxWalkSAT below: with the
// crossover forced either way it gives exactly what that walk gives alone.
TEST(SolverSolve, CpuWalkAutoTakesTheWalkItsCrossoverNames) {
  mln::Network net = testing::random_mixed_network(300, 1200, 21);
  net.is_query.assign(net.num_atoms + 1, 1);
  SolveOptions o;
  o.device = mln::options::Device::kCpu;
  o.solver = mln::options::MapSolver::kWalksat;
  o.exact_max_atoms = 0;
  o.threads = 1;
  o.weighted.threads = 1;
  o.seed = 5;
  o.cpu_walk = mln::options::CpuWalk::kWalksat;
  const SolveResult walksat = solve_map(net, o);
  o.cpu_walk = mln::options::CpuWalk::kWeighted;
  const SolveResult weighted = solve_map(net, o);
  ASSERT_NE(walksat.flips, weighted.flips) << "the two walks must differ for this test to tell them apart";
  o.cpu_walk = mln::options::CpuWalk::kAuto;
  o.cpu_weighted_min_atoms = 301;  // above the piece: MaxWalkSAT
  SolveResult a = solve_map(net, o);
  EXPECT_EQ(a.truth, walksat.truth);
  EXPECT_EQ(a.flips, walksat.flips);
  o.cpu_weighted_min_atoms = 300;  // at the piece: the weighted walk
  a = solve_map(net, o);
  EXPECT_EQ(a.truth, weighted.truth);
  EXPECT_EQ(a.flips, weighted.flips);
}

TEST(SolverSolve, BadOptionsAreRejected) {
  mln::Network net = testing::smoke_network();
  SolveOptions o;
  o.device = mln::options::Device::kCpu;
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
