// solve_marginal: components, exact enumeration of small ones, MC-SAT
// chains on CPU threads and on the GPU (the scheduling mirrors solve_map).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "core/base/components.hpp"
#include "core/marginal/solve_marginal.hpp"
#include "core/marginal/mcsat_cpu.hpp"
#include "core/marginal/mcsat_gpu.hpp"
#include "core/marginal/mcsat_parallel.hpp"
#include "core/base/rng.hpp"
#include "core/base/run_control.hpp"
#include "core/base/subnetwork.hpp"
#include "core/base/work_pool.hpp"
#include "options/options.hpp"

namespace mln::solver {

namespace {

// Rejects option values that make no sense.
void validate(const mln::Network& net, const MarginalOptions& o) {
  auto bad = [](const std::string& what) { throw std::invalid_argument("solve_marginal: " + what); };
  if (o.samples < 1) bad("samples must be >= 1");
  if (o.burn_in < 0) bad("burn_in must be >= 0");
  if (!(o.mcsat_param >= 0) || !std::isfinite(o.mcsat_param)) bad("mcsat_param must be a finite number >= 0");
  if (!(o.sa_temperature >= 0) || !std::isfinite(o.sa_temperature)) bad("sa_temperature must be a finite number >= 0");
  if (!(o.sa_probability >= 0 && o.sa_probability <= 1)) bad("sa_probability must be in [0, 1]");
  if (!(o.random_step >= 0 && o.random_step <= 1)) bad("random_step must be in [0, 1]");
  if (o.max_flips < 0) bad("max_flips must be >= 0");
  if (o.sa_steps_after_sat < 0) bad("sa_steps_after_sat must be >= 0");
  if (o.chains < 0) bad("chains must be >= 0");
  if (o.threads < 0) bad("threads must be >= 0");
  if (!(o.timeout_s >= 0)) bad("timeout_s must be >= 0");
  if (o.exact_max_atoms < 0 || o.exact_max_atoms > kExactMaxAtoms)
    bad("exact_max_atoms must be between 0 and " + std::to_string(kExactMaxAtoms));
  if (net.num_atoms < 0 || net.clauses.offsets.size() != net.clauses.size() + 1 ||
      net.clauses.offsets.back() != static_cast<int64_t>(net.clauses.lits.size()))
    bad("malformed network");
}

// Serialised, throttled (100 ms) progress in counted samples.
class SampleProgress {
 public:
  SampleProgress(std::function<void(int64_t, int64_t)> fn, int64_t total) : fn_(std::move(fn)), total_(total) {}
  void add(int64_t n) {
    const int64_t done = done_.fetch_add(n, std::memory_order_relaxed) + n;
    if (!fn_) return;
    std::lock_guard<std::mutex> lock(mu_);
    auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(100) && done < total_) return;
    last_ = now;
    fn_(std::min(done, total_), total_);
  }

 private:
  std::function<void(int64_t, int64_t)> fn_;
  int64_t total_;
  std::atomic<int64_t> done_{0};
  std::mutex mu_;
  std::chrono::steady_clock::time_point last_{};
};

enum class Kind { kExact, kNoClauses, kSampled };

// One component's schedule and results.  The search layout is built by the
// first of its tasks and freed by the last one.
struct Comp {
  Kind kind = Kind::kSampled;
  bool on_gpu = false;
  bool one_chain = false;          // on_gpu: one parallel chain (mcsat_parallel_gpu), not many
  int chains = 1;
  std::mutex mu;
  std::shared_ptr<const WalkInstance> inst;
  int pending = 0;                 // chains not finished (under mu)
  bool started = false;
  std::vector<int64_t> count;      // per local atom
  std::vector<double> prob;        // exact path
  int64_t counted = 0;
  double cost_sum = 0;             // sampled: sum of costs; exact: expected cost
};

struct Task {
  int32_t comp;
  int chain;  // -1: all chains (GPU) or the component's single job (exact)
};

// Everything the workers share while sampling one network.
struct Run {
  const mln::Network& net;
  const MarginalOptions& opts;
  Components comps;
  StopToken stop;
  std::unique_ptr<SampleProgress> progress;
  std::vector<std::unique_ptr<Comp>> comp;
  double flips_per_atom = 100;
  std::atomic<int64_t> flips{0}, unsat_calls{0};
  std::atomic<bool> cpu_used{false}, gpu_used{false};
  std::mutex warn_mu;
  std::vector<std::string> warnings;

