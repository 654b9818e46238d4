// GPU MaxWalkSAT: the same optimality and smoke checks as on the CPU, for
// both designs.  Runs when a GPU is present; with MLN_REQUIRE_GPU=1 and no
// GPU the tests fail instead of passing on the CPU alone.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "core/base/components.hpp"
#include "core/map/solve_map.hpp"
#include "mln/relation.hpp"
#include "solver_test_util.hpp"

namespace mln::solver {
namespace {

// True when the GPU tests must run; fails the test when a GPU is required
// but missing.
bool have_gpu_or_fail() {
  bool have = mln::gpu::query_device().device_count > 0 && gpu_available();
  const char* req = std::getenv("MLN_REQUIRE_GPU");
  if (!have && req && std::strcmp(req, "1") == 0) {
    ADD_FAILURE() << "MLN_REQUIRE_GPU=1 but no usable GPU";
  }
  return have;
}

TEST(SolverGpu, WithoutGpuDeviceGpuThrows) {
  if (have_gpu_or_fail()) {
    SolveOptions o;
    o.device = mln::options::Device::kGpu;
    EXPECT_NO_THROW(solve_map(testing::smoke_network(), o));
    return;
  }
  SolveOptions o;
  o.device = mln::options::Device::kGpu;
  EXPECT_THROW(solve_map(testing::smoke_network(), o), std::runtime_error);
  o.device = mln::options::Device::kAuto;  // auto quietly uses the CPU
  SolveResult r = solve_map(testing::smoke_network(), o);
  EXPECT_EQ(r.device_used, "cpu");
}

TEST(SolverGpuWalk, FindsExactOptimumOnSmallRandomNetworks) {
  if (!have_gpu_or_fail()) return;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    int n = 4 + static_cast<int>(seed % 11);
    mln::Network net = testing::random_mixed_network(n, 2 * n + static_cast<int>(seed % 7), seed);
    double opt = testing::brute_force_min_cost(net);
    SolveOptions o;
    o.seed = seed;
    o.device = mln::options::Device::kGpu;
    o.max_flips = 20000;
    o.exact_max_atoms = 0;  // walk on the GPU even where enumeration would do
    SolveResult r = solve_map(net, o);
    EXPECT_TRUE(r.warnings.empty()) << r.warnings[0];
    EXPECT_EQ(r.device_used, "gpu");
    EXPECT_NEAR(r.cost, total_cost(net.clauses, r.truth), 1e-6);
    EXPECT_NEAR(r.cost, opt, 1e-6) << "seed " << seed << " n " << n;
  }
}

TEST(SolverGpuWalk, SmokeNetworkMatchesTuffy) {
  if (!have_gpu_or_fail()) return;
  SolveOptions o;
  o.device = mln::options::Device::kGpu;
  o.exact_max_atoms = 0;
  SolveResult r = solve_map(testing::smoke_network(), o);
  EXPECT_EQ(r.device_used, "gpu");
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(r.components, 4);
  EXPECT_DOUBLE_EQ(r.cost, 0.0);
  for (int a = 1; a <= 6; ++a) EXPECT_EQ(r.truth[a], 1) << "atom " << a;
}

// "auto": the big component on the GPU, the small ones on CPU threads at the
// same time; the reported cost is the recomputed one.
TEST(SolverGpu, AutoSplitsWorkBetweenGpuAndCpu) {
  if (!have_gpu_or_fail()) return;
  mln::Network net = testing::random_mixed_network(3000, 9000, 8);
  for (int k = 0; k < 20; ++k) {  // small components after the big one
    int32_t a = net.num_atoms + 1;
    net.num_atoms += 2;
    testing::add_clause(net, {a, -(a + 1)}, 1.0);
    testing::add_clause(net, {a + 1}, 0.5);
  }
  net.is_query.assign(net.num_atoms + 1, 1);
  SolveOptions o;
  o.gpu_min_atoms = 1000;
  o.threads = 2;
  SolveResult r = solve_map(net, o);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(r.device_used, "cpu+gpu");
  EXPECT_NEAR(r.cost, total_cost(net.clauses, r.truth), 1e-6 * (1 + r.cost));
  for (int32_t a = 3001; a <= net.num_atoms; ++a) EXPECT_EQ(r.truth[a], 1);
}

// "auto" routes a component by its size: to the GPU from gpu_min_atoms
// atoms or gpu_min_clauses clauses, to CPU threads below both.  With the
// crossover forced around the big component, each rule alone sends it to
// the GPU and neither leaves it on the CPU.
TEST(SolverGpu, AutoRoutesByAtomsOrClauses) {
  if (!have_gpu_or_fail()) return;
  // One component of 3,000 atoms and 11,999 clauses: random clauses, and a
  // chain of binary clauses that joins every atom to the next.
  mln::Network net = testing::random_mixed_network(3000, 9000, 8);
  for (int32_t a = 1; a < net.num_atoms; ++a) testing::add_clause(net, {a, -(a + 1)}, 0.5);
  net.is_query.assign(net.num_atoms + 1, 1);
  ASSERT_EQ(find_components(net).count, 1);
  SolveOptions o;
  o.threads = 2;
  o.exact_max_atoms = 0;
  o.solver = mln::options::MapSolver::kWalksat;  // the walk's device alone (the exact path runs on the CPU)
  o.gpu_min_atoms = 1000000;
  o.gpu_min_clauses = 1000000;
  EXPECT_EQ(solve_map(net, o).device_used, "cpu") << "below both crossovers";
  o.gpu_min_clauses = 5000;
  EXPECT_EQ(solve_map(net, o).device_used, "gpu") << "at the clause crossover";
  o.gpu_min_clauses = 1000000;
  o.gpu_min_atoms = 3000;
  EXPECT_EQ(solve_map(net, o).device_used, "gpu") << "at the atom crossover";
}

// Device "gpu", weighted design: the small components are walked in GPU
// batches, whose walk reports the batch's cost into one component's
// progress slot and hands each component its own back after it.  The
// progress never rises and ends at the answer's cost, in both passes
// (max_tries 3: every component's first try, then the others).
TEST(SolverGpu, BatchedProgressIsTheWholeNetworksBestSoFar) {
  if (!have_gpu_or_fail()) return;
  mln::Network net;
  for (int k = 0; k < 40; ++k) {
    mln::Network part = testing::random_mixed_network(30, 90, 20 + k);
    for (size_t c = 0; c < part.clauses.size(); ++c) {
      std::vector<int32_t> lits;
      for (int64_t i = part.clauses.offsets[c]; i < part.clauses.offsets[c + 1]; ++i) {
        const int32_t l = part.clauses.lits[i];
        lits.push_back(l > 0 ? l + net.num_atoms : l - net.num_atoms);
      }
      testing::add_clause(net, lits, part.clauses.weights[c]);
    }
    net.num_atoms += part.num_atoms;
  }
  net.is_query.assign(net.num_atoms + 1, 1);
  SolveOptions o;
  o.device = mln::options::Device::kGpu;
  o.solver = mln::options::MapSolver::kWalksat;
  o.exact_max_atoms = 0;
  o.gpu_batch_max_clauses = 1000;  // several batches
  o.progress_interval_s = 0;
  std::vector<double> seen;
  o.progress = [&](double best, int64_t) { seen.push_back(best); };
  SolveResult r = solve_map(net, o);
  EXPECT_EQ(r.device_used, "gpu");
  ASSERT_GE(seen.size(), 2u);
  for (size_t i = 1; i + 1 < seen.size(); ++i) ASSERT_LE(seen[i], seen[i - 1]) << "call " << i;
  EXPECT_LE(seen.back(), seen[seen.size() - 2] + 1e-9 * seen.back());
  EXPECT_EQ(seen.back(), r.cost);
  EXPECT_NEAR(r.cost, total_cost(net.clauses, r.truth), 1e-6 * (1 + r.cost));
}

}  // namespace
}  // namespace mln::solver
