// One MC-SAT chain with parallel SampleSAT rounds inside it
// (mcsat_parallel_rules.hpp): on the GPU (mcsat_parallel_gpu.cu), where
// solve_marginal and the learner use it for large networks and few samples
// (solve_marginal.hpp, learn.hpp), and on CPU threads as its reference.
#pragma once

#include "core/marginal/mcsat_cpu.hpp"
#include "core/marginal/mcsat_gpu.hpp"

namespace mln::solver {

struct McsatParallelOptions {
  double sa_rate = 0.5;       // share of atoms proposing a Metropolis move per round
  int64_t max_rounds = 2000;  // rounds to satisfy M from a fresh start (GPU: the SAT phase's rounds)
  int64_t after_rounds = 0;   // rounds after M is satisfied; 0: 8 / sa_rate
  int threads = 1;            // OpenMP threads
  int max_batch = 16;         // GPU: the start walks' rounds per batch (WeightedOptions::max_batch)
  int blocks_per_sm = 0;      // GPU: blocks of 256 threads per SM of the step kernel; 0: as many as fit
                              // (slightly faster than fewer; docs/solver/marginal.md)
  // GPU: the SAT phase's rounds with a warp per violated entry while the
  // list is short (walk_weighted_warp.cuh) instead of a thread: the same
  // decisions, several times faster at 10^6 clauses (docs/solver/marginal.md).
  bool warp_rounds = true;
};

// One chain, the same contract as mcsat_cpu.
McsatOutcome mcsat_parallel_cpu(const WalkInstance& inst, const std::vector<uint8_t>& init, const McsatParams& params,
                                const McsatParallelOptions& opts);

// The same chain on the GPU (mcsat_parallel_gpu.cu): one device copy of the
// instance, every step's rounds as kernels.  With features, the outcome's
// feature_sum / feature_outer sum them per sample (as mcsat_gpu).  Throws
// GpuError (also when built without CUDA).
McsatOutcome mcsat_parallel_gpu(const WalkInstance& inst, const std::vector<uint8_t>& init, const McsatParams& params,
                                const McsatParallelOptions& opts, const GpuFeatures* features = nullptr);

}  // namespace mln::solver
