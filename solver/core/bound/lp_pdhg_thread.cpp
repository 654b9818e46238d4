// PdhgThread (lp_pdhg.hpp): the PDHG bound on a thread of its own, and the
// rule that ends it once the work beside it has ended.
#include <cmath>
#include <limits>
#include <system_error>
#include <utility>

#include "core/bound/closing.hpp"
#include "core/bound/lp_pdhg.hpp"

namespace mln::solver {

PdhgThread::PdhgThread(const mln::Network& net, PdhgOptions po, StopToken* parent) : stop_(parent, &cancel_) {
  po.stop = &stop_;
  po.bound_target = &target_;
  po.progress = [this](const PdhgProgress& pr) {
    bound_ = pr.bound;
    std::lock_guard<std::mutex> lock(mu_);
    history_.push_back(pr);
    if (finishing_) scan_locked();
  };
  try {
    th_ = std::thread([this, &net, po] {
      try {
        out_ = lp_bound_pdhg(net, po);
        ok_ = true;
        bound_ = out_.bound;
        if (!out_.state.empty()) state_cost_ = out_.state_cost;
      } catch (...) {  // out of memory: the caller's other bound stands
      }
      done_ = true;
    });
    started_ = true;
  } catch (const std::system_error&) {  // no thread: the caller solves in place or does without
  }
}

bool PdhgThread::join(PdhgOutcome& out) {
  if (th_.joinable()) th_.join();
  if (!ok_) return false;
  out = std::move(out_);
  ok_ = false;
  return true;
}

void PdhgThread::scan_locked() {
  for (; stop_at_ < 0 && scanned_ < history_.size(); ++scanned_) {
    const PdhgProgress& e = history_[scanned_];
    const double gap = finish_target_ - e.bound;
    bool stop = e.bound >= finish_target_;
    if (!stop && gap < ref_gap_ &&
        (ref_gap_ == std::numeric_limits<double>::infinity() || ref_gap_ - gap >= GapClosing::kShare * ref_gap_)) {
      ref_gap_ = gap;
      ref_it_ = e.iterations;
    } else if (!stop && e.iterations - ref_it_ >= window_) {
      stop = true;
    }
    if (stop) {
      stop_at_ = static_cast<long long>(scanned_);
      cancel_ = true;
    }
  }
}

bool PdhgThread::finish(double target, int64_t window, PdhgOutcome& out) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    finish_target_ = target;
    window_ = window;
    finishing_ = true;
    target_ = target;
    scan_locked();
  }
  if (th_.joinable()) th_.join();
  if (!ok_) return false;
  out = std::move(out_);
  ok_ = false;
  std::lock_guard<std::mutex> lock(mu_);
  if (stop_at_ < 0) return true;  // the solve's own end
  const PdhgProgress& e = history_[static_cast<size_t>(stop_at_)];
  out.bound = e.bound;
  out.primal = e.primal;
  out.iterations = e.iterations;
  out.converged = e.bound >= target;
  out.state.clear();
  out.state_cost = std::numeric_limits<double>::infinity();
  return true;
}

void PdhgThread::cancel_and_join() {
  cancel_ = true;
  if (th_.joinable()) th_.join();
}

}  // namespace mln::solver
