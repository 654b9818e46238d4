// A part's clauses and its network with held neighbours (part_extract.hpp).
#include "core/spread/part_extract.hpp"

#include <algorithm>
#include <cstdlib>

#include "core/base/network_cost.hpp"

namespace mln::solver {

namespace {

// A byte per atom: 1 for part p's atoms.  The passes below look every
// literal's atom up in it: a quarter of part_of's int32 per atom, so more
// of it stays in cache.
std::vector<uint8_t> mine_of(const std::vector<int32_t>& part_of, int p) {
  const int64_t n = static_cast<int64_t>(part_of.size());
  std::vector<uint8_t> mine(static_cast<size_t>(n));
#pragma omp parallel for schedule(static) if (n >= 65536)
  for (int64_t a = 0; a < n; ++a) mine[a] = part_of[a] == p;
  return mine;
}

bool touches(const mln::ClauseSet& cs, int64_t c, const uint8_t* mine) {
  for (int64_t i = cs.offsets[c]; i < cs.offsets[c + 1]; ++i)
    if (mine[std::abs(cs.lits[i])]) return true;
  return false;
}

int64_t chunks_of(int64_t m) { return (m + kCostChunk - 1) / kCostChunk; }

}  // namespace

std::vector<int64_t> part_clauses(const mln::Network& net, const std::vector<int32_t>& part_of, int p) {
  const std::vector<uint8_t> mine = mine_of(part_of, p);
  return select_clauses(static_cast<int64_t>(net.clauses.size()),
                        [&](int64_t c) { return touches(net.clauses, c, mine.data()); });
}

std::vector<int64_t> part_clause_counts(const mln::Network& net, const std::vector<int32_t>& part_of, int parts) {
  const auto& cs = net.clauses;
  const int64_t m = static_cast<int64_t>(cs.size()), chunks = chunks_of(m);
  std::vector<int64_t> at(static_cast<size_t>(chunks * parts), 0);  // [chunk][part]
#pragma omp parallel for schedule(dynamic, 1) if (chunks > 1)
  for (int64_t b = 0; b < chunks; ++b) {
    std::vector<int32_t> seen;  // the parts of one clause, each counted once
    for (int64_t c = b * kCostChunk; c < std::min(m, (b + 1) * kCostChunk); ++c) {
      seen.clear();
      for (int64_t i = cs.offsets[c]; i < cs.offsets[c + 1]; ++i) {
        const int32_t q = part_of[std::abs(cs.lits[i])];
        if (q < 0 || std::find(seen.begin(), seen.end(), q) != seen.end()) continue;
        seen.push_back(q);
        ++at[b * parts + q];
      }
    }
  }
  std::vector<int64_t> out(static_cast<size_t>(parts), 0);
  for (int64_t b = 0; b < chunks; ++b)
    for (int q = 0; q < parts; ++q) out[q] += at[b * parts + q];
  return out;
}

HeldPart extract_held_part(const mln::Network& net, const std::vector<int32_t>& part_of, int p,
                           const std::vector<int32_t>& members) {
  const auto& cs = net.clauses;
  const int64_t m = static_cast<int64_t>(cs.size()), chunks = chunks_of(m);
  const int32_t n_atoms = net.num_atoms;
  const std::vector<uint8_t> mine = mine_of(part_of, p);
  // Pass 1: each chunk's clauses and literals over the part, the clauses
  // marked in a bit map (a chunk's words are its own: kCostChunk is a
  // multiple of 64) so that pass 2 reads only those, and the held atoms
  // (marked by relaxed stores of 1, read first: most are marked already,
  // and stores from every thread to one line contend).
  static_assert(kCostChunk % 64 == 0, "a chunk's clauses fill whole words of the bit map");
  std::vector<uint8_t> seen(static_cast<size_t>(n_atoms) + 1, 0);
  std::vector<int64_t> kept(static_cast<size_t>(chunks) + 1, 0), lits(static_cast<size_t>(chunks) + 1, 0);
  std::vector<uint64_t> touched(static_cast<size_t>((m + 63) / 64), 0);
#pragma omp parallel for schedule(dynamic, 1) if (chunks > 1)
  for (int64_t b = 0; b < chunks; ++b) {
    int64_t k = 0, l = 0;
    for (int64_t c = b * kCostChunk; c < std::min(m, (b + 1) * kCostChunk); ++c) {
      if (!touches(cs, c, mine.data())) continue;
      touched[c / 64] |= uint64_t{1} << (c % 64);
      ++k;
      l += cs.offsets[c + 1] - cs.offsets[c];
      for (int64_t i = cs.offsets[c]; i < cs.offsets[c + 1]; ++i) {
        const int32_t a = std::abs(cs.lits[i]);
        if (!mine[a] && !__atomic_load_n(&seen[a], __ATOMIC_RELAXED)) __atomic_store_n(&seen[a], uint8_t{1}, __ATOMIC_RELAXED);
      }
    }
    kept[b + 1] = k;
    lits[b + 1] = l;
  }
  for (int64_t b = 0; b < chunks; ++b) kept[b + 1] += kept[b], lits[b + 1] += lits[b];
  HeldPart out;
  for (int32_t a = 1; a <= n_atoms; ++a)
    if (seen[a]) out.held.push_back(a);
  const int32_t free = static_cast<int32_t>(members.size());
  std::vector<int32_t> local_of(static_cast<size_t>(n_atoms) + 1, 0);
  SubNetwork& sub = out.sub;
  sub.net.num_atoms = free + static_cast<int32_t>(out.held.size());
  sub.global.assign(static_cast<size_t>(sub.net.num_atoms) + 1, 0);
  for (int32_t i = 0; i < free; ++i) local_of[members[i]] = i + 1, sub.global[i + 1] = members[i];
  for (size_t i = 0; i < out.held.size(); ++i) {
    const int32_t loc = free + static_cast<int32_t>(i) + 1;
    local_of[out.held[i]] = loc;
    sub.global[loc] = out.held[i];
  }
  // Pass 2: each chunk writes its marked clauses at its offsets, literals
  // sorted by local id as extract_subnetwork sorts them.
  auto& o = sub.net.clauses;
  o.offsets.assign(static_cast<size_t>(kept[chunks]) + 1, 0);
  o.lits.resize(static_cast<size_t>(lits[chunks]));
  o.weights.resize(static_cast<size_t>(kept[chunks]));
#pragma omp parallel for schedule(dynamic, 1) if (chunks > 1)
  for (int64_t b = 0; b < chunks; ++b) {
    int64_t k = kept[b], l = lits[b];
    const int64_t w_end = (std::min(m, (b + 1) * kCostChunk) + 63) / 64;
    for (int64_t w = b * kCostChunk / 64; w < w_end; ++w) {
      for (uint64_t bits = touched[w]; bits != 0; bits &= bits - 1) {
        const int64_t c = w * 64 + __builtin_ctzll(bits), l0 = l;
        for (int64_t i = cs.offsets[c]; i < cs.offsets[c + 1]; ++i) {
          const int32_t x = cs.lits[i], loc = local_of[std::abs(x)];
          o.lits[l++] = x > 0 ? loc : -loc;
        }
        std::sort(o.lits.begin() + l0, o.lits.begin() + l);
        o.weights[k] = cs.weights[c];
        o.offsets[++k] = l;
      }
    }
  }
  return out;
}

}  // namespace mln::solver
