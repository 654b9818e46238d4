// Expected clause features for weight learning (exact for small
// components, MC-SAT chains on CPU threads or the GPU otherwise) and their
// MAP value, component by component.  A component's data and its exact
// sums: learn_component.cpp; the network itself: learn_network.cpp.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <stdexcept>

#include "core/base/components.hpp"
#include "core/learn/learn.hpp"
#include "core/learn/learn_component.hpp"
#include "core/marginal/mcsat_cpu.hpp"
#include "core/marginal/mcsat_gpu.hpp"
#include "core/marginal/mcsat_parallel.hpp"
#include "core/base/rng.hpp"
#include "core/base/run_control.hpp"
#include "core/base/subnetwork.hpp"
#include "core/base/work_pool.hpp"
#include "core/walk/walksat_cpu.hpp"

namespace mln::solver {

using learn_detail::CompData;
using learn_detail::exact_feature_sums;
using learn_detail::state_log_weights;

struct FeatureSampler::Impl {
  LearnNetwork ln;  // a copy whose weights change
  LearnOptions opts;
  std::deque<CompData> comps;  // deque: CompData holds a mutex
  StopToken stop;
  std::mutex note_mu;
  bool gpu_used = false, cpu_used = false;
  std::vector<std::string> warnings;

  Impl(const LearnNetwork& l, const LearnOptions& o) : ln(l), opts(o), stop(o.cancel, o.timeout_s) {
    bool gpu = false;
    if (opts.device != options::Device::kCpu) {
      std::string why;
      gpu = gpu_mcsat_available(&why);
      if (opts.device == options::Device::kGpu && !gpu)
        throw std::runtime_error("learn_weights: device 'gpu' requested but no GPU is usable: " + why);
    }
    // Components sampled on the GPU are sampled together, as one network
    // (they stay independent in it): one GPU call per expect(), however
    // many components.
    std::vector<int32_t> gpu_atoms;
    std::vector<int64_t> gpu_clauses;
    Components cc = find_components(ln.net);
    for (int32_t k = 0; k < cc.count; ++k) {
      const int64_t* cl = cc.clauses.data() + cc.clause_off[k];
      const int64_t m = cc.num_clauses(k);
      bool learnable = false;
      for (int64_t j = 0; j < m && !learnable; ++j) learnable = ln.origin_off[cl[j]] != ln.origin_off[cl[j] + 1];
      if (!learnable) continue;  // no feature here: constant in every count
      std::vector<int32_t> atoms(cc.atoms.begin() + cc.atom_off[k], cc.atoms.begin() + cc.atom_off[k + 1]);
      const int64_t n = cc.num_atoms(k);
      if (gpu && n > opts.exact_max_atoms && (opts.device == options::Device::kGpu || n >= opts.gpu_min_atoms)) {
        gpu_atoms.insert(gpu_atoms.end(), atoms.begin(), atoms.end());
        gpu_clauses.insert(gpu_clauses.end(), cl, cl + m);
        continue;
      }
      fill(comps.emplace_back(), atoms, cl, m, cc.index_in_comp);
    }
    if (gpu_atoms.empty()) return;
    std::vector<int32_t> local_of(static_cast<size_t>(ln.net.num_atoms) + 1, 0);
    for (size_t i = 0; i < gpu_atoms.size(); ++i) local_of[gpu_atoms[i]] = static_cast<int32_t>(i + 1);
    CompData& d = comps.emplace_back();
    fill(d, gpu_atoms, gpu_clauses.data(), static_cast<int64_t>(gpu_clauses.size()), local_of);
    if (d.k() > static_cast<size_t>(kGpuMaxFeatures)) {
      // The GPU kernel keeps the features in registers: at most 32.
      warnings.push_back("the GPU sampler counts at most " + std::to_string(kGpuMaxFeatures) +
                         " learnable clauses per network; " + std::to_string(d.k()) + " sampled on CPU threads");
      comps.pop_back();
      Components again = find_components(ln.net);
      for (int32_t k = 0; k < again.count; ++k) {
        const int32_t a0 = again.atoms[again.atom_off[k]];
        if (local_of[a0] == 0) continue;
        std::vector<int32_t> atoms(again.atoms.begin() + again.atom_off[k], again.atoms.begin() + again.atom_off[k + 1]);
        fill(comps.emplace_back(), atoms, again.clauses.data() + again.clause_off[k], again.num_clauses(k),
             again.index_in_comp);
      }
      return;
    }
    d.on_gpu = true;
    d.gpu_features.k = static_cast<int>(d.k());
    d.gpu_features.off = d.off;
    d.gpu_features.idx = d.rule;
    d.gpu_features.coef.assign(d.coef.begin(), d.coef.end());
  }

