// The LP relaxation's bound by PDHG (lp_pdhg.hpp) against brute force and
// against Clp's optimum of the same LP (lp_relaxation), on the CPU (PdhgTest)
// and on the GPU (PdhgGpuTest: skipped without a usable GPU, failed instead
// under MLN_REQUIRE_GPU=1).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "core/base/network_cost.hpp"
#include "core/map/ilp_map.hpp"
#include "core/bound/lp_pdhg.hpp"
#include "core/bound/lp_pdhg_detail.hpp"
#include "core/map/solve_map.hpp"
#include "solver_gpu_case.hpp"
#include "solver_test_util.hpp"

namespace mln::solver {
namespace {

using testing::add_clause;
using testing::brute_force_min_cost;
using testing::random_mixed_network;
using testing::tol;

// Random weighted networks small enough to enumerate: clauses of 1-3
// literals with positive, negative and hard weights (random_mixed_network),
// and now and then an empty clause (positive or negative), a zero weight, a
// hard unit clause of either sign and a hard negative clause.
mln::Network pdhg_network(uint64_t seed) {
  Rng rng(derive_seed(seed, 9090));
  const int32_t n = 3 + static_cast<int32_t>(rng.below(12));  // 3..14 atoms
  const int m = static_cast<int>(rng.below(4 * n + 1));
  mln::Network net = random_mixed_network(n, m, seed);
  const int extra = static_cast<int>(rng.below(5));
  for (int i = 0; i < extra; ++i) {
    const int32_t a = 1 + static_cast<int32_t>(rng.below(n)), b = 1 + static_cast<int32_t>(rng.below(n));
    switch (rng.below(6)) {
      case 0: add_clause(net, {}, 1 + rng.uniform()); break;
      case 1: add_clause(net, {}, -1 - rng.uniform()); break;
      case 2: add_clause(net, {a, -b}, 0.0); break;
      case 3: add_clause(net, {a}, (rng.next() >> 63 ? 1 : -1) * kHardWeight); break;
      case 4: if (a != b) add_clause(net, {a, b}, -kHardWeight); break;
      default: add_clause(net, {-a}, 0.3 + rng.uniform()); break;
    }
  }
  return net;
}

PdhgOptions test_options() {
  PdhgOptions o;
  o.device = mln::options::Device::kCpu;
  o.threads = 1;
  o.max_iterations = 20000;
  o.rel_gap = 1e-6;
  return o;
}

// What every bound must satisfy on a network of optimum `opt`: never above
// it, never below the unit bound, at most the primal estimate; and its
// rounded state, of the network's size, costs what the network says and
// no less than the optimum.
void expect_valid_bound(const mln::Network& net, double opt, const PdhgOutcome& r, int64_t iters) {
  EXPECT_LE(r.bound, opt + tol(opt)) << iters << " iterations";
  EXPECT_GE(r.bound, unit_bound(net) - tol(opt));
  ASSERT_EQ(r.state.size(), static_cast<size_t>(net.num_atoms) + 1);
  EXPECT_NEAR(r.state_cost, total_cost(net.clauses, r.state), tol(opt));
  EXPECT_GE(r.state_cost, opt - tol(opt));
  // primal is an estimate in double: hard unit weights (5.2e7) pass
  // through its sum.
  EXPECT_LE(r.bound, r.primal + 1e-6);
}

// The bound is never above the optimum, whatever the iterate's accuracy
// (also after a handful of iterations), and the rounded state's cost is its
// true cost.
TEST(PdhgTest, BoundNeverExceedsTheOptimumOn200Networks) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const mln::Network net = pdhg_network(seed);
    const double opt = brute_force_min_cost(net);
    SCOPED_TRACE("seed " + std::to_string(seed) + ", optimum " + std::to_string(opt));
    for (int64_t iters : {int64_t{3}, int64_t{40}, int64_t{20000}}) {
      PdhgOptions o = test_options();
      o.max_iterations = iters;
      o.eval_every = 1;
      expect_valid_bound(net, opt, lp_bound_pdhg(net, o), iters);
    }
  }
}

