// The weighted walk (walk_weighted.hpp, issue #24): on small random and
// structured networks it finds the brute-force optimum at least as often as
// Tuffy's MaxWalkSAT does, on the CPU driver and (where a GPU is present;
// required with MLN_REQUIRE_GPU=1) on the GPU design, which runs the same
// rules as kernels.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "core/map/solve_map.hpp"
#include "core/walk/walksat_gpu.hpp"
#include "mln/relation.hpp"
#include "solver_test_util.hpp"

namespace mln::solver {
namespace {

bool have_gpu_or_fail() {
  bool have = mln::gpu::query_device().device_count > 0 && gpu_available();
  const char* req = std::getenv("MLN_REQUIRE_GPU");
  if (!have && req && std::strcmp(req, "1") == 0) ADD_FAILURE() << "MLN_REQUIRE_GPU=1 but no usable GPU";
  return have;
}

// A small RC-like network (the shape of the class program): p papers with c
// categories each, at most one category per paper (weight 10, as the
// program's sameCat rule), citations that carry a category both ways
// (weight 2), unit priors (one negative), and a few hard labels.  Atoms are
// category(paper, cat) = 1 + paper * c + cat.
mln::Network structured_network(int p, int c, uint64_t seed) {
  Rng rng(derive_seed(seed, 91));
  mln::Network net;
  net.num_atoms = p * c;
  net.is_query.assign(net.num_atoms + 1, 1);
  auto atom = [c](int paper, int cat) { return 1 + paper * c + cat; };
  for (int x = 0; x < p; ++x)
    for (int a = 0; a < c; ++a)
      for (int b = a + 1; b < c; ++b) testing::add_clause(net, {-atom(x, a), -atom(x, b)}, 10);
  for (int x = 0; x < p; ++x) {
    const int cites = 1 + static_cast<int>(rng.below(2));
    for (int k = 0; k < cites; ++k) {
      int y = static_cast<int>(rng.below(p));
      if (y == x) continue;
      for (int a = 0; a < c; ++a) {
        testing::add_clause(net, {atom(y, a), -atom(x, a)}, 2);
        testing::add_clause(net, {atom(x, a), -atom(y, a)}, 2);
      }
    }
  }
  for (int a = 0; a < c; ++a)
    for (int x = 0; x < p; ++x) testing::add_clause(net, {atom(x, a)}, a == c - 1 ? -3 : 0.1 + 0.4 * rng.uniform());
  for (int x = 0; x < p; ++x)
    if (rng.below(4) == 0) testing::add_clause(net, {atom(x, static_cast<int>(rng.below(c)))}, kHardWeight);
  return net;
}

struct Case {
  mln::Network net;
  double opt;
};

std::vector<Case> cases() {
  std::vector<Case> v;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const int n = 6 + static_cast<int>(seed % 11);
    v.push_back({testing::random_mixed_network(n, 2 * n + static_cast<int>(seed % 7), seed), 0});
  }
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const int c = 2 + static_cast<int>(seed % 3);     // 2-4 categories
    const int p = (seed % 2 ? 16 : 12) / c;            // at most 16 atoms
    v.push_back({structured_network(p, c, seed), 0});
  }
  for (Case& k : v) k.opt = testing::brute_force_min_cost(k.net);
  return v;
}

// How many of `cs` the solver with options `o` solves to the optimum.
int optimum_hits(const std::vector<Case>& cs, SolveOptions o, std::string* misses) {
  int hits = 0;
  for (size_t i = 0; i < cs.size(); ++i) {
    o.seed = i + 1;
    SolveResult r = solve_map(cs[i].net, o);
    EXPECT_TRUE(r.warnings.empty()) << r.warnings[0];
    EXPECT_NEAR(r.cost, total_cost(cs[i].net.clauses, r.truth), 1e-6 * (1 + std::abs(r.cost)));
    if (std::abs(r.cost - cs[i].opt) <= 1e-6 * (1 + std::abs(cs[i].opt))) ++hits;
    else if (misses) *misses += " " + std::to_string(i) + ":" + std::to_string(r.cost) + "/" + std::to_string(cs[i].opt);
  }
  return hits;
}

