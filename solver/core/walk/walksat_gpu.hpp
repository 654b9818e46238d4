// MaxWalkSAT on the GPU, three designs (docs/solver.md):
//  - weighted (default): parallel downhill flips with dynamic clause weights
//    (walk_weighted.hpp, the same rules as the CPU driver);
//  - portfolio: many independent walks (one per warp) over ONE read-only
//    clause structure in device memory, each with its own truth/count state;
//  - parallel flips: one walk; each step every violated clause proposes an
//    atom in parallel, a conflict-free subset (no two share a clause) flips.
// No CUDA types here.  Every CUDA failure is reported as GpuError (never an
// abort); the caller falls back to the CPU.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "core/walk/walk_weighted.hpp"
#include "core/walk/walksat_cpu.hpp"

namespace mln::solver {

enum class GpuDesign { kPortfolio, kParallelFlips, kWeighted };

struct GpuError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct GpuWalkOptions {
  GpuDesign design = GpuDesign::kPortfolio;
  int walks = 0;  // portfolio size; 0: as many as fit (up to 4 warps per SM x 8)
  // Stop as soon as some walk reaches this cost (fixed point); < 0: never.
  int64_t target_cost_fixed = -1;
  WeightedOptions weighted;  // kWeighted's settings
  // kWeighted: the instance is independent parts, each with its own best
  // (walk_weighted_cpu's part_of_atom); nullptr: one part.
  const std::vector<int32_t>* part_of_atom = nullptr;
};

// True when compiled with CUDA and a device is usable; otherwise why not.
bool gpu_walksat_available(std::string* why_not);

// Creates this process's CUDA context on the current device now (a worker
// bound to a GPU, at its start), not inside its first job's search, where
// it was timed as part of the walk's set-up: on the 4x H200 host the
// leader of a spread job laid its part out in 1.2 s where the three other
// workers took 0.3-0.6 s (it did so while they extracted theirs on every
// core), and 0.64 s with the context made at start.  True if a device was
// made ready; otherwise why not.
bool gpu_warm_up(std::string* why_not);

// Device memory held by the GPU walks of this process: the high-water mark
// since the last reset (reset = true also starts a new mark at the current use).
size_t gpu_walksat_peak_bytes(bool reset = false);

// WalkSAT on the GPU with Tuffy's step rules; same contract as walksat_cpu
// (flips = steps of all walks together).  Throws GpuError on CUDA failure.
// The weighted design also takes a header-only instance
// (walk_instance_header) and lays it out on the device.
WalkOutcome walksat_gpu(const WalkInstance& inst, const std::vector<uint8_t>& init, const WalkParams& params,
                        const GpuWalkOptions& gopts);

// The weighted walk on the GPU kept between segments (walk_weighted.hpp's
// WeightedSession; a header-only instance is laid out on the device).
// Throws GpuError on CUDA failure, then and in its calls.
std::unique_ptr<WeightedSession> weighted_session_gpu(const WalkInstance& in, const std::vector<uint8_t>& init,
                                                      int64_t n_free, const WeightedOptions& wo);

// The device layout of a header-only instance, copied back (tests: it
// must equal build_walk_instance's).  Throws GpuError on CUDA failure.
WalkInstance gpu_layout(const WalkInstance& header);

}  // namespace mln::solver
