// MC-SAT on the GPU: many independent chains (docs/solver/marginal.md, "Marginal
// inference (MC-SAT)").  Each chain keeps its own truth, per-clause true
// counts and alive bits over ONE read-only clause structure in device
// memory, and runs exactly the CPU chain's steps (mcsat_cpu.cpp), so
// results agree with the CPU sampler in distribution.  No CUDA types here;
// every CUDA failure is a GpuError and the caller falls back to the CPU.
#pragma once

#include <string>
#include <vector>

#include "core/marginal/mcsat_cpu.hpp"
#include "core/walk/walksat_gpu.hpp"

namespace mln::solver {

// Clause features counted at every sample (weight learning): clause c
// adds coef[i] to feature idx[i] for i in [off[c], off[c+1]) when it has a
// true literal.  At most kGpuMaxFeatures features.
constexpr int kGpuMaxFeatures = 32;
struct GpuFeatures {
  int k = 0;
  std::vector<int64_t> off;  // m + 1
  std::vector<int32_t> idx;
  std::vector<float> coef;
};

struct GpuMcsatOptions {
  // Chains; 0: as many as device memory and `samples` allow (each chain
  // counts at least one sample; at most 4 x SMs x 8).
  int chains = 0;
  // Weight learning: features summed per sample into the outcome's
  // feature_sum / feature_outer; each chain's start state (chains x n,
  // used as it is, like start_given) and, when given, its final state.
  const GpuFeatures* features = nullptr;
  const std::vector<uint8_t>* chain_init = nullptr;
  std::vector<uint8_t>* chain_final = nullptr;
};

// True when compiled with CUDA and a device is usable; otherwise why not.
bool gpu_mcsat_available(std::string* why_not);

// Device memory held by the GPU sampler: the high-water mark since the last
// reset (reset = true starts a new mark).
size_t gpu_mcsat_peak_bytes(bool reset = false);

// Runs the chains of one instance: params.samples and params.burn_in are
// per run, split over the chains as on the CPU (chain j counts samples /
// chains, one more for j < samples % chains; each chain burns in burn_in
// steps); chain j's seed is derive_seed(params.seed, j), its start state
// `init` (size n) or coin flips when empty.  The outcome sums the chains;
// `chains_used`, when given, receives the chain count.  Throws GpuError.
McsatOutcome mcsat_gpu(const WalkInstance& inst, const std::vector<uint8_t>& init, const McsatParams& params,
                       const GpuMcsatOptions& gopts, int* chains_used = nullptr);

}  // namespace mln::solver
