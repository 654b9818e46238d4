// Union-find components of the atom graph.
#include "components.hpp"

#include <algorithm>
#include <numeric>

namespace mln::solver {

namespace {

// Disjoint sets with union by size and path halving.  Hand-written: no
// well-kept C++ library offers a plain, allocation-free one.
struct UnionFind {
  std::vector<int32_t> parent, size;
  explicit UnionFind(int32_t n) : parent(n), size(n, 1) { std::iota(parent.begin(), parent.end(), 0); }
  // Representative of x's set.
  int32_t find(int32_t x) {
    while (parent[x] != x) { parent[x] = parent[parent[x]]; x = parent[x]; }
    return x;
  }
  // Merges the sets of a and b.
  void unite(int32_t a, int32_t b) {
    a = find(a); b = find(b);
    if (a == b) return;
    if (size[a] < size[b]) std::swap(a, b);
    parent[b] = a;
    size[a] += size[b];
  }
};

}  // namespace

Components find_components(const mln::Network& net) {
  const auto& cs = net.clauses;
  const int32_t n = net.num_atoms;
  UnionFind uf(n + 1);
  for (size_t c = 0; c < cs.size(); ++c) {
    int64_t lo = cs.offsets[c], hi = cs.offsets[c + 1];
    if (hi - lo < 2) continue;  // unit clauses connect nothing (Tuffy skips them)
    int32_t first = std::abs(cs.lits[lo]);
    for (int64_t i = lo + 1; i < hi; ++i) uf.unite(first, std::abs(cs.lits[i]));
  }
  // Size estimate per root, then order roots largest first.
  std::vector<double> est(n + 1, 0.0);
  std::vector<int32_t> min_atom(n + 1, n + 1);
  for (int32_t a = 1; a <= n; ++a) {
    int32_t r = uf.find(a);
    est[r] += 116.0;
    min_atom[r] = std::min(min_atom[r], a);
  }
  for (size_t c = 0; c < cs.size(); ++c) {
    int64_t len = cs.offsets[c + 1] - cs.offsets[c];
    if (len > 0) est[uf.find(std::abs(cs.lits[cs.offsets[c]]))] += 108.0 + 4.0 * len;
  }
  std::vector<int32_t> roots;
  for (int32_t a = 1; a <= n; ++a)
    if (uf.find(a) == a) roots.push_back(a);
  std::sort(roots.begin(), roots.end(), [&](int32_t x, int32_t y) {
    return est[x] != est[y] ? est[x] > est[y] : min_atom[x] < min_atom[y];
  });
  Components out;
  out.count = static_cast<int32_t>(roots.size());
  std::vector<int32_t> comp_of_root(n + 1, -1);
  for (int32_t k = 0; k < out.count; ++k) comp_of_root[roots[k]] = k;
  out.comp_of_atom.assign(n + 1, -1);
  out.index_in_comp.assign(n + 1, 0);
  out.atom_off.assign(out.count + 1, 0);
  for (int32_t a = 1; a <= n; ++a) {
    out.comp_of_atom[a] = comp_of_root[uf.find(a)];
    ++out.atom_off[out.comp_of_atom[a] + 1];
  }
  for (int32_t k = 0; k < out.count; ++k) out.atom_off[k + 1] += out.atom_off[k];
  out.atoms.resize(n);
  std::vector<int64_t> fill(out.atom_off.begin(), out.atom_off.end() - 1);
  for (int32_t a = 1; a <= n; ++a) {  // ascending ids within each component
    int32_t k = out.comp_of_atom[a];
    out.index_in_comp[a] = static_cast<int32_t>(fill[k] - out.atom_off[k] + 1);
    out.atoms[fill[k]++] = a;
  }
  out.clause_off.assign(out.count + 1, 0);
  for (size_t c = 0; c < cs.size(); ++c) {
    if (cs.offsets[c + 1] == cs.offsets[c]) { out.empty_clauses.push_back(c); continue; }
    ++out.clause_off[out.comp_of_atom[std::abs(cs.lits[cs.offsets[c]])] + 1];
  }
  for (int32_t k = 0; k < out.count; ++k) out.clause_off[k + 1] += out.clause_off[k];
  out.clauses.resize(out.clause_off[out.count]);
  fill.assign(out.clause_off.begin(), out.clause_off.end() - 1);
  for (size_t c = 0; c < cs.size(); ++c) {
    if (cs.offsets[c + 1] == cs.offsets[c]) continue;
    out.clauses[fill[out.comp_of_atom[std::abs(cs.lits[cs.offsets[c]])]]++] = static_cast<int64_t>(c);
  }
  out.has_query.assign(out.count, net.is_query.empty() ? 1 : 0);
  if (!net.is_query.empty())
    for (int32_t a = 1; a <= n && a < static_cast<int32_t>(net.is_query.size()); ++a)
      if (net.is_query[a]) out.has_query[out.comp_of_atom[a]] = 1;
  return out;
}

}  // namespace mln::solver
