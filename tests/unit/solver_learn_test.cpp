// Weight learning: training worlds drawn exactly (by enumeration, component
// by component) from networks with known weights; diagonal Newton must
// recover the weights (all signs, mean relative error <= 25%) and improve
// the held-out conditional log-likelihood over Tuffy's initial weights, with
// exact expectations and with MC-SAT's.  Also the voted perceptron, fixed
// and flipped clauses, options and cancellation.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>

#include "core/learn/learn.hpp"
#include "core/marginal/mcsat_gpu.hpp"
#include "core/base/rng.hpp"

namespace mln::solver {
namespace {

// A learning network built group by group (each group its own component),
// so that training worlds can be drawn exactly per group.
struct Planted {
  LearnNetwork ln;
  std::vector<double> truth_w;  // the known weights
  std::vector<std::pair<int32_t, int32_t>> groups;  // atom ranges [first, last]
  std::vector<std::pair<size_t, size_t>> group_clauses;

  int32_t atom() { return ++ln.net.num_atoms; }
  void begin_group() {
    groups.push_back({ln.net.num_atoms + 1, 0});
    group_clauses.push_back({ln.net.clauses.size(), 0});
  }
  void end_group() {
    groups.back().second = ln.net.num_atoms;
    group_clauses.back().second = ln.net.clauses.size();
  }
  void clause(std::vector<int32_t> lits, std::vector<std::pair<int32_t, double>> origins, double base = 0) {
    std::sort(lits.begin(), lits.end());
    ln.add_clause(lits, base, origins);
  }

  // A world drawn from P_w exactly: each group's 2^n states enumerated.
  std::vector<uint8_t> draw(const std::vector<double>& w, uint64_t seed) {
    LearnNetwork l = ln;
    l.truth.assign(l.net.num_atoms + 1, 0);
    l.set_weights(w);
    Rng rng(seed);
    std::vector<uint8_t> x(l.net.num_atoms + 1, 0);
    const auto& cs = l.net.clauses;
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      const int32_t a0 = groups[gi].first, n = groups[gi].second - a0 + 1;
      std::vector<double> lw(size_t{1} << n, 0.0);
      for (size_t s = 0; s < lw.size(); ++s) {
        for (int32_t i = 0; i < n; ++i) x[a0 + i] = (s >> i) & 1u;
        for (size_t c = group_clauses[gi].first; c < group_clauses[gi].second; ++c) {
          bool sat = false;
          for (int64_t j = cs.offsets[c]; j < cs.offsets[c + 1]; ++j) {
            const int32_t lit = cs.lits[j];
            sat |= (lit > 0) == (x[lit > 0 ? lit : -lit] != 0);
          }
          if (sat) lw[s] += cs.weights[c];
        }
      }
      const double mx = *std::max_element(lw.begin(), lw.end());
      double z = 0;
      for (double& v : lw) z += (v = std::exp(v - mx));
      double u = rng.uniform() * z;
      size_t s = 0;
      for (; s + 1 < lw.size() && u >= lw[s]; ++s) u -= lw[s];
      for (int32_t i = 0; i < n; ++i) x[a0 + i] = (s >> i) & 1u;
    }
    return x;
  }
};

// Smokers-like: groups of 3 people; Cancer(x) is the query.  Evidence
// folded in: Smokes(x) (coin flip) and Friends(x, y) (p = 0.7).
//   r0  1.5  Smokes(x) => Cancer(x)          ground [C_x] for smokers
//   r1 -1.0  Cancer(x)                       ground [C_x]: merges with r0's
//   r2  0.8  Friends(x,y) ^ Cancer(x) => Cancer(y)
Planted smokers(int groups, uint64_t seed) {
  Planted p;
  p.truth_w = {1.5, -1.0, 0.8};
  p.ln.num_rules = 3;
  Rng rng(seed);
  for (int g = 0; g < groups; ++g) {
    p.begin_group();
    int32_t c[3];
    for (int32_t& a : c) a = p.atom();
    for (int32_t a : c) {
      if (rng.next() >> 63) p.clause({a}, {{0, 1.0}, {1, 1.0}});
      else p.clause({a}, {{1, 1.0}});
    }
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        if (i != j && rng.uniform() < 0.7) p.clause({-c[i], c[j]}, {{2, 1.0}});
    p.end_group();
  }
  return p;
}

// RC-like: groups of 4 papers, two categories, exactly one category per
// paper (hard, not learned); Cat(p, c) is the query.
//   r0  1.2  HasWord(p, a) => Cat(p, 0)      (papers with word a)
//   r1  0.9  HasWord(p, b) => Cat(p, 1)      (papers with word b)
//   r2  1.0  Cites(p, q) ^ Cat(p, c) => Cat(q, c)
Planted rc(int groups, uint64_t seed) {
  Planted p;
  p.truth_w = {1.2, 0.9, 1.0};
  p.ln.num_rules = 3;
  Rng rng(seed);
  for (int g = 0; g < groups; ++g) {
    p.begin_group();
    int32_t cat[4][2];
    for (auto& pc : cat) pc[0] = p.atom(), pc[1] = p.atom();
    for (auto& pc : cat) {
      p.clause({pc[0], pc[1]}, {}, kHardWeight);
      p.clause({-pc[0], -pc[1]}, {}, kHardWeight);
      const double u = rng.uniform();
      if (u < 0.4) p.clause({pc[0]}, {{0, 1.0}});
      else if (u < 0.8) p.clause({pc[1]}, {{1, 1.0}});
    }
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j)
        if (i != j && rng.uniform() < 0.35)
          for (int c = 0; c < 2; ++c) p.clause({-cat[i][c], cat[j][c]}, {{2, 1.0}});
    p.end_group();
  }
  return p;
}

