// A MAP job spread over workers (core/spread.hpp): the plan's parts, the
// exact answer where no part is cut, and the rounds where parts are cut.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/marginal/solve_marginal.hpp"

#include "core/base/components.hpp"
#include "core/map/ilp_map.hpp"
#include "core/base/le_bytes.hpp"
#include "core/spread/part_extract.hpp"
#include "core/spread/part_walk.hpp"
#include "core/base/partition.hpp"
#include "core/spread/spread.hpp"
#include "core/spread/spread_marginal.hpp"
#include "core/base/subnetwork.hpp"
#include "core/walk/walk_weighted.hpp"
#include "core/walk/walksat_gpu.hpp"
#include "solver_test_util.hpp"

namespace mln::solver {
namespace {

using testing::add_clause;
using testing::brute_force_min_cost;
using testing::brute_force_marginals;
using testing::mean_abs_error;
using testing::random_mixed_network;

// `count` random networks of `n` atoms side by side (atom ids shifted), so
// the union has at least that many independent components; the optimum
// is the sum of theirs.  Every k-th one has no query atom.
mln::Network union_of_random(int count, int32_t n, int m, uint64_t seed, int no_query_every, double* optimum) {
  mln::Network all;
  *optimum = 0;
  all.is_query.push_back(0);
  for (int i = 0; i < count; ++i) {
    mln::Network g = random_mixed_network(n, m, seed * 1000 + i);
    const bool query = no_query_every <= 0 || i % no_query_every != 0;
    if (query) *optimum += brute_force_min_cost(g);
    for (size_t c = 0; c < g.clauses.size(); ++c) {
      std::vector<int32_t> lits;
      for (int64_t j = g.clauses.offsets[c]; j < g.clauses.offsets[c + 1]; ++j) {
        const int32_t l = g.clauses.lits[j];
        lits.push_back(l > 0 ? l + all.num_atoms : l - all.num_atoms);
      }
      add_clause(all, lits, g.clauses.weights[c]);
    }
    all.num_atoms += n;
    all.is_query.insert(all.is_query.end(), static_cast<size_t>(n), query ? 1 : 0);
  }
  return all;
}

// A ladder of `n` atoms: each atom tied to the next two by soft clauses
// of mixed sign, some unit evidence, a few hard clauses; one component.
mln::Network ladder(int32_t n, uint64_t seed) {
  Rng rng(derive_seed(seed, 5));
  mln::Network net;
  net.num_atoms = n;
  net.is_query.assign(static_cast<size_t>(n) + 1, 1);
  for (int32_t a = 1; a < n; ++a) {
    for (int32_t b = a + 1; b <= std::min(n, a + 2); ++b) {
      const double w = rng.uniform() < 0.3 ? -(0.2 + rng.uniform()) : 0.2 + 2 * rng.uniform();
      add_clause(net, {(rng.next() >> 63) ? a : -a, (rng.next() >> 63) ? b : -b}, rng.uniform() < 0.03 ? kHardWeight : w);
    }
    if (rng.uniform() < 0.2) add_clause(net, {(rng.next() >> 63) ? a : -a}, 0.5 + rng.uniform());
  }
  return net;
}

SolveOptions seeded(uint64_t seed) {
  SolveOptions o;
  o.seed = seed;
  o.threads = 1;
  o.solver = mln::options::MapSolver::kWalksat;
  o.device = mln::options::Device::kCpu;
  o.random_step = 0.5;  // pinned: no time-driven adaptive tries, so runs repeat exactly
  o.max_flips = 200000;
  return o;
}

TEST(SolverSpread, PlanPutsEverySearchedAtomInOnePart) {
  double opt;
  mln::Network net = union_of_random(30, 8, 14, 3, 5, &opt);
  const Components cc = find_components(net);
  for (int workers : {1, 2, 3, 7}) {
    const SpreadPlan plan = plan_spread(net, workers, seeded(1));
    EXPECT_LE(plan.parts, workers);
    EXPECT_EQ(plan.components, cc.count);
    for (int32_t a = 1; a <= net.num_atoms; ++a) {
      const bool searched = cc.has_query[cc.comp_of_atom[a]] != 0;
      if (searched) {
        EXPECT_GE(plan.part_of[a], 0) << "atom " << a;
        EXPECT_LT(plan.part_of[a], plan.parts);
        // A component stays whole: no part is cut.
        EXPECT_EQ(plan.part_of[a], plan.part_of[cc.atoms[cc.atom_off[cc.comp_of_atom[a]]]]);
      } else {
        EXPECT_EQ(plan.part_of[a], -1) << "atom " << a << " of a component without query atoms";
      }
    }
    for (int p = 0; p < plan.parts; ++p) EXPECT_EQ(plan.cut[p], 0);
  }
  // A component larger than a worker's share is split, and its parts are cut.
  mln::Network big = ladder(3000, 2);
  const SpreadPlan plan = plan_spread(big, 3, seeded(1));
  ASSERT_EQ(plan.parts, 3);
  std::vector<int64_t> sizes(3, 0);
  for (int32_t a = 1; a <= big.num_atoms; ++a) ++sizes[plan.part_of[a]];
  for (int p = 0; p < 3; ++p) {
    EXPECT_EQ(plan.cut[p], 1);
    EXPECT_GT(sizes[p], 800) << "METIS balances the parts";
  }
  // Above the METIS limit, the streaming partitioner splits it.
  const SpreadPlan streamed = plan_spread(big, 3, seeded(1), 1000);
  ASSERT_EQ(streamed.parts, 3);
  EXPECT_EQ(streamed.part_of, [&] {
    std::vector<int32_t> p = partition_atoms_streaming(big, 3);
    p[0] = -1;
    return p;
  }()) << "the ladder is the whole network, so the parts are the partitioner's";
}

TEST(SolverSpread, StreamingPartitionIsBalancedAndKeepsNeighboursTogether) {
  mln::Network net = ladder(6000, 3);
  for (int k : {2, 3, 5}) {
    const std::vector<int32_t> part = partition_atoms_streaming(net, k);
    std::vector<int64_t> size(k, 0);
    for (int32_t a = 1; a <= net.num_atoms; ++a) {
      ASSERT_GE(part[a], 0);
      ASSERT_LT(part[a], k);
      ++size[part[a]];
    }
    for (int p = 0; p < k; ++p) EXPECT_LE(size[p], 1.05 * 6000 / k + 1) << "part " << p;
    int64_t cut = 0;
    for (size_t c = 0; c < net.clauses.size(); ++c) {
      const int64_t lo = net.clauses.offsets[c], hi = net.clauses.offsets[c + 1];
      for (int64_t i = lo + 1; i < hi; ++i) cut += part[std::abs(net.clauses.lits[i])] != part[std::abs(net.clauses.lits[lo])];
    }
    // A ladder streamed in id order: parts are runs of neighbours, so only
    // the clauses at a few run ends are cut (a random split cuts ~(k-1)/k).
    EXPECT_LT(cut, static_cast<int64_t>(net.clauses.size()) / 50) << k << " parts";
  }
}

TEST(SolverSpread, PartIndexListsEachPartsAtomsAndClausesInOrder) {
  mln::Network net = ladder(50000, 9);  // > 65,536 clauses: several chunks
  const SpreadPlan plan = plan_spread(net, 5, seeded(2), 1000);
  const PartIndex idx = index_parts(net, plan);
  ASSERT_EQ(static_cast<int>(idx.members.size()), plan.parts);
  std::vector<std::vector<int32_t>> members(plan.parts);
  std::vector<std::vector<int64_t>> clauses(plan.parts);
  for (int32_t a = 1; a <= net.num_atoms; ++a) members[plan.part_of[a]].push_back(a);
  for (size_t c = 0; c < net.clauses.size(); ++c) {
    std::set<int32_t> ps;
    for (int64_t i = net.clauses.offsets[c]; i < net.clauses.offsets[c + 1]; ++i)
      ps.insert(plan.part_of[std::abs(net.clauses.lits[i])]);
    for (int32_t p : ps) clauses[p].push_back(static_cast<int64_t>(c));
  }
  const std::vector<int64_t> counts = part_clause_counts(net, plan.part_of, plan.parts);
  for (int p = 0; p < plan.parts; ++p) {
    EXPECT_EQ(idx.members[p], members[p]) << "part " << p;
    const std::vector<int64_t> pc = part_clauses(net, plan.part_of, p);
    EXPECT_EQ(pc, clauses[p]) << "part " << p;
    EXPECT_EQ(counts[p], static_cast<int64_t>(clauses[p].size())) << "part " << p;
    const std::vector<int64_t>& kept = idx.clauses(net, plan, p);
    EXPECT_EQ(kept, clauses[p]) << "part " << p;
    EXPECT_EQ(&idx.clauses(net, plan, p), &kept) << "found once, then kept";
  }
}

// A plan's part_of as mln.job_plans keeps it: runs where they are shorter,
// the int4 array otherwise, each read back as it was.
TEST(SolverSpread, PartOfIsStoredAsRunsWhereShorter) {
  std::vector<int32_t> ranges(1000001);
  ranges[0] = -1;
  for (size_t a = 1; a < ranges.size(); ++a) ranges[a] = static_cast<int32_t>(4 * (a - 1) / (ranges.size() - 1));
  const std::string packed = pack_part_of(ranges);
  EXPECT_EQ(packed.size(), 4u + 8u * 5u) << "-1 and four ranges";
  EXPECT_EQ(unpack_part_of(packed.data(), packed.size()), ranges);
  std::vector<int32_t> mixed = {-1, 0, 1, 0, 1, 2, 2, 0};
  const std::string raw = pack_part_of(mixed);
  EXPECT_EQ(raw.size(), 4 * mixed.size()) << "runs would be longer";
  EXPECT_EQ(unpack_part_of(raw.data(), raw.size()), mixed);
  EXPECT_EQ(raw.substr(0, 4), std::string(4, '\xff'));
  EXPECT_TRUE(unpack_part_of(nullptr, 0).empty());
  EXPECT_THROW(unpack_part_of(raw.data(), raw.size() - 1), std::invalid_argument);
  EXPECT_THROW(unpack_part_of(packed.data(), packed.size() - 4), std::invalid_argument);
  std::string zero_run = packed;
  zero_run[8] = zero_run[9] = zero_run[10] = zero_run[11] = 0;  // the first run's count
  EXPECT_THROW(unpack_part_of(zero_run.data(), zero_run.size()), std::invalid_argument);
}

// The little-endian bytes the plan's and the parts' bytea columns keep.
TEST(SolverSpread, LittleEndianBytesReadBackAsWritten) {
  const std::string b = le_bytes(std::vector<int32_t>{-1, 0x01020304});
  ASSERT_EQ(b.size(), 8u);
  EXPECT_EQ(b.substr(0, 4), std::string(4, '\xff'));
  EXPECT_EQ(b.substr(4), std::string("\x04\x03\x02\x01", 4)) << "least significant byte first";
  EXPECT_EQ(read_le<int32_t>(b.data() + 4), 0x01020304);
  const std::vector<double> probs = {0.0, 0.125, 1.0 / 3, -2.5e-300};
  const std::string d = le_bytes(probs);
  ASSERT_EQ(d.size(), 32u);
  for (size_t i = 0; i < probs.size(); ++i) EXPECT_EQ(read_le<double>(d.data() + 8 * i), probs[i]);
  EXPECT_EQ(static_cast<unsigned char>(d[15]), 0x3fu) << "0.125's sign and exponent byte last";
}

// A part's state is a bit per atom in members order: written into the
// whole state at the members' ids, with whether an atom changed.
TEST(SolverSpread, PartStateIsABitPerAtom) {
  const std::vector<int32_t> members = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29};
  std::vector<uint8_t> state = {1, 0, 0, 1, 1, 0, 0, 0, 0, 1};
  const std::string packed = pack_state(state);
  ASSERT_EQ(packed.size(), 2u) << "ten atoms in two bytes";
  EXPECT_EQ(static_cast<unsigned char>(packed[0]), 0x19u) << "least significant bit first";
  EXPECT_EQ(static_cast<unsigned char>(packed[1]), 0x02u);
  std::vector<uint8_t> truth(30, 0);
  EXPECT_TRUE(unpack_state(packed.data(), packed.size(), members, truth));
  for (size_t i = 0; i < members.size(); ++i) EXPECT_EQ(truth[members[i]], state[i]) << "atom " << members[i];
  EXPECT_EQ(std::count(truth.begin(), truth.end(), 1), 4) << "no atom but the members' is written";
  EXPECT_FALSE(unpack_state(packed.data(), packed.size(), members, truth)) << "the same state again changes nothing";
  EXPECT_THROW(unpack_state(packed.data(), 1, members, truth), std::invalid_argument);
  EXPECT_THROW(unpack_state(packed.data(), 3, members, truth), std::invalid_argument);
  // Large enough for the threaded path, and a length not a multiple of 8.
  std::vector<int32_t> many(200003);
  std::vector<uint8_t> big(many.size());
  for (size_t i = 0; i < many.size(); ++i) many[i] = static_cast<int32_t>(2 * i + 1), big[i] = (i * 7919) % 3 == 0;
  const std::string pb = pack_state(big);
  std::vector<uint8_t> whole(2 * many.size() + 1, 0);
  EXPECT_TRUE(unpack_state(pb.data(), pb.size(), many, whole));
  for (size_t i = 0; i < many.size(); ++i) ASSERT_EQ(whole[many[i]], big[i]) << "atom " << many[i];
}

// A kept walk's part, extracted in two passes over the network, is the
// network extract_subnetwork makes from the part's atoms, then the other
// parts' atoms its clauses touch, over part_clauses' list.
TEST(SolverSpread, HeldPartIsTheSubnetworkOfItsAtomsThenTheHeldOnes) {
  mln::Network net = ladder(50000, 9);  // > 65,536 clauses: several chunks
  // Literals out of local order, and a clause over three parts' atoms.
  add_clause(net, {-net.num_atoms, 1, -(net.num_atoms / 2)}, -1.5);
  const SpreadPlan plan = plan_spread(net, 4, seeded(2), 1000);
  const PartIndex idx = index_parts(net, plan);
  for (int p = 0; p < plan.parts; ++p) {
    const HeldPart hp = extract_held_part(net, plan.part_of, p, idx.members[p]);
    const std::vector<int64_t> pc = part_clauses(net, plan.part_of, p);
    std::set<int32_t> held;
    for (int64_t c : pc)
      for (int64_t i = net.clauses.offsets[c]; i < net.clauses.offsets[c + 1]; ++i)
        if (plan.part_of[std::abs(net.clauses.lits[i])] != p) held.insert(std::abs(net.clauses.lits[i]));
    EXPECT_EQ(hp.held, std::vector<int32_t>(held.begin(), held.end())) << "part " << p;
    std::vector<int32_t> atoms = idx.members[p];
    atoms.insert(atoms.end(), held.begin(), held.end());
    const SubNetwork want = extract_subnetwork(net, atoms, pc.data(), pc.size(), nullptr);
    EXPECT_EQ(hp.sub.net.num_atoms, want.net.num_atoms) << "part " << p;
    EXPECT_EQ(hp.sub.global, want.global) << "part " << p;
    EXPECT_EQ(hp.sub.net.clauses.offsets, want.net.clauses.offsets) << "part " << p;
    EXPECT_EQ(hp.sub.net.clauses.lits, want.net.clauses.lits) << "part " << p;
    EXPECT_EQ(hp.sub.net.clauses.weights, want.net.clauses.weights) << "part " << p;
  }
}

TEST(SolverSpread, AutoSpreadsOnlyWhereThePartsShareTheWork) {
  SolveOptions o;
  double opt;
  // Many components of equal size: two balanced parts.
  mln::Network many = union_of_random(40, 9, 16, 4, 0, &opt);
  SpreadPlan plan = plan_spread(many, 2, o, kSpreadMetisMaxAtoms, false);
  EXPECT_TRUE(spread_pays(many, plan, index_parts(many, plan)));
  // One component, not cut: one part.
  mln::Network one = ladder(2000, 1);
  plan = plan_spread(one, 2, o, kSpreadMetisMaxAtoms, false);
  EXPECT_FALSE(spread_pays(one, plan, index_parts(one, plan)));
  // One large component beside small ones: its part holds most of the work.
  mln::Network mixed = ladder(2000, 1);
  for (int i = 0; i < 20; ++i) {
    mixed.num_atoms += 2;
    add_clause(mixed, {mixed.num_atoms - 1, mixed.num_atoms}, 1.0);
  }
  mixed.is_query.assign(static_cast<size_t>(mixed.num_atoms) + 1, 1);
  plan = plan_spread(mixed, 2, o, kSpreadMetisMaxAtoms, false);
  EXPECT_EQ(plan.parts, 2);
  EXPECT_FALSE(spread_pays(mixed, plan, index_parts(mixed, plan)));
  // Cut, it pays.
  plan = plan_spread(mixed, 2, o);
  EXPECT_TRUE(spread_pays(mixed, plan, index_parts(mixed, plan)));
}

TEST(SolverSpread, UncutPartsReachTheExactOptimum) {
  double opt;
  mln::Network net = union_of_random(40, 10, 18, 11, 7, &opt);
  for (int workers : {2, 4}) {
    const SpreadResult r = solve_spread_local(net, seeded(9), workers, 3);
    EXPECT_EQ(r.rounds_run, 1) << "no part is cut: one round";
    EXPECT_NEAR(r.map.cost, opt, 1e-6 * std::max(1.0, opt));
    EXPECT_NEAR(r.map.bound, opt, 1e-6 * std::max(1.0, opt)) << "enumeration proves every component";
    EXPECT_NEAR(spread_totals(net, plan_spread(net, workers, seeded(9)), r.map.truth).cost, r.map.cost, 1e-9);
  }
}

// A part sampled in slices (a giant component on several workers): each
// slice counts its share of the samples with a seed of its own, and the
// merge weights the slices by what they counted.
TEST(SolverSpread, SlicesOfAPartSplitItsSamplesAndMergeByThem) {
  SpreadPlan one;
  one.parts = 1;
  EXPECT_EQ(marginal_slices(one, 4, 100), 4);
  EXPECT_EQ(marginal_slices(one, 4, 2), 2) << "a slice counts one sample or more";
  EXPECT_EQ(marginal_slices(one, 1, 100), 1);
  SpreadPlan three;
  three.parts = 3;
  EXPECT_EQ(marginal_slices(three, 4, 100), 1) << "fewer workers than twice the parts: no slices";
  EXPECT_EQ(marginal_slices(three, 7, 100), 2);

  MarginalOptions o;
  o.seed = 11;
  o.samples = 100;
  std::set<uint64_t> seeds;
  int64_t total = 0;
  for (int k = 0; k < 3; ++k) {
    const MarginalOptions so = part_marginal_options(o, 2, 0, k, 3);
    EXPECT_EQ(so.samples, k == 0 ? 34 : 33) << "slice " << k;
    EXPECT_EQ(so.burn_in, 3) << "a chain's burn-in: a tenth of its samples";
    total += so.samples;
    seeds.insert(so.seed);
  }
  EXPECT_EQ(total, 100);
  EXPECT_EQ(seeds.size(), 3u) << "each slice its own seed";
  EXPECT_EQ(part_marginal_options(o, 2, 0).seed, part_marginal_options(o, 2, 0, 0, 1).seed);
  EXPECT_EQ(seeds.count(part_marginal_options(o, 2, 0).seed), 0u) << "a slice's seed is not the whole part's";
  EXPECT_THROW(part_marginal_options(o, 2, 0, 3, 3), std::invalid_argument);

  // Two slices of a part of atoms 1 and 2, counted 100 and 300 samples.
  mln::Network net;
  net.num_atoms = 2;
  net.clauses.offsets = {0};
  SpreadPlan plan;
  plan.parts = 1;
  plan.slices = 2;
  plan.part_of = {-1, 0, 0};
  plan.cut = {0};
  const PartIndex idx = index_parts(net, plan);
  std::vector<PartMarginal> units(2);
  units[0].prob = {0.2, std::nan("")};  // the second atom's component not reached
  units[0].samples = 100;
  units[0].average_cost = 1.0;
  units[1].prob = {0.5, 0.4};
  units[1].samples = 300;
  units[1].average_cost = 2.0;
  MarginalResult m = merge_marginals(net, plan, idx, units);
  EXPECT_NEAR(m.prob[1], (0.2 * 100 + 0.5 * 300) / 400, 1e-12);
  EXPECT_NEAR(m.prob[2], 0.4, 1e-12) << "a slice without the atom's component does not count for it";
  EXPECT_EQ(m.samples, 400);
  EXPECT_NEAR(m.average_cost, (1.0 * 100 + 2.0 * 300) / 400, 1e-12);
  units[0].samples = units[1].samples = 0;  // enumerated components: no samples, plain mean
  m = merge_marginals(net, plan, idx, units);
  EXPECT_NEAR(m.prob[1], 0.35, 1e-12);
  EXPECT_THROW(merge_marginals(net, plan, idx, std::vector<PartMarginal>(1)), std::invalid_argument);
}

// One network of 12 atoms sampled in 4 slices (no enumeration): close to
// its exact marginals, with the job's samples in all; with enumeration on
// every slice gives the exact ones.
TEST(SolverSpread, AComponentSampledInSlicesMatchesItsExactMarginals) {
  const mln::Network net = random_mixed_network(12, 24, 4242);
  const std::vector<double> exact = brute_force_marginals(net);
  MarginalOptions o;
  o.seed = 3;
  o.threads = 1;
  o.exact_max_atoms = 0;
  o.samples = 8000;
  const MarginalResult r = solve_spread_marginal_local(net, o, 1, 4);
  EXPECT_EQ(r.samples, 8000) << "four slices of 2000";
  EXPECT_LT(mean_abs_error(r.prob, exact), 0.02);
  const MarginalResult one = solve_spread_marginal_local(net, o, 1, 1);
  EXPECT_LT(mean_abs_error(one.prob, exact), 0.02);
  EXPECT_NE(r.prob, one.prob) << "the slices sample with seeds of their own";
  o.exact_max_atoms = 12;
  const MarginalResult e = solve_spread_marginal_local(net, o, 1, 4);
  for (int32_t a = 1; a <= net.num_atoms; ++a) EXPECT_NEAR(e.prob[a], exact[a], 1e-9) << "atom " << a;
  // The one part is every atom: its slices sample the network itself.
  SolveOptions so;
  so.skip_components_without_query = o.skip_components_without_query;
  ASSERT_EQ(index_parts(net, plan_spread(net, 1, so, kSpreadMetisMaxAtoms, false)).members[0].size(),
            static_cast<size_t>(net.num_atoms));
  EXPECT_NEAR(e.average_cost, solve_marginal(net, o).average_cost, 1e-9);
  // With an empty clause (a constant cost) the part is extracted, and the
  // constant counted once.
  mln::Network with_empty = net;
  add_clause(with_empty, {}, 1.5);
  const MarginalResult we = solve_spread_marginal_local(with_empty, o, 1, 4);
  EXPECT_NEAR(we.average_cost, solve_marginal(with_empty, o).average_cost, 1e-9);
  EXPECT_NEAR(we.average_cost, e.average_cost + 1.5, 1e-9);
  for (int32_t a = 1; a <= net.num_atoms; ++a) EXPECT_NEAR(we.prob[a], exact[a], 1e-9) << "atom " << a;
}

TEST(SolverSpread, MarginalPartsAreWholeComponentsWithExactMarginals) {
  // 30 random networks of 9 atoms: enumeration gives each component's
  // exact marginals, so spreading them over parts must give the same.
  double opt;
  mln::Network net = union_of_random(30, 9, 16, 21, 4, &opt);
  std::vector<double> exact(static_cast<size_t>(net.num_atoms) + 1, std::nan(""));
  for (int i = 0; i < 30; ++i) {
    if (i % 4 == 0) continue;  // no query atom: not searched
    mln::Network g = random_mixed_network(9, 16, 21 * 1000 + i);
    const std::vector<double> p = brute_force_marginals(g);
    for (int a = 1; a <= 9; ++a) exact[static_cast<size_t>(i * 9 + a)] = p[a];
  }
  MarginalOptions o;
  o.seed = 5;
  o.threads = 1;
  for (int workers : {1, 3}) {
    const MarginalResult r = solve_spread_marginal_local(net, o, workers);
    ASSERT_EQ(r.prob.size(), exact.size());
    for (size_t a = 1; a < exact.size(); ++a) {
      if (std::isnan(exact[a])) {
        EXPECT_TRUE(std::isnan(r.prob[a])) << "atom " << a << " of a component without query atoms";
      } else {
        EXPECT_NEAR(r.prob[a], exact[a], 1e-9) << "atom " << a << ", " << workers << " parts";
      }
    }
    const MarginalResult whole = solve_marginal(net, o);
    EXPECT_EQ(r.solved_components, whole.solved_components);
    EXPECT_EQ(r.exact_components, whole.exact_components);
    EXPECT_NEAR(r.average_cost, whole.average_cost, 1e-9);
  }
  // Sampled (no enumeration): close to the exact marginals.
  o.exact_max_atoms = 0;
  o.samples = 4000;
  const MarginalResult s = solve_spread_marginal_local(net, o, 3);
  std::vector<double> got, want;
  for (size_t a = 1; a < exact.size(); ++a)
    if (!std::isnan(exact[a])) got.push_back(s.prob[a]), want.push_back(exact[a]);
  got.insert(got.begin(), 0.0);
  want.insert(want.begin(), 0.0);
  EXPECT_LT(mean_abs_error(got, want), 0.02);
  // A plan for marginals never cuts a component.
  SolveOptions so;
  const SpreadPlan cutless = plan_spread(ladder(3000, 2), 3, so, kSpreadMetisMaxAtoms, false);
  EXPECT_EQ(cutless.parts, 1);
  EXPECT_EQ(cutless.cut[0], 0);
}

// The cost of part p's clauses (its own and those it shares) under `truth`.
double part_clauses_cost(const mln::Network& net, const SpreadPlan& plan, int p, const std::vector<uint8_t>& truth) {
  mln::Network only;
  only.num_atoms = net.num_atoms;
  for (int64_t c : part_clauses(net, plan.part_of, p)) {
    std::vector<int32_t> lits(net.clauses.lits.begin() + net.clauses.offsets[c],
                              net.clauses.lits.begin() + net.clauses.offsets[c + 1]);
    add_clause(only, lits, net.clauses.weights[c]);
  }
  return total_cost(only.clauses, truth);
}

// The optimum of `net` over atoms 1..free with atoms free+1.. held at
// held[0..], by enumeration.
double held_optimum(const mln::Network& net, int32_t free, const std::vector<uint8_t>& held) {
  std::vector<int32_t> atoms;
  for (int32_t a = 1; a <= free; ++a) atoms.push_back(a);
  std::vector<uint8_t> fixed(static_cast<size_t>(net.num_atoms) + 1, 0);
  for (size_t i = 0; i < held.size(); ++i) fixed[free + 1 + i] = held[i];
  std::vector<int64_t> all(net.clauses.size());
  for (size_t c = 0; c < all.size(); ++c) all[c] = static_cast<int64_t>(c);
  const SubNetwork sub = extract_subnetwork(net, atoms, all.data(), all.size(), &fixed);
  return brute_force_min_cost(sub.net) + sub.constant_cost;
}

// Whether the GPU tests run: a usable GPU, or a failure with MLN_REQUIRE_GPU=1.
bool gpu_or_fail() {
  std::string why;
  if (gpu_walksat_available(&why)) return true;
  const char* req = std::getenv("MLN_REQUIRE_GPU");
  if (req && std::string(req) == "1") ADD_FAILURE() << "MLN_REQUIRE_GPU=1 but no usable GPU: " << why;
  return false;
}

using SessionMaker = std::unique_ptr<WeightedSession> (*)(const WalkInstance&, const std::vector<uint8_t>&, int64_t,
                                                          const WeightedOptions&);

// 14 atoms, the last 4 held: after each segment the held atoms are as set,
// and the best cost is the optimum over the 10 free atoms with the held
// ones where they are (enumerated), also after the held atoms move and the
// walk goes on with the weights of the segment before.
void held_atoms_stay_and_the_optimum_is_reached(SessionMaker make) {
  constexpr int32_t kFree = 10, kN = 14;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    const mln::Network net = random_mixed_network(kN, 34, seed);
    const WalkInstance inst = build_walk_instance(net);
    Rng rng(derive_seed(seed, 3));
    std::vector<uint8_t> init(kN);
    for (auto& v : init) v = rng.next() >> 63;
    WeightedOptions wo;
    wo.threads = 1;
    auto session = make(inst, init, kFree, wo);
    std::vector<uint8_t> held(init.begin() + kFree, init.end());
    for (int segment = 0; segment < 3; ++segment) {
      if (segment > 0) {
        for (auto& v : held) v = rng.next() >> 63;
        session->hold(held);
      }
      WalkParams p;
      p.flips_per_try = 20000;
      p.max_tries = 1;
      p.seed = seed * 10 + segment;
      const WalkOutcome out = session->walk(p);
      ASSERT_EQ(out.best.size(), static_cast<size_t>(kN));
      EXPECT_EQ(std::vector<uint8_t>(out.best.begin() + kFree, out.best.end()), held)
          << "seed " << seed << ", segment " << segment << ": a held atom moved";
      EXPECT_NEAR(out.best_cost, held_optimum(net, kFree, held), 1e-6)
          << "seed " << seed << ", segment " << segment;
    }
  }
  const mln::Network net = random_mixed_network(kN, 34, 1);
  const WalkInstance inst = build_walk_instance(net);
  EXPECT_THROW(make(inst, std::vector<uint8_t>(kN, 0), kN + 1, WeightedOptions()), std::invalid_argument);
  auto session = make(inst, std::vector<uint8_t>(kN, 0), kFree, WeightedOptions());
  EXPECT_THROW(session->hold(std::vector<uint8_t>(3, 0)), std::invalid_argument) << "4 atoms are held";
}

