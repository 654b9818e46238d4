// Components, sub-networks, METIS partitions and Gauss-Seidel.
#include <gtest/gtest.h>

#include <set>

#include "core/components.hpp"
#include "core/instance_gen.hpp"
#include "core/maxwalksat.hpp"
#include "core/partition.hpp"
#include "solver_test_util.hpp"
#include "core/subnetwork.hpp"

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
  EXPECT_EQ(s.net.clauses.lits, (std::vector<int32_t>{2}));
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
  o.device = "cpu";
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
