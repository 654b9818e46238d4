// mln.ground through live grounding (issue #62): each backend keeps, per
// program, the LiveGrounder state of the network it stored last, and a
// later grounding of the same program (mln.refresh, CALL mln.solve on a
// stale program, mln.ground again) moves that state to the new input
// instead of grounding from scratch.  A program's first grounding is from
// scratch unless KBMC's candidates are many (then the live build is the
// faster grounding); a network of more than 10^6 clauses is from scratch.  The network it stores equals
// ground()'s as a multiset (ground/live.hpp).
//
// The state is used only while it is the stored network's: each live
// grounding writes a fresh nonce into mln.programs.ground_stats ("live"),
// and the state is trusted only when the stored nonce is its own (another
// session's grounding, or a rolled-back transaction, leaves a different
// one), for the same program text, query and unit-propagation setting.
// Otherwise it is built again from the input (about the cost of a
// grounding).  GUC mln.live_grounding turns the path off.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ground/grounder.hpp"
#include "ground/live.hpp"
#include "pg/program_ctx.hpp"
#include "pg/spi.hpp"

namespace mln::pg {

extern bool guc_live_grounding;

struct LiveRun {
  bool used = false;    // the network came from the live state
  bool built = false;   // the state was built from scratch (else updated)
  std::string why_not;  // when not used: why
  std::string nonce;    // what ground_stats must carry for the state to be trusted next time
  ground::LiveDelta delta;  // its touched_atoms: ids of the new network
  // The previous MAP answer's true atoms, by id of the new network: where
  // the state was updated and the caller gave that answer (carried).
  bool carried = false;
  std::vector<int32_t> carried_true;
  double seconds = 0;   // building or updating the state, and its network
  std::string json() const;  // ground_stats' "live" member
};

// Grounds `in` (its program: ctx.prog) through this backend's state for
// ctx.name when the program and options are maintained live; false (and
// run.why_not) when not, and the caller grounds from scratch.  A failure
// drops the state.  `previous_true`: the true atoms of the stored
// network's MAP answer (its ids), or null.
bool ground_live(Spi& spi, const ProgramCtx& ctx, ground::GroundInput& in, const ground::GroundOptions& opts,
                 ground::GroundOutput& out, LiveRun& run, const std::vector<int32_t>* previous_true = nullptr);

// The MAP answer on the stored network (issue #62): the true atoms of
// _map (ids, and predicate and arguments), and the cost and bound of the
// job that wrote it (_map_info), read before a grounding drops them.
// `have` is false where no MAP answer was written since the network was
// stored (or it predates _map_info).
struct StoredAnswer {
  bool have = false;
  std::vector<int32_t> true_atoms;
  std::vector<std::pair<int32_t, std::vector<int32_t>>> true_keys;  // (pred, args) of each
  double cost = 0;
  bool have_bound = false;
  double bound = 0;
  bool optimal = false;
};
StoredAnswer read_stored_answer(Spi& spi, const std::string& schema);

// That answer on the new network: by id where the live state was updated
// (with the atoms the change touched), else by predicate and arguments
// (the touched atoms unknown).
struct CarriedAnswer {
  bool have = false;
  std::vector<int32_t> true_atoms;  // ids of the new network
  bool touched_known = false;
  std::vector<int32_t> touched;
};
CarriedAnswer carry_answer(const StoredAnswer& answer, const LiveRun& run, const ground::GroundOutput& out);

// The carried answer into <schema>._carried (atom, truth, touched), which
// the worker's next MAP job reads (solver/worker, read_live_change): from
// it, and where the touched atoms are known, searching only their
// components.  Call after the network is stored.  carried_json is
// ground_stats' "carried" member (the answer's cost and bound), "null"
// without one.
void store_carried(Spi& spi, const std::string& schema, const CarriedAnswer& carried);
std::string carried_json(const CarriedAnswer& carried, const StoredAnswer& answer);

}  // namespace mln::pg
