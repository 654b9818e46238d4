// A network's cost on OpenMP threads, for the passes over every clause of
// a large network that solve_map makes around the walk (the component's
// cost, its bound, the totals), which serial are a large share of a fast
// GPU solve's set-up (docs/solver/base.md, "Costs").
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "format/network.hpp"

namespace mln::solver {

// Clauses per chunk: a chunk is summed in clause order and the chunks' sums
// in chunk order, so the value does not depend on the number of threads,
// and a network of at most this many clauses gets mln::total_cost's own.
constexpr int64_t kCostChunk = int64_t{1} << 16;

// The sum of term(i) over i in [0, m): each chunk of kCostChunk summed in
// order, on threads where there are several, then the chunks' sums in
// chunk order.
template <class T, class Term>
T chunked_sum(int64_t m, Term term) {
  const int64_t chunks = (m + kCostChunk - 1) / kCostChunk;
  std::vector<T> part(static_cast<size_t>(chunks), T{});
#pragma omp parallel for schedule(dynamic, 1) if (chunks > 1)
  for (int64_t b = 0; b < chunks; ++b) {
    T s{};
    for (int64_t i = b * kCostChunk; i < std::min(m, (b + 1) * kCostChunk); ++i) s += term(i);
    part[b] = s;
  }
  T t{};
  for (const T& s : part) t += s;
  return t;
}

// Cost of clause c of `cs` under `truth` (by atom id).
inline double clause_cost_of(const ClauseSet& cs, int64_t c, const std::vector<uint8_t>& truth) {
  return clause_cost(&cs.lits[cs.offsets[c]], static_cast<size_t>(cs.offsets[c + 1] - cs.offsets[c]), cs.weights[c],
                     truth);
}

// mln::total_cost, chunked as above.
double total_cost_threads(const ClauseSet& cs, const std::vector<uint8_t>& truth);

// A walk's starting state: a coin flip per atom (Tuffy's start), or every
// atom false where that costs less over the clauses the walk searches; a
// tie keeps the coin flip.  Most atoms of an MLN's answer are false, and a
// coin flip sets half of them true: on RC it starts some hundred times the
// optimum, and at 10^9 clauses the walk's time went to undoing it (issue
// #45; docs/solver/map.md, "The start").  The costs of clauses[0..m) (all of
// cs's clauses where clauses is null) under the coin flips `coin` (by atom
// id) and with every atom false, summed as total_cost_threads does: the same
// on any number of threads.
struct StartCosts {
  double coin = 0, all_false = 0;
  bool false_is_cheaper() const { return all_false < coin; }
  StartCosts& operator+=(const StartCosts& o) {
    coin += o.coin;
    all_false += o.all_false;
    return *this;
  }
};
StartCosts start_costs(const ClauseSet& cs, const int64_t* clauses, int64_t m, const std::vector<uint8_t>& coin);

// Clause ids [0, m) that `keep` accepts, in ascending order, found on
// threads in chunks of kCostChunk.
template <class Keep>
std::vector<int64_t> select_clauses(int64_t m, Keep keep) {
  const int64_t chunks = (m + kCostChunk - 1) / kCostChunk;
  std::vector<std::vector<int64_t>> part(static_cast<size_t>(chunks));
#pragma omp parallel for schedule(dynamic, 1) if (chunks > 1)
  for (int64_t b = 0; b < chunks; ++b)
    for (int64_t c = b * kCostChunk; c < std::min(m, (b + 1) * kCostChunk); ++c)
      if (keep(c)) part[b].push_back(c);
  std::vector<int64_t> out;
  for (const auto& p : part) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// The cost of a unit clause (literal l, weight w) when its atom is false
// and when it is true: w > 0 costs w when the literal is false, w < 0 costs
// |w| when it is true.
struct UnitCost {
  double if_false, if_true;
};
inline UnitCost unit_cost(int32_t l, double w) {
  const bool costs_when_lit_true = w < 0;
  const bool costs_when_atom_true = costs_when_lit_true == (l > 0);
  const double k = std::fabs(w);
  return costs_when_atom_true ? UnitCost{0, k} : UnitCost{k, 0};
}

}  // namespace mln::solver
