// When a bound or a proof that runs on after the walk has ended stops
// (issue #39): while it still closes the gap between the answer and the
// bound by at least kShare of what is left every window, it goes on; once a
// window passes without that, it stops.  One rule for the PDHG bound
// (PdhgThread::wait_while_closing) and CBC's branch and bound (ilp_map.cpp).
#pragma once

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

  explicit GapClosing(double window_s = kWindowS) : window_s_(window_s), since_(Clock::now()) {}
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
