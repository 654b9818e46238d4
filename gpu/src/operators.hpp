// The relational operators, written once as templates over an execution
// context `Exec` (CpuExec: thrust::omp::par on host memory; CudaExec:
// thrust::cuda::par on device memory).
//
// An Exec provides:
//   policy()                      Thrust execution policy
//   alloc<T>(n)                   uninitialised Buf<T> in backend memory
//   copy(dst, src, n)             copy within backend memory
//   load(p)                       read one element to the host
//   exclusive_sum(cnt, n, off)    int32 counts -> int64 offsets, returns total
//   inclusive_max(v, n)           in-place running maximum of int32
//   compact(mask, n, want)        indices i with mask[i] == want
//   budget()                      working-memory budget in bytes
//   check_cancel()                throws EngineError(Cancelled) when asked to
//   kMaxChunkRows                 most rows processed between two cancel polls
//
// Keys: the key columns of a row are encoded as one uint64 so that every
// operator sorts and searches plain integers (radix sort on the GPU).  One
// column widens, two columns pack, and three or more columns are packed
// pairwise with dense re-numbering in between (see encode_keys).
#pragma once

#include <thrust/binary_search.h>
#include <thrust/copy.h>
#include <thrust/fill.h>
#include <thrust/for_each.h>
#include <thrust/functional.h>
#include <thrust/gather.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include <algorithm>
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

// Hash partition number of a key (splitmix64 finaliser).
struct KeyPart {
  const Key* k;
  uint32_t parts;
  MLN_HD uint32_t operator()(Idx i) const {
    Key x = k[i] + 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return static_cast<uint32_t>(x % parts);
  }
};

// 1 where a partition number equals `p`.
struct IsPart {
  const uint32_t* pid;
  uint32_t p;
  MLN_HD uint8_t operator()(Idx i) const { return pid[i] == p; }
};

// Conjunction of up to kMax comparison predicates over one chunk of rows.
struct PredSet {
  static constexpr int kMax = 8;
  int n = 0;
  const int32_t* lhs[kMax];
  const int32_t* rhs[kMax];
  int32_t cst[kMax];
  uint8_t op[kMax];
  // Evaluates every predicate on row i.
  MLN_HD bool eval(Idx i) const {
    for (int k = 0; k < n; ++k) {
      const int32_t a = lhs[k][i];
      const int32_t b = rhs[k] ? rhs[k][i] : cst[k];
      bool ok;
      switch (op[k]) {
        case 0: ok = a == b; break;
        case 1: ok = a != b; break;
        case 2: ok = a < b; break;
        case 3: ok = a <= b; break;
        case 4: ok = a > b; break;
        default: ok = a >= b; break;
      }
      if (!ok) return false;
    }
    return true;
  }
};

