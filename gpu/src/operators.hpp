// The relational operators, written once as templates over an execution
// context `Exec` (CpuExec: thrust::omp::par on host memory; CudaExec:
// thrust::cuda::par on device memory).
//
// An Exec provides:
//   policy()                      Thrust execution policy
//   alloc<T>(n)                   uninitialised Buf<T> in backend memory
//   alloc_zeroed<T>(n)            zero-filled Buf<T> (T trivially copyable)
//   copy(dst, src, n)             copy within backend memory
//   load(p)                       read one element to the host
//   exclusive_sum(cnt, n, off)    int32 counts -> int64 offsets, returns total
//   inclusive_max(v, n)           in-place running maximum of int32
//   sort_keys(keys, n, perm)      sorts keys ascending, perm (may be null) alongside
//   group_dense(k, n, base, range, pos, perm)  right rows grouped by dense key
//                                 (pos: end of each key's run in perm)
//   kExpandRuns                   whether the backend has expand_runs (CUDA); if so:
//   expand_runs_fit(cnt, n)       whether expand_runs suits these run lengths
//   expand_runs(n, lo, cnt, off, perm, cols)  writes every join match
//   compact(mask, n, want)        indices i with mask[i] == want
//   select_rows(keep, n, src, out) columns src[c][0..n) at the rows where keep(i)
//                                 holds, in order; returns their number
//   opts                          EngineOptions (join_algorithm, distinct_algorithm)
//   budget()                      working-memory budget in bytes
//   check_cancel()                throws EngineError(Cancelled) when asked to
//   kMaxChunkRows                 most rows processed between two cancel polls
//
// Keys: the key columns of a row are encoded as one uint64 so that every
// operator sorts and searches plain integers (radix sort on the GPU).  One
// column widens, two columns pack, and three or more columns are packed
// pairwise with dense re-numbering in between (see encode_keys).
//
// Matching keys: joins, semi/anti joins, distinct and difference match keys
// either through an open-addressing hash table (default) or by sorting; see
// "hash table" below and docs/operators.md for the measurements behind it.
#pragma once

#include <thrust/binary_search.h>
#include <thrust/copy.h>
#include <thrust/fill.h>
#include <thrust/for_each.h>
#include <thrust/functional.h>
#include <thrust/gather.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/transform_reduce.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <vector>

#include "relation_impl.hpp"