// The magnitude of the unit and empty clauses' weights: lp_relaxation takes
// 1e-9 of it (and of its objective) off Clp's optimum.
double unit_mass(const mln::Network& net) {
  double s = 0;
  for (size_t c = 0; c < net.clauses.size(); ++c)
    if (net.clauses.offsets[c + 1] - net.clauses.offsets[c] <= 1) s += std::fabs(net.clauses.weights[c]);
  return s;
}

// Within 0.5% (plus 1e-6) of Clp's optimum of the same LP, and never above
// it beyond Clp's own tolerance (lp_relaxation's margin, 1e-9 of the
// objective's terms).
TEST(PdhgTest, MatchesClpOn200Networks) {
  if (!ilp_available()) GTEST_SKIP() << "built without COIN-OR CBC";
  int converged = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const mln::Network net = pdhg_network(seed);
    const LpOutcome clp = lp_relaxation(net, 10);
    if (!clp.solved) continue;
    SCOPED_TRACE("seed " + std::to_string(seed) + ", Clp " + std::to_string(clp.bound));
    const PdhgOutcome r = lp_bound_pdhg(net, test_options());
    const double slack = 1e-6 * std::max(1.0, std::fabs(clp.bound)) + 2e-9 * unit_mass(net);
    EXPECT_LE(r.bound, clp.bound + slack);
    EXPECT_GE(r.bound, clp.bound - 0.005 * std::fabs(clp.bound) - 1e-6);
    converged += r.converged;
  }
  EXPECT_GE(converged, 190);
}

// A larger network on two threads: within 0.5% of Clp.
TEST(PdhgTest, MatchesClpOnALargerNetworkWithThreads) {
  if (!ilp_available()) GTEST_SKIP() << "built without COIN-OR CBC";
  for (uint64_t seed : {7, 8}) {
    const mln::Network net = random_mixed_network(1500, 4500, seed);
    const LpOutcome clp = lp_relaxation(net, 30);
    ASSERT_TRUE(clp.solved);
    PdhgOptions o;
    o.device = mln::options::Device::kCpu;
    o.threads = 2;
    o.rel_gap = 1e-3;
    o.max_iterations = 200000;
    const PdhgOutcome r = lp_bound_pdhg(net, o);
    EXPECT_TRUE(r.converged) << r.seconds << " s, " << r.iterations << " iterations, bound " << r.bound << " primal " << r.primal;
    EXPECT_LE(r.bound, clp.bound + 1e-6 * std::fabs(clp.bound) + 2e-9 * unit_mass(net));
    EXPECT_GE(r.bound, clp.bound - 0.005 * std::fabs(clp.bound) - 1e-6);
    EXPECT_GE(r.state_cost, r.bound);
  }
}

// A solve stopped before it starts returns the unit bound and no state
// (PdhgOutcome::state).
TEST(PdhgTest, AStoppedSolveReturnsAValidBound) {
  const mln::Network net = pdhg_network(11);
  std::atomic<bool> cancel{true};
  StopToken stop(&cancel, 0);
  PdhgOptions o = test_options();
  o.stop = &stop;
  const PdhgOutcome r = lp_bound_pdhg(net, o);
  EXPECT_EQ(r.iterations, 0);
  EXPECT_GE(r.bound, unit_bound(net) - tol(r.bound));
  EXPECT_LE(r.bound, brute_force_min_cost(net) + tol(r.bound));
  EXPECT_NEAR(r.bound, unit_bound(net), tol(r.bound));
  EXPECT_TRUE(r.state.empty());
}

// The LP's build stops where its `stop` says so (asked before each block of
// 65,536 clauses; at 10^9 clauses the bound after the walk built its LP for
// 16 s past its time limit): the LP is then marked incomplete.  A stop that
// never fires builds the LP the build without one does.
TEST(PdhgTest, TheLpBuildStopsWhenAsked) {
  const mln::Network net = random_mixed_network(20000, 400000, 5);
  std::atomic<int> asked{0};
  const pdhg_detail::Lp cut = pdhg_detail::build_lp(net, [&] { return ++asked > 2; });
  EXPECT_TRUE(cut.stopped);
  const pdhg_detail::Lp whole = pdhg_detail::build_lp(net, [] { return false; });
  const pdhg_detail::Lp plain = pdhg_detail::build_lp(net);
  EXPECT_FALSE(whole.stopped);
  EXPECT_GT(whole.rows(), 0);
  EXPECT_EQ(whole.nnz, plain.nnz);
  EXPECT_EQ(whole.rows(), plain.rows());
  EXPECT_EQ(whole.clause, plain.clause);
}

