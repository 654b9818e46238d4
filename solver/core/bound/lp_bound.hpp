// Lower bounds on a network's optimum that need no search: the unit bound
// (one pass) and the LP relaxation of the MAP ILP (Clp), whose rounded
// solution is also a state.  The ILP itself and its exact path:
// core/map/ilp_map.hpp; the model they share: ilp_model.hpp.  No database
// and no CUDA here; without CBC (MLN_HAVE_CBC) the LP bound is the unit
// bound.
#pragma once

#include <cstdint>
#include <vector>

#include "format/network.hpp"
#include "core/base/run_control.hpp"

namespace mln::solver {

// Whether `bound` proves `cost` optimal: equal within 1e-9 of their
// magnitude (the solvers' floating-point tolerances; hard weights are 5.2e7).
bool proven_within_tolerance(double cost, double bound);

// A lower bound on the optimum of `net` that costs one pass: per atom, the
// cheaper of its two values counted over its unit clauses only, plus the
// cost of clauses with no literal.  (Every other clause costs >= 0.)
double unit_bound(const mln::Network& net);

// The LP relaxation of the MAP ILP (core/map/ilp_map.hpp gives its rows).
struct LpOutcome {
  double bound = 0;            // its optimum (a lower bound on the optimum), or unit_bound's
  bool solved = false;         // the LP finished; else bound is unit_bound's
  std::vector<uint8_t> state;  // its solution rounded (x >= 0.5), by atom id; empty unless solved
  bool integral = false;       // every x was 0 or 1: state is then an optimal answer
};
// Falls back to unit_bound when the LP does not finish within its
// iteration count (a multiple of its size) or the caller's time cap
// time_limit_s (0: none), or CBC is not built in.  On RC-like MLNs the LP is often integral: its
// solution is then the optimum, proven without branching.
LpOutcome lp_relaxation(const mln::Network& net, double time_limit_s, StopToken* stop = nullptr);

// lp_relaxation's bound alone (never below unit_bound's).
double lp_bound(const mln::Network& net, double time_limit_s, bool* solved = nullptr);

}  // namespace mln::solver
