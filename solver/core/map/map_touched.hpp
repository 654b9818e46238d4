// MAP after a change to the network (issue #62): the previous answer is
// kept on the components the change did not touch (core/base/touched.hpp),
// and the touched components are searched again, from the previous answer,
// by solve_map() with the caller's options: on the small components of
// entity resolution its exact path proves each one.  Where the change
// touches a giant component, that is a search of the whole component from
// the previous state.
#pragma once

#include <cstdint>
#include <vector>

#include "core/map/solve_map.hpp"
#include "format/network.hpp"

namespace mln::solver {

struct TouchedResult {
  SolveResult searched;          // solve_map() on the touched components (atom ids of the sub-network)
  std::vector<uint8_t> truth;    // the whole answer, by atom id of `net`
  double cost = 0;               // of `truth` over all of `net`'s clauses
  int64_t components = 0;        // of `net`
  int64_t touched_components = 0;
  int64_t touched_atoms = 0, touched_clauses = 0;
};

// `previous` is the answer before the change, by atom id (shorter than the
// network: atoms after its end start false); `touched` lists atom ids.
TouchedResult solve_map_touched(const mln::Network& net, const std::vector<uint8_t>& previous,
                                const std::vector<int32_t>& touched, const SolveOptions& opts);

}  // namespace mln::solver
