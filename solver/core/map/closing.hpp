// When a bound or a proof that runs on after the walk has ended stops
// (issue #39): while it still closes the gap between the answer and the
// bound by at least kShare of what is left every window, it goes on; once a
// window passes without that, it stops.  One rule for the PDHG bound
// (PdhgThread::wait_while_closing) and CBC's branch and bound (ilp_map.cpp).
#pragma once

#include <algorithm>
#include <chrono>
#include <limits>

namespace mln::solver {

class GapClosing {
 public:
  using Clock = std::chrono::steady_clock;
  // 1% every 3 s: longer than the time between two of PDHG's bound
  // evaluations on large networks, and than CBC's node events far apart.
  static constexpr double kShare = 0.01;
  static constexpr double kWindowS = 3.0;

  // After a search of search_s seconds, the window is as long as the search
  // was, between kMinWindowS and kWindowS: a proof that closes nothing for
  // as long as the answer took is given up, so a small network's futile
  // proof costs the job at most about its search time again (mis-2000 on 2
  // cores: 3.7 s with the fixed 3 s window, where the walk alone ends at
  // 0.9 s; docs/solver/map.md).  kMinWindowS: CBC's root and first nodes on
  // class-sized models.
  static constexpr double kMinWindowS = 0.5;
  static double window_after(double search_s) { return std::clamp(search_s, kMinWindowS, kWindowS); }

  // The exact path after the walk (solver auto) runs only where the LP
  // relaxation's optimum is within kExactMaxGap of the walk's answer.  A
  // wider gap is an integrality gap that CBC's cuts and branching do not
  // close in the seconds after a walk: generated independent sets (LP gap
  // 18%) spent 1.3 s of root cuts and gained nothing (docs/solver/map.md);
  // solver ilp still runs it.  Components of at most kExactAnyGapClauses
  // clauses try it whatever the gap: CBC proves those in milliseconds.
  static constexpr double kExactMaxGap = 0.10;
  static constexpr long long kExactAnyGapClauses = 1000;
  static double relative_gap(double cost, double bound) { return (cost - bound) / std::max(cost < 0 ? -cost : cost, 1.0); }
  static bool exact_may_close(double cost, double lp_bound, long long clauses) {
    return clauses <= kExactAnyGapClauses || relative_gap(cost, lp_bound) <= kExactMaxGap;
  }

  explicit GapClosing(double window_s = kWindowS) : window_s_(window_s), since_(Clock::now()) {}
  double window_s() const { return window_s_; }
  // Records the gap now (answer minus bound; +infinity while one is
  // missing); false once a whole window passed without closing kShare of
  // the gap at the window's start.
  bool still_closing(double gap) {
    const auto now = Clock::now();
    if (gap < ref_ && (ref_ == std::numeric_limits<double>::infinity() || ref_ - gap >= kShare * ref_)) {
      ref_ = gap;
      since_ = now;
      return true;
    }
    return std::chrono::duration<double>(now - since_).count() < window_s_;
  }

 private:
  double window_s_;
  double ref_ = std::numeric_limits<double>::infinity();
  Clock::time_point since_;
};

}  // namespace mln::solver
