// Weight learning: seconds per diagonal-Newton iteration on planted random
// weighted MaxSAT instances (solver/core/instance_gen.hpp) at 10^5 and 10^6
// ground clauses, one giant component, 8 learnable first-order clauses
// (ground clause i belongs to clause i mod 8), the planted assignment as the
// training world, 100 MC-SAT samples per iteration: the learner on all CPU
// threads (one chain per thread) and on one core (one chain).  The GPU does
// not learn yet (docs/solver.md, "Weight learning").
//
//   MLN_BENCH_LEARN_ITERS  iterations timed per run (default 3)
//
// Counters: s_per_iter (seconds per sampling pass: one per iteration, plus
// one at the initial weights), iterations, threads.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "core/instance_gen.hpp"
#include "core/learn.hpp"

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

void run(benchmark::State& state, int threads) {
  const LearnNetwork& ln = instance(state.range(0));
  LearnOptions o;
  const char* it = std::getenv("MLN_BENCH_LEARN_ITERS");
  o.iterations = it && *it ? std::atoi(it) : 3;
  o.samples = 100;
  o.threads = threads;
  if (threads == 1) o.chains_min_atoms = INT32_MAX;
  double seconds = 0;
  int iterations = 0;
  for (auto _ : state) {
    LearnResult r = learn_weights(ln, o);
    seconds += r.seconds;
    iterations += r.iterations + 1;  // each iteration samples once, plus the initial weights'
    state.SetIterationTime(r.seconds);
  }
  state.counters["s_per_iter"] = iterations > 0 ? seconds / iterations : 0;
  state.counters["iterations"] = iterations;
  state.counters["threads"] = threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency());
}

void BM_LearnCpu1(benchmark::State& state) { run(state, 1); }
void BM_LearnCpuAll(benchmark::State& state) { run(state, 0); }

}  // namespace

BENCHMARK(BM_LearnCpu1)->Arg(100000)->Arg(1000000)->Iterations(1)->UseManualTime()->Unit(benchmark::kSecond);
BENCHMARK(BM_LearnCpuAll)->Arg(100000)->Arg(1000000)->Iterations(1)->UseManualTime()->Unit(benchmark::kSecond);

BENCHMARK_MAIN();
