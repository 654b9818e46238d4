// The LP relaxation's bound on one grounded network, by Clp and by PDHG
// (issue #40; bench/results/cpu-2core/lp_bound.md):
//
//   mln_lp_bound class|rc|rc-hard N [key=value ...]
//
// class: examples/class (N ignored); rc, rc-hard: bench/gen's generator
// (seed 1) with N papers.  Grounds in memory on the CPU engine (unit
// propagation on, as the extension grounds), then
//   clp=1      lp_relaxation (Clp) with limit clp_s (default 600): bound, seconds;
//   pdhg=1     lp_bound_pdhg on the CPU, `threads` threads, for at most pdhg_s
//              seconds: a trace "pdhg seconds iterations bound primal" every
//              trace_s, and the first time the bound is within 0.5% of the
//              reference (Clp's optimum, or ref=COST);
//   gpu=1      the same on the GPU (default: 1 when a GPU is usable; trace
//              lines "pdhg-gpu"; `threads` evaluate the bound on the host);
//              then a table of both (set-up: to the first evaluation; time
//              to 0.5%; time; iterations; bound; primal; rounded point's cost);
//   walk=1     solve_map, solver walksat (the walk alone), device cpu, `threads`:
//              its cost, for the gap to the PDHG bound;
//   solve=1    solve_map as the worker runs it (solver auto, adaptive noise),
//              device cpu, `threads`; pdhg_bound=0 turns PDHG off, pdhg_min
//              sets pdhg_min_clauses: cost, bound, gap, seconds;
//   solve_gpu=1  the same with device auto (the GPU walk and the GPU PDHG
//              where a GPU is usable).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gen/generate.hpp"
#include "ground/grounder.hpp"
#include "lang/program.hpp"
#include "core/map/ilp_map.hpp"
#include "core/bound/lp_pdhg.hpp"
#include "core/map/solve_map.hpp"

