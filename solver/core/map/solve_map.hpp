// MAP inference by MaxWalkSAT over a ground network, the way Tuffy does it:
// connected components, METIS partitions of giant components solved
// Gauss-Seidel style, WalkSAT per (sub)network on CPU threads and on the GPU.
//
// No database and no CUDA types here.  See docs/solver/map.md.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "format/network.hpp"
#include "options/options.hpp"
#include "core/walk/walk_weighted.hpp"

namespace mln::solver {

struct SolveOptions {
  // run-wide flips per try; 0: 100 x #atoms (prorated per component)
  int64_t max_flips = options::default_of<int64_t>(options::Id::kMaxFlips, options::kMap);
  // WalkSAT tries (COPY_LOW restarts)
  int max_tries = options::default_of<int>(options::Id::kMaxTries, options::kMap);
  // probability of a random-walk step
  double random_step = options::default_of<double>(options::Id::kRandomStep, options::kMap);
  // When set, the CPU walks lower the noise from try to try (p, 0.4p, 0.2p,
  // repeating), each try restarting from the best state so far (COPY_LOW),
  // and after max_tries keep trying (up to 20x as many tries in all) while
  // one of the last 30 tries improved the best cost, making at most as many
  // flips again as the requested tries (at least 10^7).
  // Used when the caller did not pin -randomStep: on class it reaches
  // Tuffy's cost where a fixed p = 0.5 stalls a few units above it.
  bool adaptive_noise = false;
  // never flip an atom whose flip breaks > 1e7 of weight
  bool dont_break = options::default_of<bool>(options::Id::kDontBreak, options::kMap);
  // While hard clauses are violated, the CPU walk picks the clause to repair
  // among them with this probability (Tuffy: 0, uniform over all violated
  // clauses).  Measured (bench/gen, seeds 1-3): on class with hard rules the
  // walk ends with 190 hard clauses violated, the proven minimum, where
  // uniform picks left 191; on hard-conflict RC with 1,000 papers it reaches
  // the proven optimum (2,170) where uniform picks left 2,200-2,216.
  double hard_first = 0.9;
  // RNG seed.  The answer is a function of the network, the options (the
  // thread count among them) and the device: every stop rule counts flips,
  // rounds, iterations or simplex work, and the threads' results are
  // combined in a fixed order.  Only the time caps (timeout_s, ilp_seconds,
  // lp_seconds) read the clock; where one decided, SolveResult::time_capped.
  uint64_t seed = options::default_of<uint64_t>(options::Id::kSeed, options::kMap);
  // CPU worker threads; 0 = hardware concurrency
  int threads = options::default_of<int>(options::Id::kThreads, options::kMap);
  // wall-clock cap for the whole solve; 0 = none
  double timeout_s = options::default_of<double>(options::Id::kTimeout, options::kMap);
  // auto | cpu | gpu
  options::Device device = options::default_of<options::Device>(options::Id::kDevice, options::kMap);
  // Tuffy's default (no -nopush)
  bool skip_components_without_query = options::default_of<bool>(options::Id::kSkipComponentsWithoutQuery, options::kMap);
  // Components (or partitions) with at least this many atoms go to the GPU
  // in "auto" mode: below the crossover the CPU walk ends first
  // (measurements: docs/solver/map.md, bench/results/*/defaults.md).
  int64_t gpu_min_atoms = 100000;
  // ... or with at least this many clauses (the same crossover, counted in
  // clauses for networks of many small components).
  int64_t gpu_min_clauses = 50000;
  // Components (or partitions) with at most this many atoms are solved
  // exactly by enumerating their 2^n states (at most kExactMaxAtoms = 20);
  // 0 turns it off.  On class, 431 of 546 components have 10 atoms: 1,024
  // flips each instead of ~34 WalkSAT tries of 1,000 flips, at the optimum.
  int exact_max_atoms = options::default_of<int>(options::Id::kExactMaxAtoms, options::kMap);
  // Components with more atoms than this are split by METIS and solved
  // Gauss-Seidel style.  A whole component is walked unless it is far
  // beyond what one walk state holds: METIS and its graph cost more than
  // the split saves (docs/solver/map.md).  Tuffy splits at ~4 GB of
  // estimated memory, i.e. practically never.
  int64_t partition_max_atoms = 64000000;
  // The same limit for components that go to the GPU walk, which holds a
  // whole component in device memory: ~48 bytes per atom and ~40 per clause
  // (RC at 5.5M atoms / 10^8 clauses: ~4.5 GB).  Splitting there would only
  // add METIS (minutes at that size) and serial Gauss-Seidel rounds.  If the
  // device runs out of memory, the component is solved on the CPU instead.
  int64_t gpu_partition_max_atoms = 64000000;
  int gauss_seidel_rounds = 5;
  // The walk on CPU pieces: "walksat" (Tuffy's MaxWalkSAT), "weighted" (the
  // GPU's weighted walk on OpenMP threads, `weighted.threads`; one thread
  // for pieces under 10,000 atoms) or "auto" (the default): the weighted walk
  // for pieces of at least cpu_weighted_min_atoms atoms, MaxWalkSAT below.
  // The weighted walk wins on large structured pieces (RC, 10^4 papers: the
  // cost NuWLS reaches, 11% below MaxWalkSAT's) and on pieces with a wide LP
  // gap from 2,000 atoms (independent sets, mis-2000: 1,219 against 1,230;
  // mis-20000: 12,209 against 12,619); on RC and hard-conflict RC at 10^3
  // papers both reach the same cost.  MaxWalkSAT below 1,000 atoms: on
  // class-hard's small components it ends lower (85.37 against 87.73 above
  // 10^10), and the batch ILP or the bound finishes them anyway
  // (bench/results/cpu-2core/defaults.md).
  options::CpuWalk cpu_walk = options::default_of<options::CpuWalk>(options::Id::kCpuWalk, options::kMap);
  int64_t cpu_weighted_min_atoms = 1000;
  // Device "gpu", weighted design: components below gpu_min_atoms are walked
  // together, in batches of at most this many clauses (solve_map.cpp).
  int64_t gpu_batch_max_clauses = 8000000;
  WeightedOptions weighted;     // the weighted walk's settings (both backends)
  // Which MAP solver answers (docs/solver/map.md, "Bound, gap and the exact
  // path"): "walksat" (MaxWalkSAT only), "ilp" (every component by the exact
  // ILP path, COIN-OR CBC with cutting planes, from the starting state;
  // bounded only by timeout_s) or "auto" (MaxWalkSAT, then the exact path
  // on each component of at most ilp_max_clauses clauses within
  // ilp_seconds for the whole solve, after the LP relaxation's rounded
  // solution; the best answer is kept).  Every answer carries a lower bound
  // on the optimum.
  options::MapSolver solver = options::default_of<options::MapSolver>(options::Id::kSolver, options::kMap);
  // "auto": the exact path's time cap for the whole solve (s; 0: no exact
  // path).  A cap, not the budget: ilp_work ends the exact path first on
  // the networks it was sized on, and where the cap ends it instead the
  // answer says so (SolveResult::time_capped).
  double ilp_seconds = options::default_of<double>(options::Id::kIlpSeconds, options::kMap);
  // "auto": the exact path's budget for the whole solve, in CBC's simplex
  // work (IlpOptions::work_limit: rows and columns times simplex
  // iterations); 0: none.  With the stall rule's window ilp_stall_work.
  double ilp_work = 5e9;
  double ilp_stall_work = 1e9;
  // "auto": the exact path runs, after every component has been walked and
  // bounded, only while the whole answer's gap to its lower bound,
  // core/base/gap.hpp's relative_gap, is above this: an answer proven within it is
  // returned at once.  0.5% is a bound users of MaxSAT and MIP read as
  // "as good as optimal" for weights that are themselves estimates; on
  // class it saves the 1.2 s batch ILP that closes a 0.23% gap
  // (docs/solver/map.md).  0: prove every component that the budget allows.
  double gap_tolerance = options::default_of<double>(options::Id::kGapTolerance, options::kMap);
  // "auto": larger components keep the walk's answer.  No larger than
  // lp_bound_max_clauses: the ILP's root is the LP relaxation, and where that
  // is too large to bound, CBC proves nothing either (RC, 10^4 papers, 1.77M
  // clauses on 2 cores: 18 s of CBC after the walk for a bound of 0).
  int64_t ilp_max_clauses = 1000000;
  // Components of at most this many clauses go to the ILP whole; larger
  // ones by cutting-plane inference (ilp_map.hpp).  0: always cutting
  // planes.  Measured (2 cores, bench/map_trust.sh): generated RC with 300
  // papers (52k clauses) proves in 2.0 s whole against 2.8 s by cutting
  // planes, but its hard-conflict variant in 25.8 s whole against 2.8 s.
  int64_t ilp_full_max_clauses = 0;
  // Components of at most this many clauses go to the exact path together,
  // as one ILP, after every component has been walked.
  int64_t ilp_batch_max_clauses = 20000;
  // Components of at most this many clauses get the LP relaxation's bound
  // when the exact path did not prove theirs; larger ones the unit bound.
  int64_t lp_bound_max_clauses = 1000000;
  // A time cap on one LP relaxation (s), Clp or PDHG; 0: none.  Clp stops
  // at an iteration count that grows with the LP (ilp_map.cpp), PDHG at
  // pdhg_cpu_work or pdhg_gpu_work over the LP's nonzeros in iterations
  // (between 500 and PdhgOptions::max_iterations; twice that for
  // components above ilp_max_clauses, which get no exact path).
  double lp_seconds = 0;
  double pdhg_cpu_work = 2147483648.0;     // 2^31 nonzero visits
  double pdhg_gpu_work = 1099511627776.0;  // 2^40
  // Components of at least this many clauses, and every component above
  // lp_bound_max_clauses, get the LP relaxation's bound by PDHG (lp_pdhg.hpp)
  // instead of Clp, on a thread beside their walk (its iterations above).
  // From 10^5 clauses PDHG reaches Clp's optimum within 0.5% several times
  // sooner; below, both take well under a second (docs/performance.md,
  // "Measured choices"; bench/results/cpu-2core/lp_bound.md).
  int64_t pdhg_min_clauses = 100000;
  bool pdhg_bound = true;           // false: no PDHG (Clp up to lp_bound_max_clauses, the unit bound above)
  // Device bytes a GPU-walked component's walk and PDHG bound may plan on
  // together (gpu_budget.hpp: the bound beside the walk, after it, or not
  // on the GPU); 0: what the device has free when the component starts.
  int64_t gpu_memory_limit = 0;
  // Called with the current total best cost and flips so far.  May be called
  // from any worker thread (calls are serialised), at most ~10x per second.
  std::function<void(double best_cost, int64_t flips)> progress;
  double progress_interval_s = 0.1;  // least time between two progress calls
  std::atomic<bool>* cancel = nullptr;  // set to true to stop early
};

struct SolveResult {
  std::vector<uint8_t> truth;   // by atom id, size num_atoms + 1 (index 0 unused)
  double cost = 0;              // sum of the best costs of the solved components (Tuffy's figure)
  int64_t hard_violated = 0;    // violated clauses with |w| >= kHardThreshold in solved components
  int64_t flips = 0;            // steps taken, skipped steps included (as Tuffy counts them)
  double seconds = 0;
  int components = 0;           // all components of the network
  int solved_components = 0;    // those that were searched (query atoms, or skipping off)
  int partitions = 0;           // METIS partitions over all split components (0 when none split)
  std::string device_used;      // "cpu", "gpu" or "cpu+gpu": the devices whose walks (or enumeration) produced the kept states
  // A lower bound on the optimum of the solved components (<= cost): the
  // exact path's bound where it ran, else the LP relaxation's or the unit
  // clauses' (ilp_map.hpp).  optimal: every solved component's answer is
  // proven optimal (enumeration, the exact path, or a bound that meets the
  // cost), so cost is the optimum.
  double bound = 0;
  bool optimal = false;
  int proven_components = 0;    // solved components whose answer is proven optimal
  std::string solver_used;      // what produced the answer: walksat, ilp and/or lp, joined by "+"
  double ilp_seconds = 0;       // time in the exact path, summed over components
  size_t gpu_memory_peak_bytes = 0;  // device memory held by the GPU walks at their peak (0 without GPU)
  std::vector<std::string> warnings;
  bool cancelled = false;       // stopped by the cancel flag or the timeout
  // A time cap (the timeout, ilp_seconds) decided part of the answer: the
  // search, the bound or the exact path stopped at the clock, so a rerun
  // may differ.  False: the answer is a function of the network, the
  // options and the device.
  bool time_capped = false;
  // A walk ended by the cancel flag or the timeout before its own end (its
  // stall rules or flip budget), or a component left at its start: the
  // answer is the search's so far.  A timeout that ends only the bound or
  // the exact path leaves it false.
  bool walk_cut = false;
  // How the answer was reached: seconds from the start of the search to the
  // first whole answer (every component walked and bounded) and to the
  // final bound; and why the search ended: "proven optimal", "within the gap
  // tolerance", "exact path budget spent" (ilp_work), "exact path time cap"
  // (ilp_seconds), "timeout", "cancelled" or "search finished" (walks
  // ended, no exact path asked for or possible).
  double first_answer_s = 0;
  double bound_s = 0;
  std::string stop_reason;
};

// MAP state of `net` by MaxWalkSAT.  Throws std::invalid_argument on bad
// options and std::runtime_error when device == "gpu" and no GPU is usable.
SolveResult solve_map(const mln::Network& net, const SolveOptions& opts);

// True when this library was built with CUDA and a device is usable now.
bool gpu_available(std::string* why_not = nullptr);

}  // namespace mln::solver
