// Incremental maintenance of an evaluated Datalog program (docs/datalog.md,
// "Maintained outputs"): from the relations of an evaluation and the rows
// inserted into and deleted from its input relations, the rows each derived
// relation gains and loses, so that the state with them applied equals
// evaluate() over the changed inputs.  Pure C++: no PostgreSQL.
//
// Stratum by stratum, in order, by DRed (Gupta, Mumick and Subrahmanian,
// "Maintaining views incrementally", SIGMOD 1993), over the operator
// engine's joins (eval_rule):
//  1. over-delete: what a deleted row of a lower relation supports (or,
//     through a negated atom, an inserted one), closed semi-naively over the
//     stratum, all against the old state;
//  2. re-derive: of those, the rows that still have a derivation from the
//     rest (each rule joined with the over-deleted rows of its head);
//  3. insert: what the inserted rows of lower relations support (or,
//     through a negated atom, a deleted one) and the re-derived rows, closed
//     semi-naively against the new state.
// The work follows the change and what it reaches, not the relations' size
// (a rule's join builds on its delta side).  A stratum with an aggregate
// in a head, or one where a deletion over-deletes more than a sixteenth of
// its rows (DRed's worst case: re-deriving costs more than evaluating), is
// evaluated again and its changes are the difference.
#pragma once

#include <vector>

#include "ground/datalog_eval.hpp"

namespace mln::ground::datalog {

// Rows one relation gains (ins) and loses (del).
struct RelationChange {
  gpu::Relation ins, del;
};

struct MaintainStats {
  int strata_changed = 0;    // strata with a changed relation
  int strata_evaluated = 0;  // of those, evaluated again (an aggregate, or a deletion that reaches far)
  uint64_t over_deleted = 0, rederived = 0, inserted = 0;  // rows of derived relations, all strata
};

// `state` holds every relation of p after an evaluation (inputs and derived
// relations, duplicate-free: what evaluate() returns) and is updated in
// place.  input_changes[r] (indexed as p.rels; entries of derived relations
// and null relations are ignored) are rows inserted into and deleted from
// input relation r: they are normalised against the state first (an
// inserted row already there, or a deleted one that is not, changes
// nothing; a row both inserted and deleted is inserted).  Returns every
// relation's change (inputs' normalised, derived ones computed), which
// `state` now includes.  opts.progress is called after each semi-naive step
// (a cancel throws there).  Throws as evaluate() does.
std::vector<RelationChange> maintain(gpu::Engine& eng, const dl::Program& p, std::vector<gpu::Relation>& state,
                                     const std::vector<RelationChange>& input_changes, const EvalOptions& opts,
                                     MaintainStats* stats = nullptr);

}  // namespace mln::ground::datalog
