// CPU backend: the operator templates run with thrust::omp::par on host
// memory.  Thrust's OpenMP system runs scans (and so copy_if) sequentially, so
// the four scan-shaped steps the operators need (exclusive_sum, inclusive_max,
// compact, select_rows) are written here as blocked OpenMP loops; their CUDA
// twins in cuda_engine.cu call Thrust/CUB.
#include <omp.h>
#include <thrust/copy.h>
#include <thrust/fill.h>
#include <thrust/sort.h>
#include <thrust/system/omp/execution_policy.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <thread>

#include "engine_impl.hpp"
#include "format/peak_bytes.hpp"
#include "options/threads.hpp"

namespace mln::gpu {
namespace {

constexpr size_t kSerialBelow = size_t(1) << 15;  // below this, threads cost more than they save

// Splits [0, n) into `parts` blocks; returns the bounds of block `t`.
inline std::pair<size_t, size_t> block(size_t n, int parts, int t) {
  const size_t per = (n + parts - 1) / parts;
  const size_t b = std::min(n, per * t);
  return {b, std::min(n, b + per)};
}

// Host bytes held by CPU-engine arrays (all CPU engines of the process).
PeakBytes g_host_bytes;

struct CpuExec {
  static constexpr Backend kBackend = Backend::CPU;
  // Hash inner join under Auto: faster than the sort form once the sorted
  // array leaves the cache (docs/operators.md).
  static constexpr bool kAutoHashJoin = true;
  static constexpr size_t kMaxChunkRows = size_t(1) << 22;  // ~0.1-1 s of work on a few cores
  static constexpr bool kExpandRuns = false;  // joins expand through gather maps (operators.hpp)
  EngineOptions opts;
  int threads = 1;

  // Sets the OpenMP thread count for the duration of one operator.
  // Dynamic adjustment is on: libgomp then uses fewer threads when the
  // machine is busy (load average).  Without it, on a loaded 2-core machine
  // (a PostgreSQL backend next to other backends) every parallel region's
  // barrier spin-waits for a descheduled thread, which makes grounding many
  // times slower (docs/architecture.md).
  struct Scope {
    int prev;
    int prev_dynamic;
    explicit Scope(int t) : prev(omp_get_max_threads()), prev_dynamic(omp_get_dynamic()) {
      omp_set_num_threads(t);
      omp_set_dynamic(1);
    }
    ~Scope() {
      omp_set_num_threads(prev);
      omp_set_dynamic(prev_dynamic);
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
  };
  Scope scope() const { return Scope(threads); }
  void sync() const {}  // work is done when an operator returns

  std::string name() const { return "cpu (" + std::to_string(threads) + " threads)"; }

  // Peak of the engine's host arrays (all CPU engines of the process); reset
  // starts a new mark at the current use.
  size_t peak_bytes(bool reset) const {
    return g_host_bytes.peak(reset);
  }
  void release_cached() const {}  // host arrays are freed when they go
  auto policy() const { return thrust::omp::par; }

  // Uninitialised host array of n elements.
  template <class T>
  Buf<T> alloc(size_t n) const {
    Buf<T> b;
    if (n == 0) return b;
    const size_t limit = opts.host_memory_limit_bytes;
    if (limit && (n > limit / sizeof(T) || g_host_bytes.now() + n * sizeof(T) > limit))
      throw EngineError(EngineError::Kind::HostMemoryLimit,
                        "cpu backend: " + std::to_string(n * sizeof(T) >> 20) + " MB more would pass the limit of " +
                            std::to_string(limit >> 20) + " MB on the engine's host memory (" +
                            std::to_string(g_host_bytes.now() >> 20) + " MB held)");
    void* p = std::malloc(n * sizeof(T));
    if (!p) throw EngineError(EngineError::Kind::HostOutOfMemory,
                              "cpu backend: cannot allocate " + std::to_string(n * sizeof(T)) + " bytes");
    const size_t bytes = n * sizeof(T);
    g_host_bytes.add(static_cast<std::ptrdiff_t>(bytes));
    b.mem = std::shared_ptr<void>(p, [bytes](void* q) {
      std::free(q);
      g_host_bytes.add(-static_cast<std::ptrdiff_t>(bytes));
    });
    b.ptr = static_cast<T*>(p);
    b.n = n;
    return b;
  }

  // Zero-filled host array of n elements, written in parallel.  Not calloc:
  // its untouched pages would map the shared zero page on the first read and
  // fault again on the first write, and on this VM each such remap costs a
  // TLB-shootdown IPI (docs/operators.md, "Empty slot = 0").
  template <class T>
  Buf<T> alloc_zeroed(size_t n) const {
    Buf<T> b = alloc<T>(n);
    if (n) thrust::fill(policy(), b.data(), b.data() + n, T{});
    return b;
  }

