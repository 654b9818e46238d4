// Internal to ilp_map.cpp (built with COIN-OR CBC only): what stops CBC
// and Clp inside a solve -- the caller's stop token, the deadline, and the
// stall rule (IlpOptions::stop_when_stalled, GapClosing).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>

#include <CbcEventHandler.hpp>
#include <CbcModel.hpp>
#include <ClpEventHandler.hpp>

#include "core/base/run_control.hpp"
#include "core/map/closing.hpp"

namespace mln::solver::cbc_stop {

using Clock = std::chrono::steady_clock;

// CBC's progress for the stall rule (IlpOptions::stop_when_stalled): its
// gap (incumbent minus best possible; the objective's constant cancels) as
// of its last node, +infinity before the first; polled by GapClosing at
// every node and, through the root's cuts, where no node event comes, at
// Clp's iterations (ClpStop).  A root that finds no incumbent and proves
// nothing for a window is stalled too.
struct CbcProgress {
  CbcProgress(double window_s, double seconds_left)
      : closing(window_s), has_deadline(seconds_left > 0),
        deadline(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(seconds_left > 0 ? seconds_left : 0))) {}
  GapClosing closing;
  bool has_deadline;
  Clock::time_point deadline;
  // The start's objective (the walk's answer).  With a start, the gap is
  // measured from it, so only CBC's bound closes it: CBC's heuristics
  // improving an incumbent still worse than the walk's (its own, when it
  // cannot use the start) kept a futile search going (mis-20000: 10.6 s),
  // and its incumbent's value after a stop can be far off (seen: 5% below
  // the cost of the state it returned).  Without a start, CBC's incumbent.
  double start_objective = std::numeric_limits<double>::infinity();
  double gap = std::numeric_limits<double>::infinity();
  bool stalled = false;
  // The first finite gap and when it came, for the projection below.
  double first_gap = std::numeric_limits<double>::infinity();
  Clock::time_point first_at;
  bool check() {
    if (!stalled && (!closing.still_closing(gap) || out_of_reach())) stalled = true;
    return stalled;
  }
  // After a window of nodes: whether the gap, closing at its average rate
  // so far, would still be open at the deadline.  A bound that rises 1% of
  // the gap per window passes GapClosing but needs minutes where seconds
  // are left (mis-20000: 20 of 2,229 in 3 s, the whole 10 s spent).
  bool out_of_reach() {
    if (!std::isfinite(gap) || !has_deadline) return false;
    const Clock::time_point now = Clock::now();
    if (!std::isfinite(first_gap)) {
      first_gap = gap;
      first_at = now;
      return false;
    }
    const double span = std::chrono::duration<double>(now - first_at).count();
    if (span < closing.window_s() || gap <= 0) return false;
    const double rate = (first_gap - gap) / span;
    return rate <= 0 || gap / rate > std::chrono::duration<double>(deadline - now).count();
  }
};

// Stops CBC when the caller's token fires or its progress has stalled.
// CBC clones the handler into the models it solves: the clones share
// `progress`.
class StopHandler : public CbcEventHandler {
 public:
  StopHandler(StopToken* stop, CbcProgress* progress) : stop_(stop), progress_(progress) {}
  CbcAction event(CbcEvent e) override {
    if (stop_ && stop_->should_stop()) return stop;
    if (progress_ && e == node && model_) {
      double best = progress_->start_objective;
      if (!std::isfinite(best) && model_->bestSolution()) best = model_->getObjValue();
      progress_->gap = best - model_->getBestPossibleObjValue();
      if (progress_->check()) return stop;
    }
    return noAction;
  }
  CbcEventHandler* clone() const override { return new StopHandler(*this); }

 private:
  StopToken* stop_;
  CbcProgress* progress_;
};

// Stops Clp's simplex (the root LP of a large ILP, or the LP relaxation can
// take minutes, and CBC's -sec is not checked inside it) when the caller's
// token fires or the deadline passes.
class ClpStop : public ClpEventHandler {
 public:
  ClpStop(StopToken* stop, double seconds, CbcProgress* progress = nullptr)
      : stop_(stop), progress_(progress), has_deadline_(seconds > 0),
        deadline_(Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                                     seconds > 0 ? seconds : 0))) {}
  int event(Event e) override {
    if (e != endOfIteration || ++count_ % 64 != 0) return -1;
    if ((stop_ && stop_->should_stop()) || (has_deadline_ && Clock::now() >= deadline_)) return 0;
    if (progress_ && progress_->check()) return 0;
    return -1;
  }
  ClpEventHandler* clone() const override { return new ClpStop(*this); }

 private:
  StopToken* stop_;
  CbcProgress* progress_;
  bool has_deadline_;
  Clock::time_point deadline_;
  uint64_t count_ = 0;
};

}  // namespace mln::solver::cbc_stop
