// METIS partitioning and Gauss-Seidel rounds over the parts.
#include "core/base/partition.hpp"

#include <metis.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "core/base/rng.hpp"
#include "core/base/subnetwork.hpp"

namespace mln::solver {

std::vector<int32_t> partition_atoms(const mln::Network& net, int k, uint64_t seed) {
  const int32_t n = net.num_atoms;
  std::vector<int32_t> part(n + 1, 0);
  if (k <= 1 || n <= k) {
    for (int32_t a = 1; a <= n; ++a) part[a] = std::min(k - 1, std::max(0, a - 1));
    return part;
  }
  // Adjacency as (atom, neighbour) pairs, merged into CSR with edge weights.
  const auto& cs = net.clauses;
  std::vector<std::pair<int32_t, int32_t>> edges;
  for (size_t c = 0; c < cs.size(); ++c) {
    int64_t lo = cs.offsets[c], hi = cs.offsets[c + 1];
    if (hi - lo < 2) continue;
    if (hi - lo <= 8) {
      for (int64_t i = lo; i < hi; ++i)
        for (int64_t j = lo; j < hi; ++j)
          if (i != j) edges.emplace_back(std::abs(cs.lits[i]) - 1, std::abs(cs.lits[j]) - 1);
    } else {
      int32_t hub = std::abs(cs.lits[lo]) - 1;
      for (int64_t i = lo + 1; i < hi; ++i) {
        int32_t b = std::abs(cs.lits[i]) - 1;
        edges.emplace_back(hub, b);
        edges.emplace_back(b, hub);
      }
    }
  }
  std::sort(edges.begin(), edges.end());
  std::vector<idx_t> xadj(n + 1, 0), adjncy, adjwgt;
  adjncy.reserve(edges.size());
  for (size_t i = 0; i < edges.size();) {
    size_t j = i;
    while (j < edges.size() && edges[j] == edges[i]) ++j;
    adjncy.push_back(edges[i].second);
    adjwgt.push_back(static_cast<idx_t>(j - i));
    ++xadj[edges[i].first + 1];
    i = j;
  }
  edges.clear();
  edges.shrink_to_fit();
  for (int32_t a = 0; a < n; ++a) xadj[a + 1] += xadj[a];
  idx_t nv = n, ncon = 1, nparts = k, objval = 0;
  std::vector<idx_t> where(n, 0);
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = static_cast<idx_t>(seed & 0x7fffffff);
  int rc = METIS_PartGraphKway(&nv, &ncon, xadj.data(), adjncy.empty() ? nullptr : adjncy.data(), nullptr, nullptr,
                               adjwgt.empty() ? nullptr : adjwgt.data(), &nparts, nullptr, nullptr, options,
                               &objval, where.data());
  if (rc != METIS_OK) {  // contiguous ranges still give a valid (if poor) split
    for (int32_t a = 1; a <= n; ++a) part[a] = static_cast<int32_t>(int64_t{a - 1} * k / n);
    return part;
  }
  for (int32_t a = 1; a <= n; ++a) part[a] = static_cast<int32_t>(where[a - 1]);
  return part;
}

std::vector<int32_t> partition_atoms_streaming(const mln::Network& net, int k) {
  const int32_t n = net.num_atoms;
  std::vector<int32_t> part(static_cast<size_t>(n) + 1, 0);
  if (k <= 1 || n <= k) {
    for (int32_t a = 1; a <= n; ++a) part[a] = std::min(k - 1, std::max(0, a - 1));
    return part;
  }
  // Occurrence lists: the clauses of each atom (CSR), on threads.  The
  // order within a list depends on the threads, but only the counts of
  // placed neighbours are used, so the parts do not.
  const auto& cs = net.clauses;
  const int64_t m = static_cast<int64_t>(cs.size());
  const int64_t nl = static_cast<int64_t>(cs.lits.size());
  std::vector<std::atomic<int64_t>> cnt(static_cast<size_t>(n) + 2);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < nl; ++i) cnt[std::abs(cs.lits[i]) + 1].fetch_add(1, std::memory_order_relaxed);
  std::vector<int64_t> off(static_cast<size_t>(n) + 2, 0);
  for (int32_t a = 1; a <= n + 1; ++a) off[a] = off[a - 1] + cnt[a].load(std::memory_order_relaxed);
  for (int32_t a = 0; a <= n + 1; ++a) cnt[a].store(a <= n ? off[a] : 0, std::memory_order_relaxed);
  std::vector<int64_t> occ(static_cast<size_t>(nl));
#pragma omp parallel for schedule(dynamic, 65536)
  for (int64_t c = 0; c < m; ++c)
    for (int64_t i = cs.offsets[c]; i < cs.offsets[c + 1]; ++i)
      occ[cnt[std::abs(cs.lits[i])].fetch_add(1, std::memory_order_relaxed)] = c;
  cnt.clear();
  cnt.shrink_to_fit();
  const double cap = 1.05 * static_cast<double>(n) / k + 1;
  std::vector<int64_t> size(static_cast<size_t>(k), 0);
  std::fill(part.begin(), part.end(), -1);
  // In blocks of atoms: each atom's placed neighbours per part are counted
  // on threads from the parts as they stood at the block's start, then the
  // atoms are placed in order (scores with the sizes as they grow).  An
  // atom does not see neighbours placed earlier in its own block: the price
  // of counting on threads, which a serial stream over millions of atoms
  // needs (docs/solver/base.md).
  const int32_t block = std::clamp<int32_t>(n / 512, 256, 65536);
  std::vector<int32_t> near(static_cast<size_t>(block) * k);
  int last = -1;
  for (int32_t lo = 1; lo <= n; lo += block) {
    const int32_t hi = std::min<int32_t>(n, lo + block - 1);
    std::fill(near.begin(), near.end(), 0);
#pragma omp parallel for schedule(dynamic, 64) if (hi - lo >= 1024)
    for (int32_t a = lo; a <= hi; ++a) {
      int32_t* nr = near.data() + static_cast<size_t>(a - lo) * k;
      for (int64_t j = off[a]; j < off[a + 1]; ++j) {
        const int64_t c = occ[j];
        for (int64_t i = cs.offsets[c]; i < cs.offsets[c + 1]; ++i) {
          const int32_t q = part[std::abs(cs.lits[i])];
          if (q >= 0) ++nr[q];
        }
      }
    }
    for (int32_t a = lo; a <= hi; ++a) {
      const int32_t* nr = near.data() + static_cast<size_t>(a - lo) * k;
      int best = -1;
      double best_score = -1;
      for (int p = 0; p < k; ++p) {
        if (static_cast<double>(size[p]) >= cap) continue;
        const double score = static_cast<double>(nr[p]) * (1.0 - static_cast<double>(size[p]) / cap);
        if (score > best_score || (score == best_score && size[p] < size[best])) best = p, best_score = score;
      }
      // No placed neighbour (the block's first atoms see none of each
      // other): stay in the previous atom's part while it has room, as
      // neighbouring ids are often related atoms; else the emptiest part.
      if (best_score <= 0 && last >= 0 && static_cast<double>(size[last]) < cap) best = last;
      if (best < 0) best = static_cast<int>(std::min_element(size.begin(), size.end()) - size.begin());
      part[a] = last = best;
      ++size[best];
    }
  }
  part[0] = 0;
  return part;
}

