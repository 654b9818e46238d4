// Stop and progress plumbing shared by the schedulers and the walkers.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace mln::solver {

// A run's device_used as the solvers report it: "cpu", "gpu" or "cpu+gpu"
// ("cpu" when neither ran).
inline const char* device_used_of(bool cpu, bool gpu) { return cpu && gpu ? "cpu+gpu" : gpu ? "gpu" : "cpu"; }
// The same for a text naming the devices that ran (device_used values,
// joined, or with more words: "gpu (GPU 1)").
inline const char* device_used_of(const std::string& named) {
  return device_used_of(named.find("cpu") != std::string::npos, named.find("gpu") != std::string::npos);
}

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
// callback (serialised, at most every interval_s, 100 ms by default) with
// the whole network's best cost so far: the sum over the tasks (solve_map's
// components) of each one's best so far, a task not yet searched at the
// cost it starts from.  The figure never rises: a task's value only falls
// (two walks racing on one task, or a walk restarting from the task's best,
// report costs above it), and each call passes the least total seen, so
// rounding (the walks' fixed-point costs against the exact ones that end a
// task) cannot lift it either.  The last call (finish) passes the answer's
// cost.
// Lock-free on the way in: a network of very many small components reports
// each of them twice from every CPU worker thread at once, and a mutex per
// report makes the threads queue on it (docs/solver/walk.md).  Each task's
// cost is swapped atomically and the difference added to the total, so the
// total is always the sum of the tasks' values; only the callback takes the
// lock (try_lock: a thread that finds it taken goes on).
class ProgressSink {
 public:
  using Fn = std::function<void(double, int64_t)>;
  ProgressSink(Fn fn, size_t tasks, double interval_s = 0.1)
      : fn_(std::move(fn)), best_(new std::atomic<double>[tasks]),
        interval_(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(interval_s)).count()) {
    for (size_t t = 0; t < tasks; ++t) best_[t].store(0.0, std::memory_order_relaxed);
  }
  // Task `t` starts at cost `c` (no callback).
  void start(size_t t, double c) { add(c - best_[t].exchange(c, std::memory_order_relaxed)); }
  // A cost that is part of the total but of no task (no callback).
  void add_fixed(double c) { add(c); }
  // Task `t`'s value now.
  double value(size_t t) const { return best_[t].load(std::memory_order_relaxed); }
  // Tasks ts[i] take the values cs[i], the total changing in one step: a
  // walk over several tasks at once (solve_map's GPU batches) moves their
  // values into one task's for the walk, and back after it.  The caller
  // owns these tasks meanwhile (no report for them from elsewhere).
  template <class Tasks>
  void assign(const Tasks& ts, const std::vector<double>& cs) {
    if (!fn_) return;
    double d = 0;
    for (size_t i = 0; i < cs.size(); ++i) d += cs[i] - best_[ts[i]].exchange(cs[i], std::memory_order_relaxed);
    add(d);
  }
  // Task `t`'s best cost so far is `best_cost` (kept if below its value),
  // and `new_flips` more flips were made.
  void report(size_t t, double best_cost, int64_t new_flips) {
    flips_.fetch_add(new_flips, std::memory_order_relaxed);
    if (!fn_) return;
    double cur = best_[t].load(std::memory_order_relaxed);
    while (best_cost < cur && !best_[t].compare_exchange_weak(cur, best_cost, std::memory_order_relaxed)) {
    }
    if (best_cost < cur) add(best_cost - cur);
    const int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
    int64_t last = last_.load(std::memory_order_relaxed);
    if (now - last < interval_) return;
    std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
    if (!lock.owns_lock() || !last_.compare_exchange_strong(last, now)) return;
    sent_ = std::min(sent_, total_.load(std::memory_order_relaxed));
    fn_(sent_, flips_.load(std::memory_order_relaxed));
  }
  // `new_flips` more flips, no cost: a walk whose best cost is not its
  // task's (one partition of a split component).
  void add_flips(int64_t new_flips) { flips_.fetch_add(new_flips, std::memory_order_relaxed); }
  // The last call: `cost`, the answer's (whatever the interval; at most the
  // rounding of the walks' fixed-point costs above the call before).
  void finish(double cost) {
    if (!fn_) return;
    std::lock_guard<std::mutex> lock(mu_);
    sent_ = cost;
    fn_(cost, flips_.load(std::memory_order_relaxed));
  }
  int64_t flips() const { return flips_.load(std::memory_order_relaxed); }

 private:
  void add(double d) {
    double cur = total_.load(std::memory_order_relaxed);
    while (!total_.compare_exchange_weak(cur, cur + d, std::memory_order_relaxed)) {}
  }
  Fn fn_;
  std::mutex mu_;  // the callback's
  std::unique_ptr<std::atomic<double>[]> best_;
  std::atomic<double> total_{0};
  std::atomic<int64_t> flips_{0};
  double sent_ = std::numeric_limits<double>::infinity();  // the least total passed so far (under mu_)
  int64_t interval_;                                    // steady_clock ticks
  std::atomic<int64_t> last_{0};                        // last callback, ticks
};

}  // namespace mln::solver
