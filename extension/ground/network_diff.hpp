// The atoms a grounding touched, from the network stored before it and the
// new one (issue #62).  A live update knows them (LiveDelta::touched_atoms);
// where the new network came otherwise (a grounding from scratch, another
// session's, a state built afresh), they are found by comparing the two
// networks: atoms matched by predicate and arguments, clauses as multisets
// of (literals, weight).  A clause of one network without an equal clause
// in the other touches its atoms, and so does a new atom.  Then a component
// of the new network without a touched atom has exactly the clauses of one
// component of the old network over the same atoms (a clause over its atoms
// that changed would have touched one), so an answer computed on it is
// still its answer (solver/core/base/touched.hpp).  Pure C++, no
// PostgreSQL.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "format/network.hpp"

namespace mln::ground {

using AtomKey = std::pair<int32_t, std::vector<int32_t>>;  // predicate, arguments

struct AtomKeyHash {
  size_t operator()(const AtomKey& k) const {
    uint64_t h = static_cast<uint32_t>(k.first) * 0x9e3779b97f4a7c15ULL;
    for (int32_t v : k.second) h = (h ^ static_cast<uint32_t>(v)) * 0x100000001b3ULL;
    return static_cast<size_t>(h);
  }
};

// Atom ids by key: keys[id - 1]'s id.
std::unordered_map<AtomKey, int32_t, AtomKeyHash> index_atoms(const std::vector<AtomKey>& keys);

struct NetworkDiff {
  std::vector<int32_t> old_to_new;  // by old atom id ([0] = 0): the new id, 0 where the atom is gone
  std::vector<int32_t> touched;     // new atom ids, ascending
  int64_t clauses_added = 0, clauses_removed = 0;  // unmatched clauses of the new, and of the old network
};

// old_atoms[id - 1] and new_atoms[id - 1]: each network's atoms by id.
NetworkDiff diff_networks(const std::vector<AtomKey>& old_atoms, const mln::ClauseSet& old_clauses,
                          const std::vector<AtomKey>& new_atoms, const mln::ClauseSet& new_clauses);

}  // namespace mln::ground
