// solve_map: components, partitions, and the CPU/GPU schedulers.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "components.hpp"
#include "ilp_map.hpp"
#include "maxwalksat.hpp"
#include "network_cost.hpp"
#include "partition.hpp"
#include "rng.hpp"
#include "subnetwork.hpp"
#include "walksat_cpu.hpp"
#include "walksat_gpu.hpp"
#include "solve_map_run.hpp"

namespace mln::solver {

namespace {

// Rejects option values that make no sense.
void validate(const mln::Network& net, const SolveOptions& o) {
  if (o.max_tries < 1) throw std::invalid_argument("solve_map: max_tries must be >= 1");
  if (o.max_flips < 0) throw std::invalid_argument("solve_map: max_flips must be >= 0");
  if (!(o.random_step >= 0 && o.random_step <= 1)) throw std::invalid_argument("solve_map: random_step must be in [0, 1]");
  if (o.device != "auto" && o.device != "cpu" && o.device != "gpu")
    throw std::invalid_argument("solve_map: device must be auto, cpu or gpu (got '" + o.device + "')");
  if (o.gpu_design != "portfolio" && o.gpu_design != "parallel" && o.gpu_design != "weighted")
    throw std::invalid_argument("solve_map: gpu_design must be weighted, parallel or portfolio");
  if (o.cpu_walk != "walksat" && o.cpu_walk != "weighted")
    throw std::invalid_argument("solve_map: cpu_walk must be walksat or weighted");
  if (o.gauss_seidel_rounds < 1) throw std::invalid_argument("solve_map: gauss_seidel_rounds must be >= 1");
  if (o.exact_max_atoms < 0 || o.exact_max_atoms > kExactMaxAtoms)
    throw std::invalid_argument("solve_map: exact_max_atoms must be between 0 and " + std::to_string(kExactMaxAtoms));
  if (o.partition_max_atoms < 1 || o.gpu_partition_max_atoms < 1)
    throw std::invalid_argument("solve_map: partition_max_atoms and gpu_partition_max_atoms must be >= 1");
  if (o.solver != "auto" && o.solver != "walksat" && o.solver != "ilp")
    throw std::invalid_argument("solve_map: solver must be auto, walksat or ilp (got '" + o.solver + "')");
  if (o.solver == "ilp" && !ilp_available())
    throw std::runtime_error("solve_map: solver 'ilp' requested but " + std::string(
        "pg_mln was built without COIN-OR CBC (apt-get install coinor-libcbc-dev, then rebuild)"));
  if (!(o.ilp_seconds >= 0)) throw std::invalid_argument("solve_map: ilp_seconds must be >= 0");
  if (!(o.hard_first >= 0 && o.hard_first <= 1)) throw std::invalid_argument("solve_map: hard_first must be in [0, 1]");
  if (net.num_atoms < 0 || net.clauses.offsets.size() != net.clauses.size() + 1)
    throw std::invalid_argument("solve_map: malformed network");
}


}  // namespace

using map_detail::Run;

bool gpu_available(std::string* why_not) { return gpu_walksat_available(why_not); }

SolveResult solve_map(const mln::Network& net, const SolveOptions& opts) {
  const auto t0 = std::chrono::steady_clock::now();
  validate(net, opts);
  Run run(net, opts);
  run.mark("components: " + std::to_string(run.comps.count) + " found in " +
           std::to_string(std::chrono::duration<double>(run.t0 - t0).count()) + " s (before this clock)");
  SolveResult res;
  res.truth.assign(static_cast<size_t>(net.num_atoms) + 1, 0);
  res.components = run.comps.count;
  if (opts.device != "cpu") {
    std::string why;
    bool have = gpu_available(&why);
    if (opts.device == "gpu" && !have)
      throw std::runtime_error("solve_map: device 'gpu' requested but no GPU is usable: " + why);
    run.gpu_on = have;
    if (have) gpu_walksat_peak_bytes(true);
  }
  if (opts.max_flips > 0) run.flips_per_atom = static_cast<double>(opts.max_flips) / std::max<int32_t>(1, net.num_atoms);
  run.comp_cost.assign(run.comps.count, 0.0);
  run.comp_bound.assign(run.comps.count, 0.0);
  run.comp_done.assign(run.comps.count, 0);
  run.comp_proven.assign(run.comps.count, 0);

  // Queues, largest component first (the component order already is).
  std::vector<int32_t> cpu_q, gpu_q;
  for (int32_t k = 0; k < run.comps.count; ++k) {
    if (opts.skip_components_without_query && !run.comps.has_query[k]) continue;
    ++res.solved_components;
    // Components that enumeration solves (no walk) stay on CPU threads even
    // with device "gpu": in the GPU's single feeder thread the ~10^5 tiny
    // components of smokers at 10^6 people took longer than its walk.
    const int64_t n = run.comps.num_atoms(k);
    const bool enumerated = run.enumerable(n) && opts.solver != "ilp";
    const bool gpu = run.gpu_on && !enumerated && (opts.device == "gpu" || n >= opts.gpu_min_atoms);
    (gpu ? gpu_q : cpu_q).push_back(k);
  }
  // Device "gpu" with the weighted design: the components below
  // gpu_min_atoms (and above enumeration) are walked in batches of up to
  // gpu_batch_max_clauses clauses (solve_gpu_batch).
  std::vector<std::vector<int32_t>> gpu_batches;
  if (run.gpu_on && opts.device == "gpu" && opts.gpu_design == "weighted") {
    std::vector<int32_t> big;
    int64_t clauses = 0;
    for (int32_t k : gpu_q) {
      const int64_t n = run.comps.num_atoms(k);
      if (n >= opts.gpu_min_atoms || opts.solver == "ilp") {
        big.push_back(k);
        continue;
      }
      if (gpu_batches.empty() || clauses + run.comps.num_clauses(k) > opts.gpu_batch_max_clauses) {
        gpu_batches.emplace_back();
        clauses = 0;
      }
      gpu_batches.back().push_back(k);
      clauses += run.comps.num_clauses(k);
    }
    gpu_q.swap(big);
  }
  if (opts.progress) {
    std::vector<int32_t> all(cpu_q);
    for (const auto& b : gpu_batches) all.insert(all.end(), b.begin(), b.end());
    all.insert(all.end(), gpu_q.begin(), gpu_q.end());
    run.seed_progress(all);
  }
  run.mark("queues: " + std::to_string(cpu_q.size()) + " on CPU threads, " + std::to_string(gpu_q.size()) + " on the GPU, " +
           std::to_string(gpu_batches.size()) + " GPU batches");
  std::exception_ptr failure;
  std::mutex fail_mu;
  // Worker loop: takes components from a shared queue until it is empty.
  auto work = [&](const std::vector<int32_t>& q, std::atomic<size_t>& next, bool on_gpu) {
    try {
      for (size_t i; (i = next.fetch_add(1)) < q.size();) {
        if (run.stop.should_stop()) {  // keep the (coin-flip free) all-false state
          continue;
        }
        run.solve_component(q[i], on_gpu, res.truth);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(fail_mu);
      if (!failure) failure = std::current_exception();
    }
  };
  std::atomic<size_t> next_cpu{0}, next_gpu{0};
  int nthreads = opts.threads > 0 ? opts.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  nthreads = static_cast<int>(std::min<size_t>(nthreads, cpu_q.size()));
  std::vector<std::thread> pool;
  if (!gpu_q.empty() || !gpu_batches.empty())
    pool.emplace_back([&] {
      work(gpu_q, next_gpu, true);
      run.mark("GPU queue done");
      try {
        for (const auto& b : gpu_batches)
          if (!run.stop.should_stop()) {
            run.solve_gpu_batch(b, res.truth);
            run.mark("GPU batch of " + std::to_string(b.size()) + " components done");
          }
      } catch (...) {
        std::lock_guard<std::mutex> lock(fail_mu);
        if (!failure) failure = std::current_exception();
      }
    });
  for (int t = 1; t < nthreads; ++t) pool.emplace_back(work, std::cref(cpu_q), std::ref(next_cpu), false);
  if (nthreads >= 1) work(cpu_q, next_cpu, false);
  run.mark("CPU queue taken");
  for (auto& th : pool) th.join();
  run.mark("all components walked");
  if (failure) std::rethrow_exception(failure);
  run.solve_batched(res.truth);
  run.mark("batched exact path");

  // Totals over the solved components (Tuffy reports exactly this sum).
  const auto& cs = net.clauses;
  for (int32_t k = 0; k < run.comps.count; ++k) {
    if (opts.skip_components_without_query && !run.comps.has_query[k]) continue;
    if (run.comp_done[k]) {
      res.cost += run.comp_cost[k];
      res.bound += run.comp_bound[k];
      res.proven_components += run.comp_proven[k];
    } else {  // not reached before a stop: its all-false state
      for (int64_t j = run.comps.clause_off[k]; j < run.comps.clause_off[k + 1]; ++j)
        res.cost += clause_cost_of(cs, run.comps.clauses[j], res.truth);
    }
  }
  // Violated hard clauses, on threads (every clause of the solved
  // components).
  const int64_t listed = static_cast<int64_t>(run.comps.clauses.size());
  int64_t hard = 0;
#pragma omp parallel for schedule(static) reduction(+ : hard) if (listed >= kCostChunk)
  for (int64_t j = 0; j < listed; ++j) {
    const int64_t c = run.comps.clauses[j];
    if (std::fabs(cs.weights[c]) < kHardThreshold) continue;
    const int32_t k = run.comps.comp_of_atom[std::abs(cs.lits[cs.offsets[c]])];
    if (opts.skip_components_without_query && !run.comps.has_query[k]) continue;
    if (clause_cost_of(cs, c, res.truth) > 0) ++hard;
  }
  res.hard_violated += hard;
  for (int64_t c : run.comps.empty_clauses) {
    if (cs.weights[c] > 0) {
      res.cost += cs.weights[c];
      res.bound += cs.weights[c];
      if (cs.weights[c] >= kHardThreshold) ++res.hard_violated;
    }
  }
  run.mark("totals");
  res.flips = run.sink.flips();
  res.partitions = run.partitions.load();
  res.device_used = device_used_of(run.cpu_used, run.gpu_used);
  if (run.gpu_used) res.gpu_memory_peak_bytes = gpu_walksat_peak_bytes();
  res.warnings = std::move(run.warnings);
  res.cancelled = run.stop.tripped();
  res.bound = std::min(res.bound + run.batch_bound_extra, res.cost);
  res.optimal = !res.cancelled && res.proven_components == res.solved_components;
  // What produced the answer: the walk, the exact path, and/or the LP
  // relaxation's rounded solution where it beat the walk.
  res.solver_used.clear();
  for (auto [used, name] : {std::pair<bool, const char*>{run.walk_used, "walksat"}, {run.ilp_used, "ilp"},
                            {run.lp_used, "lp"}})
    if (used) res.solver_used += (res.solver_used.empty() ? "" : "+") + std::string(name);
  if (res.solver_used.empty()) res.solver_used = "walksat";  // enumeration only: the walk's own exact path
  res.ilp_seconds = static_cast<double>(run.ilp_micros.load()) * 1e-6;
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace mln::solver
