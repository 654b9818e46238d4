// A piece of a ground network (a component or a partition) as a network of
// its own, with local atom ids 1..n.
#pragma once

#include <cstdint>
#include <vector>

#include "format/network.hpp"

namespace mln::solver {

struct SubNetwork {
  mln::Network net;             // local ids 1..n; is_query left empty
  std::vector<int32_t> global;  // local id -> id in the parent network ([0] = 0)
  double constant_cost = 0;     // cost of clauses that became constant (fixed atoms only)
};

// The sub-network over `atoms` (parent ids) and `clauses` (parent clause
// ids).  local_of[parent id] must be the local id (1..n) of each atom in
// `atoms` and 0 for any other atom.  A literal over another atom is held at
// fixed[parent id]: a true one makes its clause constant (dropped, cost
// counted in constant_cost), a false one is removed from the clause.
SubNetwork extract_subnetwork(const mln::Network& parent, const std::vector<int32_t>& atoms,
                              const int64_t* clauses, size_t num_clauses,
                              const std::vector<int32_t>& local_of, const std::vector<uint8_t>* fixed);

// The same, with local ids in the order of `atoms` (atoms[i] is local
// id i + 1); the map is built here.
SubNetwork extract_subnetwork(const mln::Network& parent, const std::vector<int32_t>& atoms,
                              const int64_t* clauses, size_t num_clauses, const std::vector<uint8_t>* fixed);

}  // namespace mln::solver
