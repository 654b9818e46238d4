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

}  // namespace mln::solver
