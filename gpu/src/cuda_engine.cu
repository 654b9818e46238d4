// CUDA backend: the operator templates run with thrust::cuda::par on device
// memory.  Scans and stream compaction use Thrust (CUB underneath); their CPU
// twins are in cpu_engine.cpp.  CUDA is touched only when a function here is
// called (never at static-initialisation time), and every CUDA error becomes
// an EngineError.
#include <cuda_runtime.h>
#include <cub/device/device_radix_sort.cuh>
#include <thrust/system/detail/bad_alloc.h>
#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/functional.h>
#include <thrust/reduce.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/gather.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/transform.h>
#include <thrust/system/cuda/error.h>
#include <thrust/system/cuda/execution_policy.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <limits>
#include <string>

#include "engine_impl.hpp"
#include "mln/cuda_check.cuh"
#include "mln/device_copy.hpp"

namespace mln::gpu {
namespace {

// Maps a CUDA error code to the engine's error kinds.
EngineError cuda_error(cudaError_t err, const std::string& message) {
  EngineError::Kind kind = EngineError::Kind::DeviceFailure;
  if (err == cudaErrorMemoryAllocation)
    kind = EngineError::Kind::OutOfMemory;
  else if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver ||
           err == cudaErrorDevicesUnavailable || err == cudaErrorInvalidDevice)
    kind = EngineError::Kind::DeviceUnavailable;
  return EngineError(kind, message);
}

// Throws the mapped EngineError when a CUDA call failed (mln/cuda_check.cuh).
#define MLN_CUDA_TRY(call) ::mln::cuda_check((call), #call, cuda_error)

// Stream-ordered device allocation on the legacy default stream; the pool
// keeps freed blocks, so operators do not pay for cudaMalloc/cudaFree.
void* device_alloc(size_t bytes) {
  void* p = nullptr;
  MLN_CUDA_TRY(cudaMallocAsync(&p, bytes, 0));
  return p;
}

// Releases a block from device_alloc (errors ignored: runs in destructors).
void device_free(void* p) {
  if (p) cudaFreeAsync(p, 0);
}

// Thrust temporary-storage allocator backed by device_alloc.
struct TempAlloc {
  using value_type = char;
  char* allocate(std::ptrdiff_t n) { return static_cast<char*>(device_alloc(static_cast<size_t>(n))); }
  void deallocate(char* p, size_t) { device_free(p); }
};

// 1 where a mask byte equals `want`.
struct ByteIs {
  uint8_t want;
  __host__ __device__ bool operator()(uint8_t m) const { return m == want; }
};

// keep(i) as a mask byte.
template <class Keep>
struct KeepByte {
  Keep keep;
  __host__ __device__ uint8_t operator()(int64_t i) const { return keep(i) ? 1 : 0; }
};

// Widens an int32 count to int64 for the offset scan.
struct Widen64 {
  __host__ __device__ int64_t operator()(int32_t c) const { return c; }
};

// Writes every join match (see ops::ExpandCols for the layout).  Each warp
// takes 32 consecutive left rows, whose outputs are one contiguous range, and
// writes that range 32 slots at a time: lane k finds the row owning slot k by
// a binary search over the rows' run ends held in the warp's registers
// (shuffles, no shared memory), so the stores of a warp are coalesced
// whatever the run lengths.  Hand-written: Thrust/CUB have no segmented
// expand; the generic form (fill, scatter of run starts, max-scan, then a
// gather per column) reads and writes two extra slot-sized maps.
__global__ void expand_runs_kernel(size_t n, const int32_t* __restrict__ lo, const int32_t* __restrict__ cnt,
                                   const int64_t* __restrict__ off, const int32_t* __restrict__ perm,
                                   ops::ExpandCols c) {
  constexpr unsigned kAll = 0xffffffffu;
  const int lane = threadIdx.x & 31;
  const size_t warps = (size_t(gridDim.x) * blockDim.x) >> 5;
  for (size_t base = ((size_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5) * 32; base < n; base += warps * 32) {
    const size_t i = base + lane;
    const int64_t first = off[base];
    int32_t my_lo = 0;
    long long end = LLONG_MAX;  // end of this lane's run, relative to `first`
    if (i < n) {
      my_lo = lo[i];
      end = off[i] + cnt[i] - first;
    }
    const int last = static_cast<int>(n - 1 - base < 31 ? n - 1 - base : 31);
    const long long total = __shfl_sync(kAll, end, last);
    for (long long k0 = 0; k0 < total; k0 += 32) {  // the same trip count in every lane
      const long long k = k0 + lane;
      int owner = 0;  // lanes before `owner` end at or before slot k
#pragma unroll
      for (int step = 16; step >= 1; step >>= 1)
        if (__shfl_sync(kAll, end, owner + step - 1) <= k) owner += step;
      const long long before = __shfl_sync(kAll, end, owner > 0 ? owner - 1 : 0);
      const int32_t run = __shfl_sync(kAll, my_lo, owner);
      if (k < total) {
        const int64_t li = static_cast<int64_t>(base) + owner;
        const int32_t ri = perm[run + (k - (owner > 0 ? before : 0))];
        for (int col = 0; col < c.n; ++col) c.dst[col][first + k] = c.src[col][c.side[col] ? ri : li];
      }
    }
  }
}

// Slot of a dense key (its offset from the smallest key).
struct SlotOf {
  int32_t base;
  __host__ __device__ uint32_t operator()(int32_t v) const { return ops::dense_slot(v, base); }
};

// pos[s[i]] = i + 1 at the last row of each run of the sorted slots s.
struct RunEnd {
  const uint32_t* s;
  int64_t n;
  int32_t* pos;
  __host__ __device__ void operator()(int64_t i) const {
    if (i + 1 == n || s[i] != s[i + 1]) pos[s[i]] = static_cast<int32_t>(i + 1);
  }
};

struct CudaExec {
  static constexpr Backend kBackend = Backend::CUDA;
  // Sort-based inner join under Auto: with radix sort it beats the hash
  // form's atomics at 10^7 rows and ties at 10^8, while semi/anti joins and
  // distinct, which have no expansion, are faster hashed (docs/operators.md).
  static constexpr bool kAutoHashJoin = false;
  static constexpr size_t kMaxChunkRows = size_t(1) << 26;  // a few ms of work; per-chunk overhead stays small
  EngineOptions opts;
  int device = 0;
  int sm_count = 1;
  std::string device_name;
  mutable TempAlloc temp;

  // Waits for the device work queued so far (tracing only).
  void sync() const { MLN_CUDA_TRY(cudaDeviceSynchronize()); }

  // Makes this engine's device current for the duration of one operator.
  struct Scope {};
  Scope scope() const {
    MLN_CUDA_TRY(cudaSetDevice(device));
    return {};
  }

  std::string name() const { return device_name; }
  // par_nosync: an algorithm returns once its kernels are queued instead of
  // waiting for them (thrust::cuda::par synchronises after every call).
  // Everything here runs in order on the legacy default stream: kernels,
  // the stream-ordered allocations and frees, and the cudaMemcpy calls
  // through which alone the host reads results, so no call needs the wait.
  // The waits were a sizable share of a join's time (docs/operators.md).  A
  // device fault then surfaces at the next synchronising call.
  auto policy() const { return thrust::cuda::par_nosync(temp); }

  // Uninitialised device array of n elements.
  template <class T>
  Buf<T> alloc(size_t n) const {
    Buf<T> b;
    if (n == 0) return b;
    void* p = device_alloc(n * sizeof(T));
    b.mem = std::shared_ptr<void>(p, device_free);
    b.ptr = static_cast<T*>(p);
    b.n = n;
    return b;
  }

  // Zero-filled device array of n elements.
  template <class T>
  Buf<T> alloc_zeroed(size_t n) const {
    Buf<T> b = alloc<T>(n);
    if (n) MLN_CUDA_TRY(cudaMemsetAsync(b.data(), 0, n * sizeof(T), 0));
    return b;
  }

  // Device-to-device copy.
  template <class T>
  void copy(T* dst, const T* src, size_t n) const {
    MLN_CUDA_TRY(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyDeviceToDevice, 0));
  }
  // Host-to-device copy.
  template <class T>
  void upload(T* dst, const T* src, size_t n) const {
    MLN_CUDA_TRY(cudaMemcpy(dst, src, n * sizeof(T), cudaMemcpyHostToDevice));
  }
  // Device-to-host copy.
  template <class T>
  void download(T* dst, const T* src, size_t n) const {
    MLN_CUDA_TRY(cudaMemcpy(dst, src, n * sizeof(T), cudaMemcpyDeviceToHost));
  }
  // Reads one device element.
  template <class T>
  T load(const T* p) const {
    T v;
    download(&v, p, 1);
    return v;
  }

  // off = exclusive prefix sum of cnt (as int64); returns the total.
  int64_t exclusive_sum(const int32_t* cnt, size_t n, int64_t* off) const {
    if (n == 0) return 0;
    auto in = thrust::make_transform_iterator(cnt, Widen64{});
    thrust::exclusive_scan(policy(), in, in + n, off, int64_t(0));
    return load(off + n - 1) + load(cnt + n - 1);
  }

  // v[i] = max(v[0..i]) in place.
  void inclusive_max(int32_t* v, size_t n) const {
    if (n) thrust::inclusive_scan(policy(), v, v + n, v, thrust::maximum<int32_t>());
  }

  // Sorts keys ascending, with perm (when not null) alongside: CUB's radix
  // sort on only the bits the largest key uses.  Keys of one int32 column
  // use 32 of their 64 bits, and of small non-negative values fewer, so the
  // sort takes half the passes (or less) of thrust::sort on uint64, which
  // always runs all eight (docs/operators.md).
  void sort_keys(ops::Key* keys, size_t n, int32_t* perm) const {
    if (n < 2) return;
    const ops::Key top = thrust::reduce(policy(), keys, keys + n, ops::Key(0), thrust::maximum<ops::Key>());
    int end_bit = 1;
    while (end_bit < 64 && (top >> end_bit) != 0) ++end_bit;
    const int64_t m = static_cast<int64_t>(n);
    Buf<ops::Key> key_b = alloc<ops::Key>(n);
    cub::DoubleBuffer<ops::Key> kd(keys, key_b.data());
    Buf<int32_t> row_b = alloc<int32_t>(perm ? n : 0);
    cub::DoubleBuffer<int32_t> vd(perm, row_b.data());
    size_t temp_bytes = 0;
    if (perm)
      MLN_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, kd, vd, m, 0, end_bit, 0));
    else
      MLN_CUDA_TRY(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, kd, m, 0, end_bit, 0));
    Buf<char> temp_buf = alloc<char>(temp_bytes);
    if (perm)
      MLN_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp_buf.data(), temp_bytes, kd, vd, m, 0, end_bit, 0));
    else
      MLN_CUDA_TRY(cub::DeviceRadixSort::SortKeys(temp_buf.data(), temp_bytes, kd, m, 0, end_bit, 0));
    if (kd.Current() != keys) copy(keys, kd.Current(), n);
    if (perm && vd.Current() != perm) copy(perm, vd.Current(), n);
  }

  // Right rows grouped by dense key (operators.hpp, "dense keys"): the
  // slots (key - base) are radix-sorted with their row numbers, on only the
  // bits a slot can use (24 for ten million keys: three passes), which
  // leaves perm grouped by key; then pos[d], the end of run d, is the count
  // of slots <= d: each run's end is stored at its slot and a running
  // maximum fills the slots between.
  void group_dense(const int32_t* k, size_t n, int32_t base, uint32_t range, int32_t* pos, int32_t* perm) const {
    MLN_CUDA_TRY(cudaMemsetAsync(pos, 0, size_t(range) * sizeof(int32_t), 0));
    if (n == 0) return;
    Buf<uint32_t> slot_a = alloc<uint32_t>(n), slot_b = alloc<uint32_t>(n);
    Buf<int32_t> row_b = alloc<int32_t>(n);
    thrust::transform(policy(), k, k + n, slot_a.data(), SlotOf{base});
    thrust::sequence(policy(), perm, perm + n);
    cub::DoubleBuffer<uint32_t> slots(slot_a.data(), slot_b.data());
    cub::DoubleBuffer<int32_t> rows(perm, row_b.data());
    int end_bit = 1;
    while (end_bit < 32 && (uint64_t(1) << end_bit) < range) ++end_bit;
    size_t temp_bytes = 0;
    MLN_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, slots, rows, static_cast<int64_t>(n), 0, end_bit, 0));
    Buf<char> temp_buf = alloc<char>(temp_bytes);
    MLN_CUDA_TRY(cub::DeviceRadixSort::SortPairs(temp_buf.data(), temp_bytes, slots, rows, static_cast<int64_t>(n), 0,
                                                 end_bit, 0));
    if (rows.Current() != perm) copy(perm, rows.Current(), n);
    thrust::for_each(policy(), ops::Count(0), ops::Count(static_cast<int64_t>(n)),
                     RunEnd{slots.Current(), static_cast<int64_t>(n), pos});
    inclusive_max(pos, range);
  }

  // Whether no run is longer than kWarpRunCap: expand_runs_kernel gives a
  // warp 32 left rows, so a warp holding a run of m rows loops at least m/32
  // times.  Longer runs (a hot key) take the generic form, which balances
  // over output slots.
  static constexpr int32_t kWarpRunCap = 256;
  static constexpr bool kExpandRuns = true;
  bool expand_runs_fit(const int32_t* cnt, size_t n) const {
    return thrust::reduce(policy(), cnt, cnt + n, int32_t(0), thrust::maximum<int32_t>()) <= kWarpRunCap;
  }

  void expand_runs(size_t n, const int32_t* lo, const int32_t* cnt, const int64_t* off, const int32_t* perm,
                   const ops::ExpandCols& c) const {
    if (n == 0) return;
    constexpr int kBlock = 256;
    const size_t blocks = std::min<size_t>((n + kBlock - 1) / kBlock, size_t(sm_count) * 16);
    expand_runs_kernel<<<static_cast<unsigned>(blocks), kBlock>>>(n, lo, cnt, off, perm, c);
    MLN_CUDA_TRY(cudaGetLastError());
  }

  // Indices i (ascending) with mask[i] == want.
  Buf<int32_t> compact(const uint8_t* mask, size_t n, uint8_t want) const {
    if (n == 0) return {};
    const size_t m = thrust::count(policy(), mask, mask + n, want);
    Buf<int32_t> out = alloc<int32_t>(m);
    if (m) thrust::copy_if(policy(), ops::Count(0), ops::Count(n), mask, out.data(), ByteIs{want});
    return out;
  }

  // Columns src[c][0..n) at the rows where keep(i) holds, in order; returns
  // their number.  keep is evaluated once per row into a byte mask, the mask
  // is compacted into row numbers (count + CUB select), and each column is
  // gathered: faster than evaluating keep as the stencil of copy_if (zipped
  // columns, or row numbers; docs/operators.md).
  template <class Keep>
  size_t select_rows(const Keep& keep, size_t n, const std::vector<const int32_t*>& src,
                     std::vector<Column>& out) const {
    out.clear();
    Buf<uint8_t> mask = alloc<uint8_t>(n);
    if (n) thrust::transform(policy(), ops::Count(0), ops::Count(n), mask.data(), KeepByte<Keep>{keep});
    Buf<int32_t> idx = compact(mask.data(), n, 1);
    mask = Buf<uint8_t>();
    const size_t m = idx.size();
    for (const int32_t* c : src) {
      Column o = alloc<int32_t>(m);
      if (m) thrust::gather(policy(), idx.data(), idx.data() + m, c, o.data());
      out.push_back(std::move(o));
    }
    return m;
  }

  // Returns the pool's free blocks to the device once the work queued so
  // far is done (the pool keeps them for reuse: release threshold max).
  void release_cached() const {
    cudaMemPool_t pool;
    if (cudaSetDevice(device) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess ||
        cudaDeviceGetDefaultMemPool(&pool, device) != cudaSuccess || cudaMemPoolTrimTo(pool, 0) != cudaSuccess)
      cudaGetLastError();  // best effort: the memory stays cached
  }

  // Peak device memory in use from this engine's pool (operators' arrays and
  // Thrust's temporaries) since the last reset; reset starts a new mark.
  size_t peak_bytes(bool reset) const {
    cudaMemPool_t pool;
    if (cudaDeviceGetDefaultMemPool(&pool, device) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    uint64_t v = 0;
    if (reset) {
      cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &v);  // resets to the current use
      cudaGetLastError();
    }
    if (cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &v) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return static_cast<size_t>(v);
  }

  // The budget option, or 80% of free device memory (counting pooled blocks).
  size_t budget() const {
    if (opts.memory_budget_bytes) return opts.memory_budget_bytes;
    size_t free_b = 0, total_b = 0;
    MLN_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    cudaMemPool_t pool;
    uint64_t reserved = 0, used = 0;
    if (cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess &&
        cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved) == cudaSuccess &&
        cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess &&
        reserved > used)
      free_b += reserved - used;
    return free_b / 10 * 8;
  }

  // Throws Cancelled when the caller asked to stop.
  void check_cancel() const {
    if (opts.cancel && opts.cancel()) throw EngineError(EngineError::Kind::Cancelled, "operator cancelled");
  }

  // Thrust's device allocations throw its bad_alloc (a std::bad_alloc):
  // the device's memory; any other bad_alloc is a host allocation's.
  EngineError map_bad_alloc(const std::bad_alloc& e) const {
    const bool device = dynamic_cast<const thrust::system::detail::bad_alloc*>(&e) != nullptr;
    return EngineError(device ? EngineError::Kind::OutOfMemory : EngineError::Kind::HostOutOfMemory,
                       std::string("out of memory: ") + e.what());
  }

  // Maps a Thrust error (CUDA category or other) to EngineError.
  EngineError map_error(const thrust::system_error& e) const {
    if (e.code().category() == thrust::cuda_category()) {
      const auto code = static_cast<cudaError_t>(e.code().value());
      cudaGetLastError();  // clear a non-sticky error, as mln::cuda_check does
      return cuda_error(code, mln::cuda_failure_message(code, e.what()));
    }
    return EngineError(EngineError::Kind::DeviceFailure, e.what());
  }
};

}  // namespace

