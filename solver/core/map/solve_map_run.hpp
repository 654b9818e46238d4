// solve_map's shared run state (solve_map.cpp schedules the components;
// solve_map_walk.cpp solves one, solve_map_exact.cpp bounds and proves).
// Internal to solve_map: no other caller.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/base/components.hpp"
#include "core/map/gpu_budget.hpp"
#include "core/map/ilp_map.hpp"
#include "core/bound/lp_pdhg.hpp"
#include "core/map/solve_map.hpp"
#include "core/base/run_control.hpp"
#include "core/base/subnetwork.hpp"
#include "core/walk/walksat_cpu.hpp"

namespace mln::solver::map_detail {

// Mixed into a walk's seed in the second pass (its tries after the first).
constexpr uint64_t kSecondPassSeed = 0x5041535332ull;
// The least iterations of a PDHG bound (Run::set_pdhg_iterations).
constexpr int64_t kPdhgMinIterations = 500;

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
  // The walk's tries in two passes (solve_map): the first try of every
  // component, then the other tries, so that a timeout with a large
  // max_tries cannot leave most components unsearched (docs/solver/map.md,
  // "Budget").  pass: the one running (0 or 1); comp_more: walked in the
  // first pass, its bound and exact path wait for its other tries.
  int passes = 1;
  int pass = 0;
  std::vector<uint8_t> comp_more;
  std::atomic<bool> walk_used{false}, ilp_used{false}, lp_used{false};
  std::atomic<int64_t> ilp_micros{0};
  std::atomic<int64_t> ilp_work{0};      // the exact path's work so far (IlpOutcome::work)
  std::atomic<bool> ilp_spent{false};    // the exact path's work budget (ilp_work) ran out
  // A time cap (the timeout, ilp_seconds, lp_seconds) decided part of the
  // answer: it may differ from run to run (SolveResult::time_capped).
  std::atomic<bool> time_capped{false};
  std::atomic<bool> cpu_used{false}, gpu_used{false};
  std::atomic<bool> walk_stopped{false};  // a walk ended by the stop token (SolveResult::walk_cut)
  std::mutex warn_mu;
  std::vector<std::string> warnings;
  std::atomic<int> partitions{0};