  // Parallel copy between host arrays.
  template <class T>
  void copy(T* dst, const T* src, size_t n) const {
    if (n < kSerialBelow) {
      std::memcpy(dst, src, n * sizeof(T));
      return;
    }
    thrust::copy(policy(), src, src + n, dst);
  }
  template <class T>
  void upload(T* dst, const T* src, size_t n) const { copy(dst, src, n); }
  template <class T>
  void download(T* dst, const T* src, size_t n) const { copy(dst, src, n); }

  // off[i] = cnt[0] + ... + cnt[i-1]; returns the sum of all counts.
  int64_t exclusive_sum(const int32_t* cnt, size_t n, int64_t* off) const {
    const int parts = n < kSerialBelow ? 1 : omp_get_max_threads();
    std::vector<int64_t> base(parts + 1, 0);
#pragma omp parallel num_threads(parts)
    {
      const int nt = omp_get_num_threads(), t = omp_get_thread_num();
      auto [b, e] = block(n, nt, t);
      int64_t s = 0;
      for (size_t i = b; i < e; ++i) s += cnt[i];
      base[t + 1] = s;
#pragma omp barrier
#pragma omp single
      for (int k = 0; k < nt; ++k) base[k + 1] += base[k];
      int64_t run = base[t];
      for (size_t i = b; i < e; ++i) {
        off[i] = run;
        run += cnt[i];
      }
    }
    return n ? off[n - 1] + cnt[n - 1] : 0;
  }

  // v[i] = max(v[0..i]) in place.
  void inclusive_max(int32_t* v, size_t n) const {
    const int parts = n < kSerialBelow ? 1 : omp_get_max_threads();
    std::vector<int32_t> top(parts + 1, std::numeric_limits<int32_t>::min());
#pragma omp parallel num_threads(parts)
    {
      const int nt = omp_get_num_threads(), t = omp_get_thread_num();
      auto [b, e] = block(n, nt, t);
      int32_t m = std::numeric_limits<int32_t>::min();
      for (size_t i = b; i < e; ++i) m = std::max(m, v[i]);
      top[t + 1] = m;
#pragma omp barrier
#pragma omp single
      for (int k = 0; k < nt; ++k) top[k + 1] = std::max(top[k + 1], top[k]);
      int32_t run = top[t];
      for (size_t i = b; i < e; ++i) v[i] = run = std::max(run, v[i]);
    }
  }

  // Sorts keys ascending, with perm (when not null) alongside.
  void sort_keys(ops::Key* keys, size_t n, int32_t* perm) const {
    if (n < 2) return;
    if (perm)
      thrust::sort_by_key(policy(), keys, keys + n, perm);
    else
      thrust::sort(policy(), keys, keys + n);
  }

  // Right rows grouped by dense key: count each key into pos, exclusive
  // scan, then place each row at its key's cursor, which leaves pos[d] at
  // the end of run d (operators.hpp, "dense keys").
  void group_dense(const int32_t* k, size_t n, int32_t base, uint32_t range, int32_t* pos, int32_t* perm) const {
    thrust::fill(policy(), pos, pos + range, 0);
    const ops::Count first(0), last(static_cast<ops::Idx>(n));
    thrust::for_each(policy(), first, last, ops::DenseCount{k, base, pos});
    thrust::exclusive_scan(policy(), pos, pos + range, pos);
    thrust::for_each(policy(), first, last, ops::DensePlace{k, base, pos, perm});
  }

  // Indices i (ascending) with mask[i] == want.
  Buf<int32_t> compact(const uint8_t* mask, size_t n, uint8_t want) const {
    const int parts = n < kSerialBelow ? 1 : omp_get_max_threads();
    std::vector<size_t> base(parts + 1, 0);
    Buf<int32_t> out;
#pragma omp parallel num_threads(parts)
    {
      const int nt = omp_get_num_threads(), t = omp_get_thread_num();
      auto [b, e] = block(n, nt, t);
      size_t s = 0;
      for (size_t i = b; i < e; ++i) s += mask[i] == want;
      base[t + 1] = s;
#pragma omp barrier
#pragma omp single
      {
        for (int k = 0; k < nt; ++k) base[k + 1] += base[k];
        try {
          out = alloc<int32_t>(base[nt]);
        } catch (...) {
          out.n = SIZE_MAX;  // reported after the parallel region
        }
      }
      if (out.n != SIZE_MAX) {
        int32_t* o = out.ptr + base[t];
        for (size_t i = b; i < e; ++i)
          if (mask[i] == want) *o++ = static_cast<int32_t>(i);
      }
    }
    if (out.n == SIZE_MAX) throw EngineError(EngineError::Kind::HostOutOfMemory, "cpu backend: out of memory");
    return out;
  }

