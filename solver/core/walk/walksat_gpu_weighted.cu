// GPU design (c): the weighted walk (walk_weighted_rules.hpp) as kernels
// (walk_weighted_gpu.cuh).
#include <cstdlib>

#include "core/walk/walk_weighted_gpu.cuh"

namespace mln::solver::gpu_detail {

// Design (c); see walksat_gpu.hpp.
WalkOutcome walksat_gpu_weighted(const WalkInstance& in, const std::vector<uint8_t>& init, const WalkParams& p,
                                 const GpuWalkOptions& g) {
  const int32_t parts = weighted::count_parts(in, g.part_of_atom);
  weighted_gpu::GpuBackend b(in, init, g.part_of_atom, parts);
  bool warp = g.weighted.warp_rounds;
  if (const char* e = std::getenv("MLN_WALK_WARP")) warp = std::atoi(e) != 0;  // tuning runs
  b.set_warp(warp);
  WeightedOptions wo = g.weighted;
  if (const char* e = std::getenv("MLN_WALK_STALL_WORK")) wo.stall_work = std::atof(e);  // tuning runs
  return weighted::run(b, in, p, wo, g.target_cost_fixed);
}

}  // namespace mln::solver::gpu_detail

namespace mln::solver {

std::unique_ptr<WeightedSession> weighted_session_gpu(const WalkInstance& in, const std::vector<uint8_t>& init,
                                                      int64_t n_free, const WeightedOptions& wo) {
  weighted::check_session(in, init, n_free);
  try {
    return std::make_unique<weighted::Session<gpu_detail::weighted_gpu::GpuBackend>>(in, n_free, wo, in, init, nullptr,
                                                                                     1, n_free);
  } catch (const std::bad_alloc& e) {
    throw GpuError(std::string("weighted session: ") + e.what());
  }
}

}  // namespace mln::solver
