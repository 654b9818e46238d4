// GPU MaxWalkSAT entry points: device check and design dispatch.
#include <cuda_runtime.h>

#include "walksat_gpu_common.cuh"

#include "mln/peak_bytes.hpp"

namespace mln::solver {

namespace gpu_detail {
namespace {
PeakBytes g_device_bytes;  // held by DeviceArrays
}  // namespace

void note_device_bytes(std::ptrdiff_t delta) { g_device_bytes.add(delta); }

WalkOutcome walksat_gpu_portfolio(const WalkInstance&, const std::vector<uint8_t>&, const WalkParams&,
                                  const GpuWalkOptions&);
WalkOutcome walksat_gpu_parallel(const WalkInstance&, const std::vector<uint8_t>&, const WalkParams&,
                                 const GpuWalkOptions&);
WalkOutcome walksat_gpu_weighted(const WalkInstance&, const std::vector<uint8_t>&, const WalkParams&,
                                 const GpuWalkOptions&);
}  // namespace gpu_detail

size_t gpu_walksat_peak_bytes(bool reset) {
  return gpu_detail::g_device_bytes.peak(reset);
}

bool gpu_walksat_available(std::string* why_not) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (why_not) *why_not = cudaGetErrorString(e);
    return false;
  }
  if (count == 0) {
    if (why_not) *why_not = "no CUDA device";
    return false;
  }
  return true;
}

WalkOutcome walksat_gpu(const WalkInstance& in, const std::vector<uint8_t>& init, const WalkParams& p,
                        const GpuWalkOptions& g) {
  if (static_cast<int64_t>(init.size()) != in.n) throw std::invalid_argument("walksat_gpu: init has the wrong size");
  if (in.m == 0) {  // nothing to search
    WalkOutcome out;
    out.best = init;
    out.satisfied = true;
    return out;
  }
  try {
    switch (g.design) {
      case GpuDesign::kPortfolio: return gpu_detail::walksat_gpu_portfolio(in, init, p, g);
      case GpuDesign::kParallelFlips: return gpu_detail::walksat_gpu_parallel(in, init, p, g);
      case GpuDesign::kWeighted: break;
    }
    return gpu_detail::walksat_gpu_weighted(in, init, p, g);
  } catch (const std::bad_alloc& e) {
    throw GpuError(std::string("host allocation failed in GPU MaxWalkSAT: ") + e.what());
  }
}

}  // namespace mln::solver