SolveOptions walk_only() {
  SolveOptions o;
  o.solver = mln::options::MapSolver::kWalksat;
  o.exact_max_atoms = 0;     // walk even where enumeration would do
  o.lp_bound_max_clauses = 0;
  o.threads = 1;
  return o;
}

// Within one network of MaxWalkSAT's count: over five sets of seeds (the
// test's and four others), MaxWalkSAT found all 300 optima and the weighted
// walk 296 (297 from coin-flip starts), each set missing at most one.
TEST(WeightedWalk, CpuFindsTheOptimumNearlyAsOftenAsMaxWalkSat) {
  const std::vector<Case> cs = cases();
  SolveOptions tuffy = walk_only();
  tuffy.device = mln::options::Device::kCpu;
  SolveOptions weighted = tuffy;
  weighted.cpu_walk = mln::options::CpuWalk::kWeighted;
  weighted.weighted.threads = 2;
  std::string miss_t, miss_w;
  const int t = optimum_hits(cs, tuffy, &miss_t), w = optimum_hits(cs, weighted, &miss_w);
  EXPECT_GE(w, t - 1) << "weighted misses:" << miss_w << "; MaxWalkSAT misses:" << miss_t;
  EXPECT_GE(w, static_cast<int>(cs.size()) - 1) << "weighted misses:" << miss_w;
}

// The GPU walk (rounds by threads, or with warps while the violated list is
// short) finds the optimum nearly as often as MaxWalkSAT on the CPU: the
// weighted walk's rounds, as on the CPU (CpuFindsTheOptimumNearlyAs...).
void check_gpu_optimum_hits(bool warp_rounds) {
  const std::vector<Case> cs = cases();
  SolveOptions tuffy = walk_only();
  tuffy.device = mln::options::Device::kCpu;
  SolveOptions gpu = walk_only();
  gpu.device = mln::options::Device::kGpu;
  gpu.weighted.warp_rounds = warp_rounds;
  std::string miss_t, miss_g;
  const int t = optimum_hits(cs, tuffy, &miss_t), g = optimum_hits(cs, gpu, &miss_g);
  EXPECT_GE(g, t - 1) << "GPU misses:" << miss_g << "; MaxWalkSAT misses:" << miss_t;
  EXPECT_GE(g, static_cast<int>(cs.size()) - 1) << "GPU misses:" << miss_g;
}

TEST(WeightedWalk, GpuFindsTheOptimumNearlyAsOftenAsTheCpuWalks) {
  if (!have_gpu_or_fail()) return;
  check_gpu_optimum_hits(false);
}

TEST(WeightedWalk, GpuWarpRoundsFindTheOptimumNearlyAsOftenAsTheCpuWalks) {
  if (!have_gpu_or_fail()) return;
  check_gpu_optimum_hits(true);
}

// Many small components side by side (copies of small networks, each with
// its own atoms and its brute-force optimum).
struct Copies {
  mln::Network net;
  std::vector<int64_t> clause_off{0};  // copy j's clauses: [clause_off[j], clause_off[j + 1])
  std::vector<int32_t> atom_off{0};    // copy j's atoms (0-based): [atom_off[j], atom_off[j + 1])
  std::vector<double> opt;
};

Copies many_components(int copies) {
  const std::vector<Case> cs = cases();
  Copies all;
  for (int j = 0; j < copies; ++j) {
    const Case& k = cs[static_cast<size_t>(j * 7) % cs.size()];
    const int32_t base = all.net.num_atoms;
    for (size_t c = 0; c < k.net.clauses.size(); ++c) {
      std::vector<int32_t> lits;
      for (int64_t i = k.net.clauses.offsets[c]; i < k.net.clauses.offsets[c + 1]; ++i) {
        const int32_t l = k.net.clauses.lits[i];
        lits.push_back(l > 0 ? l + base : l - base);
      }
      testing::add_clause(all.net, lits, k.net.clauses.weights[c]);
    }
    all.net.num_atoms += k.net.num_atoms;
    all.clause_off.push_back(static_cast<int64_t>(all.net.clauses.size()));
    all.atom_off.push_back(all.net.num_atoms);
    all.opt.push_back(k.opt);
  }
  all.net.is_query.assign(all.net.num_atoms + 1, 1);
  return all;
}

