#include "core/base/network_cost.hpp"

#include <algorithm>

namespace mln::solver {

double total_cost_threads(const ClauseSet& cs, const std::vector<uint8_t>& truth) {
  return chunked_sum<double>(static_cast<int64_t>(cs.size()), [&](int64_t c) { return clause_cost_of(cs, c, truth); });
}

StartCosts start_costs(const ClauseSet& cs, const int64_t* clauses, int64_t m, const std::vector<uint8_t>& coin) {
  auto is_false = [](int32_t) { return 0; };
  return chunked_sum<StartCosts>(m, [&](int64_t j) {
    const int64_t c = clauses ? clauses[j] : j;
    const int32_t* l = &cs.lits[cs.offsets[c]];
    const size_t len = static_cast<size_t>(cs.offsets[c + 1] - cs.offsets[c]);
    return StartCosts{clause_cost(l, len, cs.weights[c], coin), clause_cost_by(l, len, cs.weights[c], is_false)};
  });
}

}  // namespace mln::solver
