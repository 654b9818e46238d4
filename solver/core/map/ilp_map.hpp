// Exact MAP by integer linear programming (COIN-OR CBC) with RockIt's
// cutting-plane inference (the bounds it starts from: core/bound/lp_bound.hpp).
//
// The weighted MaxSAT objective of a ground network as an ILP (minimise):
//   x_a in {0,1} per atom;
//   w > 0, one literal l:   w * (1 - l)                        (no row)
//   w > 0, literals L:      w * z,  sum_{l in L} l + z >= 1,   z in [0,1]
//   w < 0, one literal l:   |w| * l                             (no row)
//   w < 0, literals L:      |w| * z, z >= l for each l in L,    z in [0,1]
// where l is x_a or 1 - x_a.  z needs no integrality: for integral x the
// minimum puts it at 0 or 1.  Hard clauses keep their (finite) weight, so
// the ILP's optimum is exactly the network's optimum under Tuffy's cost,
// also when hard clauses conflict.
//
// Cutting-plane inference (Riedel 2008; RockIt, Noessner et al. 2013):
// dropping clauses from the ILP can only lower its optimum (a clause's cost
// is >= 0), so the optimum over a subset of the clauses is a lower bound.
// Start from the clauses the starting state violates, solve, and add every
// clause the ILP's answer violates, until it violates none of the clauses
// left out: then its answer is optimal for the whole network.
//
// No database and no CUDA here.  Built only when CBC was found
// (MLN_HAVE_CBC); otherwise ilp_available() is false and solve_ilp throws.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/network.hpp"
#include "core/base/run_control.hpp"
#include "core/bound/closing.hpp"
#include "core/bound/lp_bound.hpp"

namespace mln::solver {

struct IlpOptions {
  // The caller's time cap for the whole solve (all rounds); 0 = none.
  // Where it ends a solve, IlpOutcome::timed_out says so: the outcome then
  // depends on the machine's speed.
  double time_limit_s = 0;
  // Simplex work for the whole solve (cbc_stop.hpp's CbcProgress: rows and
  // columns times iterations, nodes counted as passes); 0 = none.  The
  // deterministic budget: where it ends the solve, a rerun ends at the same
  // point.
  double work_limit = 0;
  int max_rounds = 200;      // cutting-plane rounds at most
  bool cutting_plane = true; // false: every clause in the ILP from the start
  StopToken* stop = nullptr; // polled between rounds and inside CBC
  // Stop CBC's branch and bound once its gap (incumbent minus best possible)
  // stops closing (GapClosing, closing.hpp): the default path's exact path,
  // which runs after the walk, under ilp_seconds as a cap.
  bool stop_when_stalled = false;
  double stall_window = 1e8;  // its window for stop_when_stalled, in work units (work_limit's)
};

struct IlpOutcome {
  std::vector<uint8_t> best;  // best state found, by atom id (size num_atoms + 1)
  double cost = 0;            // its exact cost on the whole network
  double bound = 0;           // a lower bound on the optimum (<= cost)
  bool optimal = false;       // proven: cost == optimum (within 1e-9 relative)
  bool finished = false;      // the rounds ended (proof or a stop rule), not cut by time or stop
  int rounds = 0;             // ILPs solved
  int64_t clauses_used = 0;   // clauses in the last ILP
  double work = 0;            // work units spent (IlpOptions::work_limit's)
  bool timed_out = false;     // the time cap (time_limit_s) ended or skipped a round
  std::string status;         // a short human-readable account
};

// True when this library was built with CBC.
bool ilp_available();

// The optimum of `net` (weighted MaxSAT, Tuffy's cost), starting from
// `start` (by atom id, size num_atoms + 1; empty = all false).  The state
// returned is never worse than `start`.  Throws std::runtime_error when
// built without CBC.
IlpOutcome solve_ilp(const mln::Network& net, const std::vector<uint8_t>& start, const IlpOptions& opts);

}  // namespace mln::solver