  Run(const mln::Network& n, const MarginalOptions& o) : net(n), opts(o), comps(find_components(n)), stop(o.cancel, o.timeout_s) {}

  void warn(std::string w) {
    std::lock_guard<std::mutex> lock(warn_mu);
    warnings.push_back(std::move(w));
  }

  // The component's search layout (local atoms 0..n-1 in ascending id order).
  std::shared_ptr<const WalkInstance> instance(int32_t k) {
    Comp& c = *comp[k];
    std::lock_guard<std::mutex> lock(c.mu);
    if (!c.inst) {
      const auto& cs = net.clauses;
      // The whole network (one component holding every atom and clause) is
      // used in place rather than copied.
      if (comps.num_atoms(k) == net.num_atoms && comps.num_clauses(k) == static_cast<int64_t>(cs.size())) {
        c.inst = std::make_shared<const WalkInstance>(build_walk_instance(net));
      } else {
        std::vector<int32_t> atoms(comps.atoms.begin() + comps.atom_off[k], comps.atoms.begin() + comps.atom_off[k + 1]);
        SubNetwork sub = extract_subnetwork(net, atoms, comps.clauses.data() + comps.clause_off[k], comps.num_clauses(k),
                                            comps.index_in_comp, nullptr);
        c.inst = std::make_shared<const WalkInstance>(build_walk_instance(sub.net));
      }
    }
    return c.inst;
  }

  McsatParams params(int32_t k, int32_t n) const {
    McsatParams p;
    p.samples = opts.samples;
    p.burn_in = opts.burn_in;
    p.mcsat_param = opts.mcsat_param;
    p.sa_temperature = opts.sa_temperature;
    p.sa_probability = opts.sa_probability;
    p.random_step = opts.random_step;
    p.max_flips = std::max<int64_t>(4, std::llround(flips_per_atom * static_cast<double>(n)));
    p.steps_after_sat = opts.sa_steps_after_sat;
    p.seed = derive_seed(opts.seed, static_cast<uint64_t>(k));
    return p;
  }

  // The given start state of component k in local order, or empty.
  std::vector<uint8_t> init_of(int32_t k) const {
    if (net.init_truth.empty()) return {};
    std::vector<uint8_t> init;
    for (int64_t i = comps.atom_off[k]; i < comps.atom_off[k + 1]; ++i) init.push_back(net.init_truth[comps.atoms[i]] != 0);
    return init;
  }

  // Adds one chain's (or the GPU run's) counts to component k.
  void merge(int32_t k, const McsatOutcome& o) {
    Comp& c = *comp[k];
    flips += o.flips;
    unsat_calls += o.unsat_calls;
    if (!o.hard_satisfied)
      warn("component " + std::to_string(k) + ": no state satisfying every hard clause was found; sampling went on");
    std::lock_guard<std::mutex> lock(c.mu);
    if (c.count.empty()) c.count.assign(o.true_count.size(), 0);
    for (size_t a = 0; a < o.true_count.size(); ++a) c.count[a] += o.true_count[a];
    c.counted += o.counted;
    c.cost_sum += o.cost_sum;
  }

  // One chain of component k on this CPU thread (samples split as documented
  // in mcsat_gpu.hpp, so the GPU and CPU runs count the same totals).
  void cpu_chain(int32_t k, int chain, const WalkInstance& inst) {
    const Comp& c = *comp[k];
    McsatParams p = params(k, inst.n);
    p.samples = opts.samples / c.chains + (chain < opts.samples % c.chains ? 1 : 0);
    p.burn_in = mcsat_chain_burn_in(opts.burn_in, opts.samples, c.chains);
    p.seed = derive_seed(p.seed, static_cast<uint64_t>(chain));
    p.stop = &stop;
    p.on_samples = [this](int64_t n) { progress->add(n); };
    merge(k, mcsat_cpu(inst, init_of(k), p));
    cpu_used = true;
  }