// Negative weights and a flipped unit clause: pairs (A, B) of query atoms.
//   r0 -0.7  A(x) => B(x)
//   r1  0.5  A(x)
//   r2 -0.3  B(x), stored flipped as [!B] with weight -w (coefficient -1),
//            as the grounder stores negative unit clauses
Planted negative(int groups, uint64_t seed) {
  Planted p;
  p.truth_w = {-0.7, 0.5, -0.3};
  p.ln.num_rules = 3;
  (void)seed;
  for (int g = 0; g < groups; ++g) {
    p.begin_group();
    const int32_t a = p.atom(), b = p.atom();
    p.clause({-a, b}, {{0, 1.0}});
    p.clause({a}, {{1, 1.0}});
    p.clause({-b}, {{2, -1.0}});
    p.end_group();
  }
  return p;
}

struct Recovery {
  std::vector<double> learned;
  double mean_rel_error = 0;
  bool signs = true;
  double cll_initial = 0, cll_learned = 0, cll_truth = 0;
};

Recovery recover(Planted p, LearnOptions o, uint64_t seed) {
  p.ln.truth = p.draw(p.truth_w, derive_seed(seed, 1));
  const std::vector<uint8_t> held_out = p.draw(p.truth_w, derive_seed(seed, 2));
  LearnResult r = learn_weights(p.ln, o);
  Recovery out;
  out.learned = r.weights;
  for (size_t k = 0; k < p.truth_w.size(); ++k) {
    out.mean_rel_error += std::fabs(r.weights[k] - p.truth_w[k]) / std::fabs(p.truth_w[k]) / p.truth_w.size();
    out.signs &= (r.weights[k] > 0) == (p.truth_w[k] > 0);
  }
  out.cll_initial = exact_conditional_log_likelihood(p.ln, r.initial_weights, held_out);
  out.cll_learned = exact_conditional_log_likelihood(p.ln, r.weights, held_out);
  out.cll_truth = exact_conditional_log_likelihood(p.ln, p.truth_w, held_out);
  std::cout << "  learned";
  for (double v : r.weights) std::cout << ' ' << v;
  std::cout << " (truth";
  for (double v : p.truth_w) std::cout << ' ' << v;
  std::cout << "), mean relative error " << out.mean_rel_error << ", " << r.iterations << " iterations; held-out CLL "
            << out.cll_initial << " -> " << out.cll_learned << " (true weights " << out.cll_truth << ")\n";
  return out;
}

void expect_recovered(const Recovery& r) {
  EXPECT_TRUE(r.signs);
  EXPECT_LE(r.mean_rel_error, 0.25);
  EXPECT_GT(r.cll_learned, r.cll_initial);
}

LearnOptions exact_opts() {
  LearnOptions o;
  o.iterations = 100;
  o.threads = 2;
  return o;
}