  // A component (or several) as a sub-network with its learnable clauses.
  void fill(CompData& d, const std::vector<int32_t>& atoms, const int64_t* cl, int64_t m,
            const std::vector<int32_t>& local_of_atom) {
    d.sub = extract_subnetwork(ln.net, atoms, cl, static_cast<size_t>(m), local_of_atom, nullptr);
    if (d.sub.net.clauses.size() != static_cast<size_t>(m))
      throw std::logic_error("learning: a component's sub-network lost clauses");
    d.global_clause.assign(cl, cl + m);
    std::vector<int32_t> local_of(ln.num_rules, -1);
    for (int64_t j = 0; j < m; ++j) {
      for (int64_t i = ln.origin_off[cl[j]]; i < ln.origin_off[cl[j] + 1]; ++i) {
        const int32_t r = ln.origin_rule[i];
        if (local_of[r] < 0) {
          local_of[r] = static_cast<int32_t>(d.rules.size());
          d.rules.push_back(r);
        }
        d.rule.push_back(local_of[r]);
        d.coef.push_back(ln.origin_coef[i]);
      }
      d.off.push_back(static_cast<int64_t>(d.rule.size()));
    }
  }

  void note(bool gpu, const std::string& warning = {}) {
    std::lock_guard<std::mutex> lock(note_mu);
    (gpu ? gpu_used : cpu_used) = true;
    if (!warning.empty() && warnings.size() < 20) warnings.push_back(warning);
  }

  // MC-SAT chains on CPU threads for a sampled component: one per thread
  // (splitting the samples) from chains_min_atoms atoms on, else one.
  int cpu_chains(const CompData& c) const {
    return c.n() >= opts.chains_min_atoms ? std::max(1, std::min(threads(), opts.samples)) : 1;
  }

  // One call's samples of a GPU component, from where the previous call
  // left its chains: every chain draws one sample (after the first call's
  // burn-in, which starts all chains from one low-cost state found on the
  // host), or, from gpu_one_chain_min_clauses clauses with gpu_chains 0,
  // one chain of `samples` steps with its rounds in parallel (learn.hpp).
  // The start state's flips go to start_flips.  Throws GpuError.
  McsatOutcome sample_on_gpu(CompData& c, size_t ci, uint64_t seed, int64_t& start_flips) {
    const WalkInstance inst = build_walk_instance(c.sub.net);
    McsatOutcome o;
    McsatParams p;
    p.seed = derive_seed(seed, ci);
    p.stop = &stop;
    if (opts.gpu_chains == 0 && inst.m >= opts.gpu_one_chain_min_clauses) {
      p.samples = opts.samples;
      const bool warm = c.gpu_states.size() == static_cast<size_t>(c.n());
      p.start_given = warm;
      if (!warm) p.burn_in = opts.gpu_burn_in;
      o = mcsat_parallel_gpu(inst, warm ? c.gpu_states : std::vector<uint8_t>{}, p, McsatParallelOptions{},
                             &c.gpu_features);
      c.gpu_states = std::move(o.final_state);
    } else {
      const int nch = opts.gpu_chains > 0 ? opts.gpu_chains : opts.samples;
      p.samples = nch;
      GpuMcsatOptions g;
      g.chains = nch;
      g.features = &c.gpu_features;
      std::vector<uint8_t> start, next_states;
      const bool warm = c.gpu_states.size() == static_cast<size_t>(nch) * static_cast<size_t>(c.n());
      if (warm) {
        g.chain_init = &c.gpu_states;
      } else {
        p.burn_in = opts.gpu_burn_in;
        start = mcsat_start_state(inst, {}, p, &start_flips);
      }
      g.chain_final = &next_states;
      int used = 0;
      o = mcsat_gpu(inst, start, p, g, &used);
      c.gpu_states = std::move(next_states);
    }
    return o;
  }

