// WalkSAT on one (sub)network, on one CPU thread, Tuffy's MAP variant
// (MRF.inferWalkSATwithBlocks; docs/tuffy-reference.md section 7.2).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "format/network.hpp"
#include "core/base/run_control.hpp"
#include "core/walk/walk_instance.hpp"

namespace mln::solver {

// Tuffy's greedy throttling: an uphill flip is skipped with this probability.
constexpr double kGreedyThrottle = 0.7;

struct WalkParams {
  int64_t flips_per_try = 0;
  int max_tries = 3;
  // walksat_cpu runs tries first_try .. last_try - 1 of the max_tries
  // (last_try 0: to the end, adaptive_noise's extra tries included), the
  // first of them from `init`: solve_map walks every component's first try
  // before any component's second.  The other walks take their tries whole
  // (max_tries).
  int first_try = 0;
  int last_try = 0;
  double random_step = 0.5;
  bool adaptive_noise = false;  // see SolveOptions::adaptive_noise
  bool dont_break = false;
  double hard_first = 0;   // probability of repairing a violated hard clause first (see walksat_cpu)
  uint64_t seed = 1;
  StopToken* stop = nullptr;  // polled every 4096 steps
  // Called every 4096 steps with (best cost so far, flips since last call).
  std::function<void(double, int64_t)> on_progress;
  // Test hook: called after every flip with the 0-based atom (CPU only).
  std::function<void(uint32_t)> on_flip;
};

struct WalkOutcome {
  std::vector<uint8_t> best;  // best state found, 0-based atoms
  int64_t best_cost_fixed = 0;
  double best_cost = 0;       // best_cost_fixed / scale (callers recompute exactly)
  int64_t flips = 0;          // steps taken, skipped steps included
  bool satisfied = false;     // reached a state with nothing violated
  bool stopped = false;       // the stop token fired
};

// Largest (sub)network solve_exact_cpu accepts: 2^20 flips at most.
constexpr int32_t kExactMaxAtoms = 20;

// The optimum of a small instance by enumerating all 2^n states in Gray-code
// order (one incremental flip per state), starting from `init`.  Exact and,
// for a dozen atoms, far cheaper than WalkSAT's tries.
WalkOutcome solve_exact_cpu(const WalkInstance& inst, const std::vector<uint8_t>& init);

// solve_exact_cpu for a component of at most kTinyAtoms atoms, read straight
// from the parent network: clauses[0..m) are its clause ids, local_of maps
// its atoms to 1..n, and bit i of a state is local atom i + 1.  The same
// answer as extracting the component, building its instance and calling
// solve_exact_cpu (the same fixed-point costs, the same Gray-code order from
// `init`, ties kept at the earlier state), without their ~30 allocations,
// which dominate where a network has very many tiny components
// (docs/solver/walk.md).
constexpr int kTinyAtoms = 6;
struct TinyExact {
  uint32_t best = 0;         // the state
  double best_cost = 0;      // its cost (fixed point / scale)
  int64_t flips = 0;         // states visited after the first
};
TinyExact solve_exact_tiny(const mln::ClauseSet& cs, const int64_t* clauses, int64_t m,
                           const std::vector<int32_t>& local_of, int n, uint32_t init);

// Runs max_tries tries of WalkSAT from `init` (size n, 0/1 per atom), or
// those from first_try to last_try; tries after the first restart from the
// previous best (COPY_LOW).
WalkOutcome walksat_cpu(const WalkInstance& inst, const std::vector<uint8_t>& init,
                        const WalkParams& params);

}  // namespace mln::solver