// How many copies are at their optimum in `truth` (1-based atoms).
int copies_at_optimum(const Copies& all, const std::vector<uint8_t>& truth, std::string* misses) {
  int hits = 0;
  const auto& cs = all.net.clauses;
  for (size_t j = 0; j < all.opt.size(); ++j) {
    double c = 0;
    for (int64_t i = all.clause_off[j]; i < all.clause_off[j + 1]; ++i)
      c += clause_cost(&cs.lits[cs.offsets[i]], cs.offsets[i + 1] - cs.offsets[i], cs.weights[i], truth);
    if (std::abs(c - all.opt[j]) <= 1e-6 * (1 + std::abs(all.opt[j]))) ++hits;
    else *misses += " " + std::to_string(j) + ":" + std::to_string(c) + "/" + std::to_string(all.opt[j]);
  }
  return hits;
}

// One weighted walk over independent parts keeps each part's own best: on
// 40 small networks walked as one instance the parts end at their optimum
// as often as the networks walked one by one do (at most one miss).  A
// part's best following the whole walk's best instead fails this.
TEST(WeightedWalk, PartsKeepTheirOwnBest) {
  const Copies all = many_components(40);
  WalkInstance inst = build_walk_instance(all.net);
  std::vector<int32_t> part(inst.n, 0);
  for (size_t j = 0; j < all.opt.size(); ++j)
    for (int32_t a = all.atom_off[j]; a < all.atom_off[j + 1]; ++a) part[a] = static_cast<int32_t>(j);
  WalkParams p;
  p.flips_per_try = 100 * inst.n;
  p.seed = 3;
  WeightedOptions wo;
  wo.threads = 2;
  wo.stall_work = 1e18;  // the stall_rounds rule alone
  std::vector<uint8_t> init(inst.n, 0);
  WalkOutcome out = walk_weighted_cpu(inst, init, p, wo, &part);
  std::vector<uint8_t> t(inst.n + 1, 0);
  std::copy(out.best.begin(), out.best.end(), t.begin() + 1);
  std::string misses;
  EXPECT_GE(copies_at_optimum(all, t, &misses), 39) << misses;
  EXPECT_NEAR(out.best_cost, total_cost(all.net.clauses, t), 1e-6 * (1 + out.best_cost));
  std::vector<int32_t> bad(inst.n, -1);
  EXPECT_THROW(walk_weighted_cpu(inst, init, p, wo, &bad), std::invalid_argument);
}

// Device "gpu": small components are walked together on the GPU (one batch),
// each at its optimum as often as alone.
TEST(WeightedWalk, GpuBatchOfSmallComponents) {
  if (!have_gpu_or_fail()) return;
  const Copies all = many_components(40);
  SolveOptions o = walk_only();
  o.device = mln::options::Device::kGpu;
  SolveResult r = solve_map(all.net, o);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings[0];
  EXPECT_EQ(r.device_used, "gpu");
  std::string misses;
  EXPECT_GE(copies_at_optimum(all, r.truth, &misses), 39) << misses;
  EXPECT_NEAR(r.cost, total_cost(all.net.clauses, r.truth), 1e-6 * (1 + r.cost));
}