std::vector<uint8_t> solve_gauss_seidel(const mln::Network& net, const std::vector<uint8_t>& init, int k,
                                        int rounds, int64_t flips, uint64_t seed, const SubSolver& solve_part,
                                        const std::function<bool()>& stop, GaussSeidelStats* stats) {
  const int32_t n = net.num_atoms;
  const auto& cs = net.clauses;
  std::vector<int32_t> part = partition_atoms(net, k, seed);
  std::vector<std::vector<int32_t>> members(k);
  for (int32_t a = 1; a <= n; ++a) members[part[a]].push_back(a);
  // Clauses of each part: those with at least one literal over the part.
  std::vector<std::vector<int64_t>> part_clauses(k);
  std::vector<int32_t> seen;
  for (size_t c = 0; c < cs.size(); ++c) {
    seen.clear();
    for (int64_t i = cs.offsets[c]; i < cs.offsets[c + 1]; ++i) {
      int32_t p = part[std::abs(cs.lits[i])];
      if (std::find(seen.begin(), seen.end(), p) == seen.end()) {
        seen.push_back(p);
        part_clauses[p].push_back(static_cast<int64_t>(c));
      }
    }
  }
  if (stats) stats->partitions = k;
  std::vector<uint8_t> truth = init, best = init;
  double best_cost = total_cost(cs, truth);
  std::vector<int32_t> local_of(n + 1, 0);
  Rng rng(derive_seed(seed, 0x47534549ull));
  std::vector<int> order(k);
  const int64_t per_round = flips / std::max(1, rounds);
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < k; ++i) order[i] = i;
    for (int i = k - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
    for (int p : order) {
      if (stop && stop()) break;
      const auto& mem = members[p];
      if (mem.empty()) continue;
      for (size_t i = 0; i < mem.size(); ++i) local_of[mem[i]] = static_cast<int32_t>(i + 1);
      SubNetwork sub = extract_subnetwork(net, mem, part_clauses[p].data(), part_clauses[p].size(), local_of, &truth);
      std::vector<uint8_t> sub_init(mem.size() + 1, 0);
      for (size_t i = 0; i < mem.size(); ++i) sub_init[i + 1] = truth[mem[i]];
      int64_t part_flips = std::max<int64_t>(4, per_round * static_cast<int64_t>(mem.size()) / std::max(1, n));
      std::vector<uint8_t> got = solve_part(sub.net, sub_init, part_flips, derive_seed(seed, uint64_t(r) * k + p + 1));
      for (size_t i = 0; i < mem.size(); ++i) truth[mem[i]] = got[i + 1];
      for (int32_t a : mem) local_of[a] = 0;
    }
    if (stats) stats->rounds_run = r + 1;
    double c = total_cost(cs, truth);
    if (c < best_cost) { best_cost = c; best = truth; }
    if (stop && stop()) break;
  }
  return best;
}

}  // namespace mln::solver
