// Union-find components of the atom graph.
#include "core/base/components.hpp"

#include <algorithm>
#include <cstdlib>
#include <memory>

#ifdef _OPENMP
#include <omp.h>

#include <parallel/algorithm>
#endif

#include "core/base/network_cost.hpp"

namespace mln::solver {

namespace {

// Disjoint sets on OpenMP threads, lock-free: a root is linked under the
// smaller of the two roots by compare-and-swap (retried if it stopped being
// a root), so every atom's parent is smaller than the atom and a set's root
// is its smallest atom whatever the threads did.  Finds halve paths with
// plain atomic stores: a parent only ever moves to an ancestor.  Hand-
// written: no well-kept C++ library offers a concurrent one; the scheme is
// the usual one of GPU and multicore connected components (e.g. ECL-CC).
// Threaded because serial components are a large share of a fast solve's
// set-up (docs/solver/base.md, "Components").
struct ConcurrentUnionFind {
  std::vector<int32_t> parent;
  explicit ConcurrentUnionFind(int32_t n, bool par) : parent(n) {
#pragma omp parallel for schedule(static) if (par)
    for (int32_t i = 0; i < n; ++i) parent[i] = i;
  }
  int32_t get(int32_t x) const { return __atomic_load_n(&parent[x], __ATOMIC_RELAXED); }
  // Representative (smallest atom) of x's set.
  int32_t find(int32_t x) {
    int32_t p = get(x);
    while (p != x) {
      const int32_t g = get(p);
      if (g != p) __atomic_store_n(&parent[x], g, __ATOMIC_RELAXED);
      x = p;
      p = g;
    }
    return x;
  }
  // Merges the sets of a and b.
  void unite(int32_t a, int32_t b) {
    for (;;) {
      a = find(a);
      b = find(b);
      if (a == b) return;
      if (a > b) std::swap(a, b);
      int32_t expect = b;
      if (__atomic_compare_exchange_n(&parent[b], &expect, a, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return;
    }
  }
};

// Per-thread combining cache for counts added into a shared array: the
// giant component of a network (most of its atoms and clauses) would
// otherwise take one atomic add on one address per atom and per clause
// from every thread at once, slower on 2 threads than the serial loop.
// A few direct-mapped slots keep the hot keys' sums; an evicted slot and
// the rest at the end go to the array with one atomic add each.
struct AddCache {
  static constexpr int kSlots = 256;
  int64_t* target;
  int64_t key[kSlots];
  int64_t sum[kSlots];
  explicit AddCache(int64_t* t) : target(t) { std::fill(key, key + kSlots, -1); }
  void add(int64_t k, int64_t v) {
    const int s = static_cast<int>((static_cast<uint64_t>(k) * 0x9E3779B97F4A7C15ull) >> 56);
    if (key[s] != k) {
      if (key[s] >= 0) __atomic_fetch_add(&target[key[s]], sum[s], __ATOMIC_RELAXED);
      key[s] = k;
      sum[s] = 0;
    }
    sum[s] += v;
  }
  ~AddCache() {
    for (int s = 0; s < kSlots; ++s)
      if (key[s] >= 0) __atomic_fetch_add(&target[key[s]], sum[s], __ATOMIC_RELAXED);
  }
};

// Stable bucket fill on threads: item i of [0, N) with key(i) in [0, K)
// (negative: no bucket) gets put(i, key, position), positions running
// through [off[key], off[key + 1]) in ascending i, as one serial pass would
// give them; off (K + 1 entries) is written here from the counts.  Each
// thread takes a contiguous block of items and counts its keys: T x K
// counters (16 x 302,000 on smokers 10^6); the columns' sums give off, a
// column-wise prefix over the threads each thread's cursors, then each
// thread writes its block.
template <class Key, class Put>
void stable_fill(int64_t N, int64_t K, int64_t* off, bool par, Key key, Put put) {
#ifdef _OPENMP
  if (par && omp_get_max_threads() > 1) {
    std::unique_ptr<int64_t[]> cur;
    int T = 1;
#pragma omp parallel
    {
#pragma omp single
      {
        T = omp_get_num_threads();
        cur.reset(new int64_t[static_cast<size_t>(T) * static_cast<size_t>(K)]);
      }
      const int t = omp_get_thread_num();
      int64_t* c = cur.get() + static_cast<size_t>(t) * static_cast<size_t>(K);
      auto at = [&](int u, int64_t k) -> int64_t& { return cur[static_cast<size_t>(u) * static_cast<size_t>(K) + k]; };
      std::fill(c, c + K, int64_t{0});
      const int64_t lo = N * t / T, hi = N * (t + 1) / T;
      for (int64_t i = lo; i < hi; ++i) {
        const int64_t k = key(i);
        if (k >= 0) ++c[k];
      }
#pragma omp barrier
#pragma omp for schedule(static)
      for (int64_t k = 0; k < K; ++k) {
        int64_t sum = 0;
        for (int u = 0; u < T; ++u) sum += at(u, k);
        off[k + 1] = sum;
      }
#pragma omp single
      {
        off[0] = 0;
        for (int64_t k = 0; k < K; ++k) off[k + 1] += off[k];
      }
#pragma omp for schedule(static)
      for (int64_t k = 0; k < K; ++k) {
        int64_t run = off[k];
        for (int u = 0; u < T; ++u) {
          const int64_t here = at(u, k);
          at(u, k) = run;
          run += here;
        }
      }
      for (int64_t i = lo; i < hi; ++i) {
        const int64_t k = key(i);
        if (k >= 0) put(i, k, c[k]++);
      }
    }
    return;
  }
#endif
  std::fill(off, off + K + 1, int64_t{0});
  for (int64_t i = 0; i < N; ++i) {
    const int64_t k = key(i);
    if (k >= 0) ++off[k + 1];
  }
  for (int64_t k = 0; k < K; ++k) off[k + 1] += off[k];
  std::vector<int64_t> c(off, off + K);
  for (int64_t i = 0; i < N; ++i) {
    const int64_t k = key(i);
    if (k >= 0) put(i, k, c[k]++);
  }
}

}  // namespace

Components find_components(const mln::Network& net, bool list_clauses) {
  const auto& cs = net.clauses;
  const int32_t n = net.num_atoms;
  const int64_t m = static_cast<int64_t>(cs.size());
  // Threads only for large networks: small ones are found by many worker
  // threads at once (learning, tests).
  const bool par = m >= 100000 || n >= 100000;
  ConcurrentUnionFind uf(n + 1, par);
#pragma omp parallel for schedule(dynamic, 4096) if (par)
  for (int64_t c = 0; c < m; ++c) {
    const int64_t lo = cs.offsets[c], hi = cs.offsets[c + 1];
    if (hi - lo < 2) continue;  // unit clauses connect nothing (Tuffy skips them)
    const int32_t first = std::abs(cs.lits[lo]);
    for (int64_t i = lo + 1; i < hi; ++i) uf.unite(first, std::abs(cs.lits[i]));
  }
  // Every atom straight to its root (the set's smallest atom), then the
  // size estimate per root (integers: the same order as Tuffy's doubles).
  std::vector<int32_t>& root = uf.parent;
#pragma omp parallel for schedule(static) if (par)
  for (int32_t a = 1; a <= n; ++a) root[a] = uf.find(a);
  std::vector<int64_t> est(static_cast<size_t>(n) + 1, 0);
#pragma omp parallel if (par)
  {
    AddCache e(est.data());
#pragma omp for schedule(static) nowait
    for (int32_t a = 1; a <= n; ++a) e.add(root[a], 116);
#pragma omp for schedule(static) nowait
    for (int64_t c = 0; c < m; ++c) {
      const int64_t len = cs.offsets[c + 1] - cs.offsets[c];
      if (len > 0) e.add(root[std::abs(cs.lits[cs.offsets[c]])], 108 + 4 * len);
    }
  }
  std::vector<int32_t> roots;
  for (int32_t a = 1; a <= n; ++a)
    if (root[a] == a) roots.push_back(a);
  // Largest first, ties by smallest atom (the root itself): a total order,
  // so the parallel sort gives the serial one's result.
  auto larger = [&](int32_t x, int32_t y) { return est[x] != est[y] ? est[x] > est[y] : x < y; };
#ifdef _OPENMP
  if (par) __gnu_parallel::sort(roots.begin(), roots.end(), larger);
  else
#endif
    std::sort(roots.begin(), roots.end(), larger);
  Components out;
  out.count = static_cast<int32_t>(roots.size());
  std::vector<int32_t> comp_of_root(static_cast<size_t>(n) + 1, -1);
#pragma omp parallel for schedule(static) if (par)
  for (int32_t k = 0; k < out.count; ++k) comp_of_root[roots[k]] = k;
  out.comp_of_atom.assign(static_cast<size_t>(n) + 1, -1);
  out.index_in_comp.assign(static_cast<size_t>(n) + 1, 0);
  out.atom_off.assign(static_cast<size_t>(out.count) + 1, 0);
#pragma omp parallel for schedule(static) if (par)
  for (int32_t a = 1; a <= n; ++a) out.comp_of_atom[a] = comp_of_root[root[a]];
  // Each component's atoms in ascending order.
  out.atoms.resize(n);
  stable_fill(
      n, out.count, out.atom_off.data(), par, [&](int64_t i) { return out.comp_of_atom[i + 1]; },
      [&](int64_t i, int64_t k, int64_t pos) {
        out.atoms[pos] = static_cast<int32_t>(i + 1);
        out.index_in_comp[i + 1] = static_cast<int32_t>(pos - out.atom_off[k] + 1);
      });
  // The component of each clause (that of its first atom).
  out.clause_off.assign(static_cast<size_t>(out.count) + 1, 0);
  if (list_clauses) {
    std::vector<int32_t> comp_of_clause(m, -1);
#pragma omp parallel for schedule(static) if (par)
    for (int64_t c = 0; c < m; ++c)
      if (cs.offsets[c + 1] != cs.offsets[c]) comp_of_clause[c] = out.comp_of_atom[std::abs(cs.lits[cs.offsets[c]])];
    out.clauses.resize(m);  // at most; cut to the listed clauses below
    stable_fill(
        m, out.count, out.clause_off.data(), par, [&](int64_t c) { return comp_of_clause[c]; },
        [&](int64_t c, int64_t, int64_t pos) { out.clauses[pos] = c; });
    out.clauses.resize(out.clause_off[out.count]);
  } else {  // counted only
#pragma omp parallel if (par)
    {
      AddCache e(out.clause_off.data() + 1);
#pragma omp for schedule(static) nowait
      for (int64_t c = 0; c < m; ++c)
        if (cs.offsets[c + 1] != cs.offsets[c]) e.add(out.comp_of_atom[std::abs(cs.lits[cs.offsets[c]])], 1);
    }
    for (int32_t k = 0; k < out.count; ++k) out.clause_off[k + 1] += out.clause_off[k];
  }
  out.empty_clauses = select_clauses(m, [&](int64_t c) { return cs.offsets[c + 1] == cs.offsets[c]; });
  out.has_query.assign(out.count, net.is_query.empty() ? 1 : 0);
  if (!net.is_query.empty())
    for (int32_t a = 1; a <= n && a < static_cast<int32_t>(net.is_query.size()); ++a)
      if (net.is_query[a]) out.has_query[out.comp_of_atom[a]] = 1;
  return out;
}

}  // namespace mln::solver
