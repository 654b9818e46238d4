// solve_map: components, partitions, and the CPU/GPU schedulers.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>

#include "core/base/components.hpp"
#include "core/map/ilp_map.hpp"
#include "core/map/solve_map.hpp"
#include "core/base/network_cost.hpp"
#include "core/base/partition.hpp"
#include "core/base/rng.hpp"
#include "core/base/subnetwork.hpp"
#include "core/base/work_pool.hpp"
#include "core/walk/walksat_cpu.hpp"
#include "core/walk/walksat_gpu.hpp"
#include "options/options.hpp"
#include "core/map/solve_map_run.hpp"

namespace mln::solver {

namespace {

// Seconds as %g writes them ("4", "0.5").
std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// Rejects option values that make no sense.
void validate(const mln::Network& net, const SolveOptions& o) {
  // The options a job sets, by the rows that check them in mln.infer
  // (options/options.hpp): the same values are refused everywhere.
  using options::Id;
  const auto row = [](Id id) { return *options::find(id, options::kMap); };
  try {
    options::check_range(row(Id::kMaxTries), o.max_tries);
    options::check_range(row(Id::kMaxFlips), static_cast<double>(o.max_flips));
    options::check_range(row(Id::kRandomStep), o.random_step);
    options::check_range(row(Id::kExactMaxAtoms), o.exact_max_atoms);
    options::check_range(row(Id::kIlpSeconds), o.ilp_seconds);
  } catch (const options::OptionError& e) {
    throw std::invalid_argument(std::string("solve_map: ") + e.what());
  }
  if (o.gauss_seidel_rounds < 1) throw std::invalid_argument("solve_map: gauss_seidel_rounds must be >= 1");
  if (o.partition_max_atoms < 1 || o.gpu_partition_max_atoms < 1)
    throw std::invalid_argument("solve_map: partition_max_atoms and gpu_partition_max_atoms must be >= 1");
  if (o.solver == options::MapSolver::kIlp && !ilp_available())
    throw std::runtime_error("solve_map: solver 'ilp' requested but " + std::string(
        "pg_mln was built without COIN-OR CBC (apt-get install coinor-libcbc-dev, then rebuild)"));
  if (!(o.hard_first >= 0 && o.hard_first <= 1)) throw std::invalid_argument("solve_map: hard_first must be in [0, 1]");
  if (net.num_atoms < 0 || net.clauses.offsets.size() != net.clauses.size() + 1)
    throw std::invalid_argument("solve_map: malformed network");
}

// Walks the queued components on the CPU threads and the GPU feeder thread
// (cpu_q and gpu_q one component at a time, largest first; gpu_batches
// each as one walk), in run.passes passes: with two, every component's
// first try comes before any component's second.  Components not reached
// before a stop are left alone (comp_done stays 0).
void walk_components(map_detail::Run& run, const std::vector<int32_t>& cpu_q, const std::vector<int32_t>& gpu_q,
                     const std::vector<std::vector<int32_t>>& gpu_batches, std::vector<uint8_t>& truth) {
  // The second pass takes the components whose first try left tries to run
  // (comp_more), also after a stop: each is then bounded as it stands.
  auto walk = [&](int32_t k, bool on_gpu) {
    if (run.pass == 1 ? !run.comp_more[k] : run.stop.should_stop()) return;
    run.solve_component(k, on_gpu, truth);
  };
  auto batches = [&] {
    for (const auto& b : gpu_batches) {
      std::vector<int32_t> left;
      for (int32_t k : b)
        if (run.pass == 0 || run.comp_more[k]) left.push_back(k);
      if (left.empty() || (run.pass == 0 && run.stop.should_stop())) continue;
      run.solve_gpu_batch(left, truth);
      run.mark("GPU batch of " + std::to_string(left.size()) + " components done");
    }
  };
  std::function<void()> feeder;
  if (!gpu_q.empty() || !gpu_batches.empty())
    feeder = [&] {
      for (int32_t k : gpu_q) walk(k, true);
      run.mark("GPU queue done");
      batches();
    };
  for (run.pass = 0; run.pass < run.passes; ++run.pass) {
    run_pool(pool_threads(run.opts.threads), cpu_q.size(), [&](size_t i) { walk(cpu_q[i], false); }, feeder);
    run.mark("pass " + std::to_string(run.pass + 1) + " of " + std::to_string(run.passes) + ": components walked");
  }
}

}  // namespace

using map_detail::Run;

bool gpu_available(std::string* why_not) { return gpu_walksat_available(why_not); }

// Why the search ended (SolveResult::stop_reason).
static std::string stop_reason_of(const Run& run, const SolveResult& res) {
  if (res.optimal) return "proven optimal";
  if (run.opts.cancel && run.opts.cancel->load()) return "cancelled";
  if (res.cancelled) return "timeout";
  if (run.gap_stopped) return "within the gap tolerance";
  if (run.ilp_spent) return "exact path budget spent";
  if (run.ilp_used && run.time_capped) return "exact path time cap";
  return "search finished";
}

namespace {

// The components to walk, largest first: on CPU threads, on the GPU one at
// a time, and (device "gpu") those below gpu_min_atoms and above
// enumeration in batches of up to gpu_batch_max_clauses clauses
// (solve_gpu_batch).  Counts the solved components.
void queue_components(Run& run, SolveResult& res, std::vector<int32_t>& cpu_q, std::vector<int32_t>& gpu_q,
                      std::vector<std::vector<int32_t>>& gpu_batches) {
  for (int32_t k = 0; k < run.comps.count; ++k) {
    if (!run.searched(k)) continue;
    ++res.solved_components;
    // Components that enumeration solves (no walk) stay on CPU threads even
    // with device "gpu": in the GPU's single feeder thread the ~10^5 tiny
    // components of smokers at 10^6 people took longer than its walk.
    const int64_t n = run.comps.num_atoms(k);
    const bool enumerated = run.enumerable(n) && run.opts.solver != options::MapSolver::kIlp;
    const bool gpu = run.gpu_on && !enumerated && run.gpu_sized(n, run.comps.num_clauses(k));
    (gpu ? gpu_q : cpu_q).push_back(k);
  }
  if (run.gpu_on && run.opts.device == options::Device::kGpu) {
    std::vector<int32_t> big;
    int64_t clauses = 0;
    for (int32_t k : gpu_q) {
      const int64_t n = run.comps.num_atoms(k);
      if (run.gpu_big(n, run.comps.num_clauses(k)) || run.opts.solver == options::MapSolver::kIlp) {
        big.push_back(k);
        continue;
      }
      if (gpu_batches.empty() || clauses + run.comps.num_clauses(k) > run.opts.gpu_batch_max_clauses) {
        gpu_batches.emplace_back();
        clauses = 0;
      }
      gpu_batches.back().push_back(k);
      clauses += run.comps.num_clauses(k);
    }
    gpu_q.swap(big);
  }
}

// The answer's cost, bound and violated hard clauses, summed over the
// solved components (Tuffy reports exactly this sum); components a stop
// left unreached are settled as they stand, with a warning.
void add_totals(Run& run, SolveResult& res) {
  const auto& cs = run.net.clauses;
  int unreached = 0;
  for (int32_t k = 0; k < run.comps.count; ++k) {
    if (!run.searched(k)) continue;
    if (run.comp_done[k]) {
      res.cost += run.comp_cost[k];
      res.bound += run.comp_bound[k];
      res.proven_components += run.comp_proven[k];
    } else {  // not reached before a stop
      res.cost += run.settle_unreached(k, res.truth);
      ++unreached;
      run.walk_stopped = true;
    }
  }
  // Said, rather than an answer far from what the walk reaches (the time
  // limit, not a cancel: a cancelled job has no answer to qualify).
  if (unreached > 0 && run.opts.timeout_s > 0 && !(run.opts.cancel && run.opts.cancel->load())) {
    const std::string limit = "the time limit (" + format_seconds(run.opts.timeout_s) + " s)";
    const std::string count = std::to_string(unreached) + " of " + std::to_string(res.solved_components);
    run.warn(limit + " ran out before every component had its first try: " + count +
             " components were not searched (each keeps its starting state: coin flips, or all false where that costs less); "
             "allow more time (option timeout, -timeout) or fewer flips per try (max_flips)");
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
    if (!run.searched(k)) continue;
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
}

}  // namespace

SolveResult solve_map(const mln::Network& net, const SolveOptions& opts) {
  const auto t0 = std::chrono::steady_clock::now();
  validate(net, opts);
  Run run(net, opts);
  run.mark("components: " + std::to_string(run.comps.count) + " found in " +
           std::to_string(std::chrono::duration<double>(run.t0 - t0).count()) + " s (before this clock)");
  SolveResult res;
  res.truth.assign(static_cast<size_t>(net.num_atoms) + 1, 0);
  res.components = run.comps.count;
  if (opts.device != options::Device::kCpu) {
    std::string why;
    bool have = gpu_available(&why);
    if (opts.device == options::Device::kGpu && !have)
      throw std::runtime_error("solve_map: device 'gpu' requested but no GPU is usable: " + why);
    run.gpu_on = have;
    if (have) gpu_walksat_peak_bytes(true);
  }
  if (opts.max_flips > 0) run.flips_per_atom = static_cast<double>(opts.max_flips) / std::max<int32_t>(1, net.num_atoms);
  run.comp_cost.assign(run.comps.count, 0.0);
  run.comp_bound.assign(run.comps.count, 0.0);
  run.comp_done.assign(run.comps.count, 0);
  run.comp_proven.assign(run.comps.count, 0);
  run.choose_starts();

  // Queues, largest component first (the component order already is).
  std::vector<int32_t> cpu_q, gpu_q;
  std::vector<std::vector<int32_t>> gpu_batches;
  queue_components(run, res, cpu_q, gpu_q, gpu_batches);
  // Two passes (Run::passes) where more than one component is walked and
  // a walk has more than one try; one walked component gains nothing from
  // them and would be laid out twice.
  int walked = 0;
  for (const auto* q : {&cpu_q, &gpu_q})
    for (int32_t k : *q) walked += !run.enumerable(run.comps.num_atoms(k));
  for (const auto& b : gpu_batches) walked += static_cast<int>(b.size());
  if (opts.solver != options::MapSolver::kIlp && (opts.max_tries > 1 || opts.adaptive_noise) && walked > 1) run.passes = 2;
  run.comp_more.assign(run.comps.count, 0);
  if (opts.progress) {
    std::vector<int32_t> all(cpu_q);
    for (const auto& b : gpu_batches) all.insert(all.end(), b.begin(), b.end());
    all.insert(all.end(), gpu_q.begin(), gpu_q.end());
    run.seed_progress(all);
    double fixed = 0;  // the empty clauses' cost, in the answer's (below)
    for (int64_t c : run.comps.empty_clauses) fixed += std::max(0.0, net.clauses.weights[c]);
    run.sink.add_fixed(fixed);
  }
  run.mark("queues: " + std::to_string(cpu_q.size()) + " on CPU threads, " + std::to_string(gpu_q.size()) + " on the GPU, " +
           std::to_string(gpu_batches.size()) + " GPU batches");
  walk_components(run, cpu_q, gpu_q, gpu_batches, res.truth);
  res.first_answer_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  run.finish_exact(res.truth);
  run.mark("exact path");

  add_totals(run, res);
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
  run.sink.finish(res.cost);
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  res.bound_s = run.ilp_used ? res.seconds : res.first_answer_s;
  res.stop_reason = stop_reason_of(run, res);
  res.walk_cut = run.walk_stopped;
  // Said with the answer: a time cap, not the rules of the search, decided
  // part of it (a cancelled job has no answer to qualify).
  res.time_capped = run.time_capped || (res.cancelled && !(opts.cancel && opts.cancel->load()));
  if (res.time_capped && !(opts.cancel && opts.cancel->load()))
    res.warnings.push_back("a time cap (" + std::string(run.time_capped && !res.cancelled ? "ilp_seconds" : "timeout") +
                           ") decided part of this answer, which a rerun may not repeat; without one the answer is a "
                           "function of the network, the options and the device (docs/options.md)");
  return res;
}

}  // namespace mln::solver
