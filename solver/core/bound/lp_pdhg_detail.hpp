// The PDHG bound's pieces that both backends share (lp_pdhg.cpp on OpenMP
// threads, lp_pdhg_gpu.cu on the device): the LP over the network's clause
// CSR, the certified bound g(y) evaluated on the host, the restarted
// Halpern loop and the rounding of its best primal point.  One loop and one
// bound formula: a backend only moves the iterate.
// Internal to lp_pdhg*: no other caller.  No CUDA types, no OpenMP here.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <functional>
#include <vector>

#include "core/bound/lp_pdhg.hpp"
#include "format/network.hpp"

namespace mln::solver::pdhg_detail {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The LP over the network's own CSR (lp_pdhg_rules.hpp names the rows).
struct Lp {
  const ClauseSet* cs = nullptr;
  int32_t n = 0;
  std::vector<double> c;         // per atom: the unit clauses' linear cost (size n + 1)
  long double constant = 0;      // their constant part and the empty clauses' cost
  double constant_abs = 0;       // the sum of |term| that made `constant` (rounding margin)
  int64_t constant_terms = 0;
  std::vector<int64_t> clause;   // the LP's clauses: ids in cs
  std::vector<int64_t> row_off;  // clause k's rows: [row_off[k], row_off[k + 1])
  std::vector<double> tx;        // per atom: 1 / its nonzeros in rows (0: in no row)
  int64_t nnz = 0;               // the x entries of the rows
  int64_t rows() const { return row_off.back(); }
  bool stopped = false;          // build_lp's `stop` said so: the LP is incomplete
};

// The LP of net's clauses, on OpenMP threads a block of clauses at a time;
// where `stop` (asked first and before each block) says so, it ends early
// with `stopped` set (at 10^9 clauses the build alone is a matter of
// seconds on the host).
Lp build_lp(const mln::Network& net, const std::function<bool()>& stop = nullptr);

// The OpenMP default thread count (PdhgOptions::threads 0).
int default_threads();

// Scratch arrays for evaluate on nt threads: each is a long double per atom
// (16 bytes) per thread, which at 10^9 clauses would be tens of GB: at most
// 8 GiB in all, and fewer threads evaluate past it (issue #45).
int eval_threads(int nt, int32_t n);

// The starting primal point: 0, and an atom in no row at its best value.
std::vector<double> initial_x(const Lp& lp);

// g(y+) at y+ = max(0, y), a certified lower bound on the LP optimum, and
// the primal objective of xn with each z at its best (feasible, so >= the
// LP optimum).  xn: per atom (size n + 1); y: per row.  lacc: an array
// per thread (scratch), sized n + 1 on first use by its own thread, so that
// the zeroing of up to 8 GiB runs in parallel: min(nt, lacc.size()) threads.
struct Eval {
  double bound = 0, primal = 0;
};
Eval evaluate(const Lp& lp, const double* xn, const double* y, std::vector<std::vector<long double>>& lacc, int nt);

// Squared distances moved by one PDHG step, in the preconditioner's metric.
struct StepNorms {
  double px = 0, dy = 0;  // primal (x and z), dual
};

// The bound's time limit passed or its stop token fired: the loop's test,
// and its set-up's between steps (at 10^9 clauses the set-up alone outlasted
// a 60 s timeout by some 30 s, issue #45).
inline bool out_of_time(const PdhgOptions& opts, Clock::time_point t0) {
  return (opts.stop && opts.stop->should_stop()) || (opts.time_limit_s > 0 && seconds_since(t0) >= opts.time_limit_s);
}

// The restarted reflected-Halpern PDHG loop (lp_pdhg.cpp's papers) over a
// backend B that holds the iterate:
//   Eval evaluate()          g and the primal at the iterate's (xn, y);
//   void keep_best()         the point just evaluated is the best primal so far;
//   StepNorms step(lambda, gamma, norms)  one step and Halpern update; the
//                            distances moved are needed only when `norms`;
//   double omega() const     the primal weight;
//   void restart()           a new anchor at the iterate, omega moved;
//   int eval_stride() const  evaluations every eval_every * this iterations
//                            (restart checks stay every eval_every).
// Fills out's bound (from the caller's starting bound up), primal,
// iterations, restarts, seconds and converged.
template <class B>
void pdhg_loop(B& b, const PdhgOptions& opts, Clock::time_point t0, PdhgOutcome& out) {
  out.primal = std::numeric_limits<double>::infinity();
  const int every = std::max(1, opts.eval_every);
  const int64_t eval_at = static_cast<int64_t>(every) * std::max(1, b.eval_stride());
  const double gamma = 1.0;  // full reflection (cuPDLPx)
  int64_t k = 0;             // iterations since the last restart
  double r_start = -1, r_last = std::numeric_limits<double>::infinity();
  for (int64_t it = 0;; ++it) {
    const bool last = it >= opts.max_iterations || out_of_time(opts, t0);
    // Where evaluations are strided, none at the start, even when it is the
    // last (the time spent on the set-up): its bound is about the unit
    // bound, and its cost that of many iterations (26.6 s at 10^9 clauses).
    const bool skip = it == 0 && eval_at != every;
    if (skip && last) break;
    if (!skip && (it % eval_at == 0 || last)) {
      const Eval e = b.evaluate();
      out.bound = std::max(out.bound, e.bound);
      if (e.primal < out.primal) {
        out.primal = e.primal;
        b.keep_best();
      }
      out.iterations = it;
      out.seconds = seconds_since(t0);
      if (opts.progress) opts.progress({out.seconds, it, out.bound, out.primal});
      const double target = opts.bound_target ? opts.bound_target->load() : std::numeric_limits<double>::infinity();
      if (relative_gap(out.primal, out.bound) <= opts.rel_gap || out.bound >= target) {
        out.converged = true;
        break;
      }
      if (last) break;
    }
    // The residual is read at a restart check and after a restart's first step.
    const bool norms = k == 0 || (k + 1) % every == 0;
    const StepNorms d = b.step(static_cast<double>(k + 1) / static_cast<double>(k + 2), gamma, norms);
    const double r = std::sqrt(b.omega() * d.px + d.dy / b.omega());
    if (k == 0) r_start = r;
    ++k;
    // PDLP's restart criteria on the fixed-point residual: sufficient decay
    // (0.2), necessary decay (0.8) with no progress since the last check,
    // or a long run without restart (0.36 of the iterations so far).
    if (k % every == 0) {
      const bool restart_now = r <= 0.2 * r_start || (r <= 0.8 * r_start && r > r_last) ||
                               static_cast<double>(k) >= 0.36 * static_cast<double>(it + 1);
      r_last = r;
      if (restart_now) {
        b.restart();
        ++out.restarts;
        k = 0;
        r_last = std::numeric_limits<double>::infinity();
      }
    }
  }
}

// The primal weight's move at a restart: halfway (in log scale) toward the
// ratio of the dual to the primal distance travelled since the last
// restart (PDLP's smoothing 0.5); unchanged when either is ~0.
inline double next_omega(double omega, double dx, double dy) {
  if (dx > 1e-20 && dy > 1e-20) return std::exp(0.5 * std::log(std::sqrt(dy / dx)) + 0.5 * std::log(omega));
  return omega;
}

// The best primal point rounded into out.state (and its exact cost into
// out.state_cost), out.bound capped by that cost, out.seconds set.
void round_best(const mln::Network& net, const Lp& lp, const std::vector<double>& x_best, int nt, Clock::time_point t0,
                PdhgOutcome& out);

}  // namespace mln::solver::pdhg_detail
