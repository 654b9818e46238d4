// MC-SAT sampling throughput on planted random weighted MaxSAT instances
// (solver/core/instance_gen.hpp; 10^5, 10^6, 10^7 clauses, one giant
// component): the GPU sampler (many chains; one chain with parallel
// SampleSAT rounds), the CPU sampler on all cores (one chain per thread) and
// on one core (one chain).
//
//   MLN_BENCH_MAX_CLAUSES  largest instance on the CPU (default 1e6; the GPU
//                          always runs 1e7)
//   MLN_BENCH_CPU_SAMPLES  samples per CPU run at 10^5 clauses (default 64;
//                          scaled down by size, at least 2 per chain)
//   MLN_BENCH_GPU_CHAINS   GPU chains (default 8 per SM, capped by memory)
//
// Counters: samples_per_s (from a cold start: the start state's search
// counts), chains, flips_per_s (SampleSAT steps); the one-chain paths also
// step_samples_per_s, warm: a run of 2a samples against one of a (same seed),
// a / (t(2a) - t(a)), the rate once the chain is running.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "core/base/instance_gen.hpp"
#include "core/marginal/solve_marginal.hpp"
#include "core/marginal/mcsat_gpu.hpp"

namespace {

using namespace mln::solver;

double env_num(const char* name, double dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::atof(v) : dflt;
}

// Builds (once per size) the instance: atoms = clauses / 4.2, as bench_walksat.
const mln::Network& instance(int64_t clauses) {
  static std::map<int64_t, std::unique_ptr<GeneratedInstance>> cache;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[clauses];
  if (!slot)
    slot = std::make_unique<GeneratedInstance>(
        generate_planted_maxsat(static_cast<int32_t>(clauses / 4.2), clauses, 1));
  return slot->net;
}

// Options of every path: the sampler alone on the whole network.
MarginalOptions bench_options(const std::string& device, int threads, int chains) {
  MarginalOptions o;
  o.device = mln::options::choice_named<mln::options::Device>(device);
  o.threads = threads;
  o.chains = chains;
  o.exact_max_atoms = 0;
  o.gpu_min_atoms = 0;
  o.skip_components_without_query = false;
  return o;
}

// Skips the benchmark when a "gpu" run was not sampled on the GPU.
bool skipped_off_gpu(benchmark::State& state, const std::string& device, const MarginalResult& r) {
  if (device != "gpu" || r.device_used == "gpu") return false;
  state.SkipWithError(r.warnings.empty() ? "not sampled on the GPU" : r.warnings[0].c_str());
  return true;
}

void rate_counters(benchmark::State& state, int64_t counted, int64_t flips, double seconds) {
  state.counters["samples_per_s"] = seconds > 0 ? counted / seconds : 0;
  state.counters["flips_per_s"] = seconds > 0 ? flips / seconds : 0;
}

// One timed solve_marginal run per iteration; samples_per_s counts the
// samples of the (one) giant component.
void run(benchmark::State& state, const std::string& device, int threads, int chains, int64_t samples) {
  const mln::Network& net = instance(state.range(0));
  MarginalOptions o = bench_options(device, threads, chains);
  o.samples = static_cast<int>(samples);
  int64_t counted = 0, flips = 0;
  double seconds = 0;
  for (auto _ : state) {
    MarginalResult r = solve_marginal(net, o);
    if (skipped_off_gpu(state, device, r)) return;
    counted += r.samples;
    flips += r.flips;
    seconds += r.seconds;
    state.SetIterationTime(r.seconds);
  }
  rate_counters(state, counted, flips, seconds);
  state.counters["chains"] = chains;
}

// One chain from a cold start, `a` samples and then 2a (same seed): the
// counters of the 2a run, and step_samples_per_s = a / (t(2a) - t(a)).
void run_warm(benchmark::State& state, const std::string& device, int64_t a) {
  const mln::Network& net = instance(state.range(0));
  MarginalOptions o = bench_options(device, 1, 0);
  o.gpu_one_chain_min_clauses = 0;  // device "gpu": the one-chain sampler at every size
  double t1 = 0, t2 = 0;
  int64_t counted = 0, flips = 0;
  for (auto _ : state) {
    o.samples = static_cast<int>(a);
    MarginalResult r1 = solve_marginal(net, o);
    o.samples = static_cast<int>(2 * a);
    MarginalResult r2 = solve_marginal(net, o);
    if (skipped_off_gpu(state, device, r2)) return;
    t1 += r1.seconds;
    t2 += r2.seconds;
    counted += r2.samples;
    flips += r2.flips;
    state.SetIterationTime(r2.seconds);
  }
  rate_counters(state, counted, flips, t2);
  state.counters["step_samples_per_s"] = t2 > t1 ? a / (t2 - t1) : 0;
  state.counters["chains"] = 1;
}

int64_t cpu_samples(int64_t clauses, int chains) {
  const double base = env_num("MLN_BENCH_CPU_SAMPLES", 64);
  return std::max<int64_t>(2 * chains, static_cast<int64_t>(base * 1e5 / static_cast<double>(clauses)));
}

void BM_McsatCpu1(benchmark::State& state) {
  if (state.range(0) > env_num("MLN_BENCH_MAX_CLAUSES", 1e6)) { state.SkipWithError("above MLN_BENCH_MAX_CLAUSES"); return; }
  run(state, "cpu", 1, 1, cpu_samples(state.range(0), 1));
}

// One core, warm: MLN_BENCH_CPU_SAMPLES scaled by size, at least 10 (with
// a = 3 at 10^6 clauses the rate moved 1.87-2.42 samples/s between runs).
void BM_McsatCpu1Warm(benchmark::State& state) {
  if (state.range(0) > env_num("MLN_BENCH_MAX_CLAUSES", 1e6)) { state.SkipWithError("above MLN_BENCH_MAX_CLAUSES"); return; }
  run_warm(state, "cpu", std::max<int64_t>(10, cpu_samples(state.range(0), 1) / 2));
}

// One GPU chain, parallel SampleSAT rounds (MLN_BENCH_GPU_ONE_SAMPLES, default
// 100: the a of run_warm).
void BM_McsatGpuOne(benchmark::State& state) {
  std::string why;
  if (!gpu_mcsat_available(&why)) { state.SkipWithError(("no GPU: " + why).c_str()); return; }
  run_warm(state, "gpu", static_cast<int64_t>(env_num("MLN_BENCH_GPU_ONE_SAMPLES", 100)));
}

void BM_McsatCpuAll(benchmark::State& state) {
  if (state.range(0) > env_num("MLN_BENCH_MAX_CLAUSES", 1e6)) { state.SkipWithError("above MLN_BENCH_MAX_CLAUSES"); return; }
  const int t = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  run(state, "cpu", t, t, cpu_samples(state.range(0), t));
}

void BM_McsatGpu(benchmark::State& state) {
  std::string why;
  if (!gpu_mcsat_available(&why)) { state.SkipWithError(("no GPU: " + why).c_str()); return; }
  // Chains fill the GPU (8 warps per SM) unless memory caps them; two
  // samples each, no burn-in, as the CPU runs.
  const int chains = static_cast<int>(env_num("MLN_BENCH_GPU_CHAINS", 132 * 8));
  run(state, "gpu", 1, chains, 2 * static_cast<int64_t>(chains));
}

}  // namespace

BENCHMARK(BM_McsatCpu1)->Arg(100000)->Arg(1000000)->Arg(10000000)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_McsatCpu1Warm)->Arg(100000)->Arg(1000000)->Arg(10000000)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_McsatGpuOne)->Arg(100000)->Arg(1000000)->Arg(10000000)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_McsatCpuAll)->Arg(100000)->Arg(1000000)->Arg(10000000)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_McsatGpu)->Arg(100000)->Arg(1000000)->Arg(10000000)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
