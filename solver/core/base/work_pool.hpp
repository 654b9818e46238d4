// The engines' one scheduler (MAP, marginals, learning): a queue of items
// taken one at a time by a pool of CPU threads, and beside them an optional
// feeder thread that owns the GPU's work.  One host thread drives the
// device so that its walks run one after another and never contend for it;
// the CPU threads take the largest items first when the queue is sorted so.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "options/threads.hpp"

namespace mln::solver {

// The `threads` option: as given when positive, else the machine's cores;
// never more than the cores (options/threads.hpp).
inline int pool_threads(int requested) { return usable_threads(requested); }

// Runs item(i) for every i in [0, n) on min(threads, n) threads (the calling
// thread is one of them), each taking the next index from a shared counter,
// and feeder() at the same time on a thread of its own when given.  A thread
// that throws takes no more items; the others go on, and the first
// exception is rethrown once every thread has joined.
template <class Item>
void run_pool(int threads, size_t n, Item item, const std::function<void()>& feeder = nullptr) {
  std::exception_ptr failure;
  std::mutex mu;
  auto guarded = [&](auto&& body) {
    try {
      body();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu);
      if (!failure) failure = std::current_exception();
    }
  };
  std::atomic<size_t> next{0};
  auto take = [&] {
    guarded([&] {
      for (size_t i; (i = next.fetch_add(1)) < n;) item(i);
    });
  };
  const int t = static_cast<int>(std::min<size_t>(static_cast<size_t>(std::max(threads, 0)), n));
  std::vector<std::thread> pool;
  struct JoinAll {  // also when starting a thread throws
    std::vector<std::thread>& threads;
    ~JoinAll() {
      for (auto& th : threads)
        if (th.joinable()) th.join();
    }
  } join_all{pool};
  if (feeder) pool.emplace_back([&] { guarded(feeder); });
  // A thread the system refuses (a per-process limit) is not an error: the
  // ones started take its items from the shared counter.
  try {
    for (int k = 1; k < t; ++k) pool.emplace_back(take);
  } catch (const std::system_error&) {
  }
  if (t >= 1) take();
  for (auto& th : pool) th.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace mln::solver
