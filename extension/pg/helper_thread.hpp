// One helper thread that runs one job at a time beside the backend thread
// (the heap scan's decoder, write_table's page builder).  A job is plain
// C++: it must not call PostgreSQL, which is single-threaded.
//
// submit() hands a job over; wait() returns once it has finished and
// rethrows what it threw; busy() says whether it is still running.  The
// destructor waits for a running job and stops the thread, also when an
// exception (a PostgreSQL ERROR turned into PgError) unwinds through the
// owner, so a job never outlives the data it works on.
//
// Hand-rolled rather than std::async: one thread for the whole scan or
// write keeps its OpenMP team warm, and the short spin before sleeping
// keeps the hand-over to microseconds where a batch takes tens of them.
#pragma once

#include <pthread.h>

#include <atomic>
#include <csignal>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace mln::pg {

class HelperThread {
 public:
  // The thread starts with every signal blocked (it inherits the mask it
  // was created under), so PostgreSQL's handlers (cancel, timeouts, latch
  // wake-ups) run on the backend thread only; so do those of the OpenMP
  // threads it starts.
  HelperThread() {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    try {
      th_ = std::thread([this] { run(); });
    } catch (...) {
      pthread_sigmask(SIG_SETMASK, &old, nullptr);
      throw;
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
  ~HelperThread() {
    wait_idle();
    set(kStop);
    th_.join();
  }
  HelperThread(const HelperThread&) = delete;
  HelperThread& operator=(const HelperThread&) = delete;

  void submit(std::function<void()> job) {
    job_ = std::move(job);
    set(kBusy);
  }
  void wait() {
    wait_idle();
    if (err_) std::rethrow_exception(std::exchange(err_, nullptr));
  }
  bool busy() const { return state_.load(std::memory_order_acquire) == kBusy; }

 private:
  enum { kIdle, kBusy, kStop };

  void set(int s) {
    {
      std::lock_guard<std::mutex> g(mu_);
      state_.store(s, std::memory_order_release);
    }
    cv_.notify_all();
  }

  // Spins briefly (the other side usually answers within microseconds),
  // then sleeps on the condition variable.
  template <typename P>
  int await(P done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
    int s;
    while (!done(s = state_.load(std::memory_order_acquire)))
      if (std::chrono::steady_clock::now() > until) {
        std::unique_lock<std::mutex> g(mu_);
        cv_.wait(g, [&] { return done(s = state_.load(std::memory_order_acquire)); });
        break;
      }
    return s;
  }
  void wait_idle() {
    await([](int s) { return s != kBusy; });
  }

  void run() {
    while (await([](int s) { return s != kIdle; }) == kBusy) {
      try {
        job_();
      } catch (...) {
        err_ = std::current_exception();
      }
      job_ = nullptr;
      set(kIdle);
    }
  }

  std::function<void()> job_;
  std::exception_ptr err_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<int> state_{kIdle};
  std::thread th_;  // last: starts once the members above exist
};

}  // namespace mln::pg
