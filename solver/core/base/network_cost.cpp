#include "core/base/network_cost.hpp"

#include <algorithm>

namespace mln::solver {

double total_cost_threads(const ClauseSet& cs, const std::vector<uint8_t>& truth) {
  const int64_t m = static_cast<int64_t>(cs.size());
  if (m <= kCostChunk) return total_cost(cs, truth);
  const int64_t chunks = (m + kCostChunk - 1) / kCostChunk;
  std::vector<double> part(static_cast<size_t>(chunks), 0.0);
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t b = 0; b < chunks; ++b) {
    double s = 0;
    for (int64_t i = b * kCostChunk; i < std::min(m, (b + 1) * kCostChunk); ++i)
      s += clause_cost_of(cs, i, truth);
    part[b] = s;
  }
  double c = 0;
  for (double s : part) c += s;
  return c;
}

StartCosts start_costs(const ClauseSet& cs, const int64_t* clauses, int64_t m, const std::vector<uint8_t>& coin) {
  const int64_t chunks = (m + kCostChunk - 1) / kCostChunk;
  std::vector<StartCosts> part(static_cast<size_t>(chunks));
  auto is_false = [](int32_t) { return 0; };
#pragma omp parallel for schedule(dynamic, 1) if (chunks > 1)
  for (int64_t b = 0; b < chunks; ++b) {
    StartCosts s;
    for (int64_t j = b * kCostChunk; j < std::min(m, (b + 1) * kCostChunk); ++j) {
      const int64_t c = clauses ? clauses[j] : j;
      const int32_t* l = &cs.lits[cs.offsets[c]];
      const size_t len = static_cast<size_t>(cs.offsets[c + 1] - cs.offsets[c]);
      s.coin += clause_cost(l, len, cs.weights[c], coin);
      s.all_false += clause_cost_by(l, len, cs.weights[c], is_false);
    }
    part[b] = s;
  }
  StartCosts t;
  for (const StartCosts& s : part) {
    t.coin += s.coin;
    t.all_false += s.all_false;
  }
  return t;
}

}  // namespace mln::solver
