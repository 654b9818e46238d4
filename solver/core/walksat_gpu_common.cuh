// Pieces shared by the two GPU MaxWalkSAT designs: error handling, device
// buffers, the read-only clause structure, and per-atom delta evaluation.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "rng.hpp"
#include "walksat_gpu.hpp"

namespace mln::solver::gpu_detail {

// Throws GpuError for a failed CUDA call (never aborts).
inline void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear a non-sticky error
    throw GpuError(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
  }
}
#define MLN_CUDA_TRY(call) ::mln::solver::gpu_detail::cuda_check((call), #call)
#define MLN_CUDA_LAUNCHED(name) ::mln::solver::gpu_detail::cuda_check(cudaGetLastError(), name)

// Owning device array; frees on destruction, never throws there.
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(size_t n) { resize(n); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { if (p_) cudaFree(p_); }
  // Allocates n elements (contents undefined).
  void resize(size_t n) {
    if (p_) cudaFree(p_);
    p_ = nullptr;
    n_ = n;
    MLN_CUDA_TRY(cudaMalloc(&p_, std::max<size_t>(1, n) * sizeof(T)));
  }
  // Copies a host vector in.
  void upload(const std::vector<T>& v) {
    resize(v.size());
    if (!v.empty()) MLN_CUDA_TRY(cudaMemcpy(p_, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  T* get() const { return p_; }
  size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

// Read-only clause structure, shared by every walk.
struct DevInstance {
  int32_t n;
  int64_t m;
  const int64_t* cl_off;
  const uint32_t* cl_lit;
  const int64_t* occ_off;
  const uint32_t* occ;
  const int64_t* w;
  int64_t hard_fixed;
};

// Owner of the device copy of a WalkInstance.
struct DevInstanceStore {
  DeviceArray<int64_t> cl_off, occ_off, w;
  DeviceArray<uint32_t> cl_lit, occ;
  // Uploads `in`.
  explicit DevInstanceStore(const WalkInstance& in) {
    cl_off.upload(in.cl_off);
    occ_off.upload(in.occ_off);
    w.upload(in.w);
    cl_lit.upload(in.cl_lit);
    occ.upload(in.occ);
  }
  // The kernel-side view.
  DevInstance view(const WalkInstance& in) const {
    return DevInstance{in.n, in.m, cl_off.get(), cl_lit.get(), occ_off.get(), occ.get(), w.get(), in.hard_fixed};
  }
};

// Contribution of one occurrence to an atom's flip delta and break weight.
__device__ inline void occ_delta(const DevInstance& I, const uint8_t* truth, const int32_t* tc, uint32_t a, uint32_t o,
                                 int64_t& delta, int64_t& brk) {
  uint32_t c = o >> 1;
  bool lit_true = (o & 1) == truth[a];
  int32_t t = tc[c];
  int64_t w = I.w[c];
  if (w > 0) {
    if (lit_true && t == 1) { delta += w; brk += w; }
    else if (!lit_true && t == 0) delta -= w;
  } else if (w < 0) {
    if (lit_true && t == 1) delta += w;  // w < 0: flipping removes |w|
    else if (!lit_true && t == 0) { delta -= w; brk -= w; }
  }
}

// Whether clause c costs something with t true literals.
__device__ inline bool clause_costly(int64_t w, int32_t t) { return (w > 0 && t == 0) || (w < 0 && t > 0); }

}  // namespace mln::solver::gpu_detail
