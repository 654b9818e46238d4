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

// Everything the workers share while solving one network.
struct Run {
  const mln::Network& net;
  const SolveOptions& opts;
  Components comps;
  StopToken stop;
  ProgressSink sink;
  double flips_per_atom = 100;
  bool gpu_on = false;
  std::vector<double> comp_cost;
  std::vector<double> comp_bound;      // lower bound on each component's optimum
  std::vector<uint8_t> comp_done;
  std::vector<uint8_t> comp_proven;    // its answer is proven optimal
  std::atomic<bool> walk_used{false}, ilp_used{false}, lp_used{false};
  std::atomic<int64_t> ilp_micros{0};
  std::atomic<bool> cpu_used{false}, gpu_used{false};
  std::mutex warn_mu;
  std::vector<std::string> warnings;
  std::atomic<int> partitions{0};

  const std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  // MLN_MAP_DEBUG=1: phase times on stderr (docs/solver.md), for finding
  // where a large network's seconds go.
  const bool debug = std::getenv("MLN_MAP_DEBUG") != nullptr;
  std::mutex debug_mu;
  void mark(const std::string& what) {
    if (!debug) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::lock_guard<std::mutex> lock(debug_mu);
    std::fprintf(stderr, "[solve_map %8.4f s] %s\n", s, what.c_str());
  }

  Run(const mln::Network& n, const SolveOptions& o)
      : net(n), opts(o), comps(find_components(n)), stop(o.cancel, o.timeout_s), sink(o.progress, comps.count, o.progress_interval_s) {}

  // Whether a (sub)network of n atoms is solved by enumerating its states.
  bool enumerable(int64_t n) const { return n <= std::min<int64_t>(opts.exact_max_atoms, kExactMaxAtoms); }

  // Adds a warning (thread safe).
  void warn(std::string w) {
    std::lock_guard<std::mutex> lock(warn_mu);
    warnings.push_back(std::move(w));
  }