namespace mln::gpu::ops {

using Key = uint64_t;
using Idx = int64_t;
using Count = thrust::counting_iterator<Idx>;

// ---- functors (host and device) -------------------------------------------

// Widens one int32 column to a key.
struct WidenKey {
  const int32_t* col;
  MLN_HD Key operator()(Idx i) const { return static_cast<Key>(static_cast<uint32_t>(col[i])); }
};

// Packs a (< 2^32) key and a further column into one key.
struct PackKey {
  const Key* hi;
  const int32_t* lo;
  MLN_HD Key operator()(Idx i) const {
    return (hi[i] << 32) | static_cast<Key>(static_cast<uint32_t>(lo[i]));
  }
};

// 1 where a sorted sequence starts a new run of equal keys.
struct RunHead {
  const Key* k;
  MLN_HD uint8_t operator()(Idx i) const { return i == 0 || k[i] != k[i - 1]; }
};

// splitmix64 finaliser: a bijective mix of all 64 key bits.
MLN_HD inline Key mix64(Key x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Hash partition number of a key (low bits of the mix; hash tables use the
// high bits, so a partition still spreads over a whole table).
struct KeyPart {
  const Key* k;
  uint32_t parts;
  MLN_HD uint32_t operator()(Idx i) const { return static_cast<uint32_t>(mix64(k[i]) % parts); }
};

// True where a partition number equals `p`.
struct IsPart {
  const uint32_t* pid;
  uint32_t p;
  MLN_HD bool operator()(Idx i) const { return pid[i] == p; }
};

// True where a mask byte equals `want`.
struct MaskIs {
  const uint8_t* mask;
  uint8_t want;
  MLN_HD bool operator()(Idx i) const { return mask[i] == want; }
};

// Conjunction of up to kMax comparison predicates over one chunk of rows.
// Each comparison is stored as a 3-bit mask of the outcomes it accepts
// (bit 0: a < b, bit 1: a == b, bit 2: a > b), so that evaluating it is a
// shift, with no switch and no data-dependent branch.
struct PredSet {
  static constexpr int kMax = 8;
  int n = 0;
  const int32_t* lhs[kMax];
  const int32_t* rhs[kMax];
  int32_t cst[kMax];
  uint8_t accept[kMax];
  // The outcome mask of a comparison operator.
  static uint8_t mask_of(CmpOp op) {
    switch (op) {
      case CmpOp::EQ: return 2;
      case CmpOp::NE: return 5;
      case CmpOp::LT: return 1;
      case CmpOp::LE: return 3;
      case CmpOp::GT: return 4;
      default: return 6;  // GE
    }
  }
  // Evaluates every predicate on row i.
  MLN_HD bool eval(Idx i) const {
    unsigned all = 1;
    for (int k = 0; k < n; ++k) {
      const int32_t a = lhs[k][i];
      const int32_t b = rhs[k] ? rhs[k][i] : cst[k];
      const unsigned outcome = static_cast<unsigned>(a > b) + static_cast<unsigned>(a >= b);  // 0 <, 1 ==, 2 >
      all &= accept[k] >> outcome;
    }
    return all & 1;
  }
};

// True where row i satisfies every predicate of the set.
struct RowPasses {
  PredSet preds;
  MLN_HD bool operator()(Idx i) const { return preds.eval(i); }
};

// First position in sorted keys[0..n) whose key is not less than k.  Thrust's
// vectorised lower_bound/upper_bound cost two full searches per probe; this
// branchless form (one compare-and-select per level) plus a galloping search
// for the end of the run halves the work and suits both CPU and GPU.
MLN_HD inline int64_t branchless_lower_bound(const Key* keys, int64_t n, Key k) {
  if (n == 0) return 0;
  const Key* base = keys;
  while (n > 1) {
    const int64_t half = n / 2;
    base = (base[half] < k) ? base + half : base;
    n -= half;
  }
  return (base - keys) + (*base < k);
}

// Sorted keys with every kSampleStride-th key copied into a small array
// (a two-level CSS-tree, as the seeds' engine used): a search runs over the
// sample first, which stays in cache, then over one stretch of
// kSampleStride keys (four 128-byte lines of uint64), instead of touching a
// new line of the whole array at each of its last levels.  Measured on an
// H100 at 10^7 rows: docs/operators.md.
constexpr int64_t kSampleStride = 64;
struct SortedKeys {
  const Key* keys;
  int64_t n;
  const Key* sample;  // sample[j] = keys[j * kSampleStride]
  int64_t ns;
  // First position whose key is not less than k.
  MLN_HD int64_t lower_bound(Key k) const {
    const int64_t j = branchless_lower_bound(sample, ns, k);  // keys[(j-1)*S] < k <= keys[j*S]
    const int64_t a = j > 0 ? (j - 1) * kSampleStride + 1 : 0;
    const int64_t b = j * kSampleStride < n ? j * kSampleStride : n;
    return a + branchless_lower_bound(keys + a, b - a, k);
  }
};

// sample[j] = keys[j * kSampleStride].
struct TakeSample {
  const Key* keys;
  MLN_HD Key operator()(Idx j) const { return keys[j * kSampleStride]; }
};

// lo[i] = first right match of left key i, cnt[i] = number of matches.
struct EqualRange {
  SortedKeys right;
  const Key* lk;
  int32_t* lo;
  int32_t* cnt;
  MLN_HD void operator()(Idx i) const {
    const Key k = lk[i];
    const Key* rk = right.keys;
    const int64_t nr = right.n;
    const int64_t l = right.lower_bound(k);
    lo[i] = static_cast<int32_t>(l);
    if (l == nr || rk[l] != k) {
      cnt[i] = 0;
      return;
    }
    int64_t step = 1;  // gallop: rk[l + step/2] == k holds throughout
    while (l + step < nr && rk[l + step] == k) step *= 2;
    int64_t a = l + step / 2, b = l + step < nr ? l + step : nr;  // rk[a] == k, b is past the run
    while (b - a > 1) {
      const int64_t mid = a + (b - a) / 2;
      if (rk[mid] == k) a = mid; else b = mid;
    }
    cnt[i] = static_cast<int32_t>(b - l);
  }
};

// found[i] = 1 when left key i occurs among the sorted right keys.
struct KeyPresent {
  SortedKeys right;
  const Key* lk;
  MLN_HD uint8_t operator()(Idx i) const {
    const Key k = lk[i];
    const int64_t l = right.lower_bound(k);
    return l < right.n && right.keys[l] == k;
  }
};

// Output columns of a join written straight from the match runs (see
// "expand" in join_chunk; output row off[i] + j is left row i with right row
// perm[lo[i] + j]): column k takes src[k] at the left row (side 0) or at
// the right row (side 1).  Passed by value to a kernel, so the count is
// fixed; a join with more output columns is written kExpandCols at a time.
constexpr int kExpandCols = 16;
struct ExpandCols {
  const int32_t* src[kExpandCols];
  int32_t* dst[kExpandCols];
  uint8_t side[kExpandCols];
  int n = 0;
};

// Writes left row i at the first output slot of its matches.
struct MarkRunStart {
  const int32_t* cnt;
  const int64_t* off;
  int32_t* lidx;
  MLN_HD void operator()(Idx i) const {
    if (cnt[i] > 0) lidx[off[i]] = static_cast<int32_t>(i);
  }
};

// Right row of output slot j: the (j - off[i])-th match of left row i.
struct RightOfSlot {
  const int32_t* lidx;
  const int32_t* lo;
  const int64_t* off;
  const int32_t* rperm;
  MLN_HD int32_t operator()(Idx j) const {
    const int32_t i = lidx[j];
    return rperm[lo[i] + (j - off[i])];
  }
};

// ---- hash table -------------------------------------------------------------
//
// Open addressing with linear probing over encoded keys, built in parallel
// with 64-bit compare-and-swap.  Hand-written rather than taken from a
// library: cuCollections (the usual GPU hash table) is packaged neither in
// Debian nor in the CUDA toolkit, and it is CUDA-only, while this table must
// also run under Thrust's OpenMP system for the CPU backend.  The same
// functors serve both: the MLN_HD atomics below use CUDA atomics in device
// code and GCC's __atomic builtins on the host.
//
// Capacity is a power of two of at least twice the rows inserted (load factor
// <= 1/2, so a probe reads one or two slots on average); the home slot is
// taken from the high bits of mix64(key).  Slots hold keys complemented (~k)
// so that an all-zero table is empty (alloc_zeroed: cudaMemsetAsync on the
// GPU).  The one key whose complement is 0 (kOddKey: two key columns both -1)
// gets the extra slot at index `capacity`, marked occupied by a non-zero word.
//
// Duplicate keys (inner joins): rather than chaining equal-key rows through
// a `next` array (whose walk is one dependent load per match, and whose
// expansion is balanced per left row, so a hot key stalls one GPU thread for
// its whole chain), the build groups the right rows by key into `perm`, one
// run per key, as the sort join does.  The probe then yields (run start,
// count) and the expansion stays balanced over output rows whatever the skew.

constexpr Key kOddKey = ~Key(0);
constexpr uint32_t kNoSlot = 0xffffffffu;
constexpr size_t kMaxHashRows = size_t(1) << 30;  // capacity stays <= 2^31: slot numbers fit uint32

// Atomic compare-and-swap of a 64-bit key; returns the value found at *p.
MLN_HD inline Key atomic_cas_key(Key* p, Key expected, Key desired) {
#ifdef __CUDA_ARCH__
  return static_cast<Key>(atomicCAS(reinterpret_cast<unsigned long long*>(p),
                                    static_cast<unsigned long long>(expected),
                                    static_cast<unsigned long long>(desired)));
#else
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return expected;  // on failure the builtin stored the value found there
#endif
}

// Atomic read of a key that other threads may be inserting.
MLN_HD inline Key atomic_load_key(const Key* p) {
#ifdef __CUDA_ARCH__
  return *reinterpret_cast<const volatile Key*>(p);
#else
  return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

// Atomic fetch-and-add on an int32; returns the previous value.
MLN_HD inline int32_t atomic_add_i32(int32_t* p, int32_t v) {
#ifdef __CUDA_ARCH__
  return atomicAdd(p, v);
#else
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

// Slot of a join table: a key, the number of right rows with that key, and
// the end of their run in the grouped row order (perm[end-count .. end)).
struct alignas(16) JoinSlot {  // one 16-byte load on the GPU
  Key key;
  int32_t end;
  int32_t count;
};

// The key word of a slot (join tables hold JoinSlot, key sets plain keys).
MLN_HD inline Key* key_word(JoinSlot* s) { return &s->key; }
MLN_HD inline const Key* key_word(const JoinSlot* s) { return &s->key; }
MLN_HD inline Key* key_word(Key* s) { return s; }
MLN_HD inline const Key* key_word(const Key* s) { return s; }

// A table's slots as seen by functors: slots[0..mask] probed, slots[mask+1]
// reserved for kOddKey.
template <class Slot>
struct HashView {
  Slot* slots;
  uint32_t mask;
  int shift;  // 64 - log2(capacity)
  // Home slot of key k.
  MLN_HD uint32_t home(Key k) const { return static_cast<uint32_t>(mix64(k) >> shift); }
  // Slot of key k, claiming an empty one when k is absent; *fresh tells
  // whether this call claimed it (exactly one caller per key does).
  MLN_HD uint32_t insert(Key k, bool* fresh) const {
    if (k == kOddKey) {
      *fresh = atomic_cas_key(key_word(&slots[mask + 1]), 0, 1) == 0;
      return mask + 1;
    }
    const Key w = ~k;
    for (uint32_t s = home(k);; s = (s + 1) & mask) {
      Key cur = atomic_load_key(key_word(&slots[s]));
      if (cur == 0) {
        cur = atomic_cas_key(key_word(&slots[s]), 0, w);
        if (cur == 0) {
          *fresh = true;
          return s;
        }
      }
      if (cur == w) {
        *fresh = false;
        return s;
      }
    }
  }
  // Slot of key k, or kNoSlot (only after every insert has finished).
  MLN_HD uint32_t find(Key k) const {
    if (k == kOddKey) return *key_word(&slots[mask + 1]) != 0 ? mask + 1 : kNoSlot;
    const Key w = ~k;
    for (uint32_t s = home(k);; s = (s + 1) & mask) {
      const Key cur = *key_word(&slots[s]);
      if (cur == w) return s;
      if (cur == 0) return kNoSlot;
    }
  }
};

// An owning hash table of `Slot`s.
template <class Slot>
struct HashTable {
  Buf<Slot> slots;  // capacity + 1 slots
  uint32_t mask = 0;
  int shift = 63;
  // The functor view of the table, for inserting.
  HashView<Slot> view() const { return {slots.data(), mask, shift}; }
  // The functor view of the table, for probing.
  HashView<const Slot> probe() const { return {slots.data(), mask, shift}; }
};

// log2 of the capacity of a table for `rows` keys: smallest power of two >= 2 * rows.
inline int table_log2(size_t rows) {
  int b = 1;
  while ((size_t(1) << b) < 2 * rows) ++b;
  return b;
}

// Bytes of a table of `Slot`s for `rows` keys.
template <class Slot>
size_t table_bytes(size_t rows) {
  return ((size_t(1) << table_log2(rows)) + 1) * sizeof(Slot);
}

// An empty table sized for `rows` keys.
template <class Slot, class Exec>
HashTable<Slot> make_table(Exec& ex, size_t rows) {
  const int b = table_log2(rows);
  const size_t cap = size_t(1) << b;
  HashTable<Slot> t;
  t.slots = ex.template alloc_zeroed<Slot>(cap + 1);
  t.mask = static_cast<uint32_t>(cap - 1);
  t.shift = 64 - b;
  return t;
}

// Inserts key i into a key set.
struct SetInsert {
  HashView<Key> t;
  const Key* k;
  MLN_HD void operator()(Idx i) const {
    bool fresh;
    t.insert(k[i], &fresh);
  }
};

// Inserts key i into a key set; head[i] = 1 for the one row that added the key.
struct SetInsertHead {
  HashView<Key> t;
  const Key* k;
  uint8_t* head;
  MLN_HD void operator()(Idx i) const {
    bool fresh;
    t.insert(k[i], &fresh);
    head[i] = fresh;
  }
};

// found[i] = 1 when key i is in the key set.
struct SetHas {
  HashView<const Key> t;
  const Key* k;
  MLN_HD uint8_t operator()(Idx i) const { return t.find(k[i]) != kNoSlot; }
};

// Difference: keep[i] = 1 when key i is not in `other` and row i is the first
// of its key to reach the (own) key set.
struct FirstNotIn {
  HashView<const Key> other;
  HashView<Key> own;
  const Key* k;
  uint8_t* keep;
  MLN_HD void operator()(Idx i) const {
    bool fresh = false;
    if (other.find(k[i]) == kNoSlot) own.insert(k[i], &fresh);
    keep[i] = fresh;
  }
};

// Join build, step 1: inserts right key i, counts it in its slot, records the
// slot; head[i] = 1 for the first row counted per key.
struct JoinInsert {
  HashView<JoinSlot> t;
  const Key* k;
  uint32_t* slot;
  int32_t* head;
  MLN_HD void operator()(Idx i) const {
    bool fresh;
    const uint32_t s = t.insert(k[i], &fresh);
    slot[i] = s;
    head[i] = atomic_add_i32(&t.slots[s].count, 1) == 0;
  }
};

// Join build, step 2: the key's row count at its head row, 0 elsewhere.
struct HeadCount {
  const JoinSlot* t;
  const uint32_t* slot;
  int32_t* cnt;
  MLN_HD void operator()(Idx i) const {
    if (cnt[i]) cnt[i] = t[slot[i]].count;
  }
};

// Join build, step 3: a key's run starts at its head row's offset.
struct SetRunStart {
  JoinSlot* t;
  const uint32_t* slot;
  const int32_t* cnt;
  const int64_t* off;
  MLN_HD void operator()(Idx i) const {
    if (cnt[i]) t[slot[i]].end = static_cast<int32_t>(off[i]);
  }
};

// Join build, step 4: places right row i in its key's run (the run's cursor,
// `end`, finishes one past the run).
struct PlaceRow {
  JoinSlot* t;
  const uint32_t* slot;
  int32_t* perm;
  MLN_HD void operator()(Idx i) const { perm[atomic_add_i32(&t[slot[i]].end, 1)] = static_cast<int32_t>(i); }
};

// Hash probe: lo[i] = first position in perm of left key i's matches, cnt[i] = their number.
struct HashRange {
  HashView<const JoinSlot> t;
  const Key* lk;
  int32_t* lo;
  int32_t* cnt;
  MLN_HD void operator()(Idx i) const {
    const uint32_t s = t.find(lk[i]);
    if (s == kNoSlot) {
      lo[i] = cnt[i] = 0;
      return;
    }
    const JoinSlot js = t.slots[s];
    lo[i] = js.end - js.count;
    cnt[i] = js.count;
  }
};

// ---- dense keys ---------------------------------------------------------------
//
// A join on one int32 key column whose build-side values span a range not
// much wider than the build side (symbol ids, row numbers, any dictionary
// encoding) needs no hash and no sort: the key minus the range's base is
// the slot.  Inner joins: count each key into pos[] (DenseCount), exclusive
// scan, then place each right row at its key's cursor (DensePlace), which
// leaves pos[d] at the end of run d, so run d is perm[pos[d-1] .. pos[d]).
// How the runs are placed is the backend's (Exec::group_dense): the CPU
// form is the counting scatter above; the CUDA form radix-sorts the slots
// with their row numbers, because an atomic cursor bump per row, each
// followed by a scattered store, costs several times the sort
// (docs/operators.md).
// Semi/anti joins: one byte per key (DenseMark).  No uint64 encoding of the
// keys either.  Row order within a run is arbitrary, as in the hash form.

// Smallest and largest value of an int32 column.
struct MinMax {
  int32_t lo, hi;
};
struct MinMaxOf {
  MLN_HD MinMax operator()(int32_t v) const { return {v, v}; }
};
struct MinMaxJoin {
  MLN_HD MinMax operator()(const MinMax& a, const MinMax& b) const {
    return {a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi};
  }
};

// Slot of key v in a range of `range` slots from `base`, or >= range when outside.
MLN_HD inline uint32_t dense_slot(int32_t v, int32_t base) {
  return static_cast<uint32_t>(v) - static_cast<uint32_t>(base);
}

struct DenseCount {
  const int32_t* k;
  int32_t base;
  int32_t* pos;
  MLN_HD void operator()(Idx i) const { atomic_add_i32(&pos[dense_slot(k[i], base)], 1); }
};

struct DensePlace {
  const int32_t* k;
  int32_t base;
  int32_t* pos;
  int32_t* perm;
  MLN_HD void operator()(Idx i) const {
    perm[atomic_add_i32(&pos[dense_slot(k[i], base)], 1)] = static_cast<int32_t>(i);
  }
};

// lo[i], cnt[i]: left row i's run of right rows.
struct DenseRange {
  const int32_t* pos;
  int32_t base;
  uint32_t range;
  const int32_t* lk;
  int32_t* lo;
  int32_t* cnt;
  MLN_HD void operator()(Idx i) const {
    const uint32_t d = dense_slot(lk[i], base);
    if (d >= range) {
      lo[i] = cnt[i] = 0;
      return;
    }
    const int32_t start = d ? pos[d - 1] : 0;
    lo[i] = start;
    cnt[i] = pos[d] - start;
  }
};

struct DenseMark {
  const int32_t* k;
  int32_t base;
  uint8_t* present;
  MLN_HD void operator()(Idx i) const { present[dense_slot(k[i], base)] = 1; }
};

// Keep-functor of a semi (want = 1) or anti (want = 0) join.
struct DenseKeep {
  const uint8_t* present;
  int32_t base;
  uint32_t range;
  const int32_t* lk;
  uint8_t want;
  MLN_HD bool operator()(Idx i) const {
    const uint32_t d = dense_slot(lk[i], base);
    return (d < range && present[d]) == (want == 1);
  }
};

// ---- small helpers ----------------------------------------------------------

// A new relation on backend `b` with the given columns.
inline RelPtr make_rel(Backend b, size_t rows, std::vector<Column> cols) {
  auto r = std::make_shared<Relation::Impl>();
  r->backend = b;
  r->rows = rows;
  r->cols = std::move(cols);
  return r;
}

// Bytes held by a relation's columns.
inline size_t rel_bytes(const Relation::Impl& r) { return r.rows * r.cols.size() * sizeof(int32_t); }

// out[k] = src[idx[k]] for k < m.
template <class Exec, class T>
Buf<T> gather(Exec& ex, const int32_t* idx, size_t m, const T* src) {
  Buf<T> out = ex.template alloc<T>(m);
  if (m) thrust::gather(ex.policy(), idx, idx + m, src, out.data());
  return out;
}

// The rows `idx[0..m)` of `in` (row numbers relative to `first`).
template <class Exec>
RelPtr gather_rows(Exec& ex, const Relation::Impl& in, size_t first, const Buf<int32_t>& idx) {
  std::vector<Column> cols;
  for (const Column& c : in.cols) cols.push_back(gather(ex, idx.data(), idx.size(), c.data() + first));
  return make_rel(Exec::kBackend, idx.size(), std::move(cols));
}

// Concatenation of relations of equal arity (no copy when only one has rows).
// A part held by `parts` alone (an operator's chunk results, moved in) gives
// each column back as soon as it is copied, so the peak is the output and
// one column of the parts, not the parts and the output whole; parts held
// elsewhere too (union_all's inputs) are left as they are.
template <class Exec>
RelPtr concat(Exec& ex, std::vector<RelPtr> parts, int ncols) {
  size_t total = 0, nonempty = 0;
  RelPtr last;
  for (const RelPtr& p : parts) {
    total += p->rows;
    if (p->rows) ++nonempty, last = p;
  }
  if (nonempty == 1 && static_cast<int>(last->cols.size()) == ncols) return last;
  std::vector<Column> cols;
  for (int c = 0; c < ncols; ++c) {
    Column out = ex.template alloc<int32_t>(total);
    size_t at = 0;
    for (RelPtr& p : parts) {
      if (p->rows) ex.copy(out.data() + at, p->cols[c].data(), p->rows);
      at += p->rows;
      if (p.use_count() == 1) p->cols[c] = Column();  // stream-ordered on the GPU: freed after the copy
    }
    cols.push_back(std::move(out));
  }
  return make_rel(Exec::kBackend, total, std::move(cols));
}

// Sorted, duplicate-free copy of sorted keys.
template <class Exec>
Buf<Key> unique_sorted(Exec& ex, const Buf<Key>& sorted) {
  const size_t n = sorted.size();
  Buf<uint8_t> head = ex.template alloc<uint8_t>(n);
  thrust::transform(ex.policy(), Count(0), Count(n), head.data(), RunHead{sorted.data()});
  Buf<int32_t> pos = ex.compact(head.data(), n, 1);
  return gather(ex, pos.data(), pos.size(), sorted.data());
}

// Re-numbers keys of all sides densely (0..distinct-1), consistently across sides.
template <class Exec>
void densify(Exec& ex, std::vector<Buf<Key>>& keys) {
  size_t total = 0;
  for (auto& k : keys) total += k.size();
  Buf<Key> all = ex.template alloc<Key>(total);
  size_t at = 0;
  for (auto& k : keys) {
    if (k.size()) ex.copy(all.data() + at, k.data(), k.size());
    at += k.size();
  }
  ex.sort_keys(all.data(), total, nullptr);
  Buf<Key> dict = unique_sorted(ex, all);
  all = Buf<Key>();
  for (auto& k : keys) {
    if (k.size())
      thrust::lower_bound(ex.policy(), dict.data(), dict.data() + dict.size(), k.data(),
                          k.data() + k.size(), k.data());
  }
}

// Encodes the key columns cols[s] of each relation rels[s] as uint64 keys such
// that rows (of any side) have equal keys iff their key columns are equal.
template <class Exec>
std::vector<Buf<Key>> encode_keys(Exec& ex, const std::vector<const Relation::Impl*>& rels,
                                  const std::vector<const std::vector<int>*>& cols) {
  const size_t k = cols[0]->size();
  std::vector<Buf<Key>> out;
  for (const auto* r : rels) out.push_back(ex.template alloc<Key>(r->rows));
  for (size_t s = 0; s < rels.size(); ++s) {
    const size_t n = rels[s]->rows;
    if (!n) continue;
    if (k == 0)
      thrust::fill(ex.policy(), out[s].data(), out[s].data() + n, Key(0));
    else
      thrust::transform(ex.policy(), Count(0), Count(n), out[s].data(),
                        WidenKey{rels[s]->cols[(*cols[s])[0]].data()});
  }
  for (size_t c = 1; c < k; ++c) {
    ex.check_cancel();
    if (c >= 2) densify(ex, out);
    for (size_t s = 0; s < rels.size(); ++s) {
      const size_t n = rels[s]->rows;
      if (n)
        thrust::transform(ex.policy(), Count(0), Count(n), out[s].data(),
                          PackKey{out[s].data(), rels[s]->cols[(*cols[s])[c]].data()});
    }
  }
  return out;
}

// Rows [first, first+n) of `in` where keep(i) holds (i relative to `first`).
template <class Exec, class Keep>
RelPtr select_where(Exec& ex, const Relation::Impl& in, size_t first, size_t n, const Keep& keep) {
  std::vector<const int32_t*> src;
  for (const Column& c : in.cols) src.push_back(c.data() + first);
  std::vector<Column> out;
  const size_t m = ex.select_rows(keep, n, src, out);
  return make_rel(Exec::kBackend, m, std::move(out));
}

// Splits `in` into `parts` relations by a hash of its encoded keys.
template <class Exec>
std::vector<RelPtr> hash_split(Exec& ex, const Relation::Impl& in, const Buf<Key>& keys, uint32_t parts) {
  const size_t n = in.rows;
  Buf<uint32_t> pid = ex.template alloc<uint32_t>(n);
  if (n) thrust::transform(ex.policy(), Count(0), Count(n), pid.data(), KeyPart{keys.data(), parts});
  std::vector<RelPtr> out;
  for (uint32_t p = 0; p < parts; ++p) {
    ex.check_cancel();
    out.push_back(select_where(ex, in, 0, n, IsPart{pid.data(), p}));
  }
  return out;
}

// Number of hash partitions so that `bytes` of working memory fit `budget`.
inline uint32_t parts_for(size_t bytes, size_t budget) {
  if (budget == 0 || bytes <= budget) return 1;
  return static_cast<uint32_t>(std::min<size_t>(256, (bytes + budget - 1) / budget));
}

// Bytes per row of a relation's columns.
inline size_t rel_bytes_per_row(const Relation::Impl& r) { return r.cols.size() * sizeof(int32_t); }

constexpr size_t kMinChunkRows = 256;  // never split finer than this

// Rows per chunk so that `fixed` bytes plus `per_row` bytes per row fit the budget.
template <class Exec>
size_t chunk_rows(const Exec& ex, size_t per_row, size_t fixed) {
  const size_t budget = ex.budget();
  const size_t avail = budget > fixed ? budget - fixed : 0;
  // Exec::kMaxChunkRows bounds the time between two cancel polls.
  return std::clamp(avail / std::max<size_t>(per_row, 1), kMinChunkRows, Exec::kMaxChunkRows);
}

// True when matching `rows` build-side keys uses a hash table under option `a`
// (the sort-based form takes over beyond kMaxHashRows).
inline bool use_hash(Algorithm a, size_t rows) { return a != Algorithm::Sort && rows <= kMaxHashRows; }

// The inner join's algorithm under option `a`: Auto is the backend's measured
// choice (Exec::kAutoHashJoin; docs/operators.md).  Semi/anti joins and
// distinct take the hash form under Auto on both backends.
template <class Exec>
Algorithm inner_join_algorithm(Algorithm a) {
  // Dense, where the keys are not dense, falls back as Auto does.
  return (a == Algorithm::Auto || a == Algorithm::Dense) && !Exec::kAutoHashJoin ? Algorithm::Sort : a;
}

// ---- selection ----------------------------------------------------------------

// Rows [first, first+n) of `in` that satisfy the first PredSet::kMax predicates:
// the predicates are evaluated inside the backend's select_rows (count, then
// copy per column), with no mask or row-id array in between.
template <class Exec>
RelPtr select_chunk(Exec& ex, const Relation::Impl& in, size_t first, size_t n,
                    const std::vector<Predicate>& preds) {
  PredSet ps;
  for (size_t k = 0; k < preds.size() && ps.n < PredSet::kMax; ++k, ++ps.n) {
    const Predicate& p = preds[k];
    ps.lhs[ps.n] = in.cols[p.col].data() + first;
    ps.rhs[ps.n] = p.rhs_is_col ? in.cols[p.rhs_col].data() + first : nullptr;
    ps.cst[ps.n] = p.rhs_const;
    ps.accept[ps.n] = PredSet::mask_of(p.op);
  }
  return select_where(ex, in, first, n, RowPasses{ps});
}

// Selection, processed in row chunks that fit the budget; predicates beyond
// the first PredSet::kMax filter the (smaller) result again.
template <class Exec>
RelPtr select(Exec& ex, const Relation::Impl& in, const std::vector<Predicate>& preds) {
  ex.check_cancel();
  if (preds.empty()) return make_rel(Exec::kBackend, in.rows, in.cols);  // columns are immutable: share
  const size_t chunk = chunk_rows(ex, 2 * rel_bytes_per_row(in), 0);
  std::vector<RelPtr> parts;
  for (size_t s = 0; s < in.rows; s += chunk) {
    ex.check_cancel();
    parts.push_back(select_chunk(ex, in, s, std::min(chunk, in.rows - s), preds));
  }
  RelPtr res = concat(ex, std::move(parts), static_cast<int>(in.cols.size()));
  if (preds.size() <= static_cast<size_t>(PredSet::kMax)) return res;
  return select(ex, *res, std::vector<Predicate>(preds.begin() + PredSet::kMax, preds.end()));
}

// ---- joins ----------------------------------------------------------------------

// Keys sorted together with their original row numbers.
struct SortedSide {
  Buf<Key> keys;
  Buf<int32_t> perm;
};

// Sorts encoded keys (taking ownership) together with their row numbers.
template <class Exec>
SortedSide sort_side(Exec& ex, Buf<Key> keys, bool with_perm) {
  SortedSide s;
  const size_t n = keys.size();
  s.keys = std::move(keys);
  if (with_perm) {
    s.perm = ex.template alloc<int32_t>(n);
    thrust::sequence(ex.policy(), s.perm.data(), s.perm.data() + n);
  }
  ex.sort_keys(s.keys.data(), n, with_perm ? s.perm.data() : nullptr);
  return s;
}

// The right side of a join prepared for probing: sorted keys (sort join) or a
// hash table (hash join).  Inner joins also get the right rows grouped by key
// (perm), so that a left row's matches are one run perm[lo .. lo+cnt).
struct RightIndex {
  bool hash = false;
  bool dense = false;        // dense keys: pos/base/range below, no encoded keys
  Buf<int32_t> pos;          // dense inner join: end of each key's run in perm
  int32_t base = 0;          // dense: smallest right key
  uint32_t range = 0;        // dense: slots (largest - smallest + 1)
  Buf<Key> sorted;           // sort join: the right keys, ascending
  Buf<Key> sample;           // sort join: every kSampleStride-th sorted key
  HashTable<JoinSlot> runs;  // hash inner join: key -> run in perm
  HashTable<Key> set;        // hash semi/anti join: the right keys
  Buf<int32_t> perm;         // inner joins: right rows grouped by key
  SortedKeys sorted_keys() const {
    return {sorted.data(), static_cast<int64_t>(sorted.size()), sample.data(), static_cast<int64_t>(sample.size())};
  }
};

// Sort-join index: sorts the right keys (taking ownership), with row numbers for inner joins.
template <class Exec>
RightIndex sort_index(Exec& ex, Buf<Key> keys, bool with_perm) {
  SortedSide s = sort_side(ex, std::move(keys), with_perm);
  RightIndex ri;
  ri.sorted = std::move(s.keys);
  const int64_t ns = (static_cast<int64_t>(ri.sorted.size()) + kSampleStride - 1) / kSampleStride;
  ri.sample = ex.template alloc<Key>(static_cast<size_t>(ns));
  thrust::transform(ex.policy(), Count(0), Count(ns), ri.sample.data(), TakeSample{ri.sorted.data()});
  ri.perm = std::move(s.perm);
  return ri;
}

// Hash-join index over the right keys (taking ownership).  Semi/anti joins
// need only the key set.  Inner joins group the right rows by key without
// sorting: insert and count every key (JoinInsert), scan the counts found at
// each key's head row to place the runs (HeadCount, SetRunStart), then
// scatter each row into its run with an atomic cursor (PlaceRow).  Row order
// within a run is arbitrary; callers do not depend on output order.
template <class Exec>
RightIndex hash_index(Exec& ex, Buf<Key> keys, bool with_perm) {
  const size_t n = keys.size();
  RightIndex ri;
  ri.hash = true;
  if (!with_perm) {
    ri.set = make_table<Key>(ex, n);
    thrust::for_each(ex.policy(), Count(0), Count(n), SetInsert{ri.set.view(), keys.data()});
    return ri;
  }
  ri.runs = make_table<JoinSlot>(ex, n);
  Buf<uint32_t> slot = ex.template alloc<uint32_t>(n);
  Buf<int32_t> cnt = ex.template alloc<int32_t>(n);
  thrust::for_each(ex.policy(), Count(0), Count(n), JoinInsert{ri.runs.view(), keys.data(), slot.data(), cnt.data()});
  keys = Buf<Key>();
  JoinSlot* t = ri.runs.slots.data();
  thrust::for_each(ex.policy(), Count(0), Count(n), HeadCount{t, slot.data(), cnt.data()});
  Buf<int64_t> off = ex.template alloc<int64_t>(n);
  ex.exclusive_sum(cnt.data(), n, off.data());
  ex.check_cancel();
  thrust::for_each(ex.policy(), Count(0), Count(n), SetRunStart{t, slot.data(), cnt.data(), off.data()});
  off = Buf<int64_t>();
  cnt = Buf<int32_t>();
  ri.perm = ex.template alloc<int32_t>(n);
  thrust::for_each(ex.policy(), Count(0), Count(n), PlaceRow{t, slot.data(), ri.perm.data()});
  return ri;
}

// Bytes of the right-side index (keys included) for `rows` right rows.
inline size_t index_bytes(bool hash, bool inner, size_t rows) {
  if (!hash) return rows * (sizeof(Key) + sizeof(int32_t)) + (rows / kSampleStride + 1) * sizeof(Key);
  if (!inner) return table_bytes<Key>(rows) + rows * sizeof(Key);
  return table_bytes<JoinSlot>(rows) + rows * (sizeof(Key) + 3 * sizeof(int32_t));
}

// An inner join's output cap (Engine::join_at_most): each chunk's matches
// are counted before they are written (the exclusive scan sizes the output),
// so once `rows` passes `max_rows` the chunks are only counted and what was
// written is dropped: the caller learns the exact output size without
// materialising it.
struct JoinCap {
  size_t max_rows = SIZE_MAX;
  size_t rows = 0;  // output rows counted so far
  bool over() const { return rows > max_rows; }
};

// Inner join of left rows [first, first+n) against the right index: the match
// run of each left row (HashRange: one hash probe; EqualRange: binary search),
// exclusive scan of the match counts, then, on CUDA, every output column
// written from the runs in one pass (Exec::expand_runs).  On the CPU, and
// where the runs are too long for the CUDA form (it gives each warp 32 left
// rows, so one hot key would leave a single warp writing its whole run), the
// slots are expanded into left/right gather maps instead, then gathered.
// Measured on an H100 at 10^7 rows: see docs/operators.md.
// With a dense index, lcol is the left key column and lkeys is unused.
template <class Exec>
RelPtr join_chunk(Exec& ex, const Relation::Impl& l, const Key* lkeys, size_t first, size_t n,
                  const Relation::Impl& r, const RightIndex& ri, const std::vector<OutCol>& out, JoinCap* cap,
                  const int32_t* lcol = nullptr) {
  Buf<int32_t> lo = ex.template alloc<int32_t>(n);
  Buf<int32_t> cnt = ex.template alloc<int32_t>(n);
  if (ri.dense)
    thrust::for_each(ex.policy(), Count(0), Count(n),
                     DenseRange{ri.pos.data(), ri.base, ri.range, lcol + first, lo.data(), cnt.data()});
  else if (ri.hash)
    thrust::for_each(ex.policy(), Count(0), Count(n),
                     HashRange{ri.runs.probe(), lkeys + first, lo.data(), cnt.data()});
  else
    thrust::for_each(ex.policy(), Count(0), Count(n),
                     EqualRange{ri.sorted_keys(), lkeys + first, lo.data(),
                                cnt.data()});
  Buf<int64_t> off = ex.template alloc<int64_t>(n);
  const size_t total = static_cast<size_t>(ex.exclusive_sum(cnt.data(), n, off.data()));
  ex.check_cancel();
  if (cap && (cap->rows += total) > cap->max_rows)  // past the cap: counted, not written
    return make_rel(Exec::kBackend, 0, std::vector<Column>(out.size()));
  std::vector<Column> cols;
  for (size_t k = 0; k < out.size(); ++k) cols.push_back(ex.template alloc<int32_t>(total));
  if (total == 0) return make_rel(Exec::kBackend, 0, std::move(cols));
  // The CPU backend always takes the gather maps below: a thread writing
  // each left row's run column by column is slower than streaming gathers
  // (docs/operators.md).
  if constexpr (Exec::kExpandRuns) {
    if (ex.expand_runs_fit(cnt.data(), n)) {
      // Expand: each output column written once, straight from the runs.
      for (size_t k0 = 0; k0 < out.size(); k0 += kExpandCols) {
        ExpandCols ec;
        for (size_t k = k0; k < out.size() && ec.n < kExpandCols; ++k, ++ec.n) {
          const OutCol& oc = out[k];
          ec.src[ec.n] = oc.side == 0 ? l.cols[oc.col].data() + first : r.cols[oc.col].data();
          ec.dst[ec.n] = cols[k].data();
          ec.side[ec.n] = static_cast<uint8_t>(oc.side);
        }
        ex.expand_runs(n, lo.data(), cnt.data(), off.data(), ri.perm.data(), ec);
      }
      return make_rel(Exec::kBackend, total, std::move(cols));
    }
  }
  // The CPU, or runs too long for the CUDA expand (a hot key): gather maps of
  // the left and right row of every output slot, balanced over the slots
  // whatever the run lengths, then one gather per column.
  Buf<int32_t> lidx = ex.template alloc<int32_t>(total);
  Buf<int32_t> ridx = ex.template alloc<int32_t>(total);
  thrust::fill(ex.policy(), lidx.data(), lidx.data() + total, 0);
  thrust::for_each(ex.policy(), Count(0), Count(n), MarkRunStart{cnt.data(), off.data(), lidx.data()});
  ex.inclusive_max(lidx.data(), total);
  thrust::transform(ex.policy(), Count(0), Count(total), ridx.data(),
                    RightOfSlot{lidx.data(), lo.data(), off.data(), ri.perm.data()});
  lo = cnt = Buf<int32_t>();
  off = Buf<int64_t>();
  for (size_t k = 0; k < out.size(); ++k) {
    const OutCol& oc = out[k];
    const bool left = oc.side == 0;
    thrust::gather(ex.policy(), (left ? lidx : ridx).data(), (left ? lidx : ridx).data() + total,
                   left ? l.cols[oc.col].data() + first : r.cols[oc.col].data(), cols[k].data());
  }
  return make_rel(Exec::kBackend, total, std::move(cols));
}

// Left rows [first, first+n) that have (want=1) / have no (want=0) match:
// a found-mask from the key set or the sorted keys, then select_rows.
template <class Exec>
RelPtr semi_chunk(Exec& ex, const Relation::Impl& l, const Key* lkeys, size_t first, size_t n,
                  const RightIndex& ri, uint8_t want) {
  Buf<uint8_t> found = ex.template alloc<uint8_t>(n);
  if (ri.hash)
    thrust::transform(ex.policy(), Count(0), Count(n), found.data(), SetHas{ri.set.probe(), lkeys + first});
  else
    thrust::transform(ex.policy(), Count(0), Count(n), found.data(),
                      KeyPresent{ri.sorted_keys(), lkeys + first});
  return select_where(ex, l, first, n, MaskIs{found.data(), want});
}

// probe(first, n) over the left rows in chunks that fit the budget beside
// the right side's index (`right_bytes`), results concatenated.
// Past a join's cap, the chunks written are dropped.
template <class Exec, class Probe>
RelPtr probe_in_chunks(Exec& ex, size_t left_rows, size_t per_left, size_t right_bytes, int out_cols, Probe&& probe,
                       const JoinCap* cap = nullptr) {
  const size_t chunk = chunk_rows(ex, per_left, right_bytes);
  std::vector<RelPtr> res;
  for (size_t s = 0; s < left_rows; s += chunk) {
    ex.check_cancel();
    res.push_back(probe(s, std::min(chunk, left_rows - s)));
    if (cap && cap->over()) res.clear();
  }
  return concat(ex, std::move(res), out_cols);
}

// Dense keys: right key range at most kDenseFactor x right rows (+ slack).
// Within it the index (4 bytes a slot plus perm) stays smaller than the
// hash table's 32+ bytes a row.
constexpr int64_t kDenseFactor = 4;
constexpr int64_t kDenseSlack = 1024;

// Join on one key column by direct addressing (see "dense keys" above), or
// null when the right keys are not dense or the index would not fit the
// budget (the caller then takes the hash or sort form, which partition).
template <class Exec>
RelPtr dense_join(Exec& ex, const Relation::Impl& l, const Relation::Impl& r, int lc, int rc,
                  const std::vector<OutCol>& out, int want, JoinCap* cap) {
  const int32_t* rk = r.cols[rc].data();
  const MinMax mm =
      thrust::transform_reduce(ex.policy(), rk, rk + r.rows, MinMaxOf{}, MinMax{INT32_MAX, INT32_MIN}, MinMaxJoin{});
  const int64_t range = int64_t(mm.hi) - mm.lo + 1;
  if (range > kDenseFactor * static_cast<int64_t>(r.rows) + kDenseSlack || range >= (int64_t(1) << 31)) return nullptr;
  const size_t index = want < 0 ? static_cast<size_t>(range) * sizeof(int32_t) + r.rows * sizeof(int32_t)
                                : static_cast<size_t>(range);
  const size_t right_bytes = index + rel_bytes(r);
  // group_dense may hold three more row-sized arrays while it builds (CUDA).
  const size_t build_bytes = right_bytes + (want < 0 ? 3 * r.rows * sizeof(int32_t) : 0);
  if (ex.budget() && 2 * build_bytes > ex.budget()) return nullptr;
  ex.check_cancel();
  RightIndex ri;
  ri.dense = true;
  ri.base = mm.lo;
  ri.range = static_cast<uint32_t>(range);
  Buf<uint8_t> present;
  if (want < 0) {
    ri.pos = ex.template alloc<int32_t>(static_cast<size_t>(range));
    ri.perm = ex.template alloc<int32_t>(r.rows);
    ex.group_dense(rk, r.rows, ri.base, ri.range, ri.pos.data(), ri.perm.data());
  } else {
    present = ex.template alloc_zeroed<uint8_t>(static_cast<size_t>(range));
    thrust::for_each(ex.policy(), Count(0), Count(r.rows), DenseMark{rk, ri.base, present.data()});
  }
  const int32_t* lcol = l.cols[lc].data();
  const size_t per_left = 2 * sizeof(int32_t) + sizeof(int64_t) + 2 * rel_bytes_per_row(l);
  const int out_cols = want < 0 ? static_cast<int>(out.size()) : static_cast<int>(l.cols.size());
  return probe_in_chunks(ex, l.rows, per_left, right_bytes, out_cols, [&](size_t s, size_t n) {
    if (want < 0) return join_chunk(ex, l, nullptr, s, n, r, ri, out, cap, lcol);
    return select_where(ex, l, s, n, DenseKeep{present.data(), ri.base, ri.range, lcol + s, static_cast<uint8_t>(want)});
  }, cap);
}

// Shared driver of join (want < 0), semi join (want = 1) and anti join (want = 0).
// When the right-side index alone would not fit the budget, both sides are
// hash-partitioned on the key and each pair is joined; otherwise the left
// (probe) side is processed in chunks against the right side indexed once.
// `cap` (inner joins only; null: none): see JoinCap.
template <class Exec>
RelPtr join_driver(Exec& ex, const Relation::Impl& l, const Relation::Impl& r, const std::vector<int>& lk,
                   const std::vector<int>& rk, const std::vector<OutCol>& out, int want, bool may_split,
                   JoinCap* cap = nullptr) {
  const int out_cols = want < 0 ? static_cast<int>(out.size()) : static_cast<int>(l.cols.size());
  ex.check_cancel();
  if (l.rows == 0 || (r.rows == 0 && want != 0)) return make_rel(Exec::kBackend, 0, std::vector<Column>(out_cols));
  if (r.rows == 0) return make_rel(Exec::kBackend, l.rows, l.cols);  // anti join with empty right
  if (lk.size() == 1 && (ex.opts.join_algorithm == Algorithm::Auto || ex.opts.join_algorithm == Algorithm::Dense))
    if (RelPtr res = dense_join(ex, l, r, lk[0], rk[0], out, want, cap)) return res;
  auto keys = encode_keys(ex, {&l, &r}, {&lk, &rk});
  const bool hash =
      use_hash(want < 0 ? inner_join_algorithm<Exec>(ex.opts.join_algorithm) : ex.opts.join_algorithm, r.rows);
  const size_t right_bytes = index_bytes(hash, want < 0, r.rows) + rel_bytes(r);
  const uint32_t parts = may_split ? parts_for(2 * right_bytes, ex.budget()) : 1;
  if (parts > 1) {
    auto lparts = hash_split(ex, l, keys[0], parts);
    auto rparts = hash_split(ex, r, keys[1], parts);
    keys.clear();
    std::vector<RelPtr> res;
    for (uint32_t p = 0; p < parts; ++p) {
      res.push_back(join_driver(ex, *lparts[p], *rparts[p], lk, rk, out, want, false, cap));
      if (cap && cap->over()) res.clear();
    }
    return concat(ex, std::move(res), out_cols);
  }
  ex.check_cancel();
  RightIndex ri = hash ? hash_index(ex, std::move(keys[1]), want < 0) : sort_index(ex, std::move(keys[1]), want < 0);
  const size_t per_left = sizeof(Key) + 2 * sizeof(int32_t) + sizeof(int64_t) + 2 * rel_bytes_per_row(l);
  return probe_in_chunks(ex, l.rows, per_left, right_bytes, out_cols, [&](size_t s, size_t n) {
    if (want < 0) return join_chunk(ex, l, keys[0].data(), s, n, r, ri, out, cap);
    return semi_chunk(ex, l, keys[0].data(), s, n, ri, static_cast<uint8_t>(want));
  }, cap);
}

// ---- duplicate elimination ------------------------------------------------------

// The column numbers 0..n-1.
inline std::vector<int> all_columns(size_t n) {
  std::vector<int> all(n);
  for (size_t c = 0; c < n; ++c) all[c] = static_cast<int>(c);
  return all;
}

// Distinct rows: encode each row as a key, then either insert every key into
// a hash table and keep the row that claimed each key (SetInsertHead, then
// select_rows), or sort keys with row numbers and keep the first row of each
// run.  Over budget, rows are hash-partitioned first (equal rows land in the
// same partition).
template <class Exec>
RelPtr distinct(Exec& ex, const Relation::Impl& in, bool may_split) {
  ex.check_cancel();
  if (in.rows <= 1) return make_rel(Exec::kBackend, in.rows, in.cols);
  const std::vector<int> all = all_columns(in.cols.size());
  auto keys = encode_keys(ex, {&in}, {&all});
  const size_t n = in.rows;
  const bool hash = use_hash(ex.opts.distinct_algorithm, n);
  const size_t work = (hash ? table_bytes<Key>(n) + n * (sizeof(Key) + 1)
                            : n * (2 * (sizeof(Key) + sizeof(int32_t)) + 1 + sizeof(int32_t))) +
                      rel_bytes(in);
  const uint32_t parts = may_split ? parts_for(work, ex.budget()) : 1;
  if (parts > 1) {
    auto split = hash_split(ex, in, keys[0], parts);
    keys.clear();
    std::vector<RelPtr> res;
    for (auto& p : split) res.push_back(distinct(ex, *p, false));
    return concat(ex, std::move(res), static_cast<int>(in.cols.size()));
  }
  ex.check_cancel();
  if (hash) {
    Buf<uint8_t> head = ex.template alloc<uint8_t>(n);
    {
      HashTable<Key> t = make_table<Key>(ex, n);
      thrust::for_each(ex.policy(), Count(0), Count(n), SetInsertHead{t.view(), keys[0].data(), head.data()});
    }
    keys.clear();
    return select_where(ex, in, 0, n, MaskIs{head.data(), 1});
  }
  SortedSide s = sort_side(ex, std::move(keys[0]), true);
  Buf<uint8_t> head = ex.template alloc<uint8_t>(n);
  thrust::transform(ex.policy(), Count(0), Count(n), head.data(), RunHead{s.keys.data()});
  s.keys = Buf<Key>();
  Buf<int32_t> pos = ex.compact(head.data(), n, 1);
  Buf<int32_t> rows = gather(ex, pos.data(), pos.size(), s.perm.data());
  return gather_rows(ex, in, 0, rows);
}

// Distinct rows of `a` that are not rows of `b`.  Hash form (in budget): both
// sides encoded together, a key set of b, then one pass over a that keeps
// the first row of each key absent from b (FirstNotIn) and select_rows.
// Otherwise: anti join of distinct(a) with b, each partitioned as needed.
template <class Exec>
RelPtr difference(Exec& ex, const Relation::Impl& a, const Relation::Impl& b) {
  ex.check_cancel();
  const std::vector<int> all = all_columns(a.cols.size());
  const bool hash = use_hash(ex.opts.distinct_algorithm, a.rows) && use_hash(ex.opts.join_algorithm, b.rows);
  const size_t work = table_bytes<Key>(a.rows) + table_bytes<Key>(b.rows) + (a.rows + b.rows) * sizeof(Key) +
                      a.rows + rel_bytes(a);
  if (!hash || a.rows == 0 || b.rows == 0 || parts_for(work, ex.budget()) > 1) {
    RelPtr d = distinct(ex, a, true);
    return join_driver(ex, *d, b, all, all, {}, 0, true);
  }
  auto keys = encode_keys(ex, {&a, &b}, {&all, &all});
  ex.check_cancel();
  HashTable<Key> tb = make_table<Key>(ex, b.rows);
  thrust::for_each(ex.policy(), Count(0), Count(b.rows), SetInsert{tb.view(), keys[1].data()});
  keys[1] = Buf<Key>();
  HashTable<Key> ta = make_table<Key>(ex, a.rows);
  Buf<uint8_t> keep = ex.template alloc<uint8_t>(a.rows);
  thrust::for_each(ex.policy(), Count(0), Count(a.rows),
                   FirstNotIn{tb.probe(), ta.view(), keys[0].data(), keep.data()});
  tb = ta = HashTable<Key>();
  keys.clear();
  return select_where(ex, a, 0, a.rows, MaskIs{keep.data(), 1});
}

}  // namespace mln::gpu::ops