// solve_map with the PDHG bound on every component (pdhg_min_clauses 1, and
// lp_bound_max_clauses 0: the path of components above it), beside the walk
// on a thread of its own: every bound is valid, the answer's cost is its
// truth's, and the bound is above the unit bound on most of them (the LP
// is not tight on these random networks: few are proven).
TEST(PdhgTest, SolveMapBoundsBesideTheWalk) {
  int above = 0, networks = 0;
  for (uint64_t seed = 300; seed < 400; ++seed) {
    mln::Network net = random_mixed_network(8 + static_cast<int32_t>(seed % 7), 30 + static_cast<int>(seed % 20), seed);
    add_clause(net, {}, 0.7);  // a constant cost, outside every component
    const double opt = brute_force_min_cost(net);
    SCOPED_TRACE("seed " + std::to_string(seed) + ", optimum " + std::to_string(opt));
    for (const char* solver : {"walksat", "auto"}) {
      SolveOptions o;
      o.seed = seed;
      o.threads = 2;
      o.device = mln::options::Device::kCpu;
      o.exact_max_atoms = 0;
      o.max_flips = 200;
      o.solver = mln::options::choice_named<mln::options::MapSolver>(solver);
      o.gap_tolerance = 0;
      o.ilp_seconds = 0;  // no exact path: the bound is PDHG's alone
      o.pdhg_min_clauses = 1;
      o.lp_bound_max_clauses = (seed % 2) ? 0 : 1000000;
      const SolveResult r = solve_map(net, o);
      EXPECT_LE(r.bound, opt + tol(opt));
      EXPECT_LE(r.bound, r.cost + tol(r.cost));
      EXPECT_NEAR(total_cost(net.clauses, r.truth), r.cost, tol(opt));
      if (std::string(solver) == "auto") {
        ++networks;
        above += r.bound > unit_bound(net) + 1e-6;
      }
    }
  }
  EXPECT_GE(above, networks / 2) << "the PDHG bound was rarely above the unit bound";
}

}  // namespace
// A chain whose LP is tight: each atom's false costs 1 and true 2, and
// neighbours may not both be true.
static mln::Network tight_lp_chain(int32_t n) {
  mln::Network net;
  net.num_atoms = n;
  for (int32_t a = 1; a <= net.num_atoms; ++a) {
    add_clause(net, {a}, 1.0);
    add_clause(net, {-a}, 2.0);
  }
  for (int32_t a = 1; a < net.num_atoms; ++a) add_clause(net, {-a, -(a + 1)}, 1.0);
  net.is_query.assign(net.num_atoms + 1, 1);
  return net;
}

// The side bound proves the walk's answer within gap_tolerance on a network
// whose LP is tight, and the answer is the walk's alone: the walk ends by
// its own rules, not when the bound beside it gets there (that race made
// the answer depend on the two threads' speeds, issue #60), so a run with
// the bound gives the state of a run without it.
TEST(PdhgTest, TheSideBoundProvesTheWalksAnswerWithinTheGap) {
  mln::Network net = tight_lp_chain(2000);
  SolveOptions o;
  o.device = mln::options::Device::kCpu;
  o.threads = 1;
  o.exact_max_atoms = 0;
  o.max_tries = 200;
  o.pdhg_min_clauses = 1;
  const SolveResult closed = solve_map(net, o);
  o.pdhg_bound = false;
  o.lp_bound_max_clauses = 0;  // no bound at all: the walk alone
  const SolveResult walked = solve_map(net, o);
  EXPECT_DOUBLE_EQ(closed.cost, 2000.0);
  EXPECT_DOUBLE_EQ(walked.cost, 2000.0);
  EXPECT_LE(closed.cost - closed.bound, o.gap_tolerance * closed.cost) << closed.stop_reason;
  EXPECT_EQ(closed.flips, walked.flips);
  EXPECT_EQ(closed.truth, walked.truth);
}

}  // namespace mln::solver

