// Balanced partitions of a large component's atom graph (METIS), and the
// Gauss-Seidel scheme that solves a split component (docs/tuffy-reference.md
// section 6.3).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "format/network.hpp"

namespace mln::solver {

// Part (0..k-1) of each atom of `net` (by atom id, [0] unused), from
// METIS_PartGraphKway on the graph where atoms sharing a clause are adjacent
// (a clique per clause of <= 8 literals, a star for longer ones).  Falls back
// to contiguous id ranges if METIS fails.
std::vector<int32_t> partition_atoms(const mln::Network& net, int k, uint64_t seed);

// Part (0..k-1) of each atom without METIS, for components too large for
// its graph (METIS builds a clique per clause, which takes minutes and
// gigabytes on RC-sized components; docs/solver/base.md).  One pass over
// the atoms in id order, each placed in the part where most of its already
// placed neighbours are, weighted by the room left (Stanton and Kliot's
// linear deterministic greedy, KDD 2012; parts hold at most 5% over n / k
// atoms), in blocks whose neighbour counts are taken on threads.  Deterministic, whatever the threads; hand-written
// because no packaged library streams a partition (METIS and KaHIP need
// the graph).
std::vector<int32_t> partition_atoms_streaming(const mln::Network& net, int k);

// Solves one (sub)network from `init` and returns its best state, by atom
// id.  `flips` is the per-try budget.
using SubSolver = std::function<std::vector<uint8_t>(const mln::Network& net, const std::vector<uint8_t>& init,
                                                     int64_t flips, uint64_t seed)>;

struct GaussSeidelStats {
  int partitions = 0;
  int rounds_run = 0;
};

// Splits `net` into k parts and runs `rounds` Gauss-Seidel rounds: each round
// visits the parts in a random order and solves each with the other parts'
// atoms held at their current values; the best whole-network state over the
// rounds is returned (by atom id).  `flips` is the network's per-try budget,
// shared out per round and per part by atom count (minimum 4).  `stop` is
// polled between parts.
std::vector<uint8_t> solve_gauss_seidel(const mln::Network& net, const std::vector<uint8_t>& init, int k,
                                        int rounds, int64_t flips, uint64_t seed, const SubSolver& solve_part,
                                        const std::function<bool()>& stop, GaussSeidelStats* stats);

}  // namespace mln::solver