// True: this build has the CUDA backend.
bool cuda_compiled() { return true; }

// Describes device 0 (creates a CUDA context on first use).
DeviceInfo query_device() {
  DeviceInfo info;
  info.cuda_compiled = true;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();
    info.error = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    return info;
  }
  if (count == 0) {
    info.error = "no CUDA device";
    return info;
  }
  info.device_count = count;
  cudaDeviceProp prop;
  err = cudaGetDeviceProperties(&prop, 0);
  if (err != cudaSuccess) {
    cudaGetLastError();
    info.device_count = 0;
    info.error = std::string("cudaGetDeviceProperties: ") + cudaGetErrorString(err);
    return info;
  }
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.total_memory = prop.totalGlobalMem;
  int cur = 0;
  cudaGetDevice(&cur);
  if (cudaSetDevice(0) == cudaSuccess && cudaMemGetInfo(&info.free_memory, &info.total_memory) != cudaSuccess) {
    cudaGetLastError();
  }
  cudaSetDevice(cur);
  return info;
}

// Creates the CUDA backend on the current device.
std::unique_ptr<Engine> make_cuda_engine(const EngineOptions& opts) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw EngineError(EngineError::Kind::DeviceUnavailable,
                      std::string("no usable CUDA device: ") + cudaGetErrorString(err));
  }
  if (count == 0) throw EngineError(EngineError::Kind::DeviceUnavailable, "no CUDA device");
  CudaExec ex;
  ex.opts = opts;
  MLN_CUDA_TRY(cudaGetDevice(&ex.device));
  MLN_CUDA_TRY(cudaFree(nullptr));  // create the context now, so that failures surface here
  cudaDeviceProp prop;
  MLN_CUDA_TRY(cudaGetDeviceProperties(&prop, ex.device));
  ex.device_name = prop.name;
  ex.sm_count = prop.multiProcessorCount;
  // Keep freed blocks in the stream-ordered pool instead of returning them at
  // every synchronisation.
  cudaMemPool_t pool;
  MLN_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, ex.device));
  uint64_t keep = std::numeric_limits<uint64_t>::max();
  MLN_CUDA_TRY(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  return std::make_unique<EngineImpl<CudaExec>>(std::move(ex));
}

// Best time of `reps` device-to-device copies of `bytes` bytes.
double time_backend_copy(Backend b, size_t bytes, int reps) {
  if (b == Backend::CPU) return time_host_copy(bytes, reps);
  void* src = device_alloc(bytes);
  void* dst = nullptr;
  try {
    dst = device_alloc(bytes);
  } catch (...) {
    device_free(src);
    throw;
  }
  double best = 1e30;
  cudaMemset(src, 1, bytes);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (int r = 0; r < reps; ++r) {
    cudaEventRecord(start, 0);
    cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0);
    cudaEventRecord(stop, 0);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    best = std::min(best, ms / 1e3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  device_free(src);
  device_free(dst);
  MLN_CUDA_TRY(cudaDeviceSynchronize());
  return best;
}

}  // namespace mln::gpu
