// Where a GPU-walked component's PDHG bound runs (gpu_budget.hpp): the LP's
// shape, the placement rule, the evaluation's thread cap (CPU), and on the
// GPU the two engines' estimates against their measured device peaks and a
// solve whose bound fits only after the walk, or not at all (GpuBudgetGpuTest:
// skipped without a usable GPU, failed instead under MLN_REQUIRE_GPU=1).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "core/base/network_cost.hpp"
#include "core/map/gpu_budget.hpp"
#include "core/map/ilp_map.hpp"
#include "core/bound/lp_pdhg_detail.hpp"
#include "core/map/solve_map.hpp"
#include "core/walk/walk_instance.hpp"
#include "core/walk/walksat_gpu.hpp"
#include "solver_gpu_case.hpp"
#include "solver_test_util.hpp"

namespace mln::solver {
namespace {

using testing::add_clause;
using testing::random_mixed_network;
using testing::tol;

// A random network of mixed weights made one component by a chain of
// soft pair clauses (each component plans its own bound).
mln::Network connected_network(int32_t n, int m, uint64_t seed) {
  mln::Network net = random_mixed_network(n, m, seed);
  for (int32_t a = 1; a < n; ++a) add_clause(net, {a, -(a + 1)}, 0.5);
  add_clause(net, {}, 1.5);   // an empty clause: a constant, no row
  add_clause(net, {3}, -2.0);  // a unit clause: a cost term, no row
  return net;
}

// lp_shape counts the rows, clauses and literals that build_lp lays out.
TEST(GpuBudgetTest, LpShapeIsBuildLpsShape) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const mln::Network net = connected_network(50 + static_cast<int32_t>(seed), 200, seed);
    const LpShape s = lp_shape(net.clauses);
    const pdhg_detail::Lp lp = pdhg_detail::build_lp(net);
    EXPECT_EQ(s.clauses, static_cast<int64_t>(lp.clause.size())) << seed;
    EXPECT_EQ(s.nnz, lp.nnz) << seed;
    EXPECT_EQ(s.rows, lp.rows()) << seed;
  }
}

// Beside when both fit with the margin, after when the bound fits alone,
// none when it does not; an unknown free size keeps the bound beside.
TEST(GpuBudgetTest, PlaceBoundRule) {
  const int64_t GiB = int64_t{1} << 30;
  EXPECT_EQ(place_bound(10 * GiB, 8 * GiB, 40 * GiB), BoundPlace::Beside);
  EXPECT_EQ(place_bound(10 * GiB, 8 * GiB, 19 * GiB), BoundPlace::After);
  EXPECT_EQ(place_bound(86 * GiB, 119 * GiB, 139 * GiB), BoundPlace::After);  // 10^9 clauses of RC on an H200
  EXPECT_EQ(place_bound(10 * GiB, 8 * GiB, 8 * GiB), BoundPlace::None);
  EXPECT_EQ(place_bound(10 * GiB, 8 * GiB, 0), BoundPlace::Beside);
}

// The evaluation's scratch stays within 8 GiB: all threads at 10^8
// clauses of RC (5.6M atoms), nine at 10^9, one at the most atoms.
TEST(GpuBudgetTest, EvalThreadsKeepTheScratchWithinEightGiB) {
  EXPECT_EQ(pdhg_detail::eval_threads(16, 5593480), 16);
  EXPECT_EQ(pdhg_detail::eval_threads(16, 55934800), 9);
  EXPECT_EQ(pdhg_detail::eval_threads(16, 2147483646), 1);
  EXPECT_EQ(pdhg_detail::eval_threads(1, 100), 1);
}

using GpuBudgetGpuTest = testing::GpuCase;