  void run_task(const Task& t) {
    Comp& c = *comp[t.comp];
    {
      std::lock_guard<std::mutex> lock(c.mu);
      c.started = true;
    }
    if (c.kind == Kind::kExact) {
      auto inst = instance(t.comp);
      ExactMarginals e = exact_marginals_cpu(*inst);
      std::lock_guard<std::mutex> lock(c.mu);
      c.prob = std::move(e.prob);
      c.cost_sum = e.expected_cost;
      c.inst.reset();
      cpu_used = true;
      progress->add(opts.samples);
      return;
    }
    auto inst = instance(t.comp);
    if (t.chain >= 0) {
      cpu_chain(t.comp, t.chain, *inst);
    } else {  // the GPU runs all chains; on failure this thread runs them on the CPU
      bool done = false;
      try {
        McsatParams p = params(t.comp, inst->n);
        p.stop = &stop;
        p.on_samples = [this](int64_t n) { progress->add(n); };
        if (c.one_chain) {  // its start state is found on the GPU too
          merge(t.comp, mcsat_parallel_gpu(*inst, init_of(t.comp), p, McsatParallelOptions{}));
        } else {
          GpuMcsatOptions g;
          g.chains = opts.chains;
          int used = 0;
          // Every chain starts from one low-cost state found here (the CPU
          // chains each find their own).
          int64_t start_flips = 0;
          const std::vector<uint8_t> start = mcsat_start_state(*inst, init_of(t.comp), p, &start_flips);
          flips += start_flips;
          merge(t.comp, mcsat_gpu(*inst, start, p, g, &used));
        }
        gpu_used = true;
        done = true;
      } catch (const GpuError& e) {
        warn(std::string("GPU MC-SAT failed, component sampled on the CPU: ") + e.what());
      }
      if (!done)
        for (int j = 0; j < c.chains && !stop.should_stop(); ++j) cpu_chain(t.comp, j, *inst);
    }
    std::lock_guard<std::mutex> lock(c.mu);
    if (--c.pending == 0) c.inst.reset();
  }
};

}  // namespace

