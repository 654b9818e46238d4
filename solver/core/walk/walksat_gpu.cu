// GPU MaxWalkSAT entry points: the device check, the device layout of an
// instance and the weighted walk (walksat_gpu_weighted.cu).
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>

#include "core/walk/walksat_gpu_common.cuh"

#include "format/peak_bytes.hpp"

namespace mln::solver {

namespace gpu_detail {
namespace {
PeakBytes g_device_bytes;  // held by DeviceArrays
}  // namespace

void note_device_bytes(std::ptrdiff_t delta) { g_device_bytes.add(delta); }

namespace {
// Per clause: its fixed-point weight, its literals as the host layout
// codes them, and each literal's (atom, clause << 1 | sign) pair for the
// occurrence lists.
__global__ void layout_clauses_kernel(int64_t m, int32_t n, const int64_t* off, const int32_t* lits,
                                      const double* weights, double scale, uint32_t* cl_lit, int64_t* w,
                                      uint32_t* key, uint32_t* val, int* bad) {
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < m; c += int64_t(gridDim.x) * blockDim.x) {
    w[c] = llround(weights[c] * scale);  // as std::llround on the host: half away from zero
    for (int64_t i = off[c]; i < off[c + 1]; ++i) {
      const int32_t l = lits[i];
      const uint32_t a = static_cast<uint32_t>((l > 0 ? l : -l) - 1);
      const uint32_t pos = l > 0 ? 1u : 0u;
      if (l == 0 || static_cast<int32_t>(a) >= n) {
        *bad = 1;
        cl_lit[i] = key[i] = val[i] = 0;
        continue;
      }
      cl_lit[i] = a << 1 | pos;
      key[i] = a;
      val[i] = static_cast<uint32_t>(c) << 1 | pos;
    }
  }
}

// occ_off[a] = the first sorted literal of atom a or later (a lower bound
// per atom; atoms without literals get empty lists).
__global__ void occ_offsets_kernel(int32_t n, const uint32_t* key, int64_t len, int64_t* occ_off) {
  for (int64_t a = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; a <= n; a += int64_t(gridDim.x) * blockDim.x) {
    int64_t lo = 0, hi = len;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (key[mid] < static_cast<uint32_t>(a)) lo = mid + 1;
      else hi = mid;
    }
    occ_off[a] = lo;
  }
}
}  // namespace

const uint32_t* sort_pairs_by_key(DeviceArray<uint32_t>& key, DeviceArray<uint32_t>& key_alt,
                                  DeviceArray<uint32_t>& val, DeviceArray<uint32_t>& out, int64_t len, int bits,
                                  cudaStream_t stream) {
  cub::DoubleBuffer<uint32_t> keys(key.get(), key_alt.get()), vals(val.get(), out.get());
  size_t temp = 0;
  MLN_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, temp, keys, vals, len, 0, bits, stream));
  {
    DeviceArray<uint8_t> scratch(temp);
    MLN_CUDA_TRY(cub::DeviceRadixSort::SortPairs(scratch.get(), temp, keys, vals, len, 0, bits, stream));
  }  // (cudaFree waits for the sort)
  if (vals.Current() != out.get()) out.swap(val);
  val.release();
  return keys.Current();
}

