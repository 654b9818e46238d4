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
  // Where the state was updated (used, not built): the stored network's
  // atom ids to the new network's (0: gone), by stored id ([0] = 0), for
  // carrying an answer.
  std::vector<int32_t> old_to_new;
  double seconds = 0;   // building or updating the state, and its network
  std::string json() const;  // ground_stats' "live" member
};

// Grounds `in` (its program: ctx.prog) through this backend's state for
// ctx.name when the program and options are maintained live; false (and
// run.why_not) when not, and the caller grounds from scratch.  A failure
// drops the state.
bool ground_live(Spi& spi, const ProgramCtx& ctx, ground::GroundInput& in, const ground::GroundOptions& opts,
                 ground::GroundOutput& out, LiveRun& run);

// Whether ground_live would move this backend's state for ctx.name (the
// state is there and trusted) rather than build it or ground from scratch.
bool live_state_ready(Spi& spi, const ProgramCtx& ctx, const ground::GroundInput& in, const ground::GroundOptions& opts);

}  // namespace mln::pg
