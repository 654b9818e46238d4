// The forward sampler on hand-built ground CP-theories, on each backend
// (the CUDA instance skips without a device): estimates against exact
// values, evidence, strata, partial blocks, and the CUDA sampler drawing
// exactly the CPU sampler's samples for the same seed.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "gpu_test_util.hpp"
#include "core/problog/forward_sampler.hpp"

// The backends' parameters come from the engine's test helpers.
namespace mln::gpu::testing {
namespace {

using namespace mln::problog;

// Suzy and Billy (the seed's example 1): atoms throws(suzy) 0, throws(billy)
// 1, broken 2; P(broken) = 1 - (1 - 0.5 * 0.8) * (1 - 0.6) = 0.76.
CpProgram suzy_billy() {
  CpProgram p;
  p.num_atoms = 3;
  p.add_rule({}, {}, {0}, {0.5});
  p.add_rule({}, {}, {1}, {1.0});
  p.add_rule({0}, {}, {2}, {0.8});
  p.add_rule({1}, {}, {2}, {0.6});
  p.queries = {2, 0};
  return p;
}

// Stratum 0: 0.3::a. 0.6::b.  Stratum 1: 0.2::c; 0.5::d :- a, \+b.
// P(a, not b) = 0.12: P(c) = 0.024, P(d) = 0.06; evidence d = false:
// P(c | not d) = 0.024 / 0.94, P(a | not d) = (0.3 - 0.06) / 0.94.
CpProgram negation_ad(bool evidence) {
  CpProgram p;
  p.num_atoms = 4;
  p.add_rule({}, {}, {0}, {0.3});
  p.add_rule({}, {}, {1}, {0.6});
  p.new_stratum();
  p.add_rule({0}, {1}, {2, 3}, {0.2, 0.5});
  p.queries = {2, 3, 0};
  if (evidence) p.evidence = {3}, p.evidence_value = {0};
  return p;
}

// One annotated disjunction of 12 heads (at least kHeadsChosenEach: each
// sample's head drawn on its own, from an alias table), h_k with
// probability (k + 1) / 100 (0.78 in all: no head 0.22), a head of
// probability 0 among them, under 0.7::a; c :- h2.  c :- h9.
// P(h_k) = 0.7 (k + 1) / 100, P(c) = 0.7 (0.03 + 0.10); the 0 head never.
CpProgram many_heads() {
  CpProgram p;
  p.num_atoms = 15;  // a 0, c 1, h_k 2 + k, z 14
  p.add_rule({}, {}, {0}, {0.7});
  std::vector<int32_t> heads;
  std::vector<double> probs;
  for (int k = 0; k < 12; ++k) {
    heads.push_back(2 + k), probs.push_back((k + 1) / 100.0);
    if (k == 5) heads.push_back(14), probs.push_back(0.0);
  }
  p.add_rule({0}, {}, heads, probs);
  p.add_rule({4}, {}, {1}, {1.0});
  p.add_rule({11}, {}, {1}, {1.0});
  p.queries = {2, 6, 13, 1, 14};
  return p;
}

// A chain whose rules come before the rules that define their bodies (out
// of firing order): c :- b.  b :- a.  0.6::a.  in one stratum.  Only
// passes until nothing fires give P(c) = 0.6; a single pass, c = false.
CpProgram reversed_chain() {
  CpProgram p;
  p.num_atoms = 3;  // a 0, b 1, c 2
  p.add_rule({1}, {}, {2}, {1.0});
  p.add_rule({0}, {}, {1}, {1.0});
  p.add_rule({}, {}, {0}, {0.6});
  p.queries = {2, 1};
  return p;
}

class ForwardSampler : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::CUDA && !cuda_sampler_available()) {
      if (gpu_required()) FAIL() << "MLN_REQUIRE_GPU=1 but the CUDA sampler has no usable device";
      GTEST_SKIP() << "no CUDA device";
    }
  }
  SampleResult sample(const CpProgram& p, uint64_t n, uint64_t seed = 5) {
    SampleOptions o;
    o.device = GetParam() == Backend::CPU ? "cpu" : "gpu";
    o.samples = n;
    o.seed = seed;
    return forward_sample(p, o);
  }
};

void expect_estimates(const SampleResult& r, const std::vector<double>& exact) {
  ASSERT_EQ(r.true_counts.size(), exact.size());
  for (size_t q = 0; q < exact.size(); ++q) {
    const double est = static_cast<double>(r.true_counts[q]) / static_cast<double>(r.accepted);
    const double se = std::sqrt(exact[q] * (1 - exact[q]) / static_cast<double>(r.accepted));
    EXPECT_NEAR(est, exact[q], 5 * se) << "query " << q;
  }
}

TEST_P(ForwardSampler, Estimates) {
  const SampleResult a = sample(suzy_billy(), 1000003);
  EXPECT_EQ(a.drawn, 1000003u);
  EXPECT_EQ(a.accepted, 1000003u);
  expect_estimates(a, {0.76, 0.5});
  const SampleResult b = sample(negation_ad(false), 1000000);
  expect_estimates(b, {0.024, 0.06, 0.3});
  const SampleResult c = sample(negation_ad(true), 1000000);
  EXPECT_NEAR(static_cast<double>(c.accepted) / 1e6, 0.94, 0.002);
  expect_estimates(c, {0.024 / 0.94, 0.0, 0.24 / 0.94});
}