  const std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  // MLN_MAP_DEBUG=1: phase times on stderr (docs/solver/map.md), for finding
  // where a large network's seconds go.
  const bool debug = std::getenv("MLN_MAP_DEBUG") != nullptr;
  std::mutex debug_mu;
  double seconds_so_far() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }
  void mark(const std::string& what) {
    if (!debug) return;
    const double s = seconds_so_far();
    std::lock_guard<std::mutex> lock(debug_mu);
    std::fprintf(stderr, "[solve_map %8.4f s] %s\n", s, what.c_str());
  }

  Run(const mln::Network& n, const SolveOptions& o)
      : net(n), opts(o), comps(find_components(n)), stop(o.cancel, o.timeout_s), sink(o.progress, comps.count, o.progress_interval_s) {}
  // Side bounds still running (an exception left their components) are
  // cancelled and joined.
  ~Run();

  // The PDHG bound of one component, on a thread of its own beside the
  // component's walk (solve_map_exact.cpp): started when the walk starts,
  // joined by bound_component, which gives it the walk's answer's target.
  // Its outcome is a function of its own iterations and that target
  // (PdhgThread::finish), not of how far it got while the walk ran.
  struct SideBound {
    SubNetwork sub;                  // the component, when it is not the whole network (outlives lp)
    std::unique_ptr<PdhgThread> lp;
    int64_t window = 0;              // PdhgThread::finish's, in iterations
  };
  std::mutex side_mu;
  std::map<int32_t, std::unique_ptr<SideBound>> side;
  // Components whose bound the device could not hold beside their walk
  // (gpu_budget.hpp): After, it runs on the GPU once the walk has given its
  // memory back; None, the unit bound.  Guarded by side_mu.
  std::map<int32_t, BoundPlace> bound_place;
  // Where component k's PDHG bound runs when its walk is on the GPU
  // (recorded in bound_place unless Beside, with a warning that says why).
  BoundPlace plan_bound(int32_t k, const mln::Network& pn, bool on_gpu);
  // Where plan_bound put component k's bound.
  BoundPlace placed(int32_t k);
  // Component k's bound after its walk, on the GPU alone (BoundPlace::After).
  PdhgOutcome bound_after_walk(int32_t k, const mln::Network& pn, double target);
  // Whether component k (m clauses) is bounded by PDHG rather than Clp or
  // the unit bound.
  bool pdhg_sized(int64_t m) const;
  // A PDHG bound's iterations on `pn`, beside the walk or after it
  // (PdhgOptions::max_iterations, gpu_max_iterations): a fixed amount of
  // work over the LP's nonzeros, twice as much where the component is too
  // large for the exact path (the bound is then all the proof it gets).
  void set_pdhg_iterations(const mln::Network& pn, PdhgOptions& po) const;
  // Starts component k's side bound on `pn` (its network: `net` or an
  // extracted copy, which the side bound then keeps), CPU threads: one, or
  // the pool's when the component is walked on the GPU.
  void start_side_bound(int32_t k, const mln::Network& pn, const SubNetwork& sub, bool on_gpu);
  // Component k's PDHG outcome: its side bound joined (after setting its
  // target to `target`), or a solve here when none was started.
  PdhgOutcome side_bound(int32_t k, const mln::Network& pn, double target);
  // Component k's running side bound, if one was started (else nullptr).
  SideBound* side_of(int32_t k);
  // Component k's side bound, taken out of `side` (nullptr if none).
  std::unique_ptr<SideBound> take_side(int32_t k);

  // Whether a piece of n atoms and m clauses is walked on the GPU when one is
  // usable: any with device "gpu"; in "auto", gpu_min_atoms or gpu_min_clauses.
  bool gpu_sized(int64_t n, int64_t m) const { return opts.device == options::Device::kGpu || gpu_big(n, m); }
  // Whether it is large enough for a GPU walk of its own in "auto" (with
  // device "gpu", smaller ones are walked together in batches).
  bool gpu_big(int64_t n, int64_t m) const { return n >= opts.gpu_min_atoms || m >= opts.gpu_min_clauses; }

  // Whether a CPU walk of a piece of n atoms is the weighted walk (cpu_walk).
  bool weighted_on_cpu(int64_t n) const {
    return opts.cpu_walk == options::CpuWalk::kWeighted || (opts.cpu_walk == options::CpuWalk::kAuto && n >= opts.cpu_weighted_min_atoms);
  }

  // Whether a (sub)network of n atoms is solved by enumerating its states.
  bool enumerable(int64_t n) const { return n <= std::min<int64_t>(opts.exact_max_atoms, kExactMaxAtoms); }

  // Adds a warning (thread safe).
  void warn(std::string w) {
    std::lock_guard<std::mutex> lock(warn_mu);
    warnings.push_back(std::move(w));
  }

  // Best state of one (sub)network of component k: GPU when asked and big
  // enough (CPU fallback on any CUDA failure), CPU otherwise; this pass's
  // tries.  whole: the piece is the whole component (its walk's best costs
  // go to the progress; a partition's are not the component's).
  std::vector<uint8_t> solve_piece(int32_t k, bool on_gpu, const mln::Network& sub, const std::vector<uint8_t>& init,
                                   int64_t flips, uint64_t seed, bool whole);

  // The walk's settings for a piece of component k: this pass's tries of
  // walksat_cpu, progress to k's slot (whole) or its flips alone.
  WalkParams walk_params(int32_t k, int64_t flips, uint64_t seed, bool whole);

  // This pass's tries for a walk that takes them whole (the GPU walks, the
  // weighted walk): all of max_tries in one pass, else 1 and the rest (0
  // when max_tries is 1 and only walksat_cpu's adaptive tries are left).
  int tries_this_pass() const { return passes == 1 ? opts.max_tries : pass == 0 ? 1 : opts.max_tries - 1; }

  // Component k's state in `truth` (1-based over its atom list).
  std::vector<uint8_t> current_state(int32_t k, const std::vector<uint8_t>& truth) const;

  // Component k, which the search never reached (the time ran out first):
  // writes its starting state into `truth` (the progress counted it at
  // that); returns its cost.
  double settle_unreached(int32_t k, std::vector<uint8_t>& truth);

  // True if component k is the whole network with its ids unchanged: every
  // atom and every clause (atoms and clauses are listed in ascending order
  // within a component), each clause's literals sorted as extraction would
  // leave them.
  bool whole_network(int32_t k) const;

  // Component k as a network: the whole network itself where it is one
  // (whole_network), else extracted into `sub`; its atom ids into `atoms`.
  const mln::Network& component_network(int32_t k, std::vector<int32_t>& atoms, SubNetwork& sub) const;

  // A lower bound on the optimum of component k (network `pn`, n atoms)
  // whose best state so far is `best`; runs the exact path where the
  // solver asks for it, keeping its state in `best` when it is better, and
  // marks the component proven when its answer is optimal.
  // Sets *defer instead of running the exact path on a component small
  // enough for the batch (solve_batched runs them all as one ILP).  `lp`
  // (may be null): the component's LP relaxation by Clp, already solved.
  double bound_component(int32_t k, const mln::Network& pn, int64_t n, bool enumerated, std::vector<uint8_t>& best,
                         bool* defer, LpOutcome* lp = nullptr);

  // The exact path's time cap now: "ilp" until done or the job's
  // timeout; "auto" what is left of ilp_seconds (a cap for the whole
  // job), within the timeout.  A negative value: no time left.
  double ilp_limit() const;
  // What is left of the exact path's work budget (SolveOptions::ilp_work,
  // for the whole job; "auto" only, 0: none).
  double ilp_work_left() const;

  // The exact path on `pn` from `start` within ilp_work_left() and the cap
  // ilp_limit(), its work into ilp_work; false (r untouched) when no work
  // or no time is left.  cutting_plane:
  // RockIt's rounds (they pay off where few of many clauses are ever
  // violated) rather than one ILP over every clause.
  bool run_exact(const mln::Network& pn, const std::vector<uint8_t>& start, bool cutting_plane, IlpOutcome& r);

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
  void solve_batched(std::vector<uint8_t>& truth);

  // Solver "auto": components too large for the batch whose exact path
  // waits until every component is walked and bounded (finish_exact).
  std::vector<int32_t> exact_later;
  bool gap_stopped = false;  // the exact path was skipped or ended: the gap was within tolerance

  // The exact path after the walks: "auto" runs it only while the whole
  // answer's gap exceeds gap_tolerance, the batch first, then the large
  // components widest gap first; "ilp" runs the batch.
  void finish_exact(std::vector<uint8_t>& truth);

  // Solver auto, a component's first try of two: true if its answer (the
  // better of the walk's `cost` and the LP's rounded point) is within
  // gap_tolerance of the component's LP bound (Clp-sized components only;
  // the LP solved is left in `lp` for bound_component).
  bool first_try_within_gap(int32_t k, const mln::Network& pn, double cost, LpOutcome& lp);
  // Whether the solved components' cost is within gap_tolerance of their
  // bound (comp_cost, comp_bound of the components done, the batch's extra).
  bool within_gap() const;

  // Components too small to fill the GPU (device "gpu", weighted design),
  // solved together: one weighted walk over their union, each component a
  // part with its own best state (walk_weighted.hpp), then each finished as
  // solve_component would (bound, exact path).  One walk instead of one per
  // component: on class ~100 components of 20-500 atoms, each of which
  // alone is a few thousand rounds of near-empty kernel launches.  If the
  // GPU fails, the components are walked on the CPU one by one.
  void solve_gpu_batch(const std::vector<int32_t>& ks, std::vector<uint8_t>& truth);

  // Whether component k is solved: Tuffy leaves components without query
  // atoms as they start (skip_components_without_query, no -nopush).
  bool searched(int32_t k) const { return !opts.skip_components_without_query || comps.has_query[k]; }

  // Component k's starting state (1-based over its atom list): every atom
  // false where choose_starts found that cheaper, else coin_state(k).
  std::vector<uint8_t> initial_state(int32_t k) const;
  // Coin flips from component k's own seed, or the network's given start.
  std::vector<uint8_t> coin_state(int32_t k) const;
  // Each searched component's start by StartCosts' rule (network_cost.hpp),
  // and its cost: start_false, start_cost.  Once, before any component is
  // solved; on OpenMP threads, one pass over their clauses.
  void choose_starts();
  std::vector<uint8_t> start_false;
  std::vector<double> start_cost;

  // Progress counts every component from the start, at the cost of its
  // starting state, so that the reported total is the whole network's
  // current cost and does not rise as components start.
  void seed_progress(const std::vector<int32_t>& ks);

  // Component k of at most kTinyAtoms atoms, enumerated straight from the
  // network (solve_exact_tiny): what extraction, solve_piece's enumeration
  // and bound_component would give it, the same costs summed in the same
  // clause order.
  void solve_tiny_component(int32_t k, std::vector<uint8_t>& truth);

  // Solves component k and writes its best state into `truth`.
  // With `walked`, the component's state from a batched walk
  // (solve_gpu_batch) is used instead of walking it here.  In the first of
  // two passes, a walked component keeps its first try's state (comp_more)
  // and returns; the second walks its other tries from there (or, once the
  // time has run out, none), then bounds it.
  void solve_component(int32_t k, bool on_gpu, std::vector<uint8_t>& truth,
                       const std::vector<uint8_t>* walked = nullptr);
};

}  // namespace mln::solver::map_detail
