// Pieces shared by the GPU walks and samplers (walk/, marginal/): error
// handling, device buffers and the read-only clause structure.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "core/base/rng.hpp"
#include "mln/cuda_check.cuh"
#include "core/walk/walksat_gpu.hpp"

namespace mln::solver::gpu_detail {

// A failed CUDA call throws GpuError (mln/cuda_check.cuh's rule); the
// engines catch it and walk or sample on the CPU instead.
inline GpuError gpu_error(cudaError_t, const std::string& message) { return GpuError("CUDA error in " + message); }
#define MLN_CUDA_TRY(call) ::mln::cuda_check((call), #call, ::mln::solver::gpu_detail::gpu_error)
#define MLN_CUDA_LAUNCHED(name) ::mln::cuda_check(cudaGetLastError(), name, ::mln::solver::gpu_detail::gpu_error)

// Records `delta` bytes of device memory taken (> 0) or given back (< 0).
void note_device_bytes(std::ptrdiff_t delta);

// Owning device array; frees on destruction, never throws there.
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(size_t n) { resize(n); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { release(); }
  // Allocates n elements (contents undefined).
  void resize(size_t n) {
    release();
    MLN_CUDA_TRY(cudaMalloc(&p_, std::max<size_t>(1, n) * sizeof(T)));
    n_ = n;
    note_device_bytes(static_cast<std::ptrdiff_t>(bytes()));
  }
  // Copies a host vector in.
  template <class Alloc>
  void upload(const std::vector<T, Alloc>& v) {
    resize(v.size());
    if (!v.empty()) MLN_CUDA_TRY(cudaMemcpy(p_, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  T* get() const { return p_; }
  size_t size() const { return n_; }
  void swap(DeviceArray& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
  }
  // Frees the memory now (the array is empty after).
  void release() {
    if (!p_) return;
    cudaFree(p_);
    note_device_bytes(-static_cast<std::ptrdiff_t>(bytes()));
    p_ = nullptr;
    n_ = 0;
  }

 private:
  size_t bytes() const { return std::max<size_t>(1, n_) * sizeof(T); }

  T* p_ = nullptr;
  size_t n_ = 0;
};

// Blocks of `block` threads for a grid-stride loop over n items (at least
// one, at most 2^20).
inline int grid_for(int64_t n, int block) {
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>((n + block - 1) / block, 1 << 20)));
}

// Sorts the pairs (key[i], val[i]), i < len, stably by the keys' low `bits`
// bits on `stream`, ping-ponging between key and key_alt and between val
// and out (cub::DoubleBuffer: its plain form would allocate temporary copies
// of keys and values, 8 bytes per pair more at the peak that bounds the
// largest network, issue #45).  The sorted values end in `out`; val is
// freed; returns the sorted keys (key's or key_alt's memory).  Used by the
// walk's occurrence lists and the PDHG bound's A^T (lp_pdhg_gpu.cu).
const uint32_t* sort_pairs_by_key(DeviceArray<uint32_t>& key, DeviceArray<uint32_t>& key_alt,
                                  DeviceArray<uint32_t>& val, DeviceArray<uint32_t>& out, int64_t len, int bits,
                                  cudaStream_t stream = 0);

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

struct DevInstanceStore;
// Lays a header-only instance (walk_instance_header) out in device memory
// from its source clauses: the host layout's arrays, equal element for
// element (walksat_gpu.cu).
void lay_out_on_device(const WalkInstance& in, DevInstanceStore& s);

// Owner of the device copy of a WalkInstance.
struct DevInstanceStore {
  DeviceArray<int64_t> cl_off, occ_off, w;
  DeviceArray<uint32_t> cl_lit, occ;
  // Uploads `in` (or lays it out on the device when it is header-only).
  explicit DevInstanceStore(const WalkInstance& in) {
    if (in.header_only()) {
      lay_out_on_device(in, *this);
      return;
    }
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

}  // namespace mln::solver::gpu_detail