// Each estimate is at least its engine's measured device peak and not
// more than a third above it (it decides whether 10^9 clauses fit).
TEST_F(GpuBudgetGpuTest, EstimatesCoverTheMeasuredPeaks) {
  const mln::Network net = connected_network(200000, 600000, 11);
  const int64_t m = static_cast<int64_t>(net.clauses.size()), lits = static_cast<int64_t>(net.clauses.lits.size());
  const int64_t base = static_cast<int64_t>(gpu_walksat_peak_bytes(true));  // a new mark at the current use
  WalkParams p;
  p.flips_per_try = 100000;
  p.max_tries = 1;
  walksat_gpu(walk_instance_header(net), std::vector<uint8_t>(net.num_atoms, 0), p, GpuWalkOptions{});
  const int64_t walk = static_cast<int64_t>(gpu_walksat_peak_bytes(false)) - base;
  gpu_walksat_peak_bytes(true);
  const int64_t walk_est = walk_device_bytes(net.num_atoms, m, lits);
  EXPECT_LE(walk, walk_est);
  EXPECT_GE(4 * walk, 3 * walk_est) << walk << " measured, " << walk_est << " estimated";
  PdhgOptions o;
  o.device = mln::options::Device::kGpu;
  o.max_iterations = 50;
  const PdhgOutcome r = lp_bound_pdhg(net, o);
  ASSERT_EQ(r.device, "gpu") << r.gpu_error;
  const int64_t pdhg = static_cast<int64_t>(gpu_walksat_peak_bytes(false)) - base;
  const int64_t pdhg_est = pdhg_device_bytes(net.num_atoms, lp_shape(net.clauses));
  EXPECT_LE(pdhg, pdhg_est);
  EXPECT_GE(4 * pdhg, 3 * pdhg_est) << pdhg << " measured, " << pdhg_est << " estimated";
}

// A device that holds the bound only alone: it runs after the walk and
// reaches at least the bound it reaches beside it; one that holds neither
// with the walk nor alone: the unit bound, with a warning each time.  No
// gap tolerance: with one, either bound may stop anywhere within it of its
// own walk's cost (0.5%), and the two stop at different points.
TEST_F(GpuBudgetGpuTest, ABoundThatFitsOnlyAloneRunsAfterTheWalk) {
  const mln::Network net = connected_network(3000, 9000, 5);
  const int64_t m = static_cast<int64_t>(net.clauses.size()), lits = static_cast<int64_t>(net.clauses.lits.size());
  const int64_t walk = walk_device_bytes(net.num_atoms, m, lits);
  const int64_t bound = pdhg_device_bytes(net.num_atoms, lp_shape(net.clauses));
  int64_t lo = 1, hi = int64_t{1} << 40;  // the least limit that holds the bound alone
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (place_bound(walk, bound, mid) == BoundPlace::None) lo = mid + 1;
    else hi = mid;
  }
  ASSERT_EQ(place_bound(walk, bound, lo), BoundPlace::After);
  SolveOptions o;
  o.seed = 3;
  o.device = mln::options::Device::kGpu;
  o.gpu_min_atoms = 1;
  o.exact_max_atoms = 0;
  o.max_flips = 20000;
  o.ilp_seconds = 0;  // no exact path: the bound is PDHG's or the unit bound
  o.pdhg_min_clauses = 1;
  o.lp_bound_max_clauses = 0;
  o.gap_tolerance = 0;  // each bound runs to the LP's optimum (rel_gap 1e-6) or its time
  const SolveResult beside = solve_map(net, o);
  EXPECT_TRUE(beside.warnings.empty()) << beside.warnings[0];
  o.gpu_memory_limit = lo;
  const SolveResult after = solve_map(net, o);
  ASSERT_EQ(after.warnings.size(), 1u);
  EXPECT_NE(after.warnings[0].find("after the walk"), std::string::npos) << after.warnings[0];
  EXPECT_GE(after.bound, beside.bound - 1e-4 * std::fabs(beside.bound) - 1e-6);
  EXPECT_LE(after.bound, after.cost + tol(after.cost));
  EXPECT_GT(after.bound, unit_bound(net) + 1.0);
  EXPECT_NEAR(total_cost(net.clauses, after.truth), after.cost, tol(after.cost));
  o.gpu_memory_limit = lo - 1;
  const SolveResult none = solve_map(net, o);
  ASSERT_EQ(none.warnings.size(), 1u);
  EXPECT_NE(none.warnings[0].find("no LP bound"), std::string::npos) << none.warnings[0];
  EXPECT_NEAR(none.bound, unit_bound(net), tol(none.bound));
  EXPECT_NEAR(total_cost(net.clauses, none.truth), none.cost, tol(none.cost));
}

}  // namespace
}  // namespace mln::solver
