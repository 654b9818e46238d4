// solve_map_touched (map_touched.hpp).
#include "core/map/map_touched.hpp"

#include "core/base/network_cost.hpp"
#include "core/base/touched.hpp"

namespace mln::solver {

TouchedResult solve_map_touched(const mln::Network& net, const std::vector<uint8_t>& previous,
                                const std::vector<int32_t>& touched, const SolveOptions& opts) {
  TouchedResult r;
  const size_t n = static_cast<size_t>(net.num_atoms) + 1;
  r.truth.assign(n, 0);
  for (size_t a = 1; a < n && a < previous.size(); ++a) r.truth[a] = previous[a];
  TouchedNetwork t = touched_subnetwork(net, touched, previous);
  r.components = t.components;
  r.touched_components = t.touched_components;
  r.touched_atoms = t.sub.num_atoms;
  r.touched_clauses = static_cast<int64_t>(t.sub.clauses.size());
  if (t.sub.num_atoms > 0) {
    r.searched = solve_map(t.sub, opts);
    for (size_t i = 1; i < t.global.size(); ++i) r.truth[t.global[i]] = r.searched.truth[i];
  }
  r.cost = total_cost_threads(net.clauses, r.truth);
  return r;
}

}  // namespace mln::solver