MarginalResult solve_marginal(const mln::Network& net, const MarginalOptions& opts) {
  const auto t0 = std::chrono::steady_clock::now();
  validate(net, opts);
  Run run(net, opts);
  MarginalResult res;
  res.prob.assign(static_cast<size_t>(net.num_atoms) + 1, std::numeric_limits<double>::quiet_NaN());
  res.prob[0] = 0;  // unused
  res.components = run.comps.count;
  bool gpu_on = false;
  if (opts.device != options::Device::kCpu) {
    std::string why;
    const bool have = gpu_mcsat_available(&why);
    if (opts.device == options::Device::kGpu && !have)
      throw std::runtime_error("solve_marginal: device 'gpu' requested but no GPU is usable: " + why);
    gpu_on = have;
    if (have) gpu_mcsat_peak_bytes(true);
  }
  if (opts.max_flips > 0) run.flips_per_atom = static_cast<double>(opts.max_flips) / std::max<int32_t>(1, net.num_atoms);

  // Queues, largest component first (the component order already is);
  // a sampled CPU component is one task per chain.
  std::vector<Task> cpu_q, gpu_q;
  int64_t one_chain_min = opts.gpu_one_chain_min_clauses;
  if (const char* e = std::getenv("MLN_MCSAT_ONE_CHAIN_MIN_CLAUSES")) one_chain_min = std::atoll(e);  // tuning runs
  int64_t scheduled = 0;
  run.comp.resize(run.comps.count);
  for (int32_t k = 0; k < run.comps.count; ++k) {
    run.comp[k] = std::make_unique<Comp>();
    Comp& c = *run.comp[k];
    if (opts.skip_components_without_query && !run.comps.has_query[k]) continue;
    ++scheduled;
    const int64_t n = run.comps.num_atoms(k);
    if (run.comps.num_clauses(k) == 0) {
      c.kind = Kind::kNoClauses;  // nothing constrains it: uniform, exactly
    } else if (n <= opts.exact_max_atoms) {
      c.kind = Kind::kExact;
      c.pending = 1;
      cpu_q.push_back({k, -1});
    } else {
      // Many chains on the GPU for many samples; one parallel chain for a
      // large component and few samples when `chains` is left to us
      // (solve_marginal.hpp).
      const bool few = opts.samples < opts.gpu_min_samples;
      c.one_chain = gpu_on && few && opts.chains == 0 && run.comps.num_clauses(k) >= one_chain_min;
      c.on_gpu = gpu_on && (opts.device == options::Device::kGpu || (n >= opts.gpu_min_atoms && !few) || c.one_chain);
      c.chains = static_cast<int>(std::min<int64_t>(opts.chains > 0 ? opts.chains : 1, opts.samples));
      if (c.on_gpu) {
        c.pending = 1;
        gpu_q.push_back({k, -1});
      } else {
        c.pending = c.chains;
        for (int j = 0; j < c.chains; ++j) cpu_q.push_back({k, j});
      }
    }
  }
  run.progress = std::make_unique<SampleProgress>(opts.progress, scheduled * opts.samples);

  // Once stopped, the remaining components stay unsolved (NaN).
  auto task = [&](const Task& t) {
    if (!run.stop.should_stop()) run.run_task(t);
  };
  std::function<void()> feeder;
  if (!gpu_q.empty())
    feeder = [&] {
      for (const Task& t : gpu_q) task(t);
    };
  run_pool(pool_threads(opts.threads), cpu_q.size(), [&](size_t i) { task(cpu_q[i]); }, feeder);

  // Marginals and the mean cost, component by component.
  int64_t min_counted = std::numeric_limits<int64_t>::max();
  for (int32_t k = 0; k < run.comps.count; ++k) {
    if (opts.skip_components_without_query && !run.comps.has_query[k]) continue;
    Comp& c = *run.comp[k];
    const int32_t* atoms = run.comps.atoms.data() + run.comps.atom_off[k];
    const int64_t n = run.comps.num_atoms(k);
    if (c.kind == Kind::kNoClauses) {
      for (int64_t i = 0; i < n; ++i) res.prob[atoms[i]] = 0.5;
    } else if (c.kind == Kind::kExact) {
      if (c.prob.empty()) continue;  // stopped before it started
      for (int64_t i = 0; i < n; ++i) res.prob[atoms[i]] = c.prob[i];
      res.average_cost += c.cost_sum;
      ++res.exact_components;
    } else {
      if (c.counted == 0) continue;
      for (int64_t i = 0; i < n; ++i) res.prob[atoms[i]] = static_cast<double>(c.count[i]) / c.counted;
      res.average_cost += c.cost_sum / c.counted;
      min_counted = std::min(min_counted, c.counted);
    }
    ++res.solved_components;
  }
  for (int64_t c : run.comps.empty_clauses)  // constant: a positive one always costs its weight
    if (net.clauses.weights[c] > 0) res.average_cost += net.clauses.weights[c];
  res.samples = min_counted == std::numeric_limits<int64_t>::max() ? (run.stop.tripped() ? 0 : opts.samples) : min_counted;
  res.flips = run.flips.load();
  if (run.unsat_calls > 0)
    run.warn(std::to_string(run.unsat_calls.load()) +
             " MC-SAT steps: SampleSAT from a fresh start did not satisfy the alive clauses within max_flips, and the "
             "step went on from the previous state (local moves: on such networks the chains mix slowly and the "
             "marginals lean toward the start state, a low-cost one)");
  res.device_used = device_used_of(run.cpu_used, run.gpu_used);
  if (run.gpu_used) res.gpu_memory_peak_bytes = gpu_mcsat_peak_bytes();
  res.warnings = std::move(run.warnings);
  res.cancelled = run.stop.tripped();
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace mln::solver
