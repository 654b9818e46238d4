// Sub-network extraction with local atom ids and fixed foreign atoms.
#include "core/base/subnetwork.hpp"

#include <algorithm>
#include <stdexcept>

namespace mln::solver {

namespace {

// How the sub-network sees parent clause c: its local literals, counted in
// *n and, when buf is given, written there sorted; or constant (returns
// false) with its cost in *cost.  Sets *foreign for a foreign atom without
// a fixed truth.
bool local_clause(const mln::Network& parent, int64_t c, const std::vector<int32_t>& local_of,
                  const std::vector<uint8_t>* fixed, std::vector<int32_t>* buf, int64_t* n, double* cost,
                  bool* foreign) {
  const auto& cs = parent.clauses;
  if (buf) buf->clear();
  *n = 0;
  bool fixed_true = false;
  for (int64_t i = cs.offsets[c]; i < cs.offsets[c + 1]; ++i) {
    const int32_t l = cs.lits[i], a = l > 0 ? l : -l;
    const int32_t loc = local_of[a];
    if (loc > 0) {
      ++*n;
      if (buf) buf->push_back(l > 0 ? loc : -loc);
      continue;
    }
    if (!fixed) {
      *foreign = true;
      return false;
    }
    if ((l > 0) == ((*fixed)[a] != 0)) {
      fixed_true = true;
      break;
    }
  }
  if (fixed_true || *n == 0) {  // constant clause
    const double w = cs.weights[c];
    *cost = (w > 0 && !fixed_true) ? w : (w < 0 && fixed_true) ? -w : 0;
    return false;
  }
  if (buf) std::sort(buf->begin(), buf->end());
  return true;
}

}  // namespace

// In chunks of clauses on OpenMP threads (for a giant component): each
// chunk counts what it keeps, then writes at its offset.  Chunks are
// fixed-size, so the constant cost is summed in the same order whatever the
// thread count.
SubNetwork extract_subnetwork(const mln::Network& parent, const std::vector<int32_t>& atoms,
                              const int64_t* clauses, size_t num_clauses,
                              const std::vector<int32_t>& local_of, const std::vector<uint8_t>* fixed) {
  SubNetwork sub;
  sub.net.num_atoms = static_cast<int32_t>(atoms.size());
  sub.global.resize(atoms.size() + 1, 0);
  for (size_t i = 0; i < atoms.size(); ++i) sub.global[local_of[atoms[i]]] = atoms[i];
  constexpr int64_t kChunk = 65536;
  const int64_t m = static_cast<int64_t>(num_clauses), chunks = (m + kChunk - 1) / kChunk;
  std::vector<int64_t> kept(chunks + 1, 0), lits(chunks + 1, 0);
  std::vector<double> constant(chunks, 0.0);
  bool foreign = false;
#pragma omp parallel for schedule(dynamic, 1) reduction(|| : foreign) if (chunks > 1)
  for (int64_t k = 0; k < chunks; ++k) {  // pass 1: what each chunk keeps
    int64_t kept_here = 0, lits_here = 0;
    double constant_here = 0;
    for (int64_t j = k * kChunk; j < std::min(m, (k + 1) * kChunk); ++j) {
      int64_t n = 0;
      double cost = 0;
      if (local_clause(parent, clauses[j], local_of, fixed, nullptr, &n, &cost, &foreign)) {
        ++kept_here;
        lits_here += n;
      } else {
        constant_here += cost;
      }
    }
    kept[k + 1] = kept_here;  // once per chunk: no false sharing in the loop
    lits[k + 1] = lits_here;
    constant[k] = constant_here;
  }
  if (foreign) throw std::invalid_argument("extract_subnetwork: foreign atom without fixed truth");
  for (int64_t k = 0; k < chunks; ++k) {
    kept[k + 1] += kept[k];
    lits[k + 1] += lits[k];
    sub.constant_cost += constant[k];
  }
  auto& out = sub.net.clauses;
  out.offsets.assign(kept[chunks] + 1, 0);
  out.lits.resize(lits[chunks]);
  out.weights.resize(kept[chunks]);
#pragma omp parallel for schedule(dynamic, 1) if (chunks > 1)
  for (int64_t k = 0; k < chunks; ++k) {  // pass 2: write at the chunk's offset
    std::vector<int32_t> buf;
    int64_t c_at = kept[k], l_at = lits[k];
    bool unused = false;
    for (int64_t j = k * kChunk; j < std::min(m, (k + 1) * kChunk); ++j) {
      int64_t n = 0;
      double cost = 0;
      if (!local_clause(parent, clauses[j], local_of, fixed, &buf, &n, &cost, &unused)) continue;
      std::copy(buf.begin(), buf.end(), out.lits.begin() + l_at);
      l_at += static_cast<int64_t>(buf.size());
      out.weights[c_at] = parent.clauses.weights[clauses[j]];
      out.offsets[++c_at] = l_at;
    }
  }
  return sub;
}

SubNetwork extract_subnetwork(const mln::Network& parent, const std::vector<int32_t>& atoms,
                              const int64_t* clauses, size_t num_clauses, const std::vector<uint8_t>* fixed) {
  std::vector<int32_t> local_of(static_cast<size_t>(parent.num_atoms) + 1, 0);
  for (size_t i = 0; i < atoms.size(); ++i) local_of[atoms[i]] = static_cast<int32_t>(i + 1);
  return extract_subnetwork(parent, atoms, clauses, num_clauses, local_of, fixed);
}

}  // namespace mln::solver