  // This call's tasks, (component, chain): the components' sums cleared
  // and their weights set; exact components are one task, and so are GPU
  // components (chain -1, queued first: they take longest).  chains[ci]:
  // the CPU chains of component ci.
  std::vector<std::pair<uint32_t, int>> queue_tasks(std::vector<int>& chains) {
    std::vector<std::pair<uint32_t, int>> tasks;
    chains.assign(comps.size(), 1);
    for (size_t ci = 0; ci < comps.size(); ++ci) {
      CompData& c = comps[ci];
      c.set_weights(ln);
      c.sum.assign(c.k(), 0.0);
      c.outer.assign(c.k() * c.k(), 0.0);
      c.total = 0;
      if (c.on_gpu) {
        tasks.insert(tasks.begin(), {static_cast<uint32_t>(ci), -1});
        continue;
      }
      if (c.n() > opts.exact_max_atoms) chains[ci] = cpu_chains(c);
      if (c.chain_state.size() != static_cast<size_t>(chains[ci])) c.chain_state.assign(chains[ci], {});
      for (int j = 0; j < chains[ci]; ++j) tasks.push_back({static_cast<uint32_t>(ci), j});
    }
    return tasks;
  }

  // The features' means and covariances, added over the components (which
  // are independent).
  void add_moments(FeatureStats& st) const {
    const size_t K = static_cast<size_t>(ln.num_rules);
    for (const CompData& c : comps) {
      if (c.total <= 0) continue;
      const size_t k = c.k();
      for (size_t a = 0; a < k; ++a) {
        const double ma = c.sum[a] / c.total;
        st.mean[c.rules[a]] += ma;
        for (size_t b = 0; b < k; ++b) {
          double v = c.outer[a * k + b] / c.total - ma * (c.sum[b] / c.total);
          // A variance is never negative: rounding in E[n^2] - E[n]^2 of a
          // count that hardly varies would turn Newton's step around.
          if (a == b) v = std::max(v, 0.0);
          st.cov[c.rules[a] * K + c.rules[b]] += v;
        }
      }
    }
  }

  int threads() const { return pool_threads(opts.threads); }