LearnOptions mcsat_opts() {
  LearnOptions o = exact_opts();
  o.exact_max_atoms = 0;  // every component sampled by MC-SAT
  o.samples = 40;
  o.iterations = 40;
  return o;
}

TEST(LearnTest, SmokersExactExpectations) { expect_recovered(recover(smokers(1500, 11), exact_opts(), 21)); }
TEST(LearnTest, RcExactExpectations) { expect_recovered(recover(rc(800, 12), exact_opts(), 22)); }
TEST(LearnTest, NegativeWeightsExactExpectations) { expect_recovered(recover(negative(10000, 13), exact_opts(), 23)); }

TEST(LearnTest, SmokersMcsat) { expect_recovered(recover(smokers(1500, 11), mcsat_opts(), 31)); }
TEST(LearnTest, RcMcsat) { expect_recovered(recover(rc(800, 12), mcsat_opts(), 32)); }
TEST(LearnTest, NegativeWeightsMcsat) { expect_recovered(recover(negative(10000, 13), mcsat_opts(), 33)); }

// The sampled learner against the exact one (expectations by enumeration)
// on the same training and held-out worlds: its held-out conditional
// log-likelihood is within 0.5% of the exact learner's (the issue's
// comparison when Tuffy's own learned weights are not at hand).
TEST(LearnTest, McsatLearnerMatchesExactLearner) {
  struct Case { const char* name; Planted p; uint64_t seed; };
  for (Case c : {Case{"smokers", smokers(1500, 11), 61}, Case{"rc", rc(800, 12), 62},
                 Case{"negative", negative(10000, 13), 63}}) {
    Planted& p = c.p;
    p.ln.truth = p.draw(p.truth_w, derive_seed(c.seed, 1));
    const std::vector<uint8_t> held_out = p.draw(p.truth_w, derive_seed(c.seed, 2));
    const LearnResult exact = learn_weights(p.ln, exact_opts());
    const LearnResult sampled = learn_weights(p.ln, mcsat_opts());
    const double cll_exact = exact_conditional_log_likelihood(p.ln, exact.weights, held_out);
    const double cll_sampled = exact_conditional_log_likelihood(p.ln, sampled.weights, held_out);
    std::cout << "  " << c.name << ": held-out CLL exact learner " << cll_exact << ", MC-SAT learner " << cll_sampled
              << "\n";
    EXPECT_GE(cll_sampled, cll_exact - 0.005 * std::fabs(cll_exact)) << c.name;
  }
}

// Several chains per component (one per thread, splitting the samples).
TEST(LearnTest, SmokersMcsatSeveralChains) {
  LearnOptions o = mcsat_opts();
  o.chains_min_atoms = 2;
  o.samples = 60;
  expect_recovered(recover(smokers(1500, 11), o, 34));
}

// True when the GPU tests must run; fails the test when a GPU is required
// (MLN_REQUIRE_GPU=1) but missing.
bool have_gpu_or_fail() {
  const bool have = gpu_mcsat_available(nullptr);
  const char* req = std::getenv("MLN_REQUIRE_GPU");
  if (!have && req && std::strcmp(req, "1") == 0) ADD_FAILURE() << "MLN_REQUIRE_GPU=1 but no usable GPU";
  return have;
}