  // Best state of one (sub)network of component k: GPU when asked and big
  // enough (CPU fallback on any CUDA failure), CPU otherwise.
  std::vector<uint8_t> solve_piece(int32_t k, bool on_gpu, const mln::Network& sub, const std::vector<uint8_t>& init,
                                   int64_t flips, uint64_t seed) {
    const bool big = debug && sub.clauses.size() >= 100000;
    WalkInstance inst = build_walk_instance(sub);
    if (big) mark("component " + std::to_string(k) + ": walk instance built (" + std::to_string(inst.n) + " atoms, " +
                  std::to_string(inst.m) + " clauses)");
    WalkParams p;
    p.flips_per_try = flips;
    p.max_tries = opts.max_tries;
    p.random_step = opts.random_step;
    p.adaptive_noise = opts.adaptive_noise;
    p.dont_break = opts.dont_break;
    p.hard_first = opts.hard_first;
    p.seed = seed;
    p.stop = &stop;
    p.on_progress = [this, k](double best, int64_t f) { sink.report(k, best, f); };
    std::vector<uint8_t> init0(init.begin() + 1, init.end());
    WalkOutcome out;
    bool done = false;
    const int64_t min_atoms = opts.device == "gpu" ? 0 : opts.gpu_min_atoms;
    if (enumerable(inst.n)) {
      out = solve_exact_cpu(inst, init0);
      done = true;
      cpu_used = true;
      sink.report(k, out.best_cost, out.flips);
    } else if (on_gpu && inst.n >= min_atoms) {
      // In "auto" mode a CPU walk races the GPU walk on the same piece and the
      // better state wins: on structured MLN networks (e.g. RC at 10^5 papers)
      // the parallel-flip GPU walk can stall above what one CPU walk reaches
      // in the same time.  The race lasts as long as the GPU walk: once it
      // has spent its flips the CPU walk is stopped and keeps its best state
      // so far (a CPU walk of the same flip budget takes 13-87x longer,
      // bench_walksat on an H100).  If the GPU walk fails, the CPU walk runs
      // its whole budget.  "gpu" mode runs the GPU walk alone.
      WalkOutcome cpu_out;
      std::thread racer;
      std::atomic<bool> gpu_finished{false};
      StopToken racer_stop(&stop, &gpu_finished);
      std::exception_ptr racer_error;
      // Stops and joins the racer on every way out of this block, an
      // exception from the GPU walk other than GpuError included.
      struct RacerJoin {
        std::thread& t;
        std::atomic<bool>& stop_it;
        ~RacerJoin() {
          if (t.joinable()) {
            stop_it = true;
            t.join();
          }
        }
      } racer_join{racer, gpu_finished};
      // The weighted design needs no race (issue #24: it ends below the CPU
      // walk on every benchmark network, bench/results/.../walk_race.md);
      // the CPU walks a piece only when the GPU fails.
      const bool race = opts.device == "auto" && opts.gpu_design != "weighted";
      if (race) {
        WalkParams pc = p;
        pc.seed = derive_seed(seed, 0x43505552ull);
        pc.stop = &racer_stop;
        racer = std::thread([&, pc] {
          try {
            cpu_out = walksat_cpu(inst, init0, pc);
          } catch (...) {
            racer_error = std::current_exception();
          }
        });
      }
      try {
        GpuWalkOptions g;
        g.design = opts.gpu_design == "parallel"   ? GpuDesign::kParallelFlips
                   : opts.gpu_design == "weighted" ? GpuDesign::kWeighted
                                                   : GpuDesign::kPortfolio;
        g.weighted = opts.weighted;
        out = walksat_gpu(inst, init0, p, g);
        done = true;
        gpu_finished = true;
        if (!race) gpu_used = true;
      } catch (const GpuError& e) {
        warn(std::string("GPU MaxWalkSAT failed, component solved on the CPU: ") + e.what());
      }
      if (race) {
        racer.join();
        if (racer_error) std::rethrow_exception(racer_error);
        // Compare the two states by their exact costs on this piece; the
        // device that produced the kept state counts as used (device_used
        // says which walk answered).
        auto exact = [&sub](const std::vector<uint8_t>& b) {
          std::vector<uint8_t> t(b.size() + 1, 0);
          std::copy(b.begin(), b.end(), t.begin() + 1);
          return total_cost(sub.clauses, t);
        };
        if (!done || exact(cpu_out.best) < exact(out.best)) {
          out = std::move(cpu_out);
          cpu_used = true;
        } else {
          gpu_used = true;
        }
        done = true;
      }
    }
    if (!done) {
      if (opts.cpu_walk == "weighted") {
        // OpenMP threads pay off on large pieces only (a round's parallel
        // loops cost more than they save on a few hundred clauses).
        WeightedOptions wo = opts.weighted;
        if (inst.n < 10000) wo.threads = 1;
        out = walk_weighted_cpu(inst, init0, p, wo);
      } else {
        out = walksat_cpu(inst, init0, p);
      }
      cpu_used = true;
    }
    if (big) mark("component " + std::to_string(k) + ": walked (" + std::to_string(out.flips) + " flips)");
    std::vector<uint8_t> best(out.best.size() + 1, 0);
    std::copy(out.best.begin(), out.best.end(), best.begin() + 1);
    return best;
  }

  // True if component k is the whole network with its ids unchanged: every
  // atom and every clause (atoms and clauses are listed in ascending order
  // within a component), each clause's literals sorted as extraction would
  // leave them.
  bool whole_network(int32_t k) const {
    const auto& cs = net.clauses;
    if (comps.atom_off[k + 1] - comps.atom_off[k] != net.num_atoms) return false;
    if (comps.num_clauses(k) != static_cast<int64_t>(cs.size())) return false;
    for (size_t c = 0; c < cs.size(); ++c)
      if (!std::is_sorted(cs.lits.begin() + cs.offsets[c], cs.lits.begin() + cs.offsets[c + 1])) return false;
    return true;
  }