namespace {

std::string read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

double arg(int argc, char** argv, const std::string& key, double dflt) {
  for (int i = 3; i < argc; ++i) {
    const std::string kv = argv[i];
    if (kv.rfind(key + "=", 0) == 0) return std::stod(kv.substr(key.size() + 1));
  }
  return dflt;
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// One PDHG solve on `device`, traced: "pdhg[-gpu] seconds iterations
// bound primal" every trace_s, and the first bound within 0.5% of `ref`.
struct Row {
  std::string device;
  double setup_s = 0, within_s = -1;
  mln::solver::PdhgOutcome out;
};

Row run_pdhg(const mln::Network& net, const std::string& device, int threads, double ref, int argc, char** argv) {
  Row row;
  row.device = device;
  const std::string tag = device == "cpu" ? "pdhg" : "pdhg-" + device;
  mln::solver::PdhgOptions o;
  o.device = mln::options::choice_named<mln::options::Device>(device);
  o.threads = threads;
  o.time_limit_s = arg(argc, argv, "pdhg_s", 60);
  o.rel_gap = arg(argc, argv, "rel_gap", 1e-4);
  o.max_iterations = static_cast<int64_t>(arg(argc, argv, "iters", 1e9));
  const double trace_s = arg(argc, argv, "trace_s", 0.5);
  double next = 0;
  o.progress = [&](const mln::solver::PdhgProgress& p) {
    if (p.iterations == 0) row.setup_s = p.seconds;  // the LP built, laid out and evaluated once
    if (row.within_s < 0 && ref > 0 && p.bound >= ref - 0.005 * ref) {
      row.within_s = p.seconds;
      std::printf("%s within 0.5%% of %.4f at %.3f s, %lld iterations\n", tag.c_str(), ref, p.seconds,
                  static_cast<long long>(p.iterations));
    }
    if (p.seconds < next) return;
    next = p.seconds + trace_s;
    std::printf("%s %8.3f %8lld %14.4f %14.4f\n", tag.c_str(), p.seconds, static_cast<long long>(p.iterations), p.bound,
                p.primal);
    std::fflush(stdout);
  };
  row.out = mln::solver::lp_bound_pdhg(net, o);
  const mln::solver::PdhgOutcome& r = row.out;
  std::printf("%s done device %s bound %.6f primal %.6f rounded %.6f iterations %lld restarts %d seconds %.3f "
              "converged %d\n",
              tag.c_str(), r.device.c_str(), r.bound, r.primal, r.state_cost, static_cast<long long>(r.iterations),
              r.restarts, r.seconds, r.converged);
  if (!r.gpu_error.empty()) std::printf("%s GPU failed, solved on the CPU: %s\n", tag.c_str(), r.gpu_error.c_str());
  if (ref > 0) std::printf("%s gap to ref %.4f: %.4f%%\n", tag.c_str(), ref, 100 * (ref - r.bound) / ref);
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s class|rc|rc-hard N [key=value ...]\n", argv[0]);
    return 2;
  }
  const std::string kind = argv[1];
  const size_t n = std::stoul(argv[2]);
  mln::bench::Workload w;
  if (kind == "class") {
    const std::string d = std::string(MLN_EXAMPLES_DIR) + "/class";
    w.prog = read(d + "/prog.mln");
    w.evidence = read(d + "/evidence.db");
    w.query = read(d + "/query.db");
  } else {
    w = kind == "rc" ? mln::bench::rc(n, 1) : mln::bench::rc_hard(n, 1);
  }
  auto t0 = std::chrono::steady_clock::now();
  mln::lang::Program prog = mln::lang::parse_program(w.prog);
  std::vector<mln::lang::EvidenceAtom> ev;
  mln::lang::parse_evidence(prog, w.evidence, [&](const mln::lang::EvidenceAtom& a) { ev.push_back(a); });
  auto in = mln::ground::make_input(prog, mln::lang::parse_queries(prog, w.query), ev);
  auto eng = mln::gpu::make_cpu_engine();
  const mln::Network net = mln::ground::ground(in, *eng).network;
  std::printf("network %s %zu: %d atoms, %zu clauses, %zu literals (grounded in %.2f s)\n", kind.c_str(), n,
              net.num_atoms, net.clauses.size(), net.clauses.lits.size(), since(t0));
  const int threads = static_cast<int>(arg(argc, argv, "threads", 2));
  double ref = arg(argc, argv, "ref", 0);
  if (arg(argc, argv, "clp", 1) != 0 && mln::solver::ilp_available()) {
    t0 = std::chrono::steady_clock::now();
    const mln::solver::LpOutcome lp = mln::solver::lp_relaxation(net, arg(argc, argv, "clp_s", 600));
    std::printf("clp solved %d bound %.6f seconds %.3f integral %d rounded %.4f\n", lp.solved, lp.bound, since(t0),
                lp.integral, lp.state.empty() ? -1.0 : mln::total_cost(net.clauses, lp.state));
    if (lp.solved && ref == 0) ref = lp.bound;
  }
  const bool have_gpu = mln::solver::gpu_available();
  std::vector<Row> rows;
  if (arg(argc, argv, "pdhg", 1) != 0) rows.push_back(run_pdhg(net, "cpu", threads, ref, argc, argv));
  if (arg(argc, argv, "gpu", have_gpu ? 1 : 0) != 0) rows.push_back(run_pdhg(net, "gpu", threads, ref, argc, argv));
  if (!rows.empty()) {  // the devices side by side
    std::printf("| device | set-up s | within 0.5%% s | done s | iterations | bound | primal | rounded |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const Row& r : rows) {
      char within[32] = "-";
      if (r.within_s >= 0) std::snprintf(within, sizeof within, "%.3f", r.within_s);
      std::printf("| %s | %.3f | %s | %.3f | %lld | %.6f | %.6f | %.6f |\n",
                  (r.device + (r.out.device == r.device ? "" : " (ran on " + r.out.device + ")")).c_str(), r.setup_s,
                  within, r.out.seconds, static_cast<long long>(r.out.iterations), r.out.bound, r.out.primal,
                  r.out.state_cost);
    }
  }
  for (const char* dev : {"cpu", "auto"}) {  // solve_map's defaults (solver auto): solve=1 on the CPU, solve_gpu=1 auto
    if (arg(argc, argv, std::string(dev) == "cpu" ? "solve" : "solve_gpu", 0) == 0) continue;
    mln::solver::SolveOptions so;
    so.device = mln::options::choice_named<mln::options::Device>(dev);
    so.threads = threads;
    so.adaptive_noise = true;
    so.timeout_s = arg(argc, argv, "walk_s", 0);
    so.pdhg_bound = arg(argc, argv, "pdhg_bound", 1) != 0;
    so.pdhg_min_clauses = static_cast<int64_t>(arg(argc, argv, "pdhg_min", 100000));
    const mln::solver::SolveResult r = mln::solver::solve_map(net, so);
    std::printf("solve device %s cost %.4f bound %.4f gap %.4f%% seconds %.3f first_answer %.3f solver %s stop '%s'\n",
                r.device_used.c_str(), r.cost, r.bound, 100 * (r.cost - r.bound) / std::max(r.cost, 1e-9), r.seconds,
                r.first_answer_s, r.solver_used.c_str(), r.stop_reason.c_str());
    for (const std::string& w : r.warnings) std::printf("solve warning: %s\n", w.c_str());
  }
  if (arg(argc, argv, "walk", 0) != 0) {
    mln::solver::SolveOptions so;
    so.device = mln::options::Device::kCpu;
    so.threads = threads;
    so.solver = mln::options::MapSolver::kWalksat;
    so.adaptive_noise = true;
    so.lp_bound_max_clauses = 0;
    so.timeout_s = arg(argc, argv, "walk_s", 0);
    const mln::solver::SolveResult r = mln::solver::solve_map(net, so);
    std::printf("walk cost %.4f seconds %.3f\n", r.cost, r.seconds);
  }
  return 0;
}
