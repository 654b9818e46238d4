// Connected components of the ground network (Tuffy's
// Partitioning.partitionAtoms, docs/tuffy-reference.md section 6.1).
#pragma once

#include <cstdint>
#include <vector>

#include "format/network.hpp"

namespace mln::solver {

struct Components {
  int32_t count = 0;
  std::vector<int32_t> comp_of_atom;    // by atom id (size num_atoms + 1; [0] = -1)
  std::vector<int32_t> index_in_comp;   // by atom id: 1-based position in its component's atom list
  std::vector<int64_t> atom_off;        // CSR: atoms of component k (ascending ids)
  std::vector<int32_t> atoms;
  std::vector<int64_t> clause_off;      // CSR: clause ids of component k (ascending)
  std::vector<int64_t> clauses;
  std::vector<uint8_t> has_query;       // component contains a query atom
  std::vector<int64_t> empty_clauses;   // clauses with no literal (constant cost, no component)

  int64_t num_atoms(int32_t k) const { return atom_off[k + 1] - atom_off[k]; }
  int64_t num_clauses(int32_t k) const { return clause_off[k + 1] - clause_off[k]; }
};

// Union-find over the atoms of each clause (unit clauses skipped, as Tuffy
// does).  Components are numbered largest first by Tuffy's size estimate
// (116 per atom + 108 + 4n per n-literal clause), ties by smallest atom id.
// An empty is_query marks every atom as a query atom.  With list_clauses
// false, `clauses` stays empty and clause_off only counts each component's
// clauses: the list is much of the pass on a giant component, and a spread
// plan needs the clauses only of the components it splits (plan_spread;
// docs/solver/spread.md).
Components find_components(const mln::Network& net, bool list_clauses = true);

}  // namespace mln::solver
