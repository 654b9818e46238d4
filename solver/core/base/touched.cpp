// touched_subnetwork (touched.hpp).
#include "core/base/touched.hpp"

#include <cmath>

#include "core/base/components.hpp"
#include "core/base/network_cost.hpp"

namespace mln::solver {

TouchedNetwork touched_subnetwork(const mln::Network& net, const std::vector<int32_t>& touched,
                                  const std::vector<uint8_t>& start, bool skip_without_query) {
  TouchedNetwork t;
  const size_t n = static_cast<size_t>(net.num_atoms) + 1;
  Components comps = find_components(net, true);
  t.components = comps.count;
  std::vector<uint8_t> pick(static_cast<size_t>(comps.count), 0);
  for (int32_t a : touched)
    if (a > 0 && static_cast<size_t>(a) < n && comps.comp_of_atom[a] >= 0) pick[comps.comp_of_atom[a]] = 1;
  std::vector<uint8_t> state(n, 0);  // `start`, as long as the network
  for (size_t a = 1; a < n && a < start.size(); ++a) state[a] = start[a];
  const ClauseSet& cs = net.clauses;
  for (int32_t k = 0; k < comps.count; ++k) {
    if (pick[k] || (skip_without_query && !comps.has_query[k])) continue;
    ++t.kept_components;
    for (int64_t j = comps.clause_off[k]; j < comps.clause_off[k + 1]; ++j) {
      const double cost = clause_cost_of(cs, comps.clauses[j], state);
      t.kept_cost += cost;
      t.kept_hard += cost > 0 && std::fabs(cs.weights[comps.clauses[j]]) >= kHardThreshold;
    }
  }
  for (int64_t c : comps.empty_clauses)  // a positive one always costs its weight
    if (cs.weights[c] > 0) {
      t.empty_cost += cs.weights[c];
      t.empty_hard += cs.weights[c] >= kHardThreshold;
    }
  std::vector<int32_t> local(n, 0);
  t.global = {0};
  for (int32_t k = 0; k < comps.count; ++k) {
    if (!pick[k]) continue;
    ++t.touched_components;
    for (int64_t i = comps.atom_off[k]; i < comps.atom_off[k + 1]; ++i) {
      local[comps.atoms[i]] = static_cast<int32_t>(t.global.size());
      t.global.push_back(comps.atoms[i]);
    }
  }
  mln::Network& sub = t.sub;
  sub.num_atoms = static_cast<int32_t>(t.global.size()) - 1;
  sub.is_query.assign(t.global.size(), 0);
  sub.init_truth.assign(t.global.size(), 0);
  for (size_t i = 1; i < t.global.size(); ++i) {
    const int32_t a = t.global[i];
    sub.is_query[i] = net.is_query.empty() ? 1 : net.is_query[a];
    sub.init_truth[i] = static_cast<size_t>(a) < start.size() ? start[a] : 0;
  }
  std::vector<int32_t> lits;
  for (int32_t k = 0; k < comps.count; ++k) {
    if (!pick[k]) continue;
    for (int64_t j = comps.clause_off[k]; j < comps.clause_off[k + 1]; ++j) {
      const int64_t c = comps.clauses[j];
      lits.clear();
      for (int64_t x = net.clauses.offsets[c]; x < net.clauses.offsets[c + 1]; ++x) {
        const int32_t l = net.clauses.lits[x];
        lits.push_back(l > 0 ? local[l] : -local[-l]);
      }
      sub.clauses.add(lits.data(), lits.size(), net.clauses.weights[c]);
    }
  }
  return t;
}

}  // namespace mln::solver
