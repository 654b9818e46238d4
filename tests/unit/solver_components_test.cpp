// Components, sub-networks, METIS partitions and Gauss-Seidel.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>

#include "core/base/components.hpp"
#include "core/base/instance_gen.hpp"
#include "core/map/solve_map.hpp"
#include "core/base/partition.hpp"
#include "core/base/rng.hpp"
#include "solver_test_util.hpp"
#include "core/base/subnetwork.hpp"

namespace mln::solver {
namespace {

using testing::add_clause;

TEST(SolverComponents, KnownGraph) {
  mln::Network net;
  net.num_atoms = 10;
  add_clause(net, {1, -2}, 1.0);
  add_clause(net, {2, 3}, -1.0);
  add_clause(net, {4, 5}, 1.0);
  add_clause(net, {6}, 1.0);       // unit: connects nothing
  add_clause(net, {-7, 8}, 1.0);
  add_clause(net, {8, -9, 5}, 1.0);  // joins {4,5} with {7,8,9}
  add_clause(net, {10}, -2.0);
  net.is_query.assign(11, 0);
  net.is_query[6] = 1;
  Components c = find_components(net);
  ASSERT_EQ(c.count, 4);  // {4,5,7,8,9}, {1,2,3}, {6}, {10}
  auto atoms_of = [&](int k) {
    return std::vector<int32_t>(c.atoms.begin() + c.atom_off[k], c.atoms.begin() + c.atom_off[k + 1]);
  };
  EXPECT_EQ(atoms_of(0), (std::vector<int32_t>{4, 5, 7, 8, 9}));
  EXPECT_EQ(atoms_of(1), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(atoms_of(2), (std::vector<int32_t>{6}));
  EXPECT_EQ(atoms_of(3), (std::vector<int32_t>{10}));
  EXPECT_EQ(c.num_clauses(0), 3);
  EXPECT_EQ(c.num_clauses(1), 2);
  EXPECT_EQ(c.num_clauses(3), 1);
  EXPECT_EQ(c.has_query, (std::vector<uint8_t>{0, 0, 1, 0}));
  for (int k = 0; k < c.count; ++k)
    for (int64_t j = c.clause_off[k]; j < c.clause_off[k + 1]; ++j) {
      int64_t cl = c.clauses[j];
      for (int64_t i = net.clauses.offsets[cl]; i < net.clauses.offsets[cl + 1]; ++i)
        EXPECT_EQ(c.comp_of_atom[std::abs(net.clauses.lits[i])], k);
    }
}

// A network large enough for find_components' threads (>= 100,000
// clauses): one giant component and many small ones, their atoms shuffled
// so that the components interleave, plus empty and unit clauses.  The
// answer must be the serial definition's exactly: components by Tuffy's
// estimate (ties by smallest atom), atoms and clauses ascending.
TEST(SolverComponents, ThreadedMatchesTheSerialDefinitionOnALargeNetwork) {
  Rng rng(77);
  const int32_t n = 120000;
  std::vector<int32_t> perm(n);
  for (int32_t i = 0; i < n; ++i) perm[i] = i + 1;
  for (int32_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[rng.below(static_cast<uint32_t>(i + 1))]);
  mln::Network net;
  net.num_atoms = n;
  // Blocks of consecutive positions: the first 40,000 one block, the rest
  // of 1-40 positions; clauses draw atoms within a block.
  int32_t lo = 0;
  while (lo < n) {
    const int32_t size = lo == 0 ? 40000 : std::min<int32_t>(n - lo, 1 + static_cast<int32_t>(rng.below(40)));
    const int32_t clauses = size == 1 ? 1 : 2 * size + static_cast<int32_t>(rng.below(3));
    for (int32_t c = 0; c < clauses; ++c) {
      const int len = 1 + static_cast<int>(rng.below(3));
      std::vector<int32_t> lits;
      for (int i = 0; i < len; ++i) {
        const int32_t a = perm[lo + static_cast<int32_t>(rng.below(static_cast<uint32_t>(size)))];
        lits.push_back(rng.below(2) ? a : -a);
      }
      add_clause(net, lits, 1.0);
    }
    if (rng.below(50) == 0) add_clause(net, {}, 2.0);
    lo += size;
  }
  ASSERT_GE(net.clauses.size(), 100000u);
  // The serial definition.
  std::vector<int32_t> parent(n + 1);
  for (int32_t i = 0; i <= n; ++i) parent[i] = i;
  std::function<int32_t(int32_t)> find = [&](int32_t x) { return parent[x] == x ? x : parent[x] = find(parent[x]); };
  const auto& cs = net.clauses;
  for (size_t c = 0; c < cs.size(); ++c)
    for (int64_t i = cs.offsets[c] + 1; i < cs.offsets[c + 1]; ++i) {
      int32_t a = find(std::abs(cs.lits[cs.offsets[c]])), b = find(std::abs(cs.lits[i]));
      if (a != b) parent[std::max(a, b)] = std::min(a, b);  // root = smallest atom
    }
  std::vector<int64_t> est(n + 1, 0);
  for (int32_t a = 1; a <= n; ++a) est[find(a)] += 116;
  for (size_t c = 0; c < cs.size(); ++c) {
    const int64_t len = cs.offsets[c + 1] - cs.offsets[c];
    if (len > 0) est[find(std::abs(cs.lits[cs.offsets[c]]))] += 108 + 4 * len;
  }
  std::vector<int32_t> roots;
  for (int32_t a = 1; a <= n; ++a)
    if (find(a) == a) roots.push_back(a);
  std::sort(roots.begin(), roots.end(), [&](int32_t x, int32_t y) { return est[x] != est[y] ? est[x] > est[y] : x < y; });
  std::vector<int32_t> comp(n + 1, -1);
  for (size_t k = 0; k < roots.size(); ++k) comp[roots[k]] = static_cast<int32_t>(k);
  std::vector<std::vector<int32_t>> atoms(roots.size());
  std::vector<std::vector<int64_t>> clauses(roots.size());
  std::vector<int64_t> empty;
  for (int32_t a = 1; a <= n; ++a) atoms[comp[find(a)]].push_back(a);
  for (size_t c = 0; c < cs.size(); ++c) {
    if (cs.offsets[c + 1] == cs.offsets[c]) empty.push_back(static_cast<int64_t>(c));
    else clauses[comp[find(std::abs(cs.lits[cs.offsets[c]]))]].push_back(static_cast<int64_t>(c));
  }

  const Components got = find_components(net);
  ASSERT_EQ(got.count, static_cast<int32_t>(roots.size()));
  EXPECT_EQ(got.empty_clauses, empty);
  for (int32_t k = 0; k < got.count; ++k) {
    ASSERT_EQ(std::vector<int32_t>(got.atoms.begin() + got.atom_off[k], got.atoms.begin() + got.atom_off[k + 1]), atoms[k])
        << "component " << k;
    ASSERT_EQ(std::vector<int64_t>(got.clauses.begin() + got.clause_off[k], got.clauses.begin() + got.clause_off[k + 1]),
              clauses[k])
        << "component " << k;
    for (size_t i = 0; i < atoms[k].size(); ++i) {
      ASSERT_EQ(got.comp_of_atom[atoms[k][i]], k);
      ASSERT_EQ(got.index_in_comp[atoms[k][i]], static_cast<int32_t>(i + 1));
    }
  }
  // Counted only: the same components and counts, no list.
  const Components counted = find_components(net, false);
  EXPECT_TRUE(counted.clauses.empty());
  EXPECT_EQ(counted.clause_off, got.clause_off);
  EXPECT_EQ(counted.comp_of_atom, got.comp_of_atom);
  EXPECT_EQ(counted.atoms, got.atoms);
  EXPECT_EQ(counted.empty_clauses, empty);
}

TEST(SolverComponents, SubNetworkHoldsForeignAtomsFixed) {
  mln::Network net;
  net.num_atoms = 4;
  add_clause(net, {1, 3}, 1.0);    // 3 true -> constant satisfied
  add_clause(net, {2, 4}, 2.0);    // 4 false -> becomes {2}
  add_clause(net, {-1, 3}, -0.5);  // 3 true -> constant cost 0.5
  add_clause(net, {4}, 4.0);       // only foreign, false -> constant cost 4 (when passed)
  std::vector<uint8_t> fixed = {0, 0, 0, 1, 0};
  std::vector<int32_t> local_of = {0, 1, 2, 0, 0};
  std::vector<int64_t> cls = {0, 1, 2, 3};
  SubNetwork s = extract_subnetwork(net, {1, 2}, cls.data(), cls.size(), local_of, &fixed);
  EXPECT_EQ(s.net.num_atoms, 2);
  ASSERT_EQ(s.net.clauses.size(), 1u);
  EXPECT_EQ(s.net.clauses.lits, (mln::HostArray<int32_t>{2}));
  EXPECT_DOUBLE_EQ(s.constant_cost, 4.5);
  // Sub cost + constant equals the parent cost for every local assignment.
  for (int bits = 0; bits < 4; ++bits) {
    std::vector<uint8_t> loc = {0, uint8_t(bits & 1), uint8_t(bits >> 1)};
    std::vector<uint8_t> full = fixed;
    full[1] = loc[1];
    full[2] = loc[2];
    EXPECT_DOUBLE_EQ(total_cost(s.net.clauses, loc) + s.constant_cost, total_cost(net.clauses, full));
  }
}

TEST(SolverComponents, MetisSplitsIntoBalancedParts) {
  GeneratedInstance g = generate_planted_maxsat(3000, 9000, 5);
  std::vector<int32_t> part = partition_atoms(g.net, 4, 1);
  std::vector<int> sizes(4, 0);
  for (int a = 1; a <= 3000; ++a) {
    ASSERT_GE(part[a], 0);
    ASSERT_LT(part[a], 4);
    ++sizes[part[a]];
  }
  for (int s : sizes) {
    EXPECT_GT(s, 600);
    EXPECT_LT(s, 900);
  }
}

TEST(SolverComponents, PartitionedComponentGivesValidAssignment) {
  GeneratedInstance g = generate_planted_maxsat(3000, 10000, 9);
  Components c = find_components(g.net);
  ASSERT_GE(c.num_atoms(0), 2900);  // one giant component
  SolveOptions o;
  o.device = mln::options::Device::kCpu;
  o.partition_max_atoms = 1000;
  o.threads = 2;
  SolveResult r = solve_map(g.net, o);
  EXPECT_EQ(r.partitions, 3);
  ASSERT_EQ(r.truth.size(), 3001u);
  EXPECT_NEAR(r.cost, total_cost(g.net.clauses, r.truth), 1e-6);
  // A coin-flip state violates ~1/6 of the weight; the search must do far better.
  double all_weight = 0;
  for (double w : g.net.clauses.weights) all_weight += w;
  EXPECT_LT(r.cost, 0.01 * all_weight);
}

}  // namespace
}  // namespace mln::solver
