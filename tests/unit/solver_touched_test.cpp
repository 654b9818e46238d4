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
    TouchedResult r = solve_map_touched(net, previous, {3}, {});
    ASSERT_EQ(r.touched_components, 1);
    for (int a = 1; a <= 16; ++a)
      if (c.comp_of_atom[a] != c.comp_of_atom[3]) EXPECT_EQ(r.truth[a], previous[a]) << "atom " << a;
    EXPECT_NEAR(r.cost, total_cost(net.clauses, r.truth), tol(r.cost));
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
    EXPECT_NEAR(r.cost, kept_cost + brute_force_min_cost(t.sub), 1e-6) << "seed " << seed;
    // Nothing touched: the previous answer, unchanged.
    TouchedResult none = solve_map_touched(net, previous, {}, {});
    EXPECT_EQ(none.touched_components, 0);
    EXPECT_EQ(none.truth, previous);
  }
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
