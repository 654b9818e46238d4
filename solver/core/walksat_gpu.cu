// GPU MaxWalkSAT entry points: device check and design dispatch.
#include <cuda_runtime.h>

#include "walksat_gpu_common.cuh"

#include <atomic>

namespace mln::solver {

namespace gpu_detail {
namespace {
std::atomic<size_t> g_device_bytes{0};  // held now by DeviceArrays
std::atomic<size_t> g_device_peak{0};   // high-water mark since the last reset
}  // namespace

void note_device_bytes(std::ptrdiff_t delta) {
  const size_t now = g_device_bytes.fetch_add(static_cast<size_t>(delta)) + static_cast<size_t>(delta);
  size_t peak = g_device_peak.load();
  while (now > peak && !g_device_peak.compare_exchange_weak(peak, now)) {
  }
}

WalkOutcome walksat_gpu_portfolio(const WalkInstance&, const std::vector<uint8_t>&, const WalkParams&,
                                  const GpuWalkOptions&);
WalkOutcome walksat_gpu_parallel(const WalkInstance&, const std::vector<uint8_t>&, const WalkParams&,
                                 const GpuWalkOptions&);
}  // namespace gpu_detail

size_t gpu_walksat_peak_bytes(bool reset) {
  if (reset) gpu_detail::g_device_peak = gpu_detail::g_device_bytes.load();
  return gpu_detail::g_device_peak.load();
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
    return g.design == GpuDesign::kPortfolio ? gpu_detail::walksat_gpu_portfolio(in, init, p, g)
                                             : gpu_detail::walksat_gpu_parallel(in, init, p, g);
  } catch (const std::bad_alloc& e) {
    throw GpuError(std::string("host allocation failed in GPU MaxWalkSAT: ") + e.what());
  }
}

}  // namespace mln::solver
