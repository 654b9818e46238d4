// MaxWalkSAT quality: exact optima on small networks, Tuffy's smoke network,
// and the -dontBreak guard.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/map/solve_map.hpp"
#include "core/base/rng.hpp"
#include "solver_test_util.hpp"
#include "core/base/subnetwork.hpp"
#include "core/walk/walksat_cpu.hpp"

namespace mln::solver {
namespace {

using testing::add_clause;

TEST(SolverWalkSat, FindsExactOptimumOnSmallRandomNetworks) {
  int checked = 0;
  for (uint64_t seed = 1; seed <= 120; ++seed) {
    int n = 4 + static_cast<int>(seed % 11);  // 4..14 atoms
    mln::Network net = testing::random_mixed_network(n, 2 * n + static_cast<int>(seed % 7), seed);
    double opt = testing::brute_force_min_cost(net);
    SolveOptions o;
    o.seed = seed;
    o.threads = 1;
    o.device = mln::options::Device::kCpu;
    o.max_flips = 20000;
    o.exact_max_atoms = 0;  // walk every component: this test is about WalkSAT
    SolveResult r = solve_map(net, o);
    ASSERT_EQ(r.truth.size(), static_cast<size_t>(n + 1));
    EXPECT_NEAR(r.cost, total_cost(net.clauses, r.truth), 1e-6) << "seed " << seed;
    EXPECT_NEAR(r.cost, opt, 1e-6) << "seed " << seed << " n " << n;
    ++checked;
  }
  EXPECT_EQ(checked, 120);
}

TEST(SolverWalkSat, SmokeNetworkMatchesTuffy) {
  mln::Network net = testing::smoke_network();
  for (uint64_t seed : {1, 2, 3, 42, 101, 102, 103, 142}) {
    SolveOptions o;
    o.seed = seed;
    o.device = mln::options::Device::kCpu;
    o.exact_max_atoms = seed > 100 ? 0 : 12;  // enumeration, then WalkSAT
    SolveResult r = solve_map(net, o);
    EXPECT_EQ(r.components, 4);
    EXPECT_EQ(r.solved_components, 4);
    EXPECT_DOUBLE_EQ(r.cost, 0.0);
    EXPECT_EQ(r.hard_violated, 0);
    for (int a = 1; a <= 6; ++a) EXPECT_EQ(r.truth[a], 1) << "atom " << a << " seed " << seed;
    EXPECT_EQ(r.device_used, "cpu");
  }
}

// Gray-code enumeration finds the brute-force optimum, from any start, and
// visits exactly 2^n - 1 further states.
TEST(SolverExact, EnumerationMatchesBruteForce) {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const int n = 3 + static_cast<int>(seed % 14);  // 3..16 atoms (clauses draw up to 3 distinct atoms)
    mln::Network net = testing::random_mixed_network(n, 3 * n, seed + 500);
    WalkInstance inst = build_walk_instance(net);
    Rng rng(seed);
    std::vector<uint8_t> init(n);
    for (auto& b : init) b = static_cast<uint8_t>(rng.next() >> 63);
    WalkOutcome out = solve_exact_cpu(inst, init);
    EXPECT_EQ(out.flips, (int64_t{1} << n) - 1) << "seed " << seed;
    std::vector<uint8_t> truth(n + 1, 0);
    std::copy(out.best.begin(), out.best.end(), truth.begin() + 1);
    EXPECT_NEAR(total_cost(net.clauses, truth), testing::brute_force_min_cost(net), 1e-6) << "seed " << seed;
  }
}

// solve_exact_tiny gives what solve_map gave a tiny component before it
// existed: the component extracted (its atoms at scattered ids of a larger
// network), its instance built, solve_exact_cpu from the same start; the
// same state (ties included: the weights are small integers, so many
// states tie) and the same cost.
TEST(SolverExact, TinyEnumerationMatchesTheInstancePath) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    Rng rng(seed);
    const int n = 1 + static_cast<int>(seed % kTinyAtoms);
    const int32_t total = 40;
    // The component's atoms: n distinct ids of 1..40, ascending.
    std::vector<int32_t> atoms;
    while (static_cast<int>(atoms.size()) < n) {
      const int32_t a = 1 + static_cast<int32_t>(rng.below(total));
      if (std::find(atoms.begin(), atoms.end(), a) == atoms.end()) atoms.push_back(a);
    }
    std::sort(atoms.begin(), atoms.end());
    mln::Network net;
    net.num_atoms = total;
    const int m = 1 + static_cast<int>(rng.below(3 * n + 4));
    for (int c = 0; c < m; ++c) {
      std::vector<int32_t> lits;
      for (int32_t a : atoms)
        if (rng.below(3) == 0) lits.push_back(rng.below(2) ? a : -a);
      if (lits.empty()) lits.push_back(atoms[rng.below(n)]);
      const int choice = static_cast<int>(rng.below(6));
      const double w = choice == 0 ? 0.0 : choice == 1 ? -1.0 : choice == 2 ? 1e8 : 1.0 + rng.below(3) * 0.5;
      add_clause(net, lits, rng.below(4) == 0 ? -w : w);
    }
    std::vector<int64_t> cls(m);
    for (int c = 0; c < m; ++c) cls[c] = c;
    std::vector<int32_t> local_of(total + 1, 0);
    for (int i = 0; i < n; ++i) local_of[atoms[i]] = i + 1;
    std::vector<uint8_t> init(n);
    uint32_t start = 0;
    for (int i = 0; i < n; ++i) {
      init[i] = static_cast<uint8_t>(rng.below(2));
      start |= static_cast<uint32_t>(init[i]) << i;
    }
    SubNetwork sub = extract_subnetwork(net, atoms, cls.data(), cls.size(), local_of, nullptr);
    const WalkOutcome want = solve_exact_cpu(build_walk_instance(sub.net), init);
    const TinyExact got = solve_exact_tiny(net.clauses, cls.data(), m, local_of, n, start);
    uint32_t want_state = 0;
    for (int i = 0; i < n; ++i) want_state |= static_cast<uint32_t>(want.best[i] != 0) << i;
    EXPECT_EQ(got.best, want_state) << "seed " << seed;
    EXPECT_EQ(got.best_cost, want.best_cost) << "seed " << seed;
    EXPECT_EQ(got.flips, want.flips) << "seed " << seed;
  }
}

