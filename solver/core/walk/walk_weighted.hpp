// The "weighted" walk (rules: walk_weighted_rules.hpp; docs/solver/walk.md):
// options, the CPU entry point, and the control loop that both backends
// share (rounds in batches, the flip budget, stop and progress, the final
// greedy polish).  No CUDA types here.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/walk/walk_weighted_rules.hpp"
#include "core/walk/walksat_cpu.hpp"

namespace mln::solver {

struct WeightedOptions {
  // A stuck clause (violated, no atom whose flip lowers the weighted cost)
  // raises its weight by inc_rel * |w| + inc_abs (inc_abs in weight units)...
  double inc_rel = 2;
  double inc_abs = 0;
  double cap = 50;  // a weight grows up to cap * |w| + inc_abs
  // ...and proposes its best atom anyway with this probability.  0: such
  // noise kept RC well above its optimum (docs/solver/walk.md).
  double noise = 0;
  // When freeze_rounds rounds in a row flip nothing in a part (every
  // violated clause of that component stuck at its cap), each of its weights
  // keeps smooth_keep of what it gained over |w| and its next round proposes
  // with noise kick_noise.  Also every smooth_every rounds, all parts (0:
  // never).  freeze_rounds 32: a little more than the (cap - 1) / inc_rel
  // bumps that take a weight to its cap.  kick_noise 0.3: a smaller kick
  // missed the optimum on some of the small test networks
  // (solver_weighted_test; docs/solver/walk.md).
  double kick_noise = 0.3;
  int64_t freeze_rounds = 32;
  int64_t smooth_every = 0;
  double smooth_keep = 0.5;
  // The search ends after stall_rounds rounds without a new best cost, or
  // once the rounds since the last new best exceed stall_time times the
  // rounds it took to reach it (and at least the floor below), or at the
  // flip budget, or the stop token.  Every rule counts rounds, never time,
  // so that a seeded walk ends where it ended before on any machine, busy
  // or not (issue #60).
  // The floor is stall_work over the instance's atoms plus clauses, at
  // least kStallMaxMinRounds rounds: a round costs about a pass over the
  // instance, so the floor is a fixed amount of work, long on a small
  // network and a few dozen rounds on a very large one, where a round is
  // long and stall_rounds of them far outlast the search.
  // With stall_cap_work > 0 (the GPU driver's) the walk instead ends once
  // stall_cap_work over atoms plus clauses rounds (at least
  // kStallMaxMinRounds) pass without a new best, however long it took to
  // reach it: on a GPU the rounds of a large network kept the job going well
  // past the walk's convergence (#39).  These replace the former time rules
  // (stall_min_s, stall_max_s: a second) at about the rounds those allowed,
  // on the CPU driver and on the GPU, at each end of the sizes walked.
  int64_t stall_rounds = 2000;
  double stall_time = 1;
  double stall_work = 67108864.0;        // 2^26 atom and clause visits
  double stall_cap_work = 4294967296.0;  // 2^32; 0: the floor rule instead
  // Rounds of greedy descent on the true weights from the best state at the
  // end (stops earlier when a round flips nothing).
  int64_t polish_rounds = 10000;
  // Rounds per batch at most (the driver checks for the end once per batch;
  // short walks, like the one-chain sampler's start walks, waste less past
  // it with small ones).
  int max_batch = 4096;
  // GPU: rounds with a warp per violated entry while the list is short
  // (walk_weighted_warp.cuh). Off: the MAP walk's rounds are kernel launches
  // the warps do not shorten (measured, docs/solver/marginal.md); the
  // one-chain sampler's rounds use them.
  bool warp_rounds = false;
  int threads = 0;  // CPU driver: OpenMP threads (0: OpenMP's default)
};

// The weighted walk on CPU threads, with the same rounds as the GPU design.
// flips = atoms flipped; the budget is flips_per_try * max_tries flips (a
// round counts as at least one).  Results depend on the thread count.
// part_of_atom (size n, values 0..K-1): the instance is K independent parts
// (no clause spans two), each with its own best state; the outcome's best
// is every part at its own best, best_cost their sum.
WalkOutcome walk_weighted_cpu(const WalkInstance& inst, const std::vector<uint8_t>& init, const WalkParams& params,
                              const WeightedOptions& wopts, const std::vector<int32_t>* part_of_atom = nullptr);

namespace weighted {

// The least floor of the stall rules (WeightedOptions::stall_work), in
// rounds: the walk's set-up before its first round counts toward nothing,
// but a large network's walk has plateaus of a few dozen rounds, and a
// shorter floor ended it on one, before the PDHG bound had certified
// anything (bench/results/gpu-NVIDIA-H100-80GB-HBM3/big_run_*.md).
constexpr int64_t kStallMaxMinRounds = 64;

// Rounds of `work` over an instance of n atoms and m clauses, at least
// kStallMaxMinRounds (the stall rules' floor and cap).
inline int64_t work_rounds(double work, int64_t n, int64_t m) {
  const double r = work / static_cast<double>(std::max<int64_t>(1, n + m));
  return std::max<int64_t>(kStallMaxMinRounds, r < 1e15 ? static_cast<int64_t>(r) : INT64_C(1000000000000000));
}

// Rounds per batch (the driver reads the counters and tests the end rules
// once per batch): 1, then doubling up to max_batch, and never more than
// kBatchWork over the instance's atoms plus clauses.  A count, not a clock:
// where the walk stops (the flip budget, the stall rules, the batch a new
// best is counted in) depends on the batch boundaries, and a batch sized
// by its measured time made the answer depend on the machine's load.
constexpr double kBatchWork = 67108864.0;  // 2^26 atom and clause visits
inline int next_batch(int batch, const WeightedOptions& wo, int64_t n, int64_t m) {
  const double cap = std::max(1.0, std::min<double>(wo.max_batch, kBatchWork / static_cast<double>(std::max<int64_t>(1, n + m))));
  return static_cast<int>(std::min<double>(2.0 * batch, cap));
}

// Number of parts named by part_of_atom (1 without it); throws
// std::invalid_argument when it has the wrong size or a negative part.
inline int32_t count_parts(const WalkInstance& in, const std::vector<int32_t>* part_of_atom) {
  if (!part_of_atom) return 1;
  if (static_cast<int64_t>(part_of_atom->size()) != in.n)
    throw std::invalid_argument("weighted walk: part_of_atom has the wrong size");
  int32_t k = 0;
  for (int32_t p : *part_of_atom) {
    if (p < 0) throw std::invalid_argument("weighted walk: negative part");
    k = std::max(k, p + 1);
  }
  return std::max(k, 1);
}

// The rounds' parameters for WeightedOptions (round 0, dynamic weights on),
// on an instance of fixed-point scale `scale`.
inline RoundParams round_params(uint64_t seed, const WeightedOptions& wo, double scale) {
  return RoundParams{seed, 0, wo.noise, wo.inc_rel, wo.inc_abs * scale, wo.cap, wo.kick_noise,
                     static_cast<uint32_t>(std::max<int64_t>(1, wo.freeze_rounds)), 1};
}

// What the driver reads back after a batch of rounds.
struct Counts {
  int64_t cost = 0, best_cost = 0, nviol = 0, flips = 0;
};

// Where a walk walked in segments (WeightedSession) stands between them:
// its rounds go on numbering from `round` (the GPU's flip stamps and the
// random streams stay distinct), and the dynamic weights are kept.
struct Resume {
  int64_t round = 0;
  bool started = false;
};

// The control loop.  Backend B provides:
//   void init(bool reset_dw);             counts, list 0 and the parts' costs from truth
//   void mark_best();                     best := truth (and every part's best cost)
//   void rounds(int64_t first, int count, const RoundParams& P, double keep);
//                                         rounds first .. first+count-1: propose, flip, settle,
//                                         end_part, the best copy, smooth_frozen, end_round
//   void smooth(double keep);             every weight keeps `keep` of its gain over |w|
//   Counts read(int list);                counters (nviol of `list`); resets the flip count
//   void restore_best();                  truth := best
//   std::vector<uint8_t> best();          the best state
// and, for a Session, void hold(const uint8_t* v, int64_t k): truth and
// best of the last k atoms (the held ones) := v[0..k).
// With `resume`, the walk goes on from where the segment before left it
// (the weights kept, b's state re-counted: its held atoms may have moved)
// and ends at its best state, from which the next segment starts.
template <class B>
WalkOutcome run(B& b, const WalkInstance& in, const WalkParams& p, const WeightedOptions& wo,
                int64_t target_cost_fixed, Resume* resume = nullptr) {
  using Clock = std::chrono::steady_clock;
  WalkOutcome out;
  const int64_t tries = std::max(1, p.max_tries);
  const int64_t budget = p.flips_per_try > INT64_MAX / tries ? INT64_MAX : std::max<int64_t>(1, p.flips_per_try * tries);
  RoundParams P = round_params(p.seed, wo, in.scale);
  int64_t round = resume ? resume->round + (resume->round & 1) : 0, reported = 0, best_seen = 0;
  const int64_t first_round = round;
  int64_t best_round = round;
  const auto start = Clock::now();  // MLN_MAP_DEBUG's times only
  auto best_at = start;
  const int64_t floor_rounds = work_rounds(wo.stall_work, in.n, in.m);
  const int64_t cap_rounds = wo.stall_cap_work > 0 ? work_rounds(wo.stall_cap_work, in.n, in.m) : INT64_MAX;
  auto stalled = [&] {
    const int64_t since = round - best_round, to_best = best_round - first_round;
    if (since > wo.stall_rounds || since >= cap_rounds) return true;
    if (wo.stall_cap_work > 0) return false;  // the cap instead of the floor rule
    // At least a round since the best: a start at its best (all false,
    // solve_map's rule) must still be walked.
    return since > 0 && static_cast<double>(since) > std::max(static_cast<double>(floor_rounds), wo.stall_time * to_best);
  };
  int batch = 1;
  auto last_report = Clock::now();
  b.init(!(resume && resume->started));
  b.mark_best();
  Counts c = b.read(0);
  best_seen = c.best_cost;
  auto report = [&](bool force) {
    auto now = Clock::now();
    if (!force && now - last_report < std::chrono::milliseconds(20)) return false;
    last_report = now;
    if (p.on_progress) p.on_progress(static_cast<double>(c.best_cost) / in.scale, out.flips - reported);
    reported = out.flips;
    return p.stop && p.stop->should_stop();
  };
  const char* why = "stopped";  // what ended the search (MLN_MAP_DEBUG)
  // The search with dynamic weights.
  while (true) {
    if (c.nviol == 0) {
      out.satisfied = true;
      why = "satisfied";
      break;
    }
    if (target_cost_fixed >= 0 && c.best_cost <= target_cost_fixed) {
      out.stopped = true;
      why = "target cost";
      break;
    }
    if (out.flips >= budget || round >= budget) {  // a round counts as a flip at least
      why = "flip budget";
      break;
    }
    if (stalled()) {
      why = "no new best";
      break;
    }
    b.rounds(round, batch, P, wo.smooth_keep);
    const bool smooth_due = wo.smooth_every > 0 && (round + batch) / wo.smooth_every != round / wo.smooth_every;
    round += batch;
    c = b.read(static_cast<int>(round & 1));
    out.flips += c.flips;
    if (c.best_cost < best_seen) {
      best_seen = c.best_cost;
      best_round = round;
      best_at = Clock::now();
    }
    if (smooth_due) b.smooth(wo.smooth_keep);
    batch = next_batch(batch, wo, in.n, in.m);
    if (report(false)) {
      out.stopped = true;
      break;
    }
  }
  const auto searched = Clock::now();
  const int64_t search_rounds = round;
  // The polish: greedy descent on the true weights from the best state.
  if (!out.satisfied && !(p.stop && p.stop->tripped())) {
    b.restore_best();
    round += round & 1;  // list 0 is read first again
    b.init(false);
    c = b.read(0);
    P.use_dw = 0;
    for (int64_t r = 0; r < wo.polish_rounds && c.nviol > 0 && !(p.stop && p.stop->should_stop()); r += 8) {
      b.rounds(round, 8, P, wo.smooth_keep);
      round += 8;
      c = b.read(static_cast<int>(round & 1));
      out.flips += c.flips;
      if (c.flips == 0) break;
    }
    out.satisfied = c.nviol == 0;
  }
  report(true);
  if (std::getenv("MLN_MAP_DEBUG")) {  // where a walk's seconds go (docs/solver/map.md)
    auto sec = [&](Clock::time_point t) { return std::chrono::duration<double>(t - start).count(); };
    std::fprintf(stderr, "[weighted walk] %lld rounds, best at round %lld (%.3f s), search ended at %.3f s (%s), "
                 "polish %lld rounds to %.3f s\n", static_cast<long long>(search_rounds),
                 static_cast<long long>(best_round), sec(best_at), sec(searched), why,
                 static_cast<long long>(round - search_rounds), sec(Clock::now()));
  }
  if (resume) {
    b.restore_best();
    resume->round = round + 1;
    resume->started = true;
  }
  out.best = b.best();
  out.best_cost_fixed = c.best_cost;
  out.best_cost = static_cast<double>(c.best_cost) / in.scale;
  return out;
}

}  // namespace weighted

// A weighted walk kept between segments (issue #23: a spread job's part
// keeps its walk from round to round).  Atoms n_free..n-1 of its instance
// are held: no clause proposes them, and hold() moves them between
// segments.  Each walk() goes on from the state the segment before ended
// at (its best), with the dynamic weights it left.
class WeightedSession {
 public:
  virtual ~WeightedSession() = default;
  // The held atoms' values (n - n_free of them, in id order).
  virtual void hold(const std::vector<uint8_t>& held) = 0;
  // One segment under p's budget, stop token and seed.
  virtual WalkOutcome walk(const WalkParams& p) = 0;
  // The segments after this end on stalls after `share` of the work the
  // options at the start gave (WeightedOptions::stall_work, stall_cap_work).
  virtual void set_stall_share(double share) = 0;
};

namespace weighted {
// A session's arguments, as both factories take them: `init` a value per
// atom, n_free in 0..n (std::invalid_argument otherwise).
inline void check_session(const WalkInstance& in, const std::vector<uint8_t>& init, int64_t n_free) {
  if (static_cast<int64_t>(init.size()) != in.n) throw std::invalid_argument("weighted session: init has the wrong size");
  if (n_free < 0 || n_free > in.n) throw std::invalid_argument("weighted session: n_free out of range");
}

// A session over backend B (the CPU driver's or the GPU's, made from `a`
// with atoms n_free..n-1 held); `in` must outlive it.
template <class B>
class Session final : public WeightedSession {
 public:
  template <class... A>
  Session(const WalkInstance& in, int64_t n_free, const WeightedOptions& wo, A&&... a)
      : in_(in), held_(in.n - n_free), wo_(wo), base_(wo), b_(std::forward<A>(a)...) {}
  void hold(const std::vector<uint8_t>& held) override {
    if (static_cast<int64_t>(held.size()) != held_)
      throw std::invalid_argument("weighted session: wrong number of held atoms");
    b_.hold(held.data(), held_);
  }
  WalkOutcome walk(const WalkParams& p) override { return run(b_, in_, p, wo_, -1, &resume_); }
  void set_stall_share(double share) override {
    wo_.stall_work = base_.stall_work * share;
    wo_.stall_cap_work = base_.stall_cap_work * share;
  }

 private:
  const WalkInstance& in_;
  int64_t held_;
  WeightedOptions wo_, base_;
  B b_;
  Resume resume_;
};
}  // namespace weighted

// The CPU driver's session (wo.threads threads) over `in` from `init`,
// atoms n_free..n-1 held.
std::unique_ptr<WeightedSession> weighted_session_cpu(const WalkInstance& in, const std::vector<uint8_t>& init,
                                                      int64_t n_free, const WeightedOptions& wo);

}  // namespace mln::solver
