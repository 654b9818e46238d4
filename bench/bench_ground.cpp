// Grounding time on class and on generated smokers / RC workloads, per
// backend (CPU always; CUDA when a device is present).  Counters: atoms,
// clauses, closure rounds, evidence tuples and seconds per grounding phase
// (mean over iterations).  Sizes 10^4 and 10^5; 10^6 with MLN_BENCH_BIG=1.
// Parsing and make_input are setup, not timed.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "gen/generate.hpp"
#include "ground/grounder.hpp"
#include "lang/program.hpp"

namespace {

using mln::bench::Workload;

// A parsed workload, kept alive for the benchmark's lifetime.
struct Prepared {
  std::unique_ptr<mln::lang::Program> prog;
  mln::ground::GroundInput in;
  size_t tuples = 0;
};

std::shared_ptr<Prepared> prepare(const Workload& w) {
  auto p = std::make_shared<Prepared>();
  p->prog = std::make_unique<mln::lang::Program>(mln::lang::parse_program(w.prog));
  std::vector<mln::lang::EvidenceAtom> ev;
  mln::lang::parse_evidence(*p->prog, w.evidence, [&](const mln::lang::EvidenceAtom& a) { ev.push_back(a); });
  p->in = mln::ground::make_input(*p->prog, mln::lang::parse_queries(*p->prog, w.query), ev);
  p->tuples = ev.size();
  return p;
}

std::string read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Grounds the workload on the backend once per iteration and reports counters.
void run(benchmark::State& state, std::shared_ptr<Prepared> p, bool cuda) {
  std::unique_ptr<mln::gpu::Engine> eng = cuda ? mln::gpu::make_cuda_engine() : mln::gpu::make_cpu_engine();
  std::map<std::string, double> phase;
  mln::ground::GroundOutput g;
  eng->reset_peak_memory();
  for (auto _ : state) {
    g = mln::ground::ground(p->in, *eng);
    for (const auto& ph : g.phases) phase[ph.phase] += ph.seconds;
  }
  double it = static_cast<double>(state.iterations());
  state.counters["atoms"] = static_cast<double>(g.network.num_atoms);
  state.counters["clauses"] = static_cast<double>(g.network.clauses.size());
  state.counters["rounds"] = g.closure_rounds;
  state.counters["tuples"] = static_cast<double>(p->tuples);
  for (const auto& [name, s] : phase) state.counters[name + "_s"] = s / it;
  state.counters["engine_peak_mb"] = static_cast<double>(eng->peak_memory_bytes()) / 1048576.0;
  state.SetLabel(eng->name());
}

void register_all() {
  std::vector<std::pair<std::string, std::function<Workload()>>> loads;
  const char* ds = std::getenv("MLN_DATASETS");
  std::string dir = std::string(ds && *ds ? ds : MLN_EXAMPLES_DIR) + "/class";
  loads.emplace_back("class", [dir] {
    Workload w;
    w.prog = read(dir + "/prog.mln");
    w.evidence = read(dir + "/evidence.db");
    w.query = read(dir + "/query.db");
    return w;
  });
  // MLN_BENCH_GROUND_SIZES="10000 100000 560000" picks the generated sizes
  // (RC at 560,000 papers is about 10^8 ground clauses); sizes above
  // MLN_BENCH_GROUND_CPU_MAX (default 100000) run on the GPU only.
  std::vector<size_t> sizes = {10000, 100000};
  if (const char* s = std::getenv("MLN_BENCH_GROUND_SIZES")) {
    sizes.clear();
    std::istringstream in(s);
    for (size_t n; in >> n;) sizes.push_back(n);
  }
  size_t cpu_max = 100000;
  if (const char* s = std::getenv("MLN_BENCH_GROUND_CPU_MAX")) cpu_max = std::strtoull(s, nullptr, 10);
  std::map<std::string, size_t> size_of;
  for (size_t n : sizes) {
    size_of["smokers/" + std::to_string(n)] = n;
    size_of["rc/" + std::to_string(n)] = n;
    loads.emplace_back("smokers/" + std::to_string(n), [n] { return mln::bench::smokers(n, 1); });
    loads.emplace_back("rc/" + std::to_string(n), [n] { return mln::bench::rc(n, 1); });
  }
  bool gpu = mln::gpu::query_device().device_count > 0;
  for (auto& [name, make] : loads) {
    std::shared_ptr<Prepared> p;
    auto lazy = [p, make]() mutable {
      if (!p) p = prepare(make());
      return p;
    };
    auto shared = std::make_shared<decltype(lazy)>(lazy);
    for (int b = 0; b < (gpu ? 2 : 1); ++b) {
      bool cuda = b == 1;
      if (!cuda && gpu && size_of.count(name) && size_of[name] > cpu_max) continue;
      benchmark::RegisterBenchmark(("ground/" + name + (cuda ? "/cuda" : "/cpu")).c_str(),
                                   [shared, cuda](benchmark::State& st) { run(st, (*shared)(), cuda); })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime()
          ->MinTime(0.5);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