TEST(SolverSpread, AWeightedSessionNeverMovesItsHeldAtomsAndReachesTheOptimumAroundThem) {
  held_atoms_stay_and_the_optimum_is_reached(&weighted_session_cpu);
}

TEST(SolverSpreadGpu, AWeightedSessionNeverMovesItsHeldAtomsAndReachesTheOptimumAroundThem) {
  if (!gpu_or_fail()) GTEST_SKIP() << "no GPU";
  held_atoms_stay_and_the_optimum_is_reached(&weighted_session_gpu);
}

TEST(SolverSpreadGpu, KeptWalksOnTheGpuReportTheirPartsCost) {
  if (!gpu_or_fail()) GTEST_SKIP() << "no GPU";
  mln::Network net = ladder(4000, 7);
  SolveOptions o = seeded(4);
  o.device = mln::options::Device::kGpu;
  o.max_flips = 0;
  ASSERT_TRUE(part_walk_applies(o));
  const SpreadPlan plan = plan_spread(net, 2, o);
  const PartIndex idx = index_parts(net, plan);
  std::vector<uint8_t> truth = spread_initial_truth(net, plan, o.seed);
  PartWalker w(net, plan, idx, 0, truth, part_options(o, plan, idx, 0, 1, 4, 0));
  EXPECT_TRUE(w.on_gpu());
  const PartOutcome po = w.step(truth, part_options(o, plan, idx, 0, 1, 4, 0));
  EXPECT_EQ(po.device, "gpu");
  for (size_t i = 0; i < po.state.size(); ++i) truth[idx.members[0][i]] = po.state[i];
  EXPECT_NEAR(po.cost, part_clauses_cost(net, plan, 0, truth), 1e-6);
  const SpreadResult a = solve_spread_local(net, o, 2, 4);
  EXPECT_DOUBLE_EQ(a.map.cost, total_cost(net.clauses, a.map.truth));
  const SolveResult whole = solve_map(net, o);
  EXPECT_LT(a.map.cost, whole.cost * 1.25 + 5);
}

