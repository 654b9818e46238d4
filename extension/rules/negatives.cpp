// Closed-world negatives (docs/rules.md, "The call"): where the user gives
// no negative examples, every tuple of the target's types that is not a
// positive is false, as a closed-world database says; a uniform sample of
// them stands for all (the search counts covered negatives, so a sample
// estimates the rate at which a rule is wrong).  A tuple's columns take the
// values the target's columns can take, not every value of their type: a
// type can be as wide as "text", and a negative made of another relation's
// values (a colour where a person goes) is one that no rule over people
// covers, so a sample of them calls an over-general rule exact.
#include <algorithm>
#include <random>
#include <set>

#include "rules/rules.hpp"

namespace mln::rules {

namespace {

// The values target column c can take: the positives' values there, and
// every value of each background column of its type that shares one with
// them (a column the target's joins on).
std::vector<int32_t> column_domain(const Task& task, size_t c) {
  const int type = task.target.types[c];
  std::set<int32_t> own;
  if (c < task.pos.cols.size()) own.insert(task.pos.cols[c].begin(), task.pos.cols[c].end());
  std::set<int32_t> vals = own;
  for (const Predicate& p : task.background)
    for (size_t j = 0; j < p.types.size() && j < p.rows.cols.size(); ++j) {
      if (p.types[j] != type) continue;
      const std::vector<int32_t>& col = p.rows.cols[j];
      if (std::any_of(col.begin(), col.end(), [&](int32_t v) { return own.count(v) > 0; }))
        vals.insert(col.begin(), col.end());
    }
  return {vals.begin(), vals.end()};
}

}  // namespace

std::vector<Warning> task_warnings(const Task& task) {
  std::vector<Warning> out;
  if (task.neg.rows() > 0) return out;
  if (!task.negatives_source.empty()) {
    out.push_back({"the negative examples " + task.negatives_source + " are empty: an empty negatives table means "
                       "no negatives were given, so every rule that covers min_pos positives is accepted and the "
                       "rules can be over-general",
                   "add the tuples that are not \"" + task.target.name + "\" to " + task.negatives_source +
                       ", or pass NULL as the negatives to sample closed-world ones (negatives_per_positive)"});
    return out;
  }
  out.push_back({"there is no negative example of \"" + task.target.name + "\" (none was given and the closed "
                 "world has none to sample): every rule that covers min_pos positives is accepted, and the rules "
                 "can be over-general",
                 "give negative examples (false atoms of the target)"});
  return out;
}

gpu::HostTable sample_negatives(const Task& task, size_t n, uint64_t seed) {
  const size_t k = task.target.types.size();
  std::vector<std::vector<int32_t>> domain(k);
  double space = 1;
  for (size_t c = 0; c < k; ++c) {
    domain[c] = column_domain(task, c);
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