// solve_map uses enumeration up to exact_max_atoms and rejects larger limits.
TEST(SolverExact, SolveMapUsesEnumerationForSmallComponents) {
  mln::Network net = testing::random_mixed_network(14, 40, 9);
  SolveOptions o;
  o.device = mln::options::Device::kCpu;
  o.exact_max_atoms = 14;
  SolveResult r = solve_map(net, o);
  EXPECT_NEAR(r.cost, testing::brute_force_min_cost(net), 1e-6);
  EXPECT_LE(r.flips, int64_t{1} << 14);  // one enumeration, no walk
  o.exact_max_atoms = kExactMaxAtoms + 1;
  EXPECT_THROW(solve_map(net, o), std::invalid_argument);
  o.exact_max_atoms = -1;
  EXPECT_THROW(solve_map(net, o), std::invalid_argument);
}

// A network whose soft clauses pull hard to break a hard clause: each atom
// alone false is cheap, both false violates the hard clause {1, 2}.
mln::Network hard_vs_soft_network() {
  mln::Network net;
  net.num_atoms = 4;
  add_clause(net, {1, 2}, kHardWeight);
  add_clause(net, {-1}, 3.0);
  add_clause(net, {-2}, 3.0);
  add_clause(net, {-1, 3}, 1.0);
  add_clause(net, {-2, 4}, 1.0);
  add_clause(net, {-3, -4}, 2.0);
  net.init_truth = {0, 1, 1, 0, 0};  // start with the hard clause satisfied
  return net;
}

// Number of flips that made a satisfied hard clause violated.
int count_hard_breaks(const mln::Network& net, bool dont_break) {
  WalkInstance inst = build_walk_instance(net);
  WalkParams p;
  p.flips_per_try = 5000;
  p.max_tries = 3;
  p.dont_break = dont_break;
  p.random_step = 0.9;
  std::vector<uint8_t> truth = net.init_truth;
  std::vector<uint8_t> init(truth.begin() + 1, truth.end());
  int breaks = 0;
  auto hard_violations = [&] {
    int v = 0;
    for (size_t c = 0; c < net.clauses.size(); ++c)
      if (net.clauses.weights[c] >= kHardThreshold &&
          clause_cost(&net.clauses.lits[net.clauses.offsets[c]], net.clauses.offsets[c + 1] - net.clauses.offsets[c],
                      net.clauses.weights[c], truth) > 0)
        ++v;
    return v;
  };
  p.on_flip = [&](uint32_t a) {
    int before = hard_violations();
    truth[a + 1] ^= 1;
    if (hard_violations() > before) ++breaks;
  };
  walksat_cpu(inst, init, p);
  return breaks;
}

TEST(SolverWalkSat, DontBreakNeverBreaksASatisfiedHardClause) {
  mln::Network net = hard_vs_soft_network();
  EXPECT_EQ(count_hard_breaks(net, true), 0);
  // Without the guard, random steps do break it now and then (so the check
  // above can fail).
  EXPECT_GT(count_hard_breaks(net, false), 0);
}

// With small weights only, the fixed-point scale is large (2^40) and the
// hard threshold used to overflow int64 (LLONG_MIN): -dontBreak then
// refused every flip and the walk never moved.
TEST(SolverWalkSat, DontBreakWithSmallWeightsStillSearches) {
  mln::Network net;
  net.num_atoms = 3;
  net.is_query.assign(4, 1);
  add_clause(net, {1}, 0.5);
  add_clause(net, {2}, 0.5);
  add_clause(net, {-3}, 0.5);
  WalkInstance inst = build_walk_instance(net);
  EXPECT_GT(inst.hard_fixed, 0);
  WalkParams p;
  p.flips_per_try = 1000;
  p.dont_break = true;
  WalkOutcome out = walksat_cpu(inst, {0, 0, 1}, p);
  EXPECT_EQ(out.best_cost_fixed, 0) << "the walk must reach the optimum (all three clauses satisfied)";
}

}  // namespace
}  // namespace mln::solver
