// solve_map_touched (map_touched.hpp).
#include "core/map/map_touched.hpp"

#include "core/base/network_cost.hpp"
#include "core/base/touched.hpp"

namespace mln::solver {

TouchedResult solve_map_touched(const mln::Network& net, const std::vector<uint8_t>& previous,
                                const std::vector<int32_t>& touched, const SolveOptions& opts) {
  TouchedResult r;
  TouchedNetwork t = touched_subnetwork(net, touched, previous);
  r.components = t.components;
  r.touched_components = t.touched_components;
  r.touched_atoms = t.sub.num_atoms;
  r.touched_clauses = static_cast<int64_t>(t.sub.clauses.size());
  if (t.sub.num_atoms > 0) r.searched = solve_map(t.sub, opts);
  r.truth = carry_over(t, net.num_atoms, previous, r.searched.truth);
  r.cost = total_cost_threads(net.clauses, r.truth);
  return r;
}

}  // namespace mln::solver
