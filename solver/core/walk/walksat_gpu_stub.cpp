// The GPU entry points when the library is built without CUDA.
#include "core/walk/walksat_gpu.hpp"

#ifndef MLN_HAVE_CUDA
namespace mln::solver {

bool gpu_walksat_available(std::string* why_not) {
  if (why_not) *why_not = "pg_mln was built without CUDA";
  return false;
}

bool gpu_warm_up(std::string* why_not) { return gpu_walksat_available(why_not); }

size_t gpu_walksat_peak_bytes(bool) { return 0; }

size_t gpu_free_bytes() { return 0; }

WalkOutcome walksat_gpu(const WalkInstance&, const std::vector<uint8_t>&, const WalkParams&, const GpuWalkOptions&) {
  throw GpuError("pg_mln was built without CUDA");
}

WalkInstance gpu_layout(const WalkInstance&) { throw GpuError("pg_mln was built without CUDA"); }

std::unique_ptr<WeightedSession> weighted_session_gpu(const WalkInstance&, const std::vector<uint8_t>&, int64_t,
                                                      const WeightedOptions&) {
  throw GpuError("pg_mln was built without CUDA");
}

}  // namespace mln::solver
#endif