  // Columns src[c][0..n) at the rows where keep(i) holds, in order; returns
  // their number.  Two blocked passes: count per block (keep evaluated), then,
  // after one allocation, each block writes its rows at its offset (keep
  // evaluated again: cheaper than storing a mask, as the predicate's columns
  // are read for the copy anyway).
  template <class Keep>
  size_t select_rows(const Keep& keep, size_t n, const std::vector<const int32_t*>& src,
                     std::vector<Column>& out) const {
    const int parts = n < kSerialBelow ? 1 : omp_get_max_threads();
    const size_t ncols = src.size();
    std::vector<size_t> base(parts + 1, 0);
    std::vector<int32_t*> dst(ncols, nullptr);
    out.assign(ncols, Column());
    bool failed = false;
    size_t total = 0;
#pragma omp parallel num_threads(parts)
    {
      const int nt = omp_get_num_threads(), t = omp_get_thread_num();
      auto [b, e] = block(n, nt, t);
      size_t s = 0;
      for (size_t i = b; i < e; ++i) s += keep(static_cast<ops::Idx>(i)) ? 1 : 0;
      base[t + 1] = s;
#pragma omp barrier
#pragma omp single
      {
        for (int k = 0; k < nt; ++k) base[k + 1] += base[k];
        total = base[nt];
        try {
          for (size_t c = 0; c < ncols; ++c) {
            out[c] = alloc<int32_t>(total);
            dst[c] = out[c].data();
          }
        } catch (...) {
          failed = true;  // reported after the parallel region
        }
      }
      if (!failed) copy_kept(keep, b, e, base[t], base[t + 1], src, dst);
    }
    if (failed) throw EngineError(EngineError::Kind::HostOutOfMemory, "cpu backend: out of memory");
    return total;
  }

  // Writes the rows i in [b, e) where keep(i) holds to dst[c][at..end).
  // Branchless: every row is written at the cursor, which advances only past
  // kept rows (a mispredicted branch per row cost more than the copy).  The
  // cursor never writes at `end`: the block stops once all its rows are out.
  template <class Keep>
  static void copy_kept(const Keep& keep, size_t b, size_t e, size_t at, size_t end,
                        const std::vector<const int32_t*>& src, const std::vector<int32_t*>& dst) {
    const size_t ncols = src.size();
    if (ncols == 2) {  // the common arity: no inner loop
      const int32_t *s0 = src[0], *s1 = src[1];
      int32_t *d0 = dst[0], *d1 = dst[1];
      for (size_t i = b; i < e && at < end; ++i) {
        const bool k = keep(static_cast<ops::Idx>(i));
        d0[at] = s0[i];
        d1[at] = s1[i];
        at += k;
      }
      return;
    }
    for (size_t i = b; i < e && at < end; ++i) {
      const bool k = keep(static_cast<ops::Idx>(i));
      for (size_t c = 0; c < ncols; ++c) dst[c][at] = src[c][i];
      at += k;
    }
  }

  // Working-memory budget of one operator (unlimited when 0).
  size_t budget() const {
    return opts.memory_budget_bytes ? opts.memory_budget_bytes : std::numeric_limits<size_t>::max();
  }

  // Throws Cancelled when the caller asked to stop.
  void check_cancel() const {
    if (opts.cancel && opts.cancel()) throw EngineError(EngineError::Kind::Cancelled, "operator cancelled");
  }

  // Thrust system errors on the CPU are not device errors.
  EngineError map_error(const thrust::system_error& e) const {
    return EngineError(EngineError::Kind::DeviceFailure, e.what());
  }
  // Every allocation of this backend is the host's.
  EngineError map_bad_alloc(const std::bad_alloc& e) const {
    return EngineError(EngineError::Kind::HostOutOfMemory, std::string("cpu backend: out of memory: ") + e.what());
  }
};

}  // namespace

// Creates the CPU backend.
std::unique_ptr<Engine> make_cpu_engine(const EngineOptions& opts) {
  CpuExec ex;
  ex.opts = opts;
  ex.threads = usable_threads(opts.cpu_threads);
  return std::make_unique<EngineImpl<CpuExec>>(std::move(ex));
}

}  // namespace mln::gpu
