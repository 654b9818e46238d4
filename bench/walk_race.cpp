// Cost over time of the MAP walks on one grounded network (issue #24;
// bench/walk_race.sh drives it):
//
//   mln_walk_race SCHEMA MODE SECONDS [key=value ...]
//
// MODE: gpu  the GPU walk alone (solve_map device gpu)
//       cpu  the CPU walk on every core (device cpu, threads = cores)
//       one  the CPU walk on one core (device cpu, threads 1)
//       wcpu the weighted walk on CPU threads (cpu_walk weighted)
// The network is read through libpq (PG* environment) from schema SCHEMA,
// where `pg_mln ... -keepData` left it.  The walk runs as the worker runs
// it (Tuffy's defaults, adaptive noise) with solver walksat and no bound,
// under a SECONDS timeout (the GPU's CUDA context is created before the
// clock starts, as in the long-running worker).  Prints "seconds cost flips" every 10 ms while
// the cost changes, then "final seconds cost flips device".
// Keys: seed, max_flips, max_tries, threads, inc_rel, inc_abs,
// noise, kick_noise, cap, freeze_rounds, stall_rounds, stall_time, smooth_every,
// smooth_keep, polish_rounds, wthreads, solver (auto or ilp: the job as the
// worker runs it, bound and exact path included).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/map/solve_map.hpp"
#include "worker/pq.hpp"
#include "worker/worker.hpp"

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s SCHEMA gpu|cpu|one|wcpu SECONDS [key=value ...]\n", argv[0]);
    return 2;
  }
  try {
    const std::string schema = argv[1], mode = argv[2];
    mln::solver::SolveOptions o;
    o.timeout_s = std::stod(argv[3]);
    o.solver = mln::options::MapSolver::kWalksat;
    o.lp_bound_max_clauses = 0;  // no LP bound: only the walk is timed
    o.pdhg_bound = false;
    o.adaptive_noise = true;     // as the worker runs it when -randomStep is not pinned
    o.progress_interval_s = 0.01;
    for (int i = 4; i < argc; ++i) {
      std::string kv = argv[i];
      const size_t eq = kv.find('=');
      if (eq == std::string::npos) throw std::invalid_argument("expected key=value, got " + kv);
      const std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
      if (k == "seed") o.seed = std::stoull(v);
      else if (k == "max_flips") o.max_flips = std::stoll(v);
      else if (k == "max_tries") o.max_tries = std::stoi(v);
      else if (k == "threads") o.threads = std::stoi(v);
      else if (k == "inc_rel") o.weighted.inc_rel = std::stod(v);
      else if (k == "inc_abs") o.weighted.inc_abs = std::stod(v);
      else if (k == "kick_noise") o.weighted.kick_noise = std::stod(v);
      else if (k == "stall_time") o.weighted.stall_time = std::stod(v);
      else if (k == "stall_rounds") o.weighted.stall_rounds = std::stoll(v);
      else if (k == "freeze_rounds") o.weighted.freeze_rounds = std::stoll(v);
      else if (k == "cap") o.weighted.cap = std::stod(v);
      else if (k == "noise") o.weighted.noise = std::stod(v);
      else if (k == "smooth_every") o.weighted.smooth_every = std::stoll(v);
      else if (k == "smooth_keep") o.weighted.smooth_keep = std::stod(v);
      else if (k == "polish_rounds") o.weighted.polish_rounds = std::stoll(v);
      else if (k == "wthreads") o.weighted.threads = std::stoi(v);
      else if (k == "solver") {  // auto or ilp: with the default's bounds, the whole job as the worker runs it
        o.solver = mln::options::choice_named<mln::options::MapSolver>(v);
        if (v != "walksat") {
          o.lp_bound_max_clauses = mln::solver::SolveOptions{}.lp_bound_max_clauses;
          o.pdhg_bound = mln::solver::SolveOptions{}.pdhg_bound;
        }
      }
      else throw std::invalid_argument("unknown key " + k);
    }
    if (mode == "gpu") o.device = mln::options::Device::kGpu;
    else if (mode == "cpu") o.device = mln::options::Device::kCpu;
    else if (mode == "one") { o.device = mln::options::Device::kCpu; o.threads = 1; }
    else if (mode == "wcpu") { o.device = mln::options::Device::kCpu; o.cpu_walk = mln::options::CpuWalk::kWeighted; }
    else throw std::invalid_argument("unknown mode " + mode);
    const char* dsn = std::getenv("MLN_DSN");
    mln::worker::Conn conn(dsn ? dsn : "");
    conn.pin_search_path();
    const std::string program =
        conn.exec("SELECT name FROM mln.programs WHERE schema_name = $1", {schema}).get(0, 0);
    mln::Network net = mln::worker::read_network(conn, program, schema);
    std::fprintf(stderr, "%s: %d atoms, %zu clauses\n", schema.c_str(), net.num_atoms, net.clauses.size());
    // The GPU path starts its CUDA context before the clock, as the
    // long-running worker has (a one-time cost per process, ~0.3-0.8 s on
    // the H100 host): a GPU solve of a 2-atom network.
    if (o.device == mln::options::Device::kGpu) {
      mln::Network tiny;
      tiny.num_atoms = 2;
      const int32_t c1[] = {1, 2};
      tiny.clauses.add(c1, 2, 1.0);
      tiny.is_query.assign(3, 1);
      mln::solver::SolveOptions w;
      w.device = mln::options::Device::kGpu;
      w.exact_max_atoms = 0;
      w.solver = mln::options::MapSolver::kWalksat;
      mln::solver::solve_map(tiny, w);
    }
    const auto t0 = std::chrono::steady_clock::now();
    std::mutex mu;
    double last = -1;
    o.progress = [&](double cost, int64_t flips) {
      std::lock_guard<std::mutex> lock(mu);
      if (cost == last) return;
      last = cost;
      std::printf("%.4f %.6f %lld\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                  cost, static_cast<long long>(flips));
    };
    mln::solver::SolveResult r = mln::solver::solve_map(net, o);
    const double end = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r.cost != last) std::printf("%.4f %.6f %lld\n", end, r.cost, static_cast<long long>(r.flips));
    std::printf("final %.4f %.6f %lld %s\n", end, r.cost, static_cast<long long>(r.flips), r.device_used.c_str());
    std::fprintf(stderr, "bound %.6f, first answer %.4f s, %s (%s)\n", r.bound, r.first_answer_s, r.stop_reason.c_str(),
                 r.solver_used.c_str());
    for (const auto& w : r.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mln_walk_race: %s\n", e.what());
    return 1;
  }
}