namespace mln::solver {
namespace {

// Without a GPU, "auto" is the CPU path, unchanged, and "gpu" is refused;
// with one, "auto" runs on it.
TEST(PdhgTest, WithoutGpuAutoRunsOnTheCpu) {
  const mln::Network net = pdhg_network(5);
  PdhgOptions o = test_options();
  o.device = mln::options::Device::kAuto;
  const PdhgOutcome a = lp_bound_pdhg(net, o);
  if (gpu_available()) {
    EXPECT_EQ(a.device, "gpu") << a.gpu_error;
    return;
  }
  o.device = mln::options::Device::kCpu;
  const PdhgOutcome c = lp_bound_pdhg(net, o);
  EXPECT_EQ(a.device, "cpu");
  EXPECT_TRUE(a.gpu_error.empty()) << a.gpu_error;
  EXPECT_EQ(a.bound, c.bound);
  EXPECT_EQ(a.iterations, c.iterations);
  EXPECT_EQ(a.state, c.state);
  o.device = mln::options::Device::kGpu;
  EXPECT_THROW(lp_bound_pdhg(net, o), std::runtime_error);
}

// The GPU cases: skipped without a usable GPU, failed instead when
// MLN_REQUIRE_GPU=1.
class PdhgGpuTest : public testing::GpuCase {
 protected:
  static PdhgOptions gpu_options() {
    PdhgOptions o = test_options();
    o.device = mln::options::Device::kGpu;
    return o;
  }
};

// As on the CPU: the bound is never above the optimum, whatever the
// iterate's accuracy (also after a handful of iterations, evaluated at
// each), and the rounded state's cost is its exact cost.
TEST_F(PdhgGpuTest, BoundNeverExceedsTheOptimumOn100Networks) {
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    const mln::Network net = pdhg_network(seed);
    const double opt = brute_force_min_cost(net);
    SCOPED_TRACE("seed " + std::to_string(seed) + ", optimum " + std::to_string(opt));
    for (int64_t iters : {int64_t{3}, int64_t{40}, int64_t{20000}}) {
      PdhgOptions o = gpu_options();
      o.max_iterations = iters;
      o.eval_every = iters <= 40 ? 1 : 16;
      const PdhgOutcome r = lp_bound_pdhg(net, o);
      ASSERT_EQ(r.device, "gpu") << r.gpu_error;
      expect_valid_bound(net, opt, r, iters);
    }
  }
}

// Within 0.5% of the CPU's PDHG bound and of Clp's optimum of the same LP,
// and never above Clp's beyond its own tolerance (MatchesClpOn200Networks).
TEST_F(PdhgGpuTest, MatchesTheCpuAndClpOn100Networks) {
  int converged = 0;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    const mln::Network net = pdhg_network(seed);
    SCOPED_TRACE("seed " + std::to_string(seed));
    const PdhgOutcome cpu = lp_bound_pdhg(net, test_options());
    const PdhgOutcome gpu = lp_bound_pdhg(net, gpu_options());
    ASSERT_EQ(gpu.device, "gpu") << gpu.gpu_error;
    EXPECT_NEAR(gpu.bound, cpu.bound, 0.005 * std::fabs(cpu.bound) + 1e-6);
    converged += gpu.converged;
    if (!ilp_available()) continue;
    const LpOutcome clp = lp_relaxation(net, 10);
    if (!clp.solved) continue;
    const double slack = 1e-6 * std::max(1.0, std::fabs(clp.bound)) + 2e-9 * unit_mass(net);
    EXPECT_LE(gpu.bound, clp.bound + slack) << "Clp " << clp.bound;
    EXPECT_GE(gpu.bound, clp.bound - 0.005 * std::fabs(clp.bound) - 1e-6) << "Clp " << clp.bound;
  }
  EXPECT_GE(converged, 95);
}

