// Marginals after a change to the network (issue #62): the previous
// marginals are kept on the components the change did not touch
// (core/base/touched.hpp: their network is as before, so their marginals
// are), and MC-SAT runs on the touched components alone, with the caller's
// options.
#pragma once

#include <cstdint>
#include <vector>

#include "core/marginal/solve_marginal.hpp"
#include "format/network.hpp"

namespace mln::solver {

struct TouchedMarginals {
  MarginalResult searched;    // solve_marginal() on the touched components (sub-network ids)
  std::vector<double> prob;   // by atom id of `net`; atoms past `previous`'s end start at 0
  int64_t components = 0;     // of `net`
  int64_t touched_components = 0, touched_atoms = 0;
};

TouchedMarginals solve_marginal_touched(const mln::Network& net, const std::vector<double>& previous,
                                        const std::vector<int32_t>& touched, const MarginalOptions& opts);

}  // namespace mln::solver
