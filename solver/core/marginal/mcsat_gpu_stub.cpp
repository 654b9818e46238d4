// The GPU sampler's entry points when the library is built without CUDA.
#include "core/marginal/mcsat_gpu.hpp"
#include "core/marginal/mcsat_parallel.hpp"

#ifndef MLN_HAVE_CUDA
namespace mln::solver {

bool gpu_mcsat_available(std::string* why_not) {
  if (why_not) *why_not = "pg_mln was built without CUDA";
  return false;
}

size_t gpu_mcsat_peak_bytes(bool) { return 0; }

McsatOutcome mcsat_gpu(const WalkInstance&, const std::vector<uint8_t>&, const McsatParams&, const GpuMcsatOptions&,
                       int*) {
  throw GpuError("pg_mln was built without CUDA");
}

McsatOutcome mcsat_parallel_gpu(const WalkInstance&, const std::vector<uint8_t>&, const McsatParams&,
                                const McsatParallelOptions&, const GpuFeatures*) {
  throw GpuError("pg_mln was built without CUDA");
}

}  // namespace mln::solver
#endif
