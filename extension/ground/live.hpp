// Live grounding (issue #62): a ground network kept equal to ground()'s as
// the evidence and the type domains change, at a cost that follows the
// change rather than the data.
//
// The state is Tuffy's tables held on the host with hash indexes: each
// predicate's evidence, its KBMC candidates (implicit: the relevant
// patterns over the type domains), the active atoms, and the consolidated
// clauses with the multiset of weights that merged into each.  An update
// moves the active set by DRed (over-delete every atom with a derivation
// that touches a changed tuple, then re-derive and insert to the fixpoint)
// and re-grounds only the bindings that touch a changed tuple or an atom
// whose activity changed, each evaluated tuple by tuple under the old and
// the new state (the §5.4/§5.5 conditions, docs/tuffy-reference.md).  The
// network it gives equals ground()'s on the same input as a multiset of
// clauses over atoms named by their tuples; atom ids differ, and stay the
// same for an atom across updates.
//
// Programs outside what it maintains (live_unsupported) are grounded again
// in full by the caller.  Pure C++, no PostgreSQL.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ground/grounder.hpp"

namespace mln::ground {

// Why `in` with `opts` is not maintained live ("" when it is): EXIST
// clauses, embedded weights, clause conditions, ':-' and scoping rules,
// soft evidence, key constraints, -cw, learning and -activateAll.
std::string live_unsupported(const GroundInput& in, const GroundOptions& opts);

// What one update changed.
struct LiveDelta {
  int64_t tuples_changed = 0;     // evidence rows and candidate tuples whose row differs
  int64_t atoms_overdeleted = 0;  // DRed's over-deletion
  int64_t atoms_added = 0, atoms_removed = 0;
  int64_t bindings = 0;           // clause bindings evaluated again
  int64_t clauses_added = 0, clauses_removed = 0, clauses_reweighted = 0;
  std::vector<int32_t> touched_atoms;  // ids of atoms in a changed clause or whose activity changed
  double seconds = 0;
};

class LiveGrounder {
 public:
  // Grounds `in` from scratch (in.program must outlive this object; throws
  // lang::LangError where live_unsupported() is not empty).  With
  // max_clauses > 0, a network of more consolidated clauses throws
  // std::length_error, in the build or in an update (the state is then not
  // to be used again).
  LiveGrounder(const GroundInput& in, const GroundOptions& opts = {}, int64_t max_clauses = 0);

  // The candidate tuples KBMC materialises for `in` (the relevant patterns'
  // cross products over the type domains), which ground()'s closure reads
  // and this object never enumerates: where they are many, building this
  // object is the faster grounding (entity resolution's query over every
  // pair of records).
  static double candidate_tuples(const GroundInput& in, const GroundOptions& opts = {});
  ~LiveGrounder();
  LiveGrounder(const LiveGrounder&) = delete;
  LiveGrounder& operator=(const LiveGrounder&) = delete;

  // Moves to `in`: the same program and queries, any evidence and domains.
  // Throws lang::LangError where the new input is not maintained (soft
  // evidence appeared); the state is then as before the call.
  LiveDelta update(const GroundInput& in);

  // The network as ground() would give it, over this object's atom ids:
  // atoms[id - 1] for every id ever given; an atom no longer active has
  // pred -1 and is in no clause.  With `dense`, the active atoms alone,
  // numbered as ground() numbers them, and id_map[id] their new ids (0:
  // inactive): the network is then ground()'s array for array.  Clauses in
  // consolidate()'s order, the true query evidence, and unit propagation as
  // opts asked.
  GroundOutput output(bool dense = false, std::vector<int32_t>* id_map = nullptr) const;

  int64_t active_atoms() const;
  int64_t clauses() const;

  struct State;  // ground/live_state.hpp, internal

 private:
  std::unique_ptr<State> s_;
};

}  // namespace mln::ground
