// Internal to ilp_map.cpp (built with COIN-OR CBC only): what stops CBC
// and Clp inside a solve -- the caller's stop token, the deadline, and the
// stall rule (IlpOptions::stop_when_stalled, GapClosing).
#pragma once

#include <chrono>
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
  GapClosing closing;
  double gap = std::numeric_limits<double>::infinity();
  bool stalled = false;
  bool check() {
    if (!stalled && !closing.still_closing(gap)) stalled = true;
    return stalled;
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
      progress_->gap = model_->bestSolution() ? model_->getObjValue() - model_->getBestPossibleObjValue()
                                              : std::numeric_limits<double>::infinity();
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
