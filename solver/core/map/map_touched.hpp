// MAP after a change to the network (issue #62): the previous answer is
// kept on the components the change did not touch (core/base/touched.hpp),
// and the touched components are searched again, from the previous answer,
// by solve_map() with the caller's options: on the small components of
// entity resolution its exact path proves each one.  Where the change
// touches a giant component, that is a search of the whole component from
// the previous state.
//
// The bound of the whole follows from the previous answer's.  A kept
// component is the same network as before, so with C and B the previous
// answer's cost and bound and K the kept components' cost under it, the
// kept part's optimum is at least K - (C - B): B is at most the previous
// optimum, which is at most K plus the optimum of what the change
// replaced, which is at most that part's cost C - K.  The new bound is
// that plus the searched part's bound (and the constant clauses), and the
// answer is proven where the previous one was and the search proves the
// touched part.
#pragma once

#include <cstdint>
#include <vector>

#include "core/map/solve_map.hpp"
#include "format/network.hpp"

namespace mln::solver {

// The answer before the change: its state by atom id of the new network
// (atoms past its end start false) and, where known, its cost and bound
// over the components it solved (SolveResult's).
struct PreviousAnswer {
  std::vector<uint8_t> truth;
  bool have_bound = false;
  double cost = 0, bound = 0;
  bool optimal = false;
};

struct TouchedResult {
  SolveResult searched;          // solve_map() on the touched components (atom ids of the sub-network)
  // The whole answer as solve_map() reports one: truth by atom id of `net`;
  // cost and hard_violated over the solved components; bound and optimal
  // as above (bound 0, not optimal, where the previous bound is not
  // known); components, solved and proven components (proven: the
  // searched part's, plus the kept part where the previous answer was
  // optimal).
  SolveResult whole;
  int64_t touched_components = 0;
  int64_t touched_atoms = 0, touched_clauses = 0;
};

// `touched` lists atom ids of `net`.
TouchedResult solve_map_touched(const mln::Network& net, const PreviousAnswer& previous,
                                const std::vector<int32_t>& touched, const SolveOptions& opts);

}  // namespace mln::solver
