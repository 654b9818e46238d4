// The part of a ground network that a change touched (issue #62): the
// connected components that hold a touched atom, as a network of their own.
// A component without a touched atom has the same clauses over the same
// atoms as before the change, so an answer computed on it before (a MAP
// state, marginals) is still its answer.
#pragma once

#include <cstdint>
#include <vector>

#include "format/network.hpp"

namespace mln::solver {

struct TouchedNetwork {
  mln::Network sub;              // the touched components, atoms renumbered 1..
  std::vector<int32_t> global;   // sub's atom id -> net's ([0] = 0)
  int64_t components = 0;        // of net
  int64_t touched_components = 0;
};

// `touched` lists atom ids of `net`; `start` (by atom id of net, may be
// shorter) becomes sub.init_truth.
TouchedNetwork touched_subnetwork(const mln::Network& net, const std::vector<int32_t>& touched,
                                  const std::vector<uint8_t>& start);

}  // namespace mln::solver