// The header of an instance is the full layout's sizes, scale and longest
// clause, and names its clauses.
TEST(WeightedWalk, HeaderMatchesTheLayout) {
  const mln::Network net = structured_network(200, 5, 4);
  const WalkInstance full = build_walk_instance(net), head = walk_instance_header(net);
  EXPECT_TRUE(head.header_only());
  EXPECT_FALSE(full.header_only());
  EXPECT_EQ(head.n, full.n);
  EXPECT_EQ(head.m, full.m);
  EXPECT_EQ(head.scale, full.scale);
  EXPECT_EQ(head.hard_fixed, full.hard_fixed);
  EXPECT_EQ(head.max_clause_len, full.max_clause_len);
  EXPECT_EQ(head.source, &net.clauses);
}

// The GPU lays a header-only instance out in device memory element for
// element as the host does (each atom's occurrences in clause order), and
// the walk on it finds the optimum as the host layout's does (device
// "gpu": solve_map walks every piece from the device layout).
TEST(WeightedWalk, GpuLayoutEqualsTheHostLayout) {
  if (!have_gpu_or_fail()) return;
  for (int k = 0; k < 3; ++k) {
    const mln::Network net = k == 0   ? structured_network(300, 6, 5)
                             : k == 1 ? testing::random_mixed_network(5000, 20000, 7)
                                      : testing::random_mixed_network(70000, 300000, 8);
    const WalkInstance host = build_walk_instance(net);
    const WalkInstance dev = gpu_layout(walk_instance_header(net));
    EXPECT_EQ(dev.cl_off, host.cl_off) << k;
    EXPECT_EQ(dev.cl_lit, host.cl_lit) << k;
    EXPECT_EQ(dev.w, host.w) << k;
    EXPECT_EQ(dev.occ_off, host.occ_off) << k;
    EXPECT_EQ(dev.occ, host.occ) << k;
  }
  mln::Network bad;
  bad.num_atoms = 2;
  testing::add_clause(bad, {1, 3}, 1.0);
  EXPECT_THROW(gpu_layout(walk_instance_header(bad)), std::invalid_argument);
}

// A clause with no literal is always violated: it is carried along, never
// proposes, and its weight stays in the cost.
TEST(WeightedWalk, EmptyClauseCostsItsWeight) {
  mln::Network net;
  net.num_atoms = 3;
  testing::add_clause(net, {}, 2.0);
  testing::add_clause(net, {1}, 1.0);
  testing::add_clause(net, {-2}, 1.0);
  testing::add_clause(net, {2, 3}, 0.5);
  WalkInstance inst = build_walk_instance(net);
  WalkParams p;
  p.flips_per_try = 1000;
  WalkOutcome out = walk_weighted_cpu(inst, std::vector<uint8_t>{0, 1, 0}, p, WeightedOptions{});
  EXPECT_NEAR(out.best_cost, 2.0, 1e-9);
  EXPECT_EQ(out.best, (std::vector<uint8_t>{1, 0, 1}));
}

// The CPU driver with one thread is a function of the seed.
TEST(WeightedWalk, OneThreadIsDeterministic) {
  mln::Network net = structured_network(40, 4, 3);
  SolveOptions o = walk_only();
  o.device = mln::options::Device::kCpu;
  o.cpu_walk = mln::options::CpuWalk::kWeighted;
  o.weighted.threads = 1;
  SolveResult a = solve_map(net, o), b = solve_map(net, o);
  EXPECT_EQ(a.truth, b.truth);
  EXPECT_EQ(a.cost, b.cost);
}

// The search stops on the timeout and keeps a valid best state.
TEST(WeightedWalk, StopsOnTimeout) {
  mln::Network net = testing::random_mixed_network(20000, 60000, 5);
  SolveOptions o = walk_only();
  o.device = mln::options::Device::kCpu;
  o.cpu_walk = mln::options::CpuWalk::kWeighted;
  o.weighted.stall_rounds = 1000000000;
  o.max_flips = 1000000000;
  o.timeout_s = 0.3;
  const auto t0 = std::chrono::steady_clock::now();
  SolveResult r = solve_map(net, o);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 5.0);
  EXPECT_NEAR(r.cost, total_cost(net.clauses, r.truth), 1e-6 * (1 + r.cost));
}

}  // namespace
}  // namespace mln::solver
