// MAP and marginals on the components a change touched (issue #62):
// untouched components keep the previous answer exactly, touched ones get
// the exact optimum (enumeration: small components) and marginals within
// sampling error of enumeration; the whole cost is the network's.
#include <gtest/gtest.h>

#include "core/base/components.hpp"
#include "core/base/touched.hpp"
#include "core/map/map_touched.hpp"
#include "core/marginal/marginal_touched.hpp"
#include "solver_test_util.hpp"

namespace mln::solver::testing {
namespace {

// Two random components over atoms 1..8 and 9..16 (each's atoms renumbered).
mln::Network two_components(uint64_t seed) {
  mln::Network a = random_mixed_network(8, 18, seed), b = random_mixed_network(8, 18, seed + 100);
  mln::Network net;
  net.num_atoms = 16;
  net.is_query.assign(17, 1);
  for (const mln::Network* part : {&a, &b}) {
    const int32_t shift = part == &a ? 0 : 8;
    for (size_t c = 0; c < part->clauses.size(); ++c) {
      std::vector<int32_t> l;
      for (int64_t k = part->clauses.offsets[c]; k < part->clauses.offsets[c + 1]; ++k) {
        const int32_t x = part->clauses.lits[k];
        l.push_back(x > 0 ? x + shift : x - shift);
      }
      add_clause(net, l, part->clauses.weights[c]);
    }
  }
  return net;
}

TEST(SolverTouched, UntouchedComponentsKeepTheAnswerAndTouchedOnesReachTheOptimum) {
  for (uint64_t seed : {1, 2, 3, 4}) {
    mln::Network net = two_components(seed);
    Components c = find_components(net);
    std::vector<uint8_t> previous(17, 0);
    for (int a = 1; a <= 16; ++a) previous[a] = (a * 7 + static_cast<int>(seed)) % 3 == 0;
    // Atom 3's component is searched; the other keeps `previous`.
    TouchedResult r = solve_map_touched(net, PreviousAnswer{previous}, {3}, {});
    ASSERT_EQ(r.touched_components, 1);
    for (int a = 1; a <= 16; ++a)
      if (c.comp_of_atom[a] != c.comp_of_atom[3]) EXPECT_EQ(r.whole.truth[a], previous[a]) << "atom " << a;
    EXPECT_NEAR(r.whole.cost, total_cost(net.clauses, r.whole.truth), tol(r.whole.cost));
    // The searched part is at its optimum: the cost of the whole is the
    // optimum there plus the kept part's cost under `previous`.
    std::vector<uint8_t> kept = previous;
    double kept_cost = 0;
    for (size_t k = 0; k < net.clauses.size(); ++k) {
      const int32_t a = std::abs(net.clauses.lits[net.clauses.offsets[k]]);
      if (c.comp_of_atom[a] != c.comp_of_atom[3])
        kept_cost += clause_cost(&net.clauses.lits[net.clauses.offsets[k]],
                                 net.clauses.offsets[k + 1] - net.clauses.offsets[k], net.clauses.weights[k], kept);
    }
    TouchedNetwork t = touched_subnetwork(net, {3}, previous);
    EXPECT_NEAR(r.whole.cost, kept_cost + brute_force_min_cost(t.sub), 1e-6) << "seed " << seed;
    EXPECT_FALSE(r.whole.optimal) << "no previous bound: nothing is proven of the kept part";
    // Nothing touched: the previous answer, unchanged.
    TouchedResult none = solve_map_touched(net, PreviousAnswer{previous}, {}, {});
    EXPECT_EQ(none.touched_components, 0);
    EXPECT_EQ(none.whole.truth, previous);
  }
}

// The bound of the whole after a change (map_touched.hpp): a component's
// clauses reweighted, its atoms touched; the answer's bound is at most the
// new network's enumerated optimum, it is proven exactly when the previous
// answer was (the touched part is enumerated), and a previous answer with a
// gap passes at most that gap on.
TEST(SolverTouched, TheBoundFollowsThePreviousAnswersBound) {
  for (uint64_t seed : {1, 2, 3, 4, 5, 6}) {
    mln::Network before = two_components(seed);
    SolveResult first = solve_map(before, {});
    ASSERT_TRUE(first.optimal);
    mln::Network after = before;
    Components c = find_components(after);
    const int32_t k = c.comp_of_atom[3];
    for (size_t j = 0; j < after.clauses.size(); ++j)
      if (c.comp_of_atom[std::abs(after.clauses.lits[after.clauses.offsets[j]])] == k)
        after.clauses.weights[j] *= seed % 2 ? -0.5 : 1.75;
    std::vector<int32_t> touched;
    for (int a = 1; a <= 16; ++a)
      if (c.comp_of_atom[a] == k) touched.push_back(a);
    const double optimum = brute_force_min_cost(after);
    TouchedResult r = solve_map_touched(after, {first.truth, true, first.cost, first.bound, true}, touched, {});
    EXPECT_NEAR(r.whole.cost, optimum, 1e-6) << "seed " << seed;
    EXPECT_TRUE(r.whole.optimal) << "seed " << seed;
    EXPECT_NEAR(r.whole.bound, optimum, 1e-6) << "seed " << seed;
    EXPECT_EQ(r.whole.proven_components, r.whole.solved_components);
    // A previous answer 3.0 from its bound: the new bound is 3.0 lower,
    // still at most the optimum, and nothing is proven.
    TouchedResult g = solve_map_touched(after, {first.truth, true, first.cost, first.cost - 3.0, false}, touched, {});
    EXPECT_FALSE(g.whole.optimal);
    EXPECT_NEAR(g.whole.bound, optimum - 3.0, 1e-6) << "seed " << seed;
    EXPECT_LE(g.whole.bound, optimum + 1e-9);
  }
}

// Kept components without a query atom are not counted where solve_map
// leaves them unsolved (skip_components_without_query): the whole answer's
// cost is solve_map's on the same state.
TEST(SolverTouched, KeptCostCountsWhatSolveMapCounts) {
  mln::Network net = two_components(7);
  for (int a = 9; a <= 16; ++a) net.is_query[a] = 0;  // the second component is hidden
  add_clause(net, {}, 2.5);                           // a constant clause
  SolveOptions skip;
  skip.skip_components_without_query = true;
  SolveResult first = solve_map(net, skip);
  TouchedResult r = solve_map_touched(net, {first.truth, true, first.cost, first.bound, first.optimal}, {1}, skip);
  EXPECT_NEAR(r.whole.cost, first.cost, 1e-6);
  EXPECT_EQ(r.whole.solved_components, first.solved_components);
  EXPECT_EQ(r.whole.hard_violated, first.hard_violated);
}

TEST(SolverTouched, MarginalsOfTouchedComponentsMatchEnumeration) {
  mln::Network net = two_components(5);
  Components c = find_components(net);
  std::vector<double> previous(17, 0.25);
  TouchedMarginals m = solve_marginal_touched(net, previous, {12}, {});
  const int32_t k = c.comp_of_atom[12];
  TouchedNetwork t = touched_subnetwork(net, {12}, {});
  std::vector<double> exact = brute_force_marginals(t.sub);
  for (size_t i = 1; i < t.global.size(); ++i)
    EXPECT_NEAR(m.prob[t.global[i]], exact[i], 0.05) << "atom " << t.global[i];
  for (int a = 1; a <= 16; ++a)
    if (c.comp_of_atom[a] != k) EXPECT_EQ(m.prob[a], 0.25) << "atom " << a;
}

}  // namespace
}  // namespace mln::solver::testing