// Sampled expectations against exact ones at fixed weights: every
// component sampled (on `device`; on the GPU by many chains, or by one
// chain with parallel rounds), 5 calls averaged, against enumeration.
void check_expectations(const std::string& device, bool one_chain = false) {
  Planted p = negative(150, 7);  // pairs: 3 features, one with coefficient -1
  Planted q = smokers(100, 8);   // groups of 3 with merged unit clauses
  for (Planted* x : {&p, &q}) {
    x->ln.truth.assign(x->ln.net.num_atoms + 1, 0);
    LearnOptions exact;
    exact.device = mln::options::Device::kCpu;
    const FeatureStats want = FeatureSampler(x->ln, exact).expect(x->truth_w, 1);
    ASSERT_EQ(want.samples, 0);  // all exact
    LearnOptions o;
    o.device = mln::options::choice_named<mln::options::Device>(device);
    o.exact_max_atoms = 0;
    o.samples = 1000;
    o.gpu_burn_in = 20;
    o.gpu_one_chain_min_clauses = one_chain ? 0 : INT64_MAX;
    FeatureSampler sampler(x->ln, o);
    const size_t K = want.mean.size();
    std::vector<double> mean(K, 0.0), var(K, 0.0);
    constexpr int kCalls = 5;
    for (int c = 0; c < kCalls; ++c) {
      const FeatureStats got = sampler.expect(x->truth_w, derive_seed(9, c));
      for (size_t k = 0; k < K; ++k) mean[k] += got.mean[k] / kCalls, var[k] += got.cov[k * K + k] / kCalls;
    }
    if (device == "gpu") EXPECT_EQ(sampler.device_used(), "gpu");
    for (size_t k = 0; k < K; ++k) {
      const double sd = std::sqrt(want.cov[k * K + k] / (kCalls * o.samples));
      std::cout << "  " << device << " feature " << k << ": mean " << mean[k] << " (exact " << want.mean[k] << ", sd "
                << sd << "), variance " << var[k] << " (exact " << want.cov[k * K + k] << ")\n";
      // 5 standard errors of independent samples, plus 0.5% for the chains' autocorrelation.
      EXPECT_NEAR(mean[k], want.mean[k], 5 * sd + 0.005 * std::fabs(want.mean[k])) << "feature " << k;
      EXPECT_NEAR(var[k], want.cov[k * K + k], 0.15 * want.cov[k * K + k] + 1e-9) << "feature " << k;
    }
  }
}

TEST(LearnTest, SampledExpectationsMatchExactCpu) { check_expectations("cpu"); }

TEST(LearnTest, SampledExpectationsMatchExactGpu) {
  if (!have_gpu_or_fail()) GTEST_SKIP() << "no usable GPU";
  check_expectations("gpu");
}

TEST(LearnTest, SampledExpectationsMatchExactGpuOneChain) {
  if (!have_gpu_or_fail()) GTEST_SKIP() << "no usable GPU";
  check_expectations("gpu", true);
}

// The learner with the GPU sampler (all components sampled there, as one
// network; many chains, then one chain with parallel rounds): the same
// recovery bounds as on the CPU.
void check_gpu_recovery(bool one_chain) {
  LearnOptions o = mcsat_opts();
  o.device = mln::options::Device::kGpu;
  o.samples = 100;
  o.gpu_one_chain_min_clauses = one_chain ? 0 : INT64_MAX;
  expect_recovered(recover(smokers(1500, 11), o, 51));
  expect_recovered(recover(rc(800, 12), o, 52));
  expect_recovered(recover(negative(10000, 13), o, 53));
}

TEST(LearnTest, GpuSamplerRecoversWeights) {
  if (!have_gpu_or_fail()) GTEST_SKIP() << "no usable GPU";
  check_gpu_recovery(false);
}

TEST(LearnTest, GpuOneChainRecoversWeights) {
  if (!have_gpu_or_fail()) GTEST_SKIP() << "no usable GPU";
  check_gpu_recovery(true);
}

TEST(LearnTest, PerceptronMovesTowardTheTruth) {
  LearnOptions o = exact_opts();
  o.method = mln::options::LearnMethod::kPerceptron;
  o.iterations = 200;
  o.learning_rate = 0.5;
  Recovery r = recover(smokers(1500, 11), o, 41);
  // MAP counts are a crude gradient: ask for the signs and a better fit
  // than the initial weights, not the 25% bound.
  EXPECT_TRUE(r.signs);
  EXPECT_GT(r.cll_learned, r.cll_initial);
}

TEST(LearnTest, FeatureCountsFollowCoefficients) {
  Planted p = negative(2, 1);
  p.ln.truth = {0, 1, 0, 0, 1};  // pair 1: A, !B; pair 2: !A, B
  std::vector<double> n = feature_counts(p.ln, p.ln.truth);
  // r0 (A => B): satisfied in pair 2 only; r1 (A): pair 1; r2: [!B] satisfied
  // in pair 1, coefficient -1.
  EXPECT_DOUBLE_EQ(n[0], 1);
  EXPECT_DOUBLE_EQ(n[1], 1);
  EXPECT_DOUBLE_EQ(n[2], -1);
}

