// solve_marginal_touched (marginal_touched.hpp).
#include "core/marginal/marginal_touched.hpp"

#include "core/base/touched.hpp"

namespace mln::solver {

TouchedMarginals solve_marginal_touched(const mln::Network& net, const std::vector<double>& previous,
                                        const std::vector<int32_t>& touched, const MarginalOptions& opts) {
  TouchedMarginals r;
  TouchedNetwork t = touched_subnetwork(net, touched, {});
  t.sub.init_truth.clear();
  r.components = t.components;
  r.touched_components = t.touched_components;
  r.touched_atoms = t.sub.num_atoms;
  if (t.sub.num_atoms > 0) r.searched = solve_marginal(t.sub, opts);
  r.prob = carry_over(t, net.num_atoms, previous, r.searched.prob);
  return r;
}

}  // namespace mln::solver