  // Runs fn(i) for i in [0, n) on the CPU threads; once stopped, the rest are skipped.
  template <typename Fn>
  void for_each(size_t n, Fn fn) {
    run_pool(threads(), n, [&](size_t i) {
      if (!stop.should_stop()) fn(i);
    });
  }
};

FeatureSampler::FeatureSampler(const LearnNetwork& ln, const LearnOptions& o) : impl_(std::make_unique<Impl>(ln, o)) {}
FeatureSampler::~FeatureSampler() = default;
int FeatureSampler::components() const { return static_cast<int>(impl_->comps.size()); }

std::string FeatureSampler::device_used() const {
  std::lock_guard<std::mutex> lock(impl_->note_mu);
  return impl_->gpu_used && impl_->cpu_used ? "cpu+gpu" : impl_->gpu_used ? "gpu" : "cpu";
}

std::vector<std::string> FeatureSampler::warnings() const {
  std::lock_guard<std::mutex> lock(impl_->note_mu);
  return impl_->warnings;
}

FeatureStats FeatureSampler::expect(const std::vector<double>& w, uint64_t seed) {
  Impl& im = *impl_;
  im.ln.set_weights(w);
  const size_t K = static_cast<size_t>(im.ln.num_rules);
  FeatureStats st;
  st.mean.assign(K, 0.0);
  st.cov.assign(K * K, 0.0);
  std::atomic<int64_t> flips{0}, min_samples{std::numeric_limits<int64_t>::max()};
  std::atomic<int> exact{0}, sampled{0};
  std::vector<int> chains;
  const std::vector<std::pair<uint32_t, int>> tasks = im.queue_tasks(chains);
  auto run_task = [&](size_t ti) {
    if (im.stop.should_stop()) return;
    const size_t ci = tasks[ti].first;
    const int chain = tasks[ti].second;
    CompData& c = im.comps[ci];
    const size_t k = c.k();
    std::vector<double> sum(k, 0.0), outer(k * k, 0.0), f(k);
    std::vector<uint8_t> by_id;
    double total = 0;  // samples, or the partition function's mass
    // One CPU chain: `samples` of the component's samples, from its last state.
    auto cpu_chain = [&](int j, int nch, int samples) {
      const WalkInstance inst = build_walk_instance(c.sub.net);
      McsatParams p;
      p.samples = samples / nch + (j < samples % nch ? 1 : 0);
      if (p.samples == 0) return;
      p.seed = derive_seed(derive_seed(seed, ci), static_cast<uint64_t>(j));
      p.stop = &im.stop;
      std::vector<uint8_t>& state = c.chain_state[j];
      p.start_given = !state.empty();
      p.on_sample = [&](const std::vector<uint8_t>& x) {
        c.features(x, f, by_id);
        for (size_t a = 0; a < k; ++a) {
          sum[a] += f[a];
          for (size_t b = 0; b < k; ++b) outer[a * k + b] += f[a] * f[b];
        }
      };
      McsatOutcome o = mcsat_cpu(inst, state, p);
      state = std::move(o.final_state);
      flips += o.flips;
      total += static_cast<double>(o.counted);
      if (j == 0) {
        int64_t prev = min_samples.load();
        const int64_t per = o.counted * nch;  // about the component's samples
        while (per < prev && !min_samples.compare_exchange_weak(prev, per)) {}
        ++sampled;
      }
      im.note(false);
    };
    if (chain < 0) {
      bool done = false;
      try {
        int64_t start_flips = 0;
        const McsatOutcome o = im.sample_on_gpu(c, ci, seed, start_flips);
        flips += start_flips;
        if (o.feature_sum.size() != k) throw GpuError("the GPU sampler returned no feature counts");
        for (size_t a = 0; a < k; ++a) sum[a] = o.feature_sum[a];
        for (size_t a = 0; a < k * k; ++a) outer[a] = o.feature_outer[a];
        flips += o.flips;
        total = static_cast<double>(o.counted);
        int64_t prev = min_samples.load();
        while (o.counted < prev && !min_samples.compare_exchange_weak(prev, o.counted)) {}
        ++sampled;
        im.note(true);
        done = true;
      } catch (const GpuError& e) {
        c.on_gpu = false;  // later calls sample it on CPU threads
        im.note(false, std::string("GPU sampling failed, component sampled on the CPU: ") + e.what());
      }
      if (!done) {
        std::fill(sum.begin(), sum.end(), 0.0);
        std::fill(outer.begin(), outer.end(), 0.0);
        total = 0;
        const int nch = im.cpu_chains(c);
        c.chain_state.assign(nch, {});
        for (int j = 0; j < nch && !im.stop.should_stop(); ++j) cpu_chain(j, nch, im.opts.samples);
      }
    } else if (c.n() <= im.opts.exact_max_atoms) {
      total = exact_feature_sums(c, sum, outer);
      ++exact;
      im.note(false);
    } else {
      cpu_chain(chain, chains[ci], im.opts.samples);
    }
    std::lock_guard<std::mutex> lock(c.mu);
    for (size_t a = 0; a < k; ++a) c.sum[a] += sum[a];
    for (size_t a = 0; a < k * k; ++a) c.outer[a] += outer[a];
    c.total += total;
  };
  // The GPU components on the feeder thread, the rest on the CPU threads.
  const size_t on_gpu = static_cast<size_t>(
      std::count_if(tasks.begin(), tasks.end(), [](const auto& t) { return t.second < 0; }));
  std::function<void()> feeder;
  if (on_gpu > 0)
    feeder = [&] {
      for (size_t ti = 0; ti < on_gpu; ++ti) run_task(ti);
    };
  run_pool(im.threads(), tasks.size() - on_gpu, [&](size_t i) { run_task(on_gpu + i); }, feeder);
  im.add_moments(st);
  st.exact_components = exact;
  st.sampled_components = sampled;
  st.samples = sampled > 0 ? min_samples.load() : 0;
  st.flips = flips;
  st.stopped = im.stop.tripped();
  return st;
}

std::vector<double> FeatureSampler::map_counts(const std::vector<double>& w, uint64_t seed) {
  Impl& im = *impl_;
  im.ln.set_weights(w);
  const size_t K = static_cast<size_t>(im.ln.num_rules);
  std::vector<double> n(K, 0.0);
  std::mutex mu;
  im.for_each(im.comps.size(), [&](size_t ci) {
    CompData& c = im.comps[ci];
    c.set_weights(im.ln);
    const WalkInstance inst = build_walk_instance(c.sub.net);
    std::vector<uint8_t> init = c.state.empty() ? std::vector<uint8_t>(static_cast<size_t>(c.n()), 0) : c.state;
    WalkOutcome o;
    if (c.n() <= im.opts.exact_max_atoms) {
      o = solve_exact_cpu(inst, init);
    } else {
      WalkParams p;
      p.flips_per_try = 100 * static_cast<int64_t>(c.n());
      p.max_tries = 3;
      p.seed = derive_seed(seed, ci);
      p.stop = &im.stop;
      o = walksat_cpu(inst, init, p);
    }
    c.state = o.best;
    std::vector<double> f(c.k());
    std::vector<uint8_t> by_id;
    c.features(c.state, f, by_id);
    std::lock_guard<std::mutex> lock(mu);
    for (size_t a = 0; a < c.k(); ++a) n[c.rules[a]] += f[a];
  });
  return n;
}

double exact_conditional_log_likelihood(const LearnNetwork& ln, const std::vector<double>& w,
                                        const std::vector<uint8_t>& x) {
  LearnNetwork l = ln;
  l.set_weights(w);
  Components cc = find_components(l.net);
  double cll = 0;
  for (int32_t k = 0; k < cc.count; ++k) {
    const int64_t n = cc.num_atoms(k);
    if (n > kExactMaxAtoms)
      throw std::invalid_argument("exact_conditional_log_likelihood: a component has " + std::to_string(n) + " atoms");
    std::vector<int32_t> atoms(cc.atoms.begin() + cc.atom_off[k], cc.atoms.begin() + cc.atom_off[k + 1]);
    CompData c;
    c.sub = extract_subnetwork(l.net, atoms, cc.clauses.data() + cc.clause_off[k], cc.num_clauses(k), cc.index_in_comp,
                               nullptr);
    const std::vector<double> lw = state_log_weights(c);
    const double mx = *std::max_element(lw.begin(), lw.end());
    double z = 0;
    for (double v : lw) z += std::exp(v - mx);
    size_t s = 0;
    for (int64_t i = 0; i < n; ++i) s |= static_cast<size_t>(x[atoms[i]] != 0) << i;
    cll += lw[s] - mx - std::log(z);
  }
  return cll;
}

}  // namespace mln::solver
