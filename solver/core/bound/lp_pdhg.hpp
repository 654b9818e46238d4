// A certified lower bound on the MAP optimum from the LP relaxation, by a
// first-order method (primal-dual hybrid gradient) on OpenMP threads or on
// the GPU (lp_pdhg_gpu.hpp): for networks too large for Clp (lp_relaxation,
// ilp_map.hpp), and beside the walk.
//
// The LP is lp_relaxation's (ilp_map.hpp), so their optima agree:
//   minimise K + sum_a c_a x_a + sum_k |w_k| z_k over x, z in [0,1]
//   w_k > 0 (two or more literals):  sum_{l in L_k} l + z_k >= 1   (one row)
//   w_k < 0 (two or more literals):  z_k >= l  for each l in L_k   (a row each)
// with unit clauses folded into c and K, and l = x_a or 1 - x_a.
//
// The bound never rests on the iterate's accuracy: for ANY multipliers
// y >= 0 of the rows, the Lagrangian dual function
//   g(y) = K + b.y + sum_j min(0, cost_j - (A^T y)_j)    (j over x and z)
// is the exact minimum of the Lagrangian over the box [0,1], so
// g(y) <= LP optimum <= MaxSAT optimum (weak duality).  The bound returned is
// the largest g over the multipliers evaluated, computed in long double less
// a rounding margin (lp_pdhg.cpp), never the objective of an inexact primal
// iterate.  On the GPU the iterations run on the device and g is evaluated
// on the host by the same function, from the multipliers copied back.
//
// No database and no CUDA here.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "format/network.hpp"
#include "options/options.hpp"
#include "core/base/gap.hpp"
#include "core/base/run_control.hpp"

namespace mln::solver {

// One evaluation of the bound, for tracing (bench/lp_bound.cpp).
struct PdhgProgress {
  double seconds = 0;
  int64_t iterations = 0;
  double bound = 0;    // the best certified bound so far
  double primal = 0;   // the best primal objective so far (an upper bound on the LP optimum)
};

// The LP relaxation's shape (lp_pdhg.cpp's build_lp takes these clauses as
// rows): clauses of two or more literals with a nonzero weight; a positive
// one is one row, a negative one a row per literal.
inline bool lp_row_clause(int64_t len, double w) { return w != 0 && len >= 2; }
inline int64_t lp_rows_of(int64_t len, double w) { return w > 0 ? 1 : len; }

struct LpShape {
  int64_t clauses = 0;  // the LP's clauses (rows' owners)
  int64_t nnz = 0;      // their literals
  int64_t rows = 0;
};
LpShape lp_shape(const ClauseSet& cs);

struct PdhgOptions {
  // The caller's time cap; 0 = none.  The default stops are counts
  // (iterations, rel_gap, the target), so that a bound repeats on a rerun.
  double time_limit_s = 0;
  int64_t max_iterations = 100000;
  int64_t gpu_max_iterations = 0;  // where the iterations run on the GPU; 0: max_iterations
  StopToken* stop = nullptr;     // polled every iteration
  int threads = 0;               // OpenMP threads; 0 = the OpenMP default (the GPU path: for evaluating g)
  // Where the iterations run: "cpu", "gpu" (throws std::runtime_error
  // without a usable GPU) or "auto" (the GPU when one is usable).  A GPU
  // that fails (out of device memory, a CUDA error) leaves the solve to the
  // CPU, within what is left of time_limit_s (PdhgOutcome::gpu_error).
  options::Device device = options::Device::kAuto;
  // Whether a GPU that fails leaves the solve to the CPU (above); false: the
  // GpuError reaches the caller (an LP sized for the device alone).
  bool cpu_fallback = true;
  // Stop once relative_gap(primal, bound) <= rel_gap: the LP is then
  // solved to that relative accuracy, and the bound is within it of the optimum.
  double rel_gap = 1e-4;
  // When set, stop once the bound reaches *bound_target (a caller that
  // only needs "bound within tolerance of a known cost", e.g. solve_map
  // beside its walk; it may change while the solve runs).
  const std::atomic<double>* bound_target = nullptr;
  int eval_every = 16;           // iterations between two bound evaluations
  std::function<void(const PdhgProgress&)> progress;  // called after each evaluation
};

struct PdhgOutcome {
  double bound = 0;            // certified lower bound on the MaxSAT optimum (>= unit_bound)
  double primal = 0;           // best primal LP objective found (>= the LP optimum; an estimate of it)
  // The best primal point rounded (x >= 0.5), by atom id (size num_atoms +
  // 1).  Empty where the bound stopped in its set-up, before its iterations
  // (the bound is then the unit bound): rounding the starting point would
  // cost two passes over the clauses (2.3 s at 10^9) for a state any walk
  // beats.
  std::vector<uint8_t> state;
  double state_cost = 0;       // its exact cost on the network
  int64_t iterations = 0;
  int restarts = 0;
  double seconds = 0;
  bool converged = false;      // rel_gap reached (or the bound target)
  std::string device = "cpu";  // where the iterations ran: "cpu" or "gpu"
  std::string gpu_error;       // why the GPU path gave the solve to the CPU; empty when it did not
};

// The LP relaxation's bound by restarted PDHG (lp_pdhg.cpp; on the GPU
// lp_pdhg_gpu.cu) on opts.device.  Never throws for a well-formed network
// other than std::bad_alloc, std::invalid_argument for an unknown device and
// std::runtime_error for device "gpu" without a GPU.
PdhgOutcome lp_bound_pdhg(const mln::Network& net, const PdhgOptions& opts);

// lp_bound_pdhg on a thread of its own, beside other work (a component's
// walk in solve_map, a spread job's rounds).  The network must outlive it.
// Each certified bound is published as it comes (bound()), the rounded
// point's cost when the solve ends (state_cost()); set_target() moves the
// bound at which it stops.  Stopped by `parent` and by cancel_and_join(),
// and by the destructor, which joins.
class PdhgThread {
 public:
  // Starts the solve with `po` (its stop, bound_target and progress are
  // this object's); started() is false when no thread could be made.
  PdhgThread(const mln::Network& net, PdhgOptions po, StopToken* parent);
  ~PdhgThread() { cancel_and_join(); }
  PdhgThread(const PdhgThread&) = delete;
  PdhgThread& operator=(const PdhgThread&) = delete;

