// Reproducible answers (issue #60): every default stop rule counts flips,
// rounds, iterations or simplex work, never seconds, and threads combine
// their results in a fixed order, so two runs of one job give the same
// answer on a machine however busy it is; a time cap that decides part of an
// answer says so (SolveResult::time_capped).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "core/bound/lp_pdhg.hpp"
#include "core/map/solve_map.hpp"
#include "core/walk/walk_instance.hpp"
#include "core/walk/walk_weighted.hpp"
#include "solver_gpu_case.hpp"
#include "solver_test_util.hpp"

namespace mln::solver {
namespace {

using testing::random_mixed_network;

// One component of 12,000 atoms: the weighted walk on several OpenMP
// threads (solve_map gives pieces under 10,000 atoms one), with its PDHG
// bound beside it (pdhg_min_clauses lowered to reach it at this size) and
// the exact path after it.
const mln::Network& network() {
  static const mln::Network net = random_mixed_network(12000, 30000, 7);
  return net;
}

SolveOptions defaults() {
  SolveOptions o;  // the job's defaults, but for the threads and the PDHG size
  o.threads = 4;
  o.weighted.threads = 4;
  o.pdhg_min_clauses = 1000;
  return o;
}

// Everything of an answer that a rerun must repeat.
void expect_same_answer(const SolveResult& a, const SolveResult& b) {
  EXPECT_EQ(a.truth, b.truth);
  EXPECT_EQ(a.cost, b.cost);
  EXPECT_EQ(a.bound, b.bound);
  EXPECT_EQ(a.flips, b.flips);
  EXPECT_EQ(a.optimal, b.optimal);
  EXPECT_EQ(a.solver_used, b.solver_used);
  EXPECT_EQ(a.stop_reason, b.stop_reason);
  EXPECT_FALSE(a.time_capped);
  EXPECT_FALSE(b.time_capped);
}

// Two default runs with four threads on a moderately sized network give
// byte-identical answers.  Before: the weighted walk drew each violated
// clause's random stream by its place in a list filled by atomic appends,
// whose order the threads' timing decides, and the walk's stall rules,
// the bound beside it and CBC's stall rule read the clock.
TEST(SolverRepro, TwoDefaultRunsGiveTheSameAnswer) {
  const SolveOptions o = defaults();
  const SolveResult a = solve_map(network(), o);
  const SolveResult b = solve_map(network(), o);
  expect_same_answer(a, b);
  EXPECT_GT(a.flips, 0);
  EXPECT_NE(a.solver_used.find("walksat"), std::string::npos);
}

// A run slowed down (its progress callback sleeps, as a loaded machine
// would stall the walking thread) gives the answer of a run at full speed:
// no rule counts time.  Before, the walk's time rules (stall_min_s,
// stall_max_s), the side bound's closing window and CBC's ended the slowed
// run after less work.
TEST(SolverRepro, ASlowedRunGivesTheSameAnswer) {
  const SolveOptions fast = defaults();
  SolveOptions slow = defaults();
  slow.progress_interval_s = 0;
  slow.progress = [](double, int64_t) { std::this_thread::sleep_for(std::chrono::milliseconds(10)); };
  const SolveResult a = solve_map(network(), fast);
  const SolveResult b = solve_map(network(), slow);
  expect_same_answer(a, b);
}

// The weighted walk alone on four threads, twice: the same best state and
// the same flips (the walk's list order changes from run to run; its
// decisions do not).
TEST(SolverRepro, TheWeightedWalkOnThreadsRepeats) {
  const WalkInstance inst = build_walk_instance(network());
  WalkParams p;
  p.flips_per_try = 100 * inst.n;
  p.seed = 5;
  WeightedOptions wo;
  wo.threads = 4;
  const std::vector<uint8_t> init(inst.n, 0);
  const WalkOutcome a = walk_weighted_cpu(inst, init, p, wo);
  const WalkOutcome b = walk_weighted_cpu(inst, init, p, wo);
  EXPECT_EQ(a.best, b.best);
  EXPECT_EQ(a.best_cost_fixed, b.best_cost_fixed);
  EXPECT_EQ(a.flips, b.flips);
}

// A PDHG bound on a thread of its own ends at the same evaluation, with the
// same outcome, whether its target comes at once or only after the thread
// has run to its own end: the outcome is a function of its iterations and
// the target, not of the two threads' timing.
TEST(SolverRepro, ASideBoundEndsWhereItsTargetSaysWhateverTheTiming) {
  const mln::Network& net = network();
  PdhgOptions po;
  po.device = mln::options::Device::kCpu;
  po.threads = 2;
  po.max_iterations = 3000;
  po.rel_gap = 1e-9;
  // A target the bound reaches mid-way: the bound of a solve run to its end,
  // less a little.
  PdhgOutcome full = lp_bound_pdhg(net, po);
  ASSERT_GT(full.iterations, 100);
  const double target = full.bound - 0.05 * std::fabs(full.bound) - 1;
  PdhgOutcome early, late;
  {
    PdhgThread t(net, po, nullptr);
    ASSERT_TRUE(t.started());
    ASSERT_TRUE(t.finish(target, 1000000, early));
  }
  {
    PdhgThread t(net, po, nullptr);
    ASSERT_TRUE(t.started());
    while (!t.done()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_TRUE(t.finish(target, 1000000, late));
  }
  EXPECT_EQ(early.bound, late.bound);
  EXPECT_EQ(early.iterations, late.iterations);
  EXPECT_EQ(early.state, late.state);
  EXPECT_TRUE(early.converged);
  EXPECT_GE(early.bound, target);
  EXPECT_LT(early.iterations, full.iterations);
}

// A tiny timeout decides the answer, and the answer says so.
TEST(SolverRepro, ATinyTimeoutSaysTheCapDecided) {
  SolveOptions o = defaults();
  o.timeout_s = 1e-4;
  const SolveResult r = solve_map(network(), o);
  EXPECT_TRUE(r.time_capped);
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(r.stop_reason, "timeout");
  bool said = false;
  for (const std::string& w : r.warnings) said |= w.find("a time cap (timeout)") != std::string::npos;
  EXPECT_TRUE(said) << "no warning names the time cap";
}

// The same on the GPU (skipped without one): two runs of the default MAP
// with device "gpu" (the walk's kernels, the PDHG bound beside it on the
// device, the exact path after it), and with device "auto" and the
// component large enough for the GPU walk, give the same answer.
class SolverReproGpu : public testing::GpuCase {};

TEST_F(SolverReproGpu, TwoDefaultGpuRunsGiveTheSameAnswer) {
  for (const char* device : {"gpu", "auto"}) {
    SolveOptions o = defaults();
    o.device = mln::options::choice_named<mln::options::Device>(device);
    o.gpu_min_atoms = 1000;
    const SolveResult a = solve_map(network(), o);
    const SolveResult b = solve_map(network(), o);
    EXPECT_NE(a.device_used.find("gpu"), std::string::npos) << device;
    expect_same_answer(a, b);
  }
}

}  // namespace
}  // namespace mln::solver
