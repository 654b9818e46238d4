// Pieces shared by the two GPU MaxWalkSAT designs: error handling, device
// buffers, the read-only clause structure, and per-atom delta evaluation.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "core/base/rng.hpp"
#include "core/walk/walksat_gpu.hpp"

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

 private:
  size_t bytes() const { return std::max<size_t>(1, n_) * sizeof(T); }
  void release() {
    if (!p_) return;
    cudaFree(p_);
    note_device_bytes(-static_cast<std::ptrdiff_t>(bytes()));
    p_ = nullptr;
    n_ = 0;
  }

  T* p_ = nullptr;
  size_t n_ = 0;
};

// Blocks of `block` threads for a grid-stride loop over n items (at least
// one, at most 2^20).
inline int grid_for(int64_t n, int block) {
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>((n + block - 1) / block, 1 << 20)));
}

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

// The atom a WalkSAT step flips for violated clause c, by Tuffy's rules (the
// same as walksat_cpu.cpp): its flip delta and break weight, and whether the
// step is skipped.  `delta_of(atom, delta, brk)` evaluates one atom; the two
// GPU designs differ only there (one thread vs a whole warp per evaluation).
struct StepPick {
  uint32_t atom = 0;
  int64_t delta = 0;
  int64_t brk = 0;
  bool skip = false;
};

template <class DeltaOf>
__device__ inline StepPick pick_step(const DevInstance& I, uint32_t c, const uint8_t* truth, const int32_t* tc,
                                     const uint32_t* crit, double p, int dont_break, Rng& rng, DeltaOf delta_of) {
  const int64_t lo = I.cl_off[c];
  const uint32_t len = static_cast<uint32_t>(I.cl_off[c + 1] - lo);
  StepPick s;
  // Greedy choice among the clause's atoms (all of them, or only those of
  // true literals), ties broken by reservoir sampling; skipped when uphill.
  auto greedy = [&](bool only_true) {
    int64_t best = INT64_MAX;
    uint32_t ties = 0;
    for (uint32_t k = 0; k < len; ++k) {
      const uint32_t l = I.cl_lit[lo + k];
      if (only_true && truth[l >> 1] != (l & 1)) continue;
      int64_t d, bk;
      delta_of(l >> 1, d, bk);
      if (d < best) { best = d; s.atom = l >> 1; s.brk = bk; ties = 1; }
      else if (d == best && rng.below(++ties) == 0) { s.atom = l >> 1; s.brk = bk; }
    }
    s.delta = best;
    s.skip = best > 0;
  };
  if (I.w[c] > 0) {
    if (rng.uniform() < p) {
      s.atom = I.cl_lit[lo + rng.below(len)] >> 1;
      delta_of(s.atom, s.delta, s.brk);
    } else {
      greedy(false);
    }
  } else {  // negative clause: candidates are the atoms of true literals
    const int32_t t = tc[c];
    if (t == 1) {
      s.atom = crit[c];
      delta_of(s.atom, s.delta, s.brk);
      s.skip = s.delta > 0 && rng.uniform() < 1.0 - p;
    } else if (rng.uniform() < p) {
      uint32_t kth = rng.below(static_cast<uint32_t>(t));
      for (uint32_t k = 0; k < len; ++k) {
        const uint32_t l = I.cl_lit[lo + k];
        if (truth[l >> 1] == (l & 1) && kth-- == 0) { s.atom = l >> 1; break; }
      }
      delta_of(s.atom, s.delta, s.brk);
    } else {
      greedy(true);
    }
  }
  if (!s.skip && dont_break && s.brk > I.hard_fixed) s.skip = true;
  if (!s.skip && s.delta > 0 && rng.uniform() < kGreedyThrottle) s.skip = true;
  return s;
}

// Whether clause c costs something with t true literals.
__device__ inline bool clause_costly(int64_t w, int32_t t) { return (w > 0 && t == 0) || (w < 0 && t > 0); }

}  // namespace mln::solver::gpu_detail