// Networks larger than one pass of the kernels' grids (more clauses and
// atoms than 1024 blocks of 256 threads cover): the GPU's bound is at most
// the CPU's feasible primal objective and the CPU's at most the GPU's (each
// bound is below the LP optimum, each primal above it), within 0.5% of each
// other, and the rounded state's cost is its exact cost.
TEST_F(PdhgGpuTest, MatchesTheCpuOnNetworksLargerThanTheGrid) {
  for (uint64_t seed : {7}) {
    const mln::Network net = random_mixed_network(300000, 450000, seed);
    SCOPED_TRACE("seed " + std::to_string(seed));
    PdhgOptions o;
    o.rel_gap = 1e-3;
    o.max_iterations = 20000;
    o.time_limit_s = 120;
    o.device = mln::options::Device::kCpu;
    const PdhgOutcome cpu = lp_bound_pdhg(net, o);
    o.device = mln::options::Device::kGpu;
    const PdhgOutcome gpu = lp_bound_pdhg(net, o);
    ASSERT_EQ(gpu.device, "gpu") << gpu.gpu_error;
    EXPECT_TRUE(gpu.converged) << gpu.seconds << " s, " << gpu.iterations << " iterations";
    EXPECT_LE(gpu.bound, cpu.primal + 1e-9 * std::fabs(cpu.primal));
    EXPECT_LE(cpu.bound, gpu.primal + 1e-9 * std::fabs(gpu.primal));
    EXPECT_NEAR(gpu.bound, cpu.bound, 0.005 * std::fabs(cpu.bound));
    EXPECT_NEAR(gpu.state_cost, total_cost_threads(net.clauses, gpu.state), tol(gpu.state_cost));
    EXPECT_LE(gpu.bound, gpu.state_cost);
  }
}

// solve_map on the GPU with the PDHG bound beside the GPU walk of every
// component (gpu_min_atoms 1: each component is walked on its own, with a
// side bound on the GPU): every bound is valid, no GPU failure was warned
// of, and the answer's cost is its truth's.
TEST_F(PdhgGpuTest, SolveMapBoundsBesideTheGpuWalk) {
  for (uint64_t seed = 300; seed < 340; ++seed) {
    mln::Network net = random_mixed_network(8 + static_cast<int32_t>(seed % 7), 30 + static_cast<int>(seed % 20), seed);
    const double opt = brute_force_min_cost(net);
    SCOPED_TRACE("seed " + std::to_string(seed) + ", optimum " + std::to_string(opt));
    SolveOptions o;
    o.seed = seed;
    o.device = mln::options::Device::kGpu;
    o.gpu_min_atoms = 1;
    o.exact_max_atoms = 0;
    o.max_flips = 200;
    o.gap_tolerance = 0;
    o.ilp_seconds = 0;  // no exact path: the bound is PDHG's alone
    o.pdhg_min_clauses = 1;
    o.lp_bound_max_clauses = 0;
    const SolveResult r = solve_map(net, o);
    EXPECT_TRUE(r.warnings.empty()) << r.warnings[0];
    EXPECT_LE(r.bound, opt + tol(opt));
    EXPECT_LE(r.bound, r.cost + tol(r.cost));
    EXPECT_NEAR(total_cost(net.clauses, r.truth), r.cost, tol(opt));
  }
}

// The GPU bound closes the GPU walk on a network whose LP is tight
// (TheSideBoundProvesTheWalksAnswerWithinTheGap): the answer is the optimum and
// within gap_tolerance of its bound.
TEST_F(PdhgGpuTest, TheGpuWalkEndsWithinTheGapOfTheGpuBound) {
  mln::Network net = tight_lp_chain(2000);
  SolveOptions o;
  o.device = mln::options::Device::kGpu;
  o.gpu_min_atoms = 1;
  o.exact_max_atoms = 0;
  o.max_tries = 200;
  o.pdhg_min_clauses = 1;
  const SolveResult r = solve_map(net, o);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings[0];
  EXPECT_DOUBLE_EQ(r.cost, 2000.0);
  EXPECT_LE(r.cost - r.bound, o.gap_tolerance * r.cost) << r.solver_used << ", " << r.stop_reason;
}

}  // namespace
}  // namespace mln::solver
