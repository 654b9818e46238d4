// Weight learning: seconds per diagonal-Newton iteration on planted random
// weighted MaxSAT instances (solver/core/instance_gen.hpp) at 10^5 and 10^6
// ground clauses, one giant component, 8 learnable first-order clauses
// (ground clause i belongs to clause i mod 8), the planted assignment as the
// training world, 100 MC-SAT samples per iteration: the learner on the GPU
// (one chain whose SampleSAT rounds run in parallel, the default; and 100
// chains, one sample each per iteration), on all CPU threads (one chain per
// thread) and on one core (one chain).  BM_LearnGpu is skipped
// without a usable GPU.
//
//   MLN_BENCH_LEARN_PASSES  sampling passes timed after the first (default 2)
//
// Counters: s_per_iter (seconds per iteration once the chains run: the
// mean of the timed passes), first_s (the first pass: the chains' start
// state, the GPU's burn-in), passes, threads.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "core/base/instance_gen.hpp"
#include "core/learn/learn.hpp"
#include "core/marginal/mcsat_gpu.hpp"

namespace {

using namespace mln::solver;

const LearnNetwork& instance(int64_t clauses) {
  static std::map<int64_t, std::unique_ptr<LearnNetwork>> cache;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[clauses];
  if (!slot) {
    GeneratedInstance g = generate_planted_maxsat(static_cast<int32_t>(clauses / 4.2), clauses, 1);
    auto ln = std::make_unique<LearnNetwork>();
    ln->num_rules = 8;
    ln->net.num_atoms = g.net.num_atoms;
    ln->net.is_query = g.net.is_query;
    const auto& cs = g.net.clauses;
    for (size_t c = 0; c < cs.size(); ++c) {
      std::vector<int32_t> lits(cs.lits.begin() + cs.offsets[c], cs.lits.begin() + cs.offsets[c + 1]);
      ln->add_clause(lits, 0.0, {{static_cast<int32_t>(c % 8), 1.0}});
    }
    ln->truth = g.planted;
    slot = std::move(ln);
  }
  return *slot;
}

// One learning iteration samples once (FeatureSampler::expect at the new
// weights; the Newton step itself is K = 8 numbers), so an iteration is
// timed as one sampling pass: the first pass (start state, burn-in) apart,
// then MLN_BENCH_LEARN_PASSES passes from where the chains stopped.
void run(benchmark::State& state, int threads, const std::string& device, int gpu_chains = 0) {
  if (device == "gpu") {
    std::string why;
    if (!gpu_mcsat_available(&why)) {
      state.SkipWithError(("no usable GPU: " + why).c_str());
      return;
    }
  }
  const LearnNetwork& ln = instance(state.range(0));
  LearnOptions o;
  const char* ps = std::getenv("MLN_BENCH_LEARN_PASSES");
  const int passes = std::max(1, ps && *ps ? std::atoi(ps) : 2);
  o.samples = 100;
  o.threads = threads;
  o.device = mln::options::choice_named<mln::options::Device>(device);
  o.gpu_chains = gpu_chains;
  if (threads == 1) o.chains_min_atoms = INT32_MAX;
  const std::vector<double> w(8, 0.5);
  using clock = std::chrono::steady_clock;
  double steady = 0, first = 0;
  std::string used;
  for (auto _ : state) {
    const clock::time_point t0 = clock::now();
    FeatureSampler sampler(ln, o);
    sampler.expect(w, 1);
    const clock::time_point t1 = clock::now();
    for (int i = 0; i < passes; ++i) sampler.expect(w, 2 + i);
    const clock::time_point t2 = clock::now();
    first = std::chrono::duration<double>(t1 - t0).count();
    steady = std::chrono::duration<double>(t2 - t1).count() / passes;
    state.SetIterationTime(steady);
    used = sampler.device_used();
  }
  state.counters["s_per_iter"] = steady;
  state.counters["first_s"] = first;
  state.counters["passes"] = passes;
  state.counters["threads"] = threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency());
  state.SetLabel("device " + used);
}

void BM_LearnGpu(benchmark::State& state) { run(state, 0, "gpu"); }
void BM_LearnGpuChains(benchmark::State& state) { run(state, 0, "gpu", 100); }
void BM_LearnCpu1(benchmark::State& state) { run(state, 1, "cpu"); }
void BM_LearnCpuAll(benchmark::State& state) { run(state, 0, "cpu"); }

}  // namespace

BENCHMARK(BM_LearnGpu)->Arg(100000)->Arg(1000000)->Iterations(1)->UseManualTime()->Unit(benchmark::kSecond);
BENCHMARK(BM_LearnGpuChains)->Arg(100000)->Arg(1000000)->Iterations(1)->UseManualTime()->Unit(benchmark::kSecond);
BENCHMARK(BM_LearnCpu1)->Arg(100000)->Arg(1000000)->Iterations(1)->UseManualTime()->Unit(benchmark::kSecond);
BENCHMARK(BM_LearnCpuAll)->Arg(100000)->Arg(1000000)->Iterations(1)->UseManualTime()->Unit(benchmark::kSecond);

BENCHMARK_MAIN();
