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
  // `start` on the components kept (not touched, and solved: with a query
  // atom where skip_without_query), as solve_map counts an answer: their
  // cost, violated hard clauses and number; and the clauses without a
  // literal (a constant, in no component).
  double kept_cost = 0;
  int64_t kept_hard = 0, kept_components = 0;
  double empty_cost = 0;
  int64_t empty_hard = 0;
};

// `touched` lists atom ids of `net`; `start` (by atom id of net, may be
// shorter) becomes sub.init_truth.
TouchedNetwork touched_subnetwork(const mln::Network& net, const std::vector<int32_t>& touched,
                                  const std::vector<uint8_t>& start, bool skip_without_query = false);

// The whole answer after a change, by atom id of the network t came from
// (num_atoms + 1 entries): `previous` where it reaches (atoms past its end
// start at T{}), and `searched` (by sub-network id, may be empty when the
// sub-network is) on the touched components.
template <class T>
std::vector<T> carry_over(const TouchedNetwork& t, int32_t num_atoms, const std::vector<T>& previous,
                          const std::vector<T>& searched) {
  const size_t n = static_cast<size_t>(num_atoms) + 1;
  std::vector<T> out(n, T{});
  for (size_t a = 1; a < n && a < previous.size(); ++a) out[a] = previous[a];
  for (size_t i = 1; i < t.global.size() && i < searched.size(); ++i) out[t.global[i]] = searched[i];
  return out;
}

}  // namespace mln::solver
