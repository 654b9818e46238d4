// MC-SAT (Poon & Domingos 2006) driving SampleSAT (Wei, Erenrich & Selman
// 2004) on one (sub)network, one chain on one CPU thread; and exact
// marginals by enumeration for small ones.  docs/solver/marginal.md, "Marginal
// inference (MC-SAT)", says where this follows the papers and not Tuffy.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/base/run_control.hpp"
#include "core/walk/walksat_cpu.hpp"

namespace mln::solver {

struct McsatParams {
  int64_t samples = 100;          // samples this chain counts
  int64_t burn_in = 0;            // MC-SAT steps this chain discards first
  double mcsat_param = 1.0;       // keep a satisfied clause with 1 - exp(-|w| * x)
  double sa_temperature = 10;     // accept an uphill SA move of delta with exp(-delta * sa)
  double sa_probability = 0.5;    // share of SA steps while an alive clause is violated
  double random_step = 0.5;       // WalkSAT random-walk probability
  int64_t max_flips = 0;          // SampleSAT steps per call at most; 0: 100 x atoms
  int64_t steps_after_sat = 0;    // SampleSAT steps after M is satisfied; 0: four sweeps (4 x atoms)
  uint64_t seed = 1;
  bool start_given = false;       // init is the chain's start state as it is (no MaxWalkSAT try first)
  StopToken* stop = nullptr;      // polled every few thousand steps
  // Called now and then with the number of samples counted since the last call.
  std::function<void(int64_t)> on_samples;
  // Called with the chain's state (0-based atoms) at each counted sample
  // (weight learning counts clause features there).
  std::function<void(const std::vector<uint8_t>&)> on_sample;
};

struct McsatOutcome {
  std::vector<int64_t> true_count;  // per atom (0-based): counted samples with the atom true
  int64_t counted = 0;              // samples counted
  double cost_sum = 0;              // sum over counted samples of the instance's cost
  int64_t flips = 0;                // SampleSAT steps, the initial hard-clause walk included
  int64_t unsat_calls = 0;          // SampleSAT calls that kept the previous state
  bool hard_satisfied = true;       // the start state satisfied every hard clause
  bool stopped = false;             // the stop token fired
  std::vector<uint8_t> final_state; // the chain's last state (0-based; a later run may start there)
  std::vector<double> feature_sum;   // GPU with features: sum over samples of each feature
  std::vector<double> feature_outer; // ... and of their products (k x k)
};

// Budget and after-SAT steps of one SampleSAT call on an instance of n atoms.
inline int64_t mcsat_flips_budget(const McsatParams& p, int32_t n) {
  return p.max_flips > 0 ? p.max_flips : 100 * static_cast<int64_t>(n > 0 ? n : 1);
}
inline int64_t mcsat_steps_after_sat(const McsatParams& p, int32_t n) {
  // Four sweeps.  SampleSAT starts from a coin-flip state, and the first
  // solution WalkSAT finds is not uniform over SAT(M); the sweeps after it
  // (Metropolis moves among M's solutions) even it out.  Four: fewer were
  // measurably less accurate on the random test networks, more gained
  // nothing (docs/solver/marginal.md).
  return p.steps_after_sat > 0 ? p.steps_after_sat : 4 * static_cast<int64_t>(n > 0 ? n : 1);
}

// Whether clause c of `in` is hard, by its double weight: in.hard_fixed
// overflows int64 when the instance's weights are small (scale 2^40:
// 1e7 * 2^40 > 2^63).
inline bool mcsat_is_hard(const WalkInstance& in, int64_t c) {
  return std::fabs(static_cast<double>(in.w[c])) >= kHardThreshold * in.scale;
}

// MC-SAT's probability of keeping each clause in M when it is satisfied:
// 1 - exp(-|w| * mcsat_param); 2 (always) for hard clauses.  Shared by the
// CPU, parallel and GPU chains.
inline std::vector<float> mcsat_keep_probabilities(const WalkInstance& in, double mcsat_param) {
  std::vector<float> keep(in.m);
  for (int64_t c = 0; c < in.m; ++c)
    keep[c] = mcsat_is_hard(in, c)
                  ? 2.0f
                  : static_cast<float>(-std::expm1(-std::fabs(static_cast<double>(in.w[c]) / in.scale) * mcsat_param));
  return keep;
}

// Burn-in of each chain when `chains` chains split `samples`: with several
// chains each also discards min(100, its samples / 10) steps.  A chain
// starts from a WalkSAT state of the hard clauses, not from a sample; one
// long chain forgets it, but many short ones do not (tests: 156 chains of 64
// samples, no burn-in, MAE 0.11 on a 6-atom network where one chain gets
// 0.005; MC-SAT mixes slowly near deterministic dependencies).
inline int64_t mcsat_chain_burn_in(int64_t burn_in, int64_t samples, int64_t chains) {
  if (chains <= 1) return burn_in;
  const int64_t warm = std::min<int64_t>(100, samples / chains / 10);
  return burn_in > warm ? burn_in : warm;
}

// A chain's start: one MaxWalkSAT try (the flip budget) from `init` (empty:
// coin flips), its best state.  Adds its flips to *flips.
std::vector<uint8_t> mcsat_start_state(const WalkInstance& inst, const std::vector<uint8_t>& init,
                                       const McsatParams& params, int64_t* flips);

// Runs one MC-SAT chain from mcsat_start_state(init) (or from `init` itself
// with start_given), WalkSAT on the hard clauses should any stay violated,
// then burn_in + samples MC-SAT steps.  unsat_calls counts the steps whose
// fresh SampleSAT start missed SAT(M) and that went on from the previous state.
McsatOutcome mcsat_cpu(const WalkInstance& inst, const std::vector<uint8_t>& init, const McsatParams& params);

struct ExactMarginals {
  std::vector<double> prob;  // P(atom true), 0-based
  double expected_cost = 0;  // E[cost] under P(x) ~ exp(-cost(x))
};

// Exact marginals of an instance of at most kExactMaxAtoms atoms, by
// visiting all 2^n states in Gray-code order (one incremental flip each).
ExactMarginals exact_marginals_cpu(const WalkInstance& inst);

}  // namespace mln::solver
