// WORK IN PROGRESS (issues #19/#20): one MC-SAT chain with parallel
// SampleSAT rounds inside it (mcsat_parallel_rules.hpp); the CPU reference
// of a one-chain GPU sampler.  Not wired into solve_marginal yet.
#pragma once

#include "mcsat_cpu.hpp"

namespace mln::solver {

struct McsatParallelOptions {
  double sa_rate = 0.5;       // share of atoms proposing a Metropolis move per round
  int64_t max_rounds = 2000;  // rounds to satisfy M from a fresh start
  int64_t after_rounds = 0;   // rounds after M is satisfied; 0: 8 / sa_rate
  int threads = 1;            // OpenMP threads
};

// One chain, the same contract as mcsat_cpu.
McsatOutcome mcsat_parallel_cpu(const WalkInstance& inst, const std::vector<uint8_t>& init, const McsatParams& params,
                                const McsatParallelOptions& opts);

}  // namespace mln::solver
