// A part of a spread job's plan (spread.hpp) taken out of the network where
// it is solved, by the worker that solves it: its clauses, and for a kept
// walk (part_walk.hpp) its network with the neighbours' atoms held inside.
//
// Each is one or two passes over every clause of the network, on threads,
// for that one part: indexing every part's clauses up front, on every
// worker, and then extracting its own part from that list cost more, on the
// path to the job's first round (docs/solver/spread.md).
#pragma once

#include <cstdint>
#include <vector>

#include "core/base/subnetwork.hpp"
#include "format/network.hpp"

namespace mln::solver {

// The clauses of `net` with a literal over an atom of part p (part_of[a] ==
// p), ascending.
std::vector<int64_t> part_clauses(const mln::Network& net, const std::vector<int32_t>& part_of, int p);

// How many clauses each part of `parts` has a literal in (a clause over
// atoms of two parts counts for both), from one pass.
std::vector<int64_t> part_clause_counts(const mln::Network& net, const std::vector<int32_t>& part_of, int parts);

// Part p as a network of its own whose clauses keep every literal: the
// part's atoms (`members`, ascending) get local ids 1..n, then the atoms of
// other parts that its clauses touch (`held`, ascending) ids n+1..n+h.  The
// clauses are part_clauses' with their literals over local ids, sorted;
// sub.global maps local ids back.  The same network as extract_subnetwork
// over members then held and part_clauses' list, without that list.
struct HeldPart {
  SubNetwork sub;
  std::vector<int32_t> held;
};
HeldPart extract_held_part(const mln::Network& net, const std::vector<int32_t>& part_of, int p,
                           const std::vector<int32_t>& members);

}  // namespace mln::solver
