// Closed-world negatives (docs/rules.md, "The call"): where the user gives
// no negative examples, every tuple of the target's types that is not a
// positive is false, as a closed-world database says; a uniform sample of
// them stands for all (the search counts covered negatives, so a sample
// estimates the rate at which a rule is wrong).
#include <algorithm>
#include <random>
#include <set>

#include "rules/rules.hpp"

namespace mln::rules {

gpu::HostTable sample_negatives(const Task& task, size_t n, uint64_t seed) {
  const size_t k = task.target.types.size();
  // The values of each type, from every column of that type.
  std::vector<std::set<int32_t>> by_type(task.type_names.size());
  auto add = [&](const std::vector<int>& types, const gpu::HostTable& rows) {
    for (size_t c = 0; c < types.size() && c < rows.cols.size(); ++c)
      by_type.at(static_cast<size_t>(types[c])).insert(rows.cols[c].begin(), rows.cols[c].end());
  };
  for (const Predicate& p : task.background) add(p.types, p.rows);
  add(task.target.types, task.pos);
  std::vector<std::vector<int32_t>> domain(k);
  double space = 1;
  for (size_t c = 0; c < k; ++c) {
    const auto& vals = by_type[static_cast<size_t>(task.target.types[c])];
    domain[c].assign(vals.begin(), vals.end());
    space *= static_cast<double>(domain[c].size());
  }
  std::set<std::vector<int32_t>> pos, neg;
  for (size_t i = 0; i < task.pos.rows(); ++i) {
    std::vector<int32_t> t(k);
    for (size_t c = 0; c < k; ++c) t[c] = task.pos.cols[c][i];
    pos.insert(t);
  }
  const double free_tuples = space - static_cast<double>(pos.size());
  n = static_cast<size_t>(std::min(static_cast<double>(n), std::max(0.0, free_tuples)));
  std::mt19937_64 rng(seed);
  std::vector<int32_t> t(k);
  // Rejection sampling; the bound on tries ends it when few free tuples remain.
  for (size_t tries = 0; neg.size() < n && tries < 20 * n + 1000; ++tries) {
    for (size_t c = 0; c < k; ++c) t[c] = domain[c][rng() % domain[c].size()];
    if (!pos.count(t)) neg.insert(t);
  }
  gpu::HostTable out;
  out.cols.assign(k, {});
  for (const auto& row : neg)
    for (size_t c = 0; c < k; ++c) out.cols[c].push_back(row[c]);
  return out;
}

}  // namespace mln::rules