  // A lower bound on the optimum of component k (network `pn`, n atoms)
  // whose best state so far is `best`; runs the exact path where the
  // solver asks for it, keeping its state in `best` when it is better, and
  // marks the component proven when its answer is optimal.
  // Sets *defer instead of running the exact path on a component small
  // enough for the batch (solve_batched runs them all as one ILP).
  double bound_component(int32_t k, const mln::Network& pn, int64_t n, bool enumerated, std::vector<uint8_t>& best,
                         bool* defer) {
    const int64_t m = static_cast<int64_t>(pn.clauses.size());
    if (enumerated) {  // solve_exact_cpu enumerated every state
      comp_proven[k] = 1;
      return total_cost(pn.clauses, best);
    }
    // The LP relaxation first: it is cheap, and on many MLNs (RC among
    // them) as high as the walk's cost, which proves the answer.
    // Its rounded solution is an answer too, optimal when the LP is integral.
    double cost = total_cost_threads(pn.clauses, best);
    double bound;
    if (m <= opts.lp_bound_max_clauses && ilp_available() && !stop.should_stop()) {
      LpOutcome lp = lp_relaxation(pn, opts.lp_seconds, &stop);
      bound = lp.bound;
      if (lp.solved && opts.solver == "auto") {  // "walksat" and "ilp" keep their own answers
        const double c = total_cost_threads(pn.clauses, lp.state);
        if (c < cost) {
          cost = c;
          best = std::move(lp.state);
          lp_used = true;
        }
      }
    } else {
      bound = unit_bound(pn);
    }
    const bool partitioned = n > (opts.device == "gpu" ? opts.gpu_partition_max_atoms : opts.partition_max_atoms);
    const bool try_ilp = ilp_available() && !stop.should_stop() && !(opts.solver != "ilp" && proven_within_tolerance(cost, bound)) &&
                         (opts.solver == "ilp" || (opts.solver == "auto" && !partitioned && m <= opts.ilp_max_clauses &&
                                                   opts.ilp_seconds > 0));
    if (try_ilp && m <= opts.ilp_batch_max_clauses) {
      *defer = true;
    } else if (IlpOutcome r; try_ilp && run_exact(pn, best, m > opts.ilp_full_max_clauses, r)) {
      if (r.cost < cost) {
        best = std::move(r.best);
        cost = r.cost;
      }
      bound = std::max(bound, r.bound);
      if (r.optimal) bound = std::max(bound, cost);
    }
    bound = std::min(bound, cost);
    if (proven_within_tolerance(cost, bound)) comp_proven[k] = 1;
    return bound;
  }

  // The exact path's time limit now: "ilp" until done or the job's
  // timeout; "auto" what is left of ilp_seconds (a budget for the whole
  // job), within the timeout.  A negative value: no time left.
  double ilp_limit() const {
    const double now = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double limit = 0;
    if (opts.solver != "ilp") {
      limit = opts.ilp_seconds - static_cast<double>(ilp_micros.load()) * 1e-6;
      if (limit <= 0) return -1;
    }
    if (opts.timeout_s > 0) {
      const double left = opts.timeout_s - now;
      if (left <= 0) return -1;
      limit = limit > 0 ? std::min(limit, left) : left;
    }
    return limit;
  }

