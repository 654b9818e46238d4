// MaxWalkSAT throughput and time-to-target on planted random weighted
// MaxSAT instances: one CPU core, all CPU cores (a portfolio of independent
// walks on threads), and the weighted walk on the GPU.
//
//   MLN_BENCH_MAX_CLAUSES  largest instance (default 1e6; sizes 1e5, 1e6, 1e7)
//   MLN_BENCH_TARGET_FRAC  target cost as a fraction of the total weight (default 0.002)
//   MLN_BENCH_FLIPS        step budget per walk (default 20 x clauses)
//
// Counters: flips_per_s (all walks together), seconds_to_target (-1: not
// reached within the budget), best_cost.
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "core/base/instance_gen.hpp"
#include "core/map/solve_map.hpp"
#include "core/base/rng.hpp"
#include "core/walk/walksat_cpu.hpp"
#include "core/walk/walksat_gpu.hpp"

namespace {

using namespace mln::solver;
using Clock = std::chrono::steady_clock;

// Reads a numeric environment variable.
double env_num(const char* name, double dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::atof(v) : dflt;
}

struct Prepared {
  GeneratedInstance gen;
  WalkInstance inst;
  std::vector<uint8_t> init;
  double target = 0;  // in cost units
};

// Builds (once per size) the instance, its search layout and a start state.
const Prepared& prepared(int64_t clauses) {
  static std::map<int64_t, std::unique_ptr<Prepared>> cache;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[clauses];
  if (!slot) {
    slot = std::make_unique<Prepared>();
    slot->gen = generate_planted_maxsat(static_cast<int32_t>(clauses / 4.2), clauses, 1);
    slot->inst = build_walk_instance(slot->gen.net);
    Rng rng(7);
    slot->init.resize(slot->inst.n);
    for (auto& b : slot->init) b = static_cast<uint8_t>(rng.next() >> 63);
    double total = 0;
    for (double w : slot->gen.net.clauses.weights) total += w;
    slot->target = env_num("MLN_BENCH_TARGET_FRAC", 0.002) * total;
  }
  return *slot;
}

bool size_enabled(int64_t clauses) { return clauses <= env_num("MLN_BENCH_MAX_CLAUSES", 1e6); }

int64_t flip_budget(int64_t clauses) { return static_cast<int64_t>(env_num("MLN_BENCH_FLIPS", 20.0 * clauses)); }

// Runs `walks` independent CPU walks on as many threads; returns flips and
// the first time any walk reached the target.
void run_cpu_portfolio(benchmark::State& state, int walks) {
  const int64_t m = state.range(0);
  if (!size_enabled(m)) { state.SkipWithError("above MLN_BENCH_MAX_CLAUSES"); return; }
  const Prepared& P = prepared(m);
  for (auto _ : state) {
    std::atomic<bool> hit{false};
    std::atomic<int64_t> flips{0};
    std::atomic<double> best{1e300};
    double to_target = -1;
    std::mutex mu;
    auto t0 = Clock::now();
    std::vector<std::thread> pool;
    for (int w = 0; w < walks; ++w) {
      pool.emplace_back([&, w] {
        StopToken stop(&hit, 0);
        WalkParams p;
        p.flips_per_try = flip_budget(m);
        p.max_tries = 1;
        p.seed = derive_seed(1, w);
        p.stop = &stop;
        p.on_progress = [&](double b, int64_t) {
          if (b <= P.target && !hit.exchange(true)) {
            std::lock_guard<std::mutex> lock(mu);
            to_target = std::chrono::duration<double>(Clock::now() - t0).count();
          }
        };
        WalkOutcome out = walksat_cpu(P.inst, P.init, p);
        flips += out.flips;
        double cur = best.load();
        while (out.best_cost < cur && !best.compare_exchange_weak(cur, out.best_cost)) {}
        if (out.best_cost <= P.target && !hit.exchange(true)) {
          std::lock_guard<std::mutex> lock(mu);
          to_target = std::chrono::duration<double>(Clock::now() - t0).count();
        }
      });
    }
    for (auto& t : pool) t.join();
    double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    state.SetIterationTime(secs);
    state.counters["flips_per_s"] = flips.load() / secs;
    state.counters["seconds_to_target"] = to_target;
    state.counters["best_cost"] = best.load();
    state.counters["target_cost"] = P.target;
    state.counters["walks"] = walks;
  }
}

void BM_CpuOneCore(benchmark::State& state) { run_cpu_portfolio(state, 1); }

void BM_CpuAllCores(benchmark::State& state) {
  run_cpu_portfolio(state, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

// Runs the GPU walk until the target or the budget.
void BM_GpuWeighted(benchmark::State& state) {
  const int64_t m = state.range(0);
  std::string why;
  if (!gpu_walksat_available(&why)) { state.SkipWithError(("no GPU: " + why).c_str()); return; }
  if (!size_enabled(m)) { state.SkipWithError("above MLN_BENCH_MAX_CLAUSES"); return; }
  const Prepared& P = prepared(m);
  for (auto _ : state) {
    WalkParams p;
    p.flips_per_try = flip_budget(m);
    p.max_tries = 1;
    p.seed = 1;
    GpuWalkOptions g;
    g.target_cost_fixed = static_cast<int64_t>(P.target * P.inst.scale);
    double to_target = -1;
    auto t0 = Clock::now();
    p.on_progress = [&](double b, int64_t) {
      if (b <= P.target && to_target < 0) to_target = std::chrono::duration<double>(Clock::now() - t0).count();
    };
    WalkOutcome out;
    try {
      out = walksat_gpu(P.inst, P.init, p, g);
    } catch (const GpuError& e) {
      state.SkipWithError(e.what());
      return;
    }
    double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    if (out.best_cost <= P.target && to_target < 0) to_target = secs;
    state.SetIterationTime(secs);
    state.counters["flips_per_s"] = out.flips / secs;
    state.counters["seconds_to_target"] = to_target;
    state.counters["best_cost"] = out.best_cost;
    state.counters["target_cost"] = P.target;
  }
}

#define MLN_WALKSAT_SIZES ->Arg(100000)->Arg(1000000)->Arg(10000000)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond)
BENCHMARK(BM_CpuOneCore) MLN_WALKSAT_SIZES;
BENCHMARK(BM_CpuAllCores) MLN_WALKSAT_SIZES;
BENCHMARK(BM_GpuWeighted) MLN_WALKSAT_SIZES;

}  // namespace

BENCHMARK_MAIN();