TEST(LearnTest, RejectsBadInput) {
  Planted p = smokers(5, 1);
  p.ln.truth.assign(p.ln.net.num_atoms + 1, 0);
  LearnOptions o = exact_opts();
  o.iterations = 0;
  EXPECT_THROW(learn_weights(p.ln, o), std::invalid_argument);
  o = exact_opts();
  if (!gpu_mcsat_available(nullptr)) {  // device gpu without one: a clear error, not a silent CPU run
    o.device = mln::options::Device::kGpu;
    EXPECT_THROW(learn_weights(p.ln, o), std::runtime_error);
  }
  o = exact_opts();
  p.ln.truth.pop_back();
  EXPECT_THROW(learn_weights(p.ln, o), std::invalid_argument);
  Planted none;  // only hard clauses: nothing to learn
  none.begin_group();
  const int32_t a = none.atom(), b = none.atom();
  none.clause({a, b}, {}, kHardWeight);
  none.end_group();
  none.ln.truth.assign(3, 0);
  EXPECT_THROW(learn_weights(none.ln, exact_opts()), std::invalid_argument);
}

// Diagonal Newton records whether each step was taken and why.  100
// one-atom components, each the unit clause of rule 0, half of them true in
// the training world (the optimum is near w = 0).  From w = -10, where the
// count hardly varies, the Newton step is ~200: with a small trust region
// it overshoots, the estimated objective falls, and the step is taken back
// (gain 0, the weights unchanged: what `pg_mln -learnwt` on class showed
// without a word for 2 iterations).  Tuffy's lambda (100) shortens the step
// enough for it to be taken.
TEST(LearnTest, EachStepSaysWhetherItWasTakenAndWhy) {
  Planted p;
  p.ln.num_rules = 1;
  for (int i = 0; i < 100; ++i) {
    p.begin_group();
    p.clause({p.atom()}, {{0, 1.0}});
    p.end_group();
  }
  p.ln.truth.assign(101, 0);
  for (int a = 1; a <= 50; ++a) p.ln.truth[a] = 1;
  LearnOptions o = exact_opts();
  o.init = mln::options::LearnInit::kProgram;
  o.initial_weights = {-10};
  o.lambda = 1e-3;
  o.iterations = 2;
  LearnResult r = learn_weights(p.ln, o);
  ASSERT_EQ(r.trace.size(), 2u);
  for (const LearnIteration& li : r.trace) {
    EXPECT_FALSE(li.accepted);
    EXPECT_GT(li.predicted, 0);
    EXPECT_LT(li.actual, 0);
    EXPECT_EQ(li.note.rfind("step rejected: the objective fell by ", 0), 0u) << li.note;
    EXPECT_NE(li.note.find("(the step overshot); taken back, lambda x4 to "), std::string::npos) << li.note;
  }
  EXPECT_NE(r.trace[0].note.find("lambda x4 to 0.004: the next step is shorter"), std::string::npos) << r.trace[0].note;
  EXPECT_EQ(r.weights, r.initial_weights);
  EXPECT_EQ(r.average_weights, r.initial_weights);
  EXPECT_EQ(r.trace.back().objective, 0);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].rfind("no step was taken in 2 iterations: the trust region took each back, so the weights "
                                "are the initial ones and the estimated gain is 0 (iteration 2: step rejected: ",
                                0),
            0u)
      << r.warnings[0];

  o.lambda = 100;
  r = learn_weights(p.ln, o);
  ASSERT_EQ(r.trace.size(), 2u);
  EXPECT_TRUE(r.trace[0].accepted);
  EXPECT_EQ(r.trace[0].note.rfind("step taken: the objective rose by ", 0), 0u) << r.trace[0].note;
  EXPECT_NE(r.trace[0].note.find("; lambda halved to 50"), std::string::npos) << r.trace[0].note;
  EXPECT_GT(r.weights[0], -10);
  EXPECT_TRUE(r.warnings.empty());
}

TEST(LearnTest, CancelStopsAndKeepsWeights) {
  Planted p = smokers(300, 3);
  p.ln.truth = p.draw(p.truth_w, 5);
  std::atomic<bool> cancel{false};
  LearnOptions o = mcsat_opts();
  o.cancel = &cancel;
  o.on_iteration = [&](int it, const std::vector<double>&, double) {
    if (it == 2) cancel = true;
  };
  LearnResult r = learn_weights(p.ln, o);
  EXPECT_TRUE(r.cancelled);
  EXPECT_LE(r.iterations, 3);
  EXPECT_EQ(r.weights.size(), 3u);
}

}  // namespace
}  // namespace mln::solver
