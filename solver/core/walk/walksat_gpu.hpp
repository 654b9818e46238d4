// MaxWalkSAT on the GPU: the weighted walk (walk_weighted.hpp), parallel
// downhill flips with dynamic clause weights, by the same rules as its CPU
// driver (docs/solver/walk.md).
// No CUDA types here.  Every CUDA failure is reported as GpuError (never an
// abort); the caller falls back to the CPU.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "core/walk/walk_weighted.hpp"
#include "core/walk/walksat_cpu.hpp"

namespace mln::solver {

struct GpuError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct GpuWalkOptions {
  // Stop as soon as the walk reaches this cost (fixed point); < 0: never.
  int64_t target_cost_fixed = -1;
  WeightedOptions weighted;
  // The instance is independent parts, each with its own best
  // (walk_weighted_cpu's part_of_atom); nullptr: one part.
  const std::vector<int32_t>* part_of_atom = nullptr;
};

// True when compiled with CUDA and a device is usable; otherwise why not.
bool gpu_walksat_available(std::string* why_not);

// Creates this process's CUDA context on the current device now (a worker
// bound to a GPU, at its start), not inside its first job's search, where
// it counts as the walk's set-up and makes that worker's first layout the
// slowest of a spread job's round (docs/solver/spread.md).  True if a
// device was made ready; otherwise why not.
bool gpu_warm_up(std::string* why_not);

// Device memory held by the GPU walks of this process: the high-water mark
// since the last reset (reset = true also starts a new mark at the current use).
size_t gpu_walksat_peak_bytes(bool reset = false);

// Device memory free on the current device now (cudaMemGetInfo); 0 without
// a usable GPU.
size_t gpu_free_bytes();

// The weighted walk on the GPU; the same contract as walksat_cpu.  Takes a
// header-only instance (walk_instance_header) too and lays it out on the
// device.  Throws GpuError on CUDA failure.
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
