// The ground Markov network (a weighted MaxSAT instance) as plain data.
//
// Shared by the grounder (extension/ground), the worker (solver/) and the
// tests.  No PostgreSQL, no CUDA.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "format/host_array.hpp"

namespace mln {

// Tuffy's weight for hard clauses (Config.hard_weight) and the threshold at
// which a clause counts as hard.
constexpr double kHardWeight = 5.2e7;
constexpr double kHardThreshold = 1e7;  // used by -dontBreak
// The largest soft weight the language accepts (program text).
constexpr double kMaxSoftWeight = 1e15;

// Clauses in CSR form.  Atom ids are 1-based; a literal is +id (atom true
// satisfies it) or -id (atom false satisfies it).  Within a clause the
// literals are sorted ascending and duplicate-free.
// The arrays are HostArrays: resize() leaves new elements unwritten, for
// the extractions and joins that write them in full on threads.
struct ClauseSet {
  HostArray<int64_t> offsets{0};  // size = num_clauses + 1
  HostArray<int32_t> lits;
  HostArray<double> weights;      // > 0: violated when all literals false;
                                  // < 0: costs |w| when any literal is true

  size_t size() const { return weights.size(); }
  void add(const int32_t* l, size_t n, double w) {
    lits.insert(lits.end(), l, l + n);
    offsets.push_back(static_cast<int64_t>(lits.size()));
    weights.push_back(w);
  }
};

// A ground network ready for search.
struct Network {
  int32_t num_atoms = 0;                 // atoms are 1..num_atoms
  ClauseSet clauses;
  std::vector<uint8_t> is_query;         // index atom id; size num_atoms + 1
  std::vector<uint8_t> init_truth;       // optional starting state (same indexing), may be empty
};

// Cost of a clause under Tuffy's semantics, its atoms' values given by
// truth_of(atom).
template <class TruthOf>
inline double clause_cost_by(const int32_t* l, size_t n, double w, TruthOf truth_of) {
  bool any_true = false;
  for (size_t i = 0; i < n && !any_true; ++i) {
    int32_t a = l[i] > 0 ? l[i] : -l[i];
    any_true = (l[i] > 0) == (truth_of(a) != 0);
  }
  if (w > 0) return any_true ? 0.0 : w;
  if (w < 0) return any_true ? -w : 0.0;
  return 0.0;
}

// The same, truth indexed by atom id.
inline double clause_cost(const int32_t* l, size_t n, double w, const std::vector<uint8_t>& truth) {
  return clause_cost_by(l, n, w, [&truth](int32_t a) { return truth[a]; });
}

inline double total_cost(const ClauseSet& cs, const std::vector<uint8_t>& truth) {
  double c = 0;
  for (size_t i = 0; i < cs.size(); ++i)
    c += clause_cost(&cs.lits[cs.offsets[i]], cs.offsets[i + 1] - cs.offsets[i], cs.weights[i], truth);
  return c;
}

}  // namespace mln
