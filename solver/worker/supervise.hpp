// Internal to the worker: the supervision of a running job.  The solver
// thread publishes its progress into Progress; the job loop's thread ticks
// the Supervisor, which renews the lease, writes the progress into the
// job's row and says when the job must stop.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <string>

#include "worker/job.hpp"

namespace mln::worker {

using Clock = std::chrono::steady_clock;

// Shared between the solver thread and the supervising loop.
struct Progress {
  std::mutex mu;
  double best = NAN;              // MAP: best cost so far
  int64_t flips = 0;              // MAP: flips so far
  bool sampling = false;          // the marginal phase has started
  Clock::time_point sampling_since;
  int64_t done = 0, total = 0;    // MC-SAT samples, all components together
  int iterations = 0;             // learning: iterations done
  double objective = NAN;         // learning: estimated gain so far
  int rule = 0, depth = 0;        // rule learning: the rule searched (1-based) and its refinement depth
  int64_t candidates = 0;         // rule learning: candidates scored so far
  uint64_t drawn = 0, accepted = 0;  // forward sampling (problog): samples drawn, those that satisfy the evidence
  double widest = NAN;            // forward sampling: the widest query interval so far
};

// Watches the job while it runs: renews the lease, publishes progress, and
// sets `cancel` when the job was cancelled or its waiter gave up.
class Supervisor {
 public:
  Supervisor(Conn& c, const Job& job, const std::string& me, int lease) : c_(c), job_(job), me_(me), lease_(lease) {}

  // One tick; returns false when the job must stop.
  bool tick(Progress& pr, double elapsed);

 private:
  Conn& c_;
  const Job& job_;
  std::string me_;
  int lease_;
  std::string waiter_seen_;
};

}  // namespace mln::worker