SolveOptions weighted_seeded(uint64_t seed) {
  SolveOptions o = seeded(seed);
  o.cpu_walk = mln::options::CpuWalk::kWeighted;
  // Walks end after stall_rounds rounds without a better state (the work
  // floor set out of reach), not by the flip budget: runs repeat exactly.
  o.weighted.stall_work = 1e18;
  o.max_flips = 0;
  return o;
}

TEST(SolverSpread, KeptWalksReportTheirPartsCostAndRepeatExactly) {
  mln::Network net = ladder(4000, 7);
  SolveOptions o = weighted_seeded(4);
  ASSERT_TRUE(part_walk_applies(o));
  const SpreadPlan plan = plan_spread(net, 4, o);
  const PartIndex idx = index_parts(net, plan);
  ASSERT_TRUE(walk_kept(plan, 0, 4, o)) << "kept from round 1";
  EXPECT_FALSE(walk_kept(plan, 0, 1, o)) << "one round: nothing to keep";
  EXPECT_FALSE(walk_kept(plan, 0, 4, seeded(4))) << "Tuffy's CPU walk keeps nothing";
  EXPECT_EQ(default_rounds(o), kKeptRounds);
  EXPECT_EQ(default_rounds(seeded(4)), kSolvedRounds);
  // Kept walks end after the round that follows the first that changed no
  // atom (its full-floor search), whatever that round changed; parts
  // solved afresh end at the first.
  auto ends_at = [&](const SolveOptions& so, const std::vector<bool>& changed) {
    RoundStop stop(plan, 30, so);
    for (size_t i = 0; i < changed.size(); ++i)
      if (stop.ends_after(static_cast<int>(i) + 1, changed[i])) return static_cast<int>(i) + 1;
    return 0;
  };
  EXPECT_EQ(ends_at(o, {false, true, false, true, true}), 4) << "round 1 counts as a change";
  EXPECT_EQ(ends_at(o, {true, true, false, false, true}), 4);
  EXPECT_EQ(ends_at(o, {true, true, true}), 0);
  EXPECT_EQ(ends_at(seeded(4), {true, false, true}), 2);
  EXPECT_EQ(ends_at(seeded(4), {false, true}), 0);
  // A part's step: its cost is its clauses' under its state and the held
  // neighbours, and a second step starts from the first's answer.
  std::vector<uint8_t> truth = spread_initial_truth(net, plan, o.seed);
  PartWalker w(net, plan, idx, 1, truth, part_options(o, plan, idx, 1, 2, 4, 0));
  EXPECT_FALSE(w.on_gpu());
  EXPECT_EQ(w.atoms(), static_cast<int64_t>(idx.members[1].size()));
  EXPECT_GT(w.held(), 0) << "a cut part holds its neighbours' atoms";
  EXPECT_EQ(w.clauses(), static_cast<int64_t>(part_clauses(net, plan.part_of, 1).size()));
  auto part_cost = [&](const std::vector<uint8_t>& t) { return part_clauses_cost(net, plan, 1, t); };
  double before = 0;
  for (int step = 0; step < 2; ++step) {
    const PartOutcome po = w.step(truth, part_options(o, plan, idx, 1, 2 + step, 4, 0));
    ASSERT_EQ(po.state.size(), idx.members[1].size());
    for (size_t i = 0; i < po.state.size(); ++i) truth[idx.members[1][i]] = po.state[i];
    EXPECT_NEAR(po.cost, part_cost(truth), 1e-6) << "step " << step;
    if (step == 1) EXPECT_LE(po.cost, before + 1e-9) << "the second step starts at the first's best";
    before = po.cost;
  }
  // The whole job with kept walks.
  const double start = spread_totals(net, plan, spread_initial_truth(net, plan, o.seed)).cost;
  const SpreadResult a = solve_spread_local(net, o, 4, 4);
  const SpreadResult b = solve_spread_local(net, o, 4, 4);
  EXPECT_EQ(a.map.truth, b.map.truth) << "a seeded spread job is a function of its seed";
  EXPECT_GE(a.rounds_run, 2);
  EXPECT_LT(a.map.cost, 0.5 * start);
  EXPECT_DOUBLE_EQ(a.map.cost, total_cost(net.clauses, a.map.truth)) << "the reported cost is the state's";
  const SolveResult whole = solve_map(net, o);
  EXPECT_LT(a.map.cost, whole.cost * 1.25 + 5);
}