  bool started() const { return started_; }
  bool done() const { return done_.load(); }
  double bound() const { return bound_.load(); }  // -infinity before the first
  double state_cost() const { return state_cost_.load(); }  // infinity until the end
  void set_target(double bound) { target_ = bound; }
  // Waits for the solve to end (at its target, iteration count or stop);
  // false when it ran out of memory (out is then untouched).
  bool join(PdhgOutcome& out);
  void cancel_and_join();
  // Asks the solve to end now; join() then gives what it has (its best
  // certified bound so far).
  void stop_soon() { cancel_ = true; }
  // After the work it ran beside has ended, with that work's `target`: the
  // solve ends at the first of its evaluations whose bound reaches the
  // target, or once `window` iterations pass without the bound closing
  // GapClosing::kShare of the distance left to it, or at its own end
  // (rel_gap, its iterations).  The outcome is that evaluation's whether
  // the thread reached it before or after this call: its bound, primal and
  // iterations, and the rounded point only where the solve ended on its
  // own (the point of an earlier evaluation is not kept).  So it is a
  // function of the iterations and the target, not of how far the thread
  // had got while the other work ran (issue #60).  False as join's.
  bool finish(double target, int64_t window, PdhgOutcome& out);

 private:
  // Advances the stop rule of finish() over the evaluations recorded so
  // far (mu_ held); cancels the solve once it has found its evaluation.
  void scan_locked();
  std::atomic<bool> cancel_{false}, done_{false};
  StopToken stop_;
  std::atomic<double> target_{std::numeric_limits<double>::infinity()};
  std::atomic<double> bound_{-std::numeric_limits<double>::infinity()};
  std::atomic<double> state_cost_{std::numeric_limits<double>::infinity()};
  std::mutex mu_;  // guards the members below
  std::vector<PdhgProgress> history_;  // every evaluation, in order
  bool finishing_ = false;  // finish() has given the target
  double finish_target_ = 0;
  int64_t window_ = 0;
  size_t scanned_ = 0;      // evaluations the rule has seen
  double ref_gap_ = std::numeric_limits<double>::infinity();
  int64_t ref_it_ = 0;
  long long stop_at_ = -1;  // the evaluation the rule chose
  PdhgOutcome out_;
  bool ok_ = false;  // the solve returned
  bool started_ = false;
  std::thread th_;
};

}  // namespace mln::solver