  // The exact path on `pn` from `start` within ilp_limit(), timed into
  // ilp_micros; false (r untouched) when no time is left.  cutting_plane:
  // RockIt's rounds (they pay off where few of many clauses are ever
  // violated) rather than one ILP over every clause.
  bool run_exact(const mln::Network& pn, const std::vector<uint8_t>& start, bool cutting_plane, IlpOutcome& r) {
    const double limit = ilp_limit();
    if (limit < 0) return false;
    const auto t_ilp = std::chrono::steady_clock::now();
    IlpOptions io;
    io.time_limit_s = limit;
    io.stop = &stop;
    io.cutting_plane = cutting_plane;
    r = solve_ilp(pn, start, io);
    ilp_used = true;
    ilp_micros += std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t_ilp).count();
    return true;
  }

  // Components whose exact path waits for the batch.
  struct Deferred {
    int32_t k;
    mln::Network net;            // the component as a network of its own
    std::vector<int32_t> atoms;  // its local ids -> ids in the whole network
    double constant_cost;
  };
  std::mutex batch_mu;
  std::vector<Deferred> batch;
  double batch_bound_extra = 0;  // what the batch's ILP proved beyond its components' own bounds

  // The exact path over every deferred component at once: they are
  // independent, so one ILP of their union has as optimum the sum of theirs,
  // and one CBC run per cutting-plane round replaces one per component (on
  // class, 180 small rounds cost about a second).
  void solve_batched(std::vector<uint8_t>& truth) {
    if (batch.empty() || stop.should_stop()) return;
    mln::Network u;
    std::vector<uint8_t> start{0};
    std::vector<int32_t> first;  // first union atom id of each deferred component
    for (const Deferred& d : batch) {
      first.push_back(u.num_atoms + 1);
      const auto& cs = d.net.clauses;
      std::vector<int32_t> lits;
      for (size_t c = 0; c < cs.size(); ++c) {
        lits.assign(cs.lits.begin() + cs.offsets[c], cs.lits.begin() + cs.offsets[c + 1]);
        for (int32_t& l : lits) l += l > 0 ? u.num_atoms : -u.num_atoms;
        u.clauses.add(lits.data(), lits.size(), cs.weights[c]);
      }
      for (int32_t a : d.atoms) start.push_back(truth[a]);
      u.num_atoms += d.net.num_atoms;
    }
    // One ILP over every clause: on class the union of 100 unproven
    // components (34k clauses) proves in 1.2 s whole, 3.2 s by 7 rounds of
    // cutting planes.
    IlpOutcome r;
    if (!run_exact(u, start, false, r)) return;
    double own_bounds = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
      const Deferred& d = batch[i];
      std::vector<uint8_t> st(d.atoms.size() + 1, 0);
      for (size_t j = 0; j < d.atoms.size(); ++j) st[j + 1] = r.best[first[i] + static_cast<int32_t>(j)];
      const double c = total_cost(d.net.clauses, st) + d.constant_cost;
      if (c < comp_cost[d.k]) {
        comp_cost[d.k] = c;
        for (size_t j = 0; j < d.atoms.size(); ++j) truth[d.atoms[j]] = st[j + 1];
      }
      if (r.optimal) {  // the union's optimum: each part at its own optimum
        comp_bound[d.k] = comp_cost[d.k];
        comp_proven[d.k] = 1;
      }
      own_bounds += comp_bound[d.k];
    }
    if (!r.optimal) {
      double consts = 0;
      for (const Deferred& d : batch) consts += d.constant_cost;
      batch_bound_extra = std::max(0.0, r.bound + consts - own_bounds);
    }
  }

  // Components too small to fill the GPU (device "gpu", weighted design),
  // solved together: one weighted walk over their union, each component a
  // part with its own best state (walk_weighted.hpp), then each finished as
  // solve_component would (bound, exact path).  One walk instead of one per
  // component: on class ~100 components of 20-500 atoms, each of which
  // alone is a few thousand rounds of near-empty kernel launches.  If the
  // GPU fails, the components are walked on the CPU one by one.
  void solve_gpu_batch(const std::vector<int32_t>& ks, std::vector<uint8_t>& truth) {
    std::vector<int32_t> atoms, part;
    std::vector<int64_t> clauses;
    std::vector<uint8_t> init0;
    int64_t flips = 0;
    for (size_t j = 0; j < ks.size(); ++j) {
      const int32_t k = ks[j];
      const std::vector<uint8_t> init = initial_state(k);
      atoms.insert(atoms.end(), comps.atoms.begin() + comps.atom_off[k], comps.atoms.begin() + comps.atom_off[k + 1]);
      part.insert(part.end(), init.size() - 1, static_cast<int32_t>(j));
      init0.insert(init0.end(), init.begin() + 1, init.end());
      clauses.insert(clauses.end(), comps.clauses.begin() + comps.clause_off[k],
                     comps.clauses.begin() + comps.clause_off[k + 1]);
      flips += std::max<int64_t>(4, static_cast<int64_t>(flips_per_atom * static_cast<double>(init.size() - 1)));
    }
    std::vector<int32_t> local_of(static_cast<size_t>(net.num_atoms) + 1, 0);
    for (size_t i = 0; i < atoms.size(); ++i) local_of[atoms[i]] = static_cast<int32_t>(i + 1);
    SubNetwork sub = extract_subnetwork(net, atoms, clauses.data(), clauses.size(), local_of, nullptr);
    WalkInstance inst = build_walk_instance(sub.net);
    WalkParams p;
    p.flips_per_try = flips;
    p.max_tries = opts.max_tries;
    p.seed = derive_seed(opts.seed, 0x42415443ull + static_cast<uint64_t>(ks[0]));
    p.stop = &stop;
    // The batch's progress goes to its first component's slot.
    for (size_t j = 1; j < ks.size(); ++j) sink.start(ks[j], 0);
    p.on_progress = [this, k0 = ks[0]](double best, int64_t f) { sink.report(k0, best, f); };
    GpuWalkOptions g;
    g.design = GpuDesign::kWeighted;
    g.weighted = opts.weighted;
    g.part_of_atom = &part;
    WalkOutcome out;
    try {
      out = walksat_gpu(inst, init0, p, g);
      gpu_used = true;
      walk_used = true;
    } catch (const GpuError& e) {
      warn(std::string("GPU MaxWalkSAT failed, components solved on the CPU: ") + e.what());
      for (int32_t k : ks) solve_component(k, false, truth);
      return;
    }
    size_t at = 0;
    for (int32_t k : ks) {
      const size_t n = static_cast<size_t>(comps.atom_off[k + 1] - comps.atom_off[k]);
      std::vector<uint8_t> best(n + 1, 0);
      std::copy(out.best.begin() + at, out.best.begin() + at + n, best.begin() + 1);
      at += n;
      solve_component(k, true, truth, &best);
    }
  }

  // Component k's starting state (1-based over its atom list): coin flips
  // from its own seed, or the network's given start.
  std::vector<uint8_t> initial_state(int32_t k) const {
    const int64_t lo = comps.atom_off[k], hi = comps.atom_off[k + 1];
    Rng rng(derive_seed(opts.seed, static_cast<uint64_t>(k)));
    std::vector<uint8_t> init(static_cast<size_t>(hi - lo) + 1, 0);
    for (int64_t i = lo; i < hi; ++i)
      init[i - lo + 1] = net.init_truth.empty() ? static_cast<uint8_t>(rng.next() >> 63)
                                                : (net.init_truth[comps.atoms[i]] != 0);
    return init;
  }

  // Progress counts every component from the start, at the cost of its
  // starting state, so that the reported total is the whole network's
  // current cost (before, a component counted only once it had reported,
  // and the total rose while components started).
  // On OpenMP threads: one pass over the clauses (RC with 10^5 papers:
  // 17.8M clauses).
  void seed_progress(const std::vector<int32_t>& ks) {
    std::vector<uint8_t> t(static_cast<size_t>(net.num_atoms) + 1, 0);
    const auto& cs = net.clauses;
    const int64_t nk = static_cast<int64_t>(ks.size());
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t x = 0; x < nk; ++x) {  // components own disjoint atoms
      const int32_t k = ks[x];
      const std::vector<uint8_t> init = initial_state(k);
      for (int64_t i = comps.atom_off[k]; i < comps.atom_off[k + 1]; ++i)
        t[comps.atoms[i]] = init[i - comps.atom_off[k] + 1];
    }
    auto cost_of = [&](int64_t j) {
      const int64_t id = comps.clauses[j];
      return clause_cost(&cs.lits[cs.offsets[id]], cs.offsets[id + 1] - cs.offsets[id], cs.weights[id], t);
    };
    std::vector<double> c(ks.size(), 0.0);
    for (int64_t x = 0; x < nk; ++x) {  // large components: their clauses in parallel
      const int32_t k = ks[x];
      if (comps.num_clauses(k) < 100000) continue;
      double sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
      for (int64_t j = comps.clause_off[k]; j < comps.clause_off[k + 1]; ++j) sum += cost_of(j);
      c[x] = sum;
    }
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t x = 0; x < nk; ++x) {  // the others: one component per thread
      const int32_t k = ks[x];
      if (comps.num_clauses(k) >= 100000) continue;
      double sum = 0;
      for (int64_t j = comps.clause_off[k]; j < comps.clause_off[k + 1]; ++j) sum += cost_of(j);
      c[x] = sum;
    }
    for (int64_t x = 0; x < nk; ++x) sink.start(ks[x], c[x]);
  }

  // Component k of at most kTinyAtoms atoms, enumerated straight from the
  // network (solve_exact_tiny): what extraction, solve_piece's enumeration
  // and bound_component would give it, the same costs summed in the same
  // clause order.
  void solve_tiny_component(int32_t k, std::vector<uint8_t>& truth) {
    const int32_t* atoms = comps.atoms.data() + comps.atom_off[k];
    const int n = static_cast<int>(comps.num_atoms(k));
    const std::vector<uint8_t> init = initial_state(k);
    uint32_t start = 0;
    for (int i = 0; i < n; ++i) start |= static_cast<uint32_t>(init[i + 1] != 0) << i;
    const int64_t* cls = comps.clauses.data() + comps.clause_off[k];
    const int64_t m = comps.num_clauses(k);
    const TinyExact r = solve_exact_tiny(net.clauses, cls, m, comps.index_in_comp, n, start);
    cpu_used = true;
    sink.report(k, r.best_cost, r.flips);
    for (int i = 0; i < n; ++i) truth[atoms[i]] = static_cast<uint8_t>((r.best >> i) & 1);
    const auto& cs = net.clauses;
    double cost = 0;
    for (int64_t j = 0; j < m; ++j)
      cost += clause_cost(&cs.lits[cs.offsets[cls[j]]], cs.offsets[cls[j] + 1] - cs.offsets[cls[j]], cs.weights[cls[j]], truth);
    comp_proven[k] = 1;
    comp_bound[k] = cost;
    comp_cost[k] = cost;
    comp_done[k] = 1;
    sink.report(k, cost, 0);
  }

  // Solves component k and writes its best state into `truth`.
  // With `walked`, the component's state from a batched walk
  // (solve_gpu_batch) is used instead of walking it here.
  void solve_component(int32_t k, bool on_gpu, std::vector<uint8_t>& truth,
                       const std::vector<uint8_t>* walked = nullptr) {
    if (!walked && comps.num_atoms(k) <= kTinyAtoms && enumerable(comps.num_atoms(k)) &&
        comps.num_atoms(k) <= (on_gpu ? opts.gpu_partition_max_atoms : opts.partition_max_atoms)) {
      solve_tiny_component(k, truth);
      return;
    }
    std::vector<int32_t> atoms(comps.atoms.begin() + comps.atom_off[k], comps.atoms.begin() + comps.atom_off[k + 1]);
    // A component that is the whole network (RC: one component holds every
    // atom and clause) is solved in place: extracting it would copy every
    // clause (~0.5 GB at 17.8M clauses) only to get the same network back.
    SubNetwork sub;
    const bool whole = whole_network(k);
    const bool big = debug && comps.num_clauses(k) >= 100000;
    if (!whole)
      sub = extract_subnetwork(net, atoms, comps.clauses.data() + comps.clause_off[k], comps.num_clauses(k),
                               comps.index_in_comp, nullptr);
    if (big) mark("component " + std::to_string(k) + (whole ? ": the whole network" : ": extracted"));
    const mln::Network& piece_net = whole ? net : sub.net;
    const uint64_t seed = derive_seed(opts.seed, static_cast<uint64_t>(k));
    const std::vector<uint8_t> init = initial_state(k);
    const int64_t n = static_cast<int64_t>(atoms.size());
    const int64_t flips = std::max<int64_t>(4, static_cast<int64_t>(flips_per_atom * static_cast<double>(n)));
    std::vector<uint8_t> best;
    const int64_t part_max = on_gpu ? opts.gpu_partition_max_atoms : opts.partition_max_atoms;
    const bool enumerated = enumerable(n) && n <= part_max;
    if (walked) {
      best = *walked;
    } else if (opts.solver == "ilp" && !enumerated) {
      best = init;  // the exact path alone, from the starting state
    } else if (n > part_max) {
      walk_used = true;
      int parts = static_cast<int>((n + part_max - 1) / part_max);
      GaussSeidelStats st;
      SubSolver piece = [&](const mln::Network& pn, const std::vector<uint8_t>& pi, int64_t pf, uint64_t ps) {
        return solve_piece(k, on_gpu, pn, pi, pf, ps);
      };
      best = solve_gauss_seidel(piece_net, init, parts, opts.gauss_seidel_rounds, flips, seed, piece,
                                [this] { return stop.should_stop(); }, &st);
      partitions += st.partitions;
    } else {
      if (!enumerated) walk_used = true;
      best = solve_piece(k, on_gpu, piece_net, init, flips, seed);
    }
    bool defer = false;
    comp_bound[k] = bound_component(k, piece_net, n, enumerated, best, &defer) + sub.constant_cost;
    if (big) mark("component " + std::to_string(k) + ": bound");
    if (defer) {
      std::lock_guard<std::mutex> lock(batch_mu);
      batch.push_back({k, piece_net, atoms, sub.constant_cost});
    }
    for (size_t i = 0; i < atoms.size(); ++i) truth[atoms[i]] = best[i + 1];
    comp_cost[k] = total_cost_threads(piece_net.clauses, best) + sub.constant_cost;
    comp_done[k] = 1;
    sink.report(k, comp_cost[k], 0);
    if (big) mark("component " + std::to_string(k) + ": done");
  }
};

}  // namespace

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
  auto cost_of = [&](int64_t c) {
    return clause_cost(&cs.lits[cs.offsets[c]], cs.offsets[c + 1] - cs.offsets[c], cs.weights[c], res.truth);
  };
  for (int32_t k = 0; k < run.comps.count; ++k) {
    if (opts.skip_components_without_query && !run.comps.has_query[k]) continue;
    if (run.comp_done[k]) {
      res.cost += run.comp_cost[k];
      res.bound += run.comp_bound[k];
      res.proven_components += run.comp_proven[k];
    } else {  // not reached before a stop: its all-false state
      for (int64_t j = run.comps.clause_off[k]; j < run.comps.clause_off[k + 1]; ++j) res.cost += cost_of(run.comps.clauses[j]);
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
    if (cost_of(c) > 0) ++hard;
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
  res.device_used = run.gpu_used && run.cpu_used ? "cpu+gpu" : run.gpu_used ? "gpu" : "cpu";
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
