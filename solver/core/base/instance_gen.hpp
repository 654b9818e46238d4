// Random weighted MaxSAT instances for tests and benchmarks.
#pragma once

#include <cstdint>
#include <vector>

#include "format/network.hpp"

namespace mln::solver {

struct GeneratedInstance {
  mln::Network net;
  std::vector<uint8_t> planted;  // by atom id: an assignment of cost 0
};

// `num_clauses` clauses of 2 or 3 literals (a third are binary) over
// `num_atoms` atoms, weights uniform in [0.5, 2), each clause satisfied by a
// hidden random assignment, so the optimum cost is 0.  Every atom is a
// query atom.  Deterministic in `seed`.
GeneratedInstance generate_planted_maxsat(int32_t num_atoms, int64_t num_clauses, uint64_t seed);

}  // namespace mln::solver
