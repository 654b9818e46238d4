// Internal to ilp_map.cpp (built with COIN-OR CBC only): what stops CBC
// and Clp inside a solve -- the caller's stop token, the work budget, the
// stall rule (IlpOptions::stop_when_stalled, GapClosing) and the caller's
// time cap.
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
#include "core/bound/closing.hpp"

namespace mln::solver::cbc_stop {

using Clock = std::chrono::steady_clock;

// CBC's progress for the stall rule (IlpOptions::stop_when_stalled) and
// its work budget (IlpOptions::work_limit), both counted in simplex work,
// never in seconds: `work` grows by the model's rows and columns for every
// simplex iteration ClpStop sees (it checks every 64) and by kNodeWork
// passes for every node, so that where the rules stop CBC is a function of
// the model and CBC's own (single-threaded, deterministic) search.  The
// gap (incumbent minus best possible; the objective's constant cancels) is
// that of its last node, +infinity before the first; polled by GapClosing at
// every node and, through the root's cuts, where no node event comes, at
// Clp's iterations.  A root that finds no incumbent and proves nothing for a
// window is stalled too.  The deadline is the caller's time cap alone
// (IlpOptions::time_limit_s); `timed_out` records that it, not a rule of
// the work, ended the run.
struct CbcProgress {
  static constexpr double kNodeWork = 16;  // a node as this many simplex passes over the model
  CbcProgress(double window, double work_limit, double seconds_left, double model_size)
      : closing(window), work_limit(work_limit), has_deadline(seconds_left > 0), model_size(std::max(1.0, model_size)),
        deadline(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(seconds_left > 0 ? seconds_left : 0))) {}
  GapClosing closing;
  double work_limit;  // 0: none
  bool has_deadline;
  double model_size;
  Clock::time_point deadline;
  bool stall_rule = false;  // stop_when_stalled
  double work = 0;
  // The start's objective (the walk's answer).  With a start, the gap is
  // measured from it, so only CBC's bound closes it: CBC's heuristics
  // improving an incumbent still worse than the walk's (its own, when it
  // cannot use the start) kept a futile search going (mis-20000: 10.6 s),
  // and its incumbent's value after a stop can be far off (seen: 5% below
  // the cost of the state it returned).  Without a start, CBC's incumbent.
  double start_objective = std::numeric_limits<double>::infinity();
  double gap = std::numeric_limits<double>::infinity();
  bool stalled = false, out_of_work = false, timed_out = false;
  // The first finite gap and the work when it came, for the projection below.
  double first_gap = std::numeric_limits<double>::infinity();
  double first_work = 0;
  // `passes` more passes over the model; true once a rule or the deadline
  // says stop.
  bool check(double passes) {
    work += passes * model_size;
    if (has_deadline && !timed_out && Clock::now() >= deadline) timed_out = true;
    if (work_limit > 0 && work >= work_limit) out_of_work = true;
    if (stall_rule && !stalled && (!closing.still_closing(gap, work) || out_of_reach())) stalled = true;
    return stalled || out_of_work || timed_out;
  }
  // After a window of work: whether the gap, closing at its average rate so
  // far, would still be open when the work budget is spent.  A bound that
  // rises 1% of the gap per window passes GapClosing but needs far more than
  // the budget (mis-20000: 20 of 2,229 closed, the whole budget spent).
  bool out_of_reach() {
    if (!std::isfinite(gap) || work_limit <= 0) return false;
    if (!std::isfinite(first_gap)) {
      first_gap = gap;
      first_work = work;
      return false;
    }
    const double span = work - first_work;
    if (span < closing.window() || gap <= 0) return false;
    const double rate = (first_gap - gap) / span;
    return rate <= 0 || gap / rate > work_limit - work;
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
      if (progress_->check(CbcProgress::kNodeWork)) return stop;
    }
    return noAction;
  }
  CbcEventHandler* clone() const override { return new StopHandler(*this); }

 private:
  StopToken* stop_;
  CbcProgress* progress_;
};

// Stops Clp's simplex (the root LP of a large ILP, or the LP relaxation can
// take minutes, and CBC's limits are not checked inside it) when the
// caller's token fires, or CBC's progress (its work, the stall rule, the
// time cap) says stop.
class ClpStop : public ClpEventHandler {
 public:
  ClpStop(StopToken* stop, CbcProgress* progress = nullptr) : stop_(stop), progress_(progress) {}
  int event(Event e) override {
    if (e != endOfIteration || ++count_ % 64 != 0) return -1;
    if (stop_ && stop_->should_stop()) return 0;
    if (progress_ && progress_->check(64)) return 0;
    return -1;
  }
  ClpEventHandler* clone() const override { return new ClpStop(*this); }

 private:
  StopToken* stop_;
  CbcProgress* progress_;
  uint64_t count_ = 0;
};

}  // namespace mln::solver::cbc_stop
