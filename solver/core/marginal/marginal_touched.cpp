// solve_marginal_touched (marginal_touched.hpp).
#include "core/marginal/marginal_touched.hpp"

#include "core/base/touched.hpp"

namespace mln::solver {

TouchedMarginals solve_marginal_touched(const mln::Network& net, const std::vector<double>& previous,
                                        const std::vector<int32_t>& touched, const MarginalOptions& opts) {
  TouchedMarginals r;
  const size_t n = static_cast<size_t>(net.num_atoms) + 1;
  r.prob.assign(n, 0.0);
  for (size_t a = 1; a < n && a < previous.size(); ++a) r.prob[a] = previous[a];
  TouchedNetwork t = touched_subnetwork(net, touched, {});
  t.sub.init_truth.clear();
  r.touched_components = t.touched_components;
  r.touched_atoms = t.sub.num_atoms;
  if (t.sub.num_atoms > 0) {
    r.searched = solve_marginal(t.sub, opts);
    for (size_t i = 1; i < t.global.size(); ++i) r.prob[t.global[i]] = r.searched.prob[i];
  }
  return r;
}

}  // namespace mln::solver
