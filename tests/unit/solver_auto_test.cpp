// Solver "auto": when a component's search ends (#39's rules), against
// brute force.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/map/ilp_map.hpp"
#include "core/map/solve_map.hpp"
#include "solver_test_util.hpp"

namespace mln::solver {
namespace {

using testing::add_clause;
using testing::brute_force_min_cost;
using testing::tol;

// `count` chains of `n` atoms: each atom wants to be true (unit clause,
// weight 1), neighbours want not to be both true (weight 0.1).  The
// optimum is every atom true (cost 0.1 per link), and so is the LP
// relaxation's optimum: its rounded point is optimal.
mln::Network integral_chains(int count, int n) {
  mln::Network net;
  for (int k = 0; k < count; ++k) {
    const int32_t base = net.num_atoms;
    for (int i = 1; i <= n; ++i) add_clause(net, {base + i}, 1.0);
    for (int i = 1; i < n; ++i) add_clause(net, {-(base + i), -(base + i + 1)}, 0.1);
    net.num_atoms += n;
  }
  net.is_query.assign(net.num_atoms + 1, 1);
  return net;
}

SolveOptions auto_options(int max_tries) {
  SolveOptions o;
  o.seed = 3;
  o.threads = 2;
  o.device = mln::options::Device::kCpu;
  o.solver = mln::options::MapSolver::kAuto;
  o.gap_tolerance = 1e-6;     // about a proof, less the LP's own tolerance
  o.exact_max_atoms = 0;      // walked, not enumerated
  o.max_flips = 100;          // a first try far from the optimum
  o.max_tries = max_tries;
  return o;
}

// A component whose LP relaxation's rounded point is optimal needs no
// second try even at a gap_tolerance near 0: the answer is the better of the walk
// and that point (on class the two largest components are such).
TEST(SolverAuto, NoSecondTryWhereTheLpsRoundedPointIsOptimal) {
  if (!ilp_available()) GTEST_SKIP() << "built without COIN-OR CBC";
  // The optimum's formula, checked by enumeration on one short chain.
  ASSERT_NEAR(brute_force_min_cost(integral_chains(1, 12)), 11 * 0.1, 1e-9);
  const mln::Network net = integral_chains(6, 30);
  const double opt = 6 * 29 * 0.1;
  const SolveResult one = solve_map(net, auto_options(1));
  const SolveResult three = solve_map(net, auto_options(3));
  EXPECT_NEAR(three.cost, opt, tol(opt));
  EXPECT_NEAR(three.bound, opt, 1e-6);
  EXPECT_EQ(three.flips, one.flips) << "components proven by their LP were walked again";
  EXPECT_NEAR(total_cost(net.clauses, three.truth), three.cost, tol(three.cost));
}

// An answer of cost 0 is optimal: proven without a bound, also where a
// PDHG side bound was started beside the walk (it is cancelled).
TEST(SolverAuto, ZeroCostIsProvenAndCancelsTheSideBound) {
  mln::Network net;
  for (int k = 0; k < 4; ++k) {  // satisfiable: every clause has a positive literal
    const int32_t base = net.num_atoms;
    for (int i = 1; i < 40; ++i) add_clause(net, {-(base + i), base + i + 1}, 1.5);
    add_clause(net, {base + 1, base + 2, -(base + 7)}, 2.0);
    net.num_atoms += 40;
  }
  net.is_query.assign(net.num_atoms + 1, 1);
  for (int64_t pdhg_min : {int64_t{1}, int64_t{100000}}) {
    SCOPED_TRACE("pdhg_min_clauses " + std::to_string(pdhg_min));
    SolveOptions o = auto_options(3);
    o.max_flips = 0;
    o.pdhg_min_clauses = pdhg_min;  // 1: every component's bound is PDHG's, on a side thread
    const SolveResult r = solve_map(net, o);
    EXPECT_EQ(r.cost, 0);
    EXPECT_TRUE(r.optimal);
    EXPECT_EQ(r.bound, 0);
    EXPECT_EQ(r.stop_reason, "proven optimal");
  }
}

}  // namespace
}  // namespace mln::solver