TEST_P(ForwardSampler, ManyHeadsAndRulesOutOfOrder) {
  const SampleResult a = sample(many_heads(), 1000000);
  expect_estimates(a, {0.007, 0.035, 0.084, 0.7 * 0.13, 0.0});
  EXPECT_EQ(a.true_counts[4], 0u);  // probability 0
  const SampleResult b = sample(reversed_chain(), 200000);
  expect_estimates(b, {0.6, 0.6});
}

TEST_P(ForwardSampler, PartialBlocksAndStoppingRule) {
  for (uint64_t n : {1, 31, 32, 33, 65}) EXPECT_EQ(sample(suzy_billy(), n).drawn, n);
  SampleOptions o;
  o.device = GetParam() == Backend::CPU ? "cpu" : "gpu";
  const SampleResult r = forward_sample(suzy_billy(), o);
  EXPECT_TRUE(r.converged);
  EXPECT_LE(r.drawn, 38416u);  // at most (1.96 / 0.01)^2
  double w = 0;
  EXPECT_TRUE(stopping_rule_holds(r.true_counts, r.accepted, 0.01, &w));
}

// Both backends draw the same samples: counts equal, not just close.
TEST_P(ForwardSampler, SameSamplesAsCpu) {
  if (GetParam() == Backend::CPU) GTEST_SKIP() << "the CUDA instance compares with the CPU";
  SampleOptions o;
  o.samples = 300007;
  o.seed = 9;
  for (const CpProgram& p : {suzy_billy(), negation_ad(true), many_heads(), reversed_chain()}) {
    o.device = "cpu";
    const SampleResult c = forward_sample(p, o);
    o.device = "gpu";
    const SampleResult g = forward_sample(p, o);
    EXPECT_EQ(g.device, "gpu");
    EXPECT_EQ(c.accepted, g.accepted);
    EXPECT_EQ(c.true_counts, g.true_counts);
  }
}

MLN_BACKEND_SUITE(ForwardSampler);

TEST(ForwardSamplerProgram, RefusesBadPrograms) {
  CpProgram p = suzy_billy();
  p.queries = {3};
  EXPECT_THROW(forward_sample(p, SampleOptions{}), std::invalid_argument);
  p = suzy_billy();
  p.evidence = {0};
  EXPECT_THROW(forward_sample(p, SampleOptions{}), std::invalid_argument);  // no value
  p = suzy_billy();  // body offsets 0 0 0 1 2 -> 0 0 1 0 2: the ends still match the arrays
  p.pos_off[2] = 1, p.pos_off[3] = 0;
  EXPECT_THROW(forward_sample(p, SampleOptions{}), std::invalid_argument) << "decreasing offsets";
  SampleOptions o;
  o.delta = 0;
  EXPECT_THROW(forward_sample(suzy_billy(), o), std::invalid_argument);
}

// The batches ask for what the stopping rule checks near 0 and 1 (n lo > 5
// and n (1 - hi) > 5 at the Wilson interval's ends): asking for 5 / p
// samples, they ran up to 178 batches of a few dozen samples each at
// p = 0.001 (seed 2), the rule failing after each.
TEST(ForwardSamplerProgram, FewBatchesNearZeroAndOne) {
  for (double p : {0.001, 0.999}) {
    CpProgram g;
    g.num_atoms = 1;
    g.add_rule({}, {}, {0}, {p});
    g.queries = {0};
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      SampleOptions o;
      o.seed = seed;
      int batches = 0;
      o.progress = [&](const SampleProgress&) { ++batches; };
      const SampleResult r = forward_sample(g, o);
      EXPECT_TRUE(r.converged);
      EXPECT_LE(batches, 10) << "p " << p << ", seed " << seed;
    }
  }
}

TEST(ForwardSamplerProgram, Intervals) {
  double lo, hi;
  wilson_interval(0, 100, &lo, &hi);
  EXPECT_EQ(lo, 0.0);
  EXPECT_NEAR(hi, 0.037, 0.001);
  wilson_interval(50, 100, &lo, &hi);
  EXPECT_NEAR(lo, 0.404, 0.001);
  EXPECT_NEAR(hi, 0.596, 0.001);
  double w;
  EXPECT_TRUE(stopping_rule_holds({19208}, 38416, 0.01, &w));
  EXPECT_FALSE(stopping_rule_holds({19208}, 38415, 0.01, &w));
  EXPECT_FALSE(stopping_rule_holds({2}, 1000, 0.01, &w));  // n p <= 5
}

// A delta whose worst-case count passes 2^64 (~5e-10) drew nothing and
// never returned: it ends at max_samples, unconverged.
TEST(ForwardSamplerProgram, ATinyDeltaEndsAtMaxSamples) {
  CpProgram g;
  g.num_atoms = 1;
  g.add_rule({}, {}, {0}, {0.5});
  g.queries = {0};
  for (double delta : {1e-10, 1e-12, 1e-300}) {
    SampleOptions o;
    o.delta = delta;
    o.max_samples = 5000;
    const SampleResult r = forward_sample(g, o);
    EXPECT_EQ(r.drawn, 5000u) << delta;
    EXPECT_FALSE(r.converged) << delta;
  }
}

}  // namespace
}  // namespace mln::gpu::testing