// The device memory's peak is what bounds the largest network one GPU
// walks (issue #45): the inputs are freed before the sort, and the sort
// ping-pongs between two buffers (sort_pairs_by_key).  Peak: 24
// bytes per clause and 16 per literal while the clauses are laid out, 16
// and 20 while the occurrences sort (was 24 and 32 at once).
void lay_out_on_device(const WalkInstance& in, DevInstanceStore& s) {
  const mln::ClauseSet& cs = *in.source;
  const int64_t len = static_cast<int64_t>(cs.lits.size());
  if (static_cast<int64_t>(cs.size()) != in.m) throw std::invalid_argument("walksat_gpu: header and clauses differ");
  s.cl_off.upload(cs.offsets);
  DeviceArray<uint32_t> key, val;
  DeviceArray<int> bad(1);
  MLN_CUDA_TRY(cudaMemset(bad.get(), 0, sizeof(int)));
  {
    DeviceArray<int32_t> lits;
    lits.upload(cs.lits);
    DeviceArray<double> weights;
    weights.upload(cs.weights);
    s.cl_lit.resize(len);
    s.w.resize(in.m);
    key.resize(len);
    val.resize(len);
    layout_clauses_kernel<<<grid_for(in.m, 256), 256>>>(in.m, in.n, s.cl_off.get(), lits.get(), weights.get(),
                                                   in.scale, s.cl_lit.get(), s.w.get(), key.get(), val.get(),
                                                   bad.get());
    MLN_CUDA_LAUNCHED("layout_clauses_kernel");
    MLN_CUDA_TRY(cudaDeviceSynchronize());  // the inputs are freed here
  }
  // A stable radix sort by atom keeps each atom's occurrences in clause
  // order, as the host layout's per-atom sort leaves them.
  int bits = 1;
  while (bits < 32 && (uint64_t{1} << bits) < static_cast<uint64_t>(std::max<int32_t>(in.n, 1))) ++bits;
  DeviceArray<uint32_t> key_alt(len);
  s.occ.resize(len);
  const uint32_t* sorted = sort_pairs_by_key(key, key_alt, val, s.occ, len, bits);
  s.occ_off.resize(static_cast<size_t>(in.n) + 1);
  occ_offsets_kernel<<<grid_for(static_cast<int64_t>(in.n) + 1, 256), 256>>>(in.n, sorted, len, s.occ_off.get());
  MLN_CUDA_LAUNCHED("occ_offsets_kernel");
  int flag = 0;
  MLN_CUDA_TRY(cudaMemcpy(&flag, bad.get(), sizeof(int), cudaMemcpyDeviceToHost));
  if (flag) throw std::invalid_argument("walksat: literal out of range");
}

WalkOutcome walksat_gpu_weighted(const WalkInstance&, const std::vector<uint8_t>&, const WalkParams&,
                                 const GpuWalkOptions&);
}  // namespace gpu_detail

size_t gpu_walksat_peak_bytes(bool reset) {
  return gpu_detail::g_device_bytes.peak(reset);
}

size_t gpu_free_bytes() {
  size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return free_b;
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

bool gpu_warm_up(std::string* why_not) {
  if (!gpu_walksat_available(why_not)) return false;
  const cudaError_t e = cudaFree(nullptr);  // the runtime's way to create the primary context
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (why_not) *why_not = cudaGetErrorString(e);
    return false;
  }
  return true;
}

WalkInstance gpu_layout(const WalkInstance& header) {
  if (!header.header_only()) throw std::invalid_argument("gpu_layout: not a header-only instance");
  WalkInstance out = header;
  out.source = nullptr;
  try {
    gpu_detail::DevInstanceStore s(header);
    auto down = [](auto& dst, const auto& src, size_t n) {
      dst.resize(n);
      if (n) MLN_CUDA_TRY(cudaMemcpy(dst.data(), src.get(), n * sizeof(dst[0]), cudaMemcpyDeviceToHost));
    };
    const size_t len = header.source->lits.size();
    down(out.cl_off, s.cl_off, static_cast<size_t>(header.m) + 1);
    down(out.cl_lit, s.cl_lit, len);
    down(out.w, s.w, static_cast<size_t>(header.m));
    down(out.occ_off, s.occ_off, static_cast<size_t>(header.n) + 1);
    down(out.occ, s.occ, len);
  } catch (const std::bad_alloc& e) {
    throw GpuError(std::string("host allocation failed in gpu_layout: ") + e.what());
  }
  return out;
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
    return gpu_detail::walksat_gpu_weighted(in, init, p, g);
  } catch (const std::bad_alloc& e) {
    throw GpuError(std::string("host allocation failed in GPU MaxWalkSAT: ") + e.what());
  }
}

}  // namespace mln::solver
