// The "weighted" walk (rules: walk_weighted_rules.hpp; docs/solver.md):
// options, the CPU entry point, and the control loop that both backends
// share (rounds in batches, the flip budget, stop and progress, the final
// greedy polish).  No CUDA types here.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "walk_weighted_rules.hpp"
#include "walksat_cpu.hpp"

namespace mln::solver {

struct WeightedOptions {
  // A stuck clause (violated, no atom whose flip lowers the weighted cost)
  // raises its weight by inc_rel * |w| + inc_abs (inc_abs in weight units)...
  double inc_rel = 2;
  double inc_abs = 0;
  double cap = 50;  // a weight grows up to cap * |w| + inc_abs
  // ...and proposes its best atom anyway with this probability.  Measured on
  // generated RC (1,000 papers): 0.01 ends 28% above the optimum, 0 at it.
  double noise = 0;
  // When a batch of rounds flips nothing (every violated clause stuck at
  // its cap), each weight keeps smooth_keep of what it gained over |w| and
  // the next round proposes with noise kick_noise.  Also every smooth_every
  // rounds (0: only then).  Measured on 60 small networks (solver_weighted_test):
  // kick 0.05 missed the optimum on 2, 0.3 on none; class and RC at the
  // optimum with either.
  double kick_noise = 0.3;
  int64_t smooth_every = 0;
  double smooth_keep = 0.5;
  // The search ends after this many rounds without a new best cost (or at
  // the flip budget, or the stop token).
  int64_t stall_rounds = 2000;
  // Rounds of greedy descent on the true weights from the best state at the
  // end (stops earlier when a round flips nothing).
  int64_t polish_rounds = 10000;
  int threads = 0;  // CPU driver: OpenMP threads (0: OpenMP's default)
};

// The weighted walk on CPU threads, with the same rounds as the GPU design.
// flips = atoms flipped; the budget is flips_per_try * max_tries flips (a
// round counts as at least one).  Results depend on the thread count.
WalkOutcome walk_weighted_cpu(const WalkInstance& inst, const std::vector<uint8_t>& init, const WalkParams& params,
                              const WeightedOptions& wopts);

namespace weighted {

// What the driver reads back after a batch of rounds.
struct Counts {
  int64_t cost = 0, best_cost = 0, nviol = 0, flips = 0;
};

// The control loop.  Backend B provides:
//   void init(bool reset_dw);             counts, list 0 and cost from truth
//   void mark_best();                     best := truth (and its cost)
//   void rounds(int64_t first, int count, const RoundParams& P);
//                                         rounds first .. first+count-1, each ending with
//                                         end_round and best := truth when it improved
//   void smooth(double keep);             every weight keeps `keep` of its gain over |w|
//   Counts read(int list);                counters (nviol of `list`); resets the flip count
//   void restore_best();                  truth := best
//   std::vector<uint8_t> best();          the best state
template <class B>
WalkOutcome run(B& b, const WalkInstance& in, const WalkParams& p, const WeightedOptions& wo,
                int64_t target_cost_fixed) {
  using Clock = std::chrono::steady_clock;
  WalkOutcome out;
  const int64_t tries = std::max(1, p.max_tries);
  const int64_t budget = p.flips_per_try > INT64_MAX / tries ? INT64_MAX : std::max<int64_t>(1, p.flips_per_try * tries);
  RoundParams P{p.seed, 0, wo.noise, wo.inc_rel, wo.inc_abs * in.scale, wo.cap, 1};
  int64_t round = 0, rounds_done = 0, reported = 0, best_round = 0, best_seen = 0;
  int batch = 1;
  auto last_report = Clock::now();
  b.init(true);
  b.mark_best();
  Counts c = b.read(0);
  auto report = [&](bool force) {
    auto now = Clock::now();
    if (!force && now - last_report < std::chrono::milliseconds(20)) return false;
    last_report = now;
    if (p.on_progress) p.on_progress(static_cast<double>(c.best_cost) / in.scale, out.flips - reported);
    reported = out.flips;
    return p.stop && p.stop->should_stop();
  };
  // The search with dynamic weights.
  while (true) {
    if (c.nviol == 0) {
      out.satisfied = true;
      break;
    }
    if (target_cost_fixed >= 0 && c.best_cost <= target_cost_fixed) {
      out.stopped = true;
      break;
    }
    if (out.flips >= budget || rounds_done >= budget || round - best_round > wo.stall_rounds) break;
    const auto t0 = Clock::now();
    b.rounds(round, batch, P);
    P.noise = wo.noise;
    const bool smooth_due = wo.smooth_every > 0 && (round + batch) / wo.smooth_every != round / wo.smooth_every;
    round += batch;
    rounds_done += batch;
    c = b.read(static_cast<int>(round & 1));
    out.flips += c.flips;
    if (c.flips == 0) {  // frozen: release the weights and kick
      b.smooth(wo.smooth_keep);
      P.noise = wo.kick_noise;
      batch = 1;
    } else if (smooth_due) {
      b.smooth(wo.smooth_keep);
    }
    if (std::getenv("MLN_WW_DEBUG"))
      std::fprintf(stderr, "round %lld batch %d cost %.2f best %.2f nviol %lld flips %lld\n", (long long)round, batch,
                   c.cost / in.scale, c.best_cost / in.scale, (long long)c.nviol, (long long)c.flips);
    // Batches of 2 to 20 ms: few host round trips, prompt stop and progress.
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (ms < 2 && batch < 4096) batch *= 2;
    else if (ms > 20 && batch > 1) batch /= 2;
    if (report(false)) {
      out.stopped = true;
      break;
    }
  }
  // The polish: greedy descent on the true weights from the best state.
  if (!out.satisfied && !(p.stop && p.stop->tripped())) {
    b.restore_best();
    round += round & 1;  // list 0 is read first again
    b.init(false);
    c = b.read(0);
    P.use_dw = 0;
    for (int64_t r = 0; r < wo.polish_rounds && c.nviol > 0; r += 8) {
      b.rounds(round, 8, P);
      round += 8;
      c = b.read(static_cast<int>(round & 1));
      out.flips += c.flips;
      if (c.flips == 0) break;
    }
    out.satisfied = c.nviol == 0;
  }
  report(true);
  out.best = b.best();
  out.best_cost_fixed = c.best_cost;
  out.best_cost = static_cast<double>(c.best_cost) / in.scale;
  return out;
}

}  // namespace weighted
}  // namespace mln::solver
