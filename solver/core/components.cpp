// Union-find components of the atom graph.
#include "components.hpp"

#include <algorithm>
#include <cstdlib>

#ifdef _OPENMP
#include <parallel/algorithm>
#endif

namespace mln::solver {

namespace {

// Disjoint sets on OpenMP threads, lock-free: a root is linked under the
// smaller of the two roots by compare-and-swap (retried if it stopped being
// a root), so every atom's parent is smaller than the atom and a set's root
// is its smallest atom whatever the threads did.  Finds halve paths with
// plain atomic stores: a parent only ever moves to an ancestor.  Hand-
// written: no well-kept C++ library offers a concurrent one; the scheme is
// the usual one of GPU and multicore connected components (e.g. ECL-CC).
// Serial, smokers at 10^6 people (4.5M clauses) took 0.18 s on the H200
// host before the first flip.
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

}  // namespace

Components find_components(const mln::Network& net) {
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
#pragma omp parallel if (par)
  {
    AddCache count(out.atom_off.data() + 1);
#pragma omp for schedule(static) nowait
    for (int32_t a = 1; a <= n; ++a) {
      const int32_t k = comp_of_root[root[a]];
      out.comp_of_atom[a] = k;
      count.add(k, 1);
    }
  }
  for (int32_t k = 0; k < out.count; ++k) out.atom_off[k + 1] += out.atom_off[k];
  // The fills stay serial: they give each component its atoms and clauses
  // in ascending order (solve_map's whole-network test relies on it) in one
  // pass each.
  out.atoms.resize(n);
  std::vector<int64_t> fill(out.atom_off.begin(), out.atom_off.end() - 1);
  for (int32_t a = 1; a <= n; ++a) {
    const int32_t k = out.comp_of_atom[a];
    out.index_in_comp[a] = static_cast<int32_t>(fill[k] - out.atom_off[k] + 1);
    out.atoms[fill[k]++] = a;
  }
  // The component of each clause (that of its first atom), counted per
  // component on threads.
  std::vector<int32_t> comp_of_clause(m, -1);
  out.clause_off.assign(static_cast<size_t>(out.count) + 1, 0);
#pragma omp parallel if (par)
  {
    AddCache count(out.clause_off.data() + 1);
#pragma omp for schedule(static) nowait
    for (int64_t c = 0; c < m; ++c) {
      if (cs.offsets[c + 1] == cs.offsets[c]) continue;
      const int32_t k = out.comp_of_atom[std::abs(cs.lits[cs.offsets[c]])];
      comp_of_clause[c] = k;
      count.add(k, 1);
    }
  }
  for (int32_t k = 0; k < out.count; ++k) out.clause_off[k + 1] += out.clause_off[k];
  out.clauses.resize(out.clause_off[out.count]);
  fill.assign(out.clause_off.begin(), out.clause_off.end() - 1);
  for (int64_t c = 0; c < m; ++c) {
    const int32_t k = comp_of_clause[c];
    if (k < 0) out.empty_clauses.push_back(c);
    else out.clauses[fill[k]++] = c;
  }
  out.has_query.assign(out.count, net.is_query.empty() ? 1 : 0);
  if (!net.is_query.empty())
    for (int32_t a = 1; a <= n && a < static_cast<int32_t>(net.is_query.size()); ++a)
      if (net.is_query[a]) out.has_query[out.comp_of_atom[a]] = 1;
  return out;
}

}  // namespace mln::solver
