// Copy-bandwidth probes for the benchmarks: the roofline against which
// operator throughput is reported (design.md, "Performance model").
#pragma once

#include <cstddef>

#include "mln/relation.hpp"

namespace mln::gpu {

// Best wall time in seconds of `reps` single-threaded std::memcpy calls of `bytes` bytes.
double time_host_copy(size_t bytes, int reps);

// Best time in seconds of `reps` copies of `bytes` bytes within backend `b`'s
// memory (cudaMemcpy device-to-device for CUDA, std::memcpy for CPU).
// Throws EngineError(DeviceUnavailable) for CUDA in a build without it.
double time_backend_copy(Backend b, size_t bytes, int reps);

}  // namespace mln::gpu
