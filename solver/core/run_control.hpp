// Stop and progress plumbing shared by the schedulers and the walkers.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace mln::solver {

// Cancel flag + deadline, polled by the walkers every few thousand steps.
class StopToken {
 public:
  using Clock = std::chrono::steady_clock;
  StopToken(std::atomic<bool>* cancel, double timeout_s)
      : cancel_(cancel), has_deadline_(timeout_s > 0),
        deadline_(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(timeout_s > 0 ? timeout_s : 0))) {}
  StopToken() : StopToken(nullptr, 0.0) {}
  // A token that also stops when `parent` does (e.g. one walk of a race
  // under the run-wide token).
  StopToken(StopToken* parent, std::atomic<bool>* cancel) : StopToken(cancel, 0.0) { parent_ = parent; }
  // True once the caller cancelled or the deadline passed (sticky).
  bool should_stop() {
    if (tripped_.load(std::memory_order_relaxed)) return true;
    if ((cancel_ && cancel_->load(std::memory_order_relaxed)) || (parent_ && parent_->should_stop()) ||
        (has_deadline_ && Clock::now() >= deadline_)) {
      tripped_.store(true, std::memory_order_relaxed);
      return true;
    }
    return false;
  }
  // True if should_stop() has ever returned true.
  bool tripped() const { return tripped_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool>* cancel_;
  StopToken* parent_ = nullptr;
  bool has_deadline_;
  Clock::time_point deadline_;
  std::atomic<bool> tripped_{false};
};

// Aggregates per-task best costs and flips, and calls the user's progress
// callback (serialised, at most every interval_s, 100 ms by default).
class ProgressSink {
 public:
  using Fn = std::function<void(double, int64_t)>;
  ProgressSink(Fn fn, size_t tasks, double interval_s = 0.1)
      : fn_(std::move(fn)), best_(tasks, 0.0),
        interval_(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double>(interval_s))) {}
  // Task `t` starts at cost `c` (no callback).
  void start(size_t t, double c) {
    std::lock_guard<std::mutex> lock(mu_);
    total_ += c - best_[t];
    best_[t] = c;
  }
  // Records task `t`'s current best cost and `new_flips` more flips.
  void report(size_t t, double best_cost, int64_t new_flips) {
    flips_.fetch_add(new_flips, std::memory_order_relaxed);
    if (!fn_) return;
    std::lock_guard<std::mutex> lock(mu_);
    total_ += best_cost - best_[t];
    best_[t] = best_cost;
    auto now = std::chrono::steady_clock::now();
    if (now - last_ < interval_) return;
    last_ = now;
    fn_(total_, flips_.load(std::memory_order_relaxed));
  }
  int64_t flips() const { return flips_.load(std::memory_order_relaxed); }

 private:
  Fn fn_;
  std::mutex mu_;
  std::vector<double> best_;
  double total_ = 0;
  std::atomic<int64_t> flips_{0};
  std::chrono::steady_clock::duration interval_;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace mln::solver