// mask[i] &= preds(i).
struct AndMask {
  PredSet preds;
  uint8_t* mask;
  MLN_HD void operator()(Idx i) const {
    if (mask[i]) mask[i] = preds.eval(i) ? 1 : 0;
  }
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

// lo[i] = first right match of left key i, cnt[i] = number of matches.
struct EqualRange {
  const Key* rk;
  int64_t nr;
  const Key* lk;
  int32_t* lo;
  int32_t* cnt;
  MLN_HD void operator()(Idx i) const {
    const Key k = lk[i];
    const int64_t l = branchless_lower_bound(rk, nr, k);
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
  const Key* rk;
  int64_t nr;
  const Key* lk;
  MLN_HD uint8_t operator()(Idx i) const {
    const Key k = lk[i];
    const int64_t l = branchless_lower_bound(rk, nr, k);
    return l < nr && rk[l] == k;
  }
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
template <class Exec>
RelPtr concat(Exec& ex, const std::vector<RelPtr>& parts, int ncols) {
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
    for (const RelPtr& p : parts) {
      if (p->rows) ex.copy(out.data() + at, p->cols[c].data(), p->rows);
      at += p->rows;
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
  if (total) thrust::sort(ex.policy(), all.data(), all.data() + total);
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

// Splits `in` into `parts` relations by a hash of its encoded keys.
template <class Exec>
std::vector<RelPtr> hash_split(Exec& ex, const Relation::Impl& in, const Buf<Key>& keys, uint32_t parts) {
  const size_t n = in.rows;
  Buf<uint32_t> pid = ex.template alloc<uint32_t>(n);
  if (n) thrust::transform(ex.policy(), Count(0), Count(n), pid.data(), KeyPart{keys.data(), parts});
  std::vector<RelPtr> out;
  Buf<uint8_t> mask = ex.template alloc<uint8_t>(n);
  for (uint32_t p = 0; p < parts; ++p) {
    ex.check_cancel();
    if (n) thrust::transform(ex.policy(), Count(0), Count(n), mask.data(), IsPart{pid.data(), p});
    out.push_back(gather_rows(ex, in, 0, ex.compact(mask.data(), n, 1)));
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

// ---- selection ----------------------------------------------------------------

// Rows [first, first+n) of `in` that satisfy all predicates.
template <class Exec>
RelPtr select_chunk(Exec& ex, const Relation::Impl& in, size_t first, size_t n,
                    const std::vector<Predicate>& preds) {
  Buf<uint8_t> mask = ex.template alloc<uint8_t>(n);
  thrust::fill(ex.policy(), mask.data(), mask.data() + n, uint8_t(1));
  for (size_t g = 0; g < preds.size(); g += PredSet::kMax) {
    PredSet ps;
    for (size_t k = g; k < preds.size() && ps.n < PredSet::kMax; ++k, ++ps.n) {
      const Predicate& p = preds[k];
      ps.lhs[ps.n] = in.cols[p.col].data() + first;
      ps.rhs[ps.n] = p.rhs_is_col ? in.cols[p.rhs_col].data() + first : nullptr;
      ps.cst[ps.n] = p.rhs_const;
      ps.op[ps.n] = static_cast<uint8_t>(p.op);
    }
    thrust::for_each(ex.policy(), Count(0), Count(n), AndMask{ps, mask.data()});
  }
  return gather_rows(ex, in, first, ex.compact(mask.data(), n, 1));
}

// Selection, processed in row chunks that fit the budget.
template <class Exec>
RelPtr select(Exec& ex, const Relation::Impl& in, const std::vector<Predicate>& preds) {
  const size_t per_row = 2 * rel_bytes_per_row(in) + 1 + sizeof(int32_t);
  const size_t chunk = chunk_rows(ex, per_row, 0);
  std::vector<RelPtr> parts;
  for (size_t s = 0; s < in.rows; s += chunk) {
    ex.check_cancel();
    parts.push_back(select_chunk(ex, in, s, std::min(chunk, in.rows - s), preds));
  }
  return concat(ex, parts, static_cast<int>(in.cols.size()));
}

// ---- joins ----------------------------------------------------------------------

// Right side of a join, sorted by key, with the original row of each key.
struct SortedSide {
  Buf<Key> keys;
  Buf<int32_t> perm;
};

// Sorts encoded right keys (taking ownership) together with their row numbers.
template <class Exec>
SortedSide sort_side(Exec& ex, Buf<Key> keys, bool with_perm) {
  SortedSide s;
  const size_t n = keys.size();
  s.keys = std::move(keys);
  if (with_perm) {
    s.perm = ex.template alloc<int32_t>(n);
    thrust::sequence(ex.policy(), s.perm.data(), s.perm.data() + n);
    if (n) thrust::sort_by_key(ex.policy(), s.keys.data(), s.keys.data() + n, s.perm.data());
  } else if (n) {
    thrust::sort(ex.policy(), s.keys.data(), s.keys.data() + n);
  }
  return s;
}

// Inner join of left rows [first, first+n) against the sorted right side:
// binary search for the match range of each left row (EqualRange), exclusive scan of the
// match counts, expansion into left/right gather maps, then a gather.
template <class Exec>
RelPtr join_chunk(Exec& ex, const Relation::Impl& l, const Key* lkeys, size_t first, size_t n,
                  const Relation::Impl& r, const SortedSide& rs, const std::vector<OutCol>& out) {
  const Key* rk = rs.keys.data();
  const size_t nr = rs.keys.size();
  Buf<int32_t> lo = ex.template alloc<int32_t>(n);
  Buf<int32_t> cnt = ex.template alloc<int32_t>(n);
  thrust::for_each(ex.policy(), Count(0), Count(n),
                   EqualRange{rk, static_cast<int64_t>(nr), lkeys + first, lo.data(), cnt.data()});
  Buf<int64_t> off = ex.template alloc<int64_t>(n);
  const size_t total = static_cast<size_t>(ex.exclusive_sum(cnt.data(), n, off.data()));
  ex.check_cancel();
  Buf<int32_t> lidx = ex.template alloc<int32_t>(total);
  Buf<int32_t> ridx = ex.template alloc<int32_t>(total);
  if (total) {
    thrust::fill(ex.policy(), lidx.data(), lidx.data() + total, 0);
    thrust::for_each(ex.policy(), Count(0), Count(n), MarkRunStart{cnt.data(), off.data(), lidx.data()});
    ex.inclusive_max(lidx.data(), total);
    thrust::transform(ex.policy(), Count(0), Count(total), ridx.data(),
                      RightOfSlot{lidx.data(), lo.data(), off.data(), rs.perm.data()});
  }
  lo = cnt = Buf<int32_t>();
  off = Buf<int64_t>();
  std::vector<Column> cols;
  for (const OutCol& oc : out) {
    if (oc.side == 0)
      cols.push_back(gather(ex, lidx.data(), total, l.cols[oc.col].data() + first));
    else
      cols.push_back(gather(ex, ridx.data(), total, r.cols[oc.col].data()));
  }
  return make_rel(Exec::kBackend, total, std::move(cols));
}

// Left rows [first, first+n) that have (want=1) / have no (want=0) match.
template <class Exec>
RelPtr semi_chunk(Exec& ex, const Relation::Impl& l, const Key* lkeys, size_t first, size_t n,
                  const SortedSide& rs, uint8_t want) {
  const Key* rk = rs.keys.data();
  Buf<uint8_t> found = ex.template alloc<uint8_t>(n);
  thrust::transform(ex.policy(), Count(0), Count(n), found.data(),
                    KeyPresent{rk, static_cast<int64_t>(rs.keys.size()), lkeys + first});
  return gather_rows(ex, l, first, ex.compact(found.data(), n, want));
}

// Shared driver of join (want < 0), semi join (want = 1) and anti join (want = 0).
// When the sorted right side alone would not fit the budget, both sides are
// hash-partitioned on the key and each pair is joined; otherwise the left
// (probe) side is processed in chunks against the right side sorted once.
template <class Exec>
RelPtr join_driver(Exec& ex, const Relation::Impl& l, const Relation::Impl& r, const std::vector<int>& lk,
                   const std::vector<int>& rk, const std::vector<OutCol>& out, int want, bool may_split) {
  const int out_cols = want < 0 ? static_cast<int>(out.size()) : static_cast<int>(l.cols.size());
  ex.check_cancel();
  if (l.rows == 0 || (r.rows == 0 && want != 0)) return make_rel(Exec::kBackend, 0, std::vector<Column>(out_cols));
  if (r.rows == 0) return make_rel(Exec::kBackend, l.rows, l.cols);  // anti join with empty right
  auto keys = encode_keys(ex, {&l, &r}, {&lk, &rk});
  const size_t right_bytes = r.rows * (sizeof(Key) + sizeof(int32_t)) + rel_bytes(r);
  const uint32_t parts = may_split ? parts_for(2 * right_bytes, ex.budget()) : 1;
  if (parts > 1) {
    auto lparts = hash_split(ex, l, keys[0], parts);
    auto rparts = hash_split(ex, r, keys[1], parts);
    keys.clear();
    std::vector<RelPtr> res;
    for (uint32_t p = 0; p < parts; ++p)
      res.push_back(join_driver(ex, *lparts[p], *rparts[p], lk, rk, out, want, false));
    return concat(ex, res, out_cols);
  }
  ex.check_cancel();
  SortedSide rs = sort_side(ex, std::move(keys[1]), want < 0);
  const size_t per_left = sizeof(Key) + 2 * sizeof(int32_t) + sizeof(int64_t) + 2 * rel_bytes_per_row(l);
  const size_t chunk = chunk_rows(ex, per_left, right_bytes);
  std::vector<RelPtr> res;
  for (size_t s = 0; s < l.rows; s += chunk) {
    ex.check_cancel();
    const size_t n = std::min(chunk, l.rows - s);
    if (want < 0)
      res.push_back(join_chunk(ex, l, keys[0].data(), s, n, r, rs, out));
    else
      res.push_back(semi_chunk(ex, l, keys[0].data(), s, n, rs, static_cast<uint8_t>(want)));
  }
  return concat(ex, res, out_cols);
}

// ---- duplicate elimination ------------------------------------------------------

// Distinct rows: encode each row as a key, sort keys with row numbers, keep
// the first row of each run.  Over budget, rows are hash-partitioned first
// (equal rows land in the same partition).
template <class Exec>
RelPtr distinct(Exec& ex, const Relation::Impl& in, bool may_split) {
  ex.check_cancel();
  if (in.rows <= 1) return make_rel(Exec::kBackend, in.rows, in.cols);
  std::vector<int> all(in.cols.size());
  for (size_t c = 0; c < all.size(); ++c) all[c] = static_cast<int>(c);
  auto keys = encode_keys(ex, {&in}, {&all});
  const size_t work = in.rows * (2 * (sizeof(Key) + sizeof(int32_t)) + 1 + sizeof(int32_t)) + rel_bytes(in);
  const uint32_t parts = may_split ? parts_for(work, ex.budget()) : 1;
  if (parts > 1) {
    auto split = hash_split(ex, in, keys[0], parts);
    keys.clear();
    std::vector<RelPtr> res;
    for (auto& p : split) res.push_back(distinct(ex, *p, false));
    return concat(ex, res, static_cast<int>(in.cols.size()));
  }
  ex.check_cancel();
  SortedSide s = sort_side(ex, std::move(keys[0]), true);
  const size_t n = in.rows;
  Buf<uint8_t> head = ex.template alloc<uint8_t>(n);
  thrust::transform(ex.policy(), Count(0), Count(n), head.data(), RunHead{s.keys.data()});
  s.keys = Buf<Key>();
  Buf<int32_t> pos = ex.compact(head.data(), n, 1);
  Buf<int32_t> rows = gather(ex, pos.data(), pos.size(), s.perm.data());
  return gather_rows(ex, in, 0, rows);
}

}  // namespace mln::gpu::ops