TEST(SolverSpread, CutPartsImproveOnTheStartAndRepeatExactly) {
  mln::Network net = ladder(4000, 7);
  SolveOptions o = seeded(4);
  const SpreadPlan plan = plan_spread(net, 4, o);
  const double start = spread_totals(net, plan, spread_initial_truth(net, plan, o.seed)).cost;
  const SpreadResult a = solve_spread_local(net, o, 4, 4);
  const SpreadResult b = solve_spread_local(net, o, 4, 4);
  EXPECT_EQ(a.map.truth, b.map.truth) << "a seeded spread job is a function of its seed";
  EXPECT_EQ(a.map.cost, b.map.cost);
  EXPECT_GE(a.rounds_run, 2);
  EXPECT_EQ(a.map.partitions, 4);
  EXPECT_LT(a.map.cost, 0.5 * start);
  EXPECT_DOUBLE_EQ(a.map.cost, total_cost(net.clauses, a.map.truth)) << "the reported cost is the state's";
  // Close to one walk over the whole component.
  const SolveResult whole = solve_map(net, o);
  EXPECT_LT(a.map.cost, whole.cost * 1.25 + 5);
  // A cut part's bound does not hold for the job; the whole network's LP
  // bound (PDHG, beside the rounds) does, and never exceeds the optimum.
  if (!ilp_available()) GTEST_SKIP() << "built without COIN-OR CBC: no exact optimum to hold the bound to";
  SolveOptions exact = o;
  exact.solver = mln::options::MapSolver::kIlp;
  exact.ilp_seconds = 60;
  exact.timeout_s = 60;
  const SolveResult opt = solve_map(net, exact);
  ASSERT_TRUE(opt.optimal) << "CBC proves the ladder's optimum";
  EXPECT_GT(a.map.bound, 0.5 * opt.cost) << "the LP bound of the whole network";
  EXPECT_LE(a.map.bound, opt.cost + 1e-6);
  o.pdhg_bound = false;
  EXPECT_EQ(solve_spread_local(net, o, 4, 4).map.bound, 0) << "the parts' bounds alone: every part is cut";
}

}  // namespace
}  // namespace mln::solver
