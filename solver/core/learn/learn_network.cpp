// The learning network (learn.hpp): ground clauses with their origins in
// the learnable first-order clauses, its checks, and its weights from the
// first-order weights.
#include <stdexcept>
#include <string>

#include "core/learn/learn.hpp"

namespace mln::solver {

void LearnNetwork::add_clause(const std::vector<int32_t>& lits, double base,
                              const std::vector<std::pair<int32_t, double>>& origins) {
  double w = base;
  for (const auto& o : origins) {
    origin_rule.push_back(o.first);
    origin_coef.push_back(o.second);
    w += o.second;  // placeholder until set_weights
  }
  origin_off.push_back(static_cast<int64_t>(origin_rule.size()));
  base_weight.push_back(base);
  net.clauses.add(lits.data(), lits.size(), w);
}

void LearnNetwork::validate() const {
  auto bad = [](const std::string& what) { throw std::invalid_argument("learning network: " + what); };
  const size_t m = net.clauses.size();
  if (base_weight.size() != m || origin_off.size() != m + 1) bad("origins and clauses do not agree");
  if (origin_off.back() != static_cast<int64_t>(origin_rule.size()) || origin_rule.size() != origin_coef.size())
    bad("malformed origins");
  for (int32_t r : origin_rule)
    if (r < 0 || r >= num_rules) bad("origin names clause " + std::to_string(r) + " of " + std::to_string(num_rules));
  if (truth.size() != static_cast<size_t>(net.num_atoms) + 1) bad("training world size differs from the atoms");
  if (net.clauses.offsets.size() != m + 1 || net.clauses.offsets.back() != static_cast<int64_t>(net.clauses.lits.size()))
    bad("malformed clauses");
}

void LearnNetwork::set_weights(const std::vector<double>& w) {
  for (size_t g = 0; g < net.clauses.size(); ++g) {
    double x = base_weight[g];
    for (int64_t i = origin_off[g]; i < origin_off[g + 1]; ++i) x += origin_coef[i] * w[origin_rule[i]];
    net.clauses.weights[g] = x;
  }
}

}  // namespace mln::solver
