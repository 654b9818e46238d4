// When a bound or a proof that runs on after the walk has ended stops
// (issue #39): while it still closes the gap between the answer and the
// bound by at least kShare of what is left every window, it goes on; once a
// window passes without that, it stops.  One rule for the PDHG bound
// (PdhgThread::finish, windows of iterations) and CBC's branch and bound
// (ilp_map.cpp, windows of simplex work).  Windows are counts of the
// solver's own work, never seconds: where the rule stops a solve then does
// not depend on the machine's speed or load, and a seeded job repeats its
// answer (issue #60).
#pragma once

#include <algorithm>
#include <limits>

#include "core/base/gap.hpp"

namespace mln::solver {

class GapClosing {
 public:
  static constexpr double kShare = 0.01;

  // The exact path after the walk (solver auto) runs only where the LP
  // relaxation's optimum is within kExactMaxGap of the walk's answer.  A
  // wider gap is an integrality gap that CBC's cuts and branching do not
  // close in the seconds after a walk: generated independent sets (LP gap
  // 18%) spent 1.3 s of root cuts and gained nothing (docs/solver/map.md);
  // solver ilp still runs it.  Components of at most kExactAnyGapClauses
  // clauses try it whatever the gap: CBC proves those in milliseconds.
  static constexpr double kExactMaxGap = 0.10;
  static constexpr long long kExactAnyGapClauses = 1000;
  static bool exact_may_close(double cost, double lp_bound, long long clauses) {
    return clauses <= kExactAnyGapClauses || relative_gap(cost, lp_bound) <= kExactMaxGap;
  }

  explicit GapClosing(double window) : window_(window) {}
  double window() const { return window_; }
  // Records the gap (answer minus bound; +infinity while one is missing)
  // after `work` units of the solver's work (a count that never falls);
  // false once `window` units passed without closing kShare of the gap at
  // the window's start.
  bool still_closing(double gap, double work) {
    if (gap < ref_ && (ref_ == std::numeric_limits<double>::infinity() || ref_ - gap >= kShare * ref_)) {
      ref_ = gap;
      since_ = work;
      return true;
    }
    return work - since_ < window_;
  }

 private:
  double window_;
  double ref_ = std::numeric_limits<double>::infinity();
  double since_ = 0;
};

}  // namespace mln::solver
