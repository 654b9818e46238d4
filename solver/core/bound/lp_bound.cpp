// The unit bound and the LP relaxation's bound (core/bound/lp_bound.hpp).
#include "core/bound/lp_bound.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/base/network_cost.hpp"

#ifdef MLN_HAVE_CBC
#include <ClpEventHandler.hpp>
#include <OsiClpSolverInterface.hpp>

#include "core/bound/cbc_stop.hpp"
#include "core/bound/ilp_model.hpp"
#endif

namespace mln::solver {

bool proven_within_tolerance(double cost, double bound) {
  return cost <= bound + 1e-9 * std::max({1.0, std::fabs(cost), std::fabs(bound)});
}

double unit_bound(const mln::Network& net) {
  const auto& cs = net.clauses;
  // cost_if_true[a] / cost_if_false[a]: unit-clause cost of each value.
  std::vector<double> if_true(static_cast<size_t>(net.num_atoms) + 1, 0.0), if_false(if_true.size(), 0.0);
  double bound = 0;
  // The empty and unit clauses (few) found on threads, then summed in
  // clause order as one serial pass would.
  const std::vector<int64_t> short_clauses = select_clauses(
      static_cast<int64_t>(cs.size()), [&](int64_t c) { return cs.offsets[c + 1] - cs.offsets[c] <= 1; });
  for (const int64_t c : short_clauses) {
    const int64_t len = cs.offsets[c + 1] - cs.offsets[c];
    const double w = cs.weights[c];
    if (len == 0) {
      if (w > 0) bound += w;
      continue;
    }
    if (len != 1 || w == 0) continue;
    const int32_t l = cs.lits[cs.offsets[c]];
    const int32_t a = l > 0 ? l : -l;
    const UnitCost u = unit_cost(l, w);
    if_false[a] += u.if_false;
    if_true[a] += u.if_true;
  }
  for (size_t a = 1; a < if_true.size(); ++a) bound += std::min(if_true[a], if_false[a]);
  return bound;
}

#ifndef MLN_HAVE_CBC

LpOutcome lp_relaxation(const mln::Network& net, double, StopToken*) {
  LpOutcome r;
  r.bound = unit_bound(net);
  return r;
}

#else

namespace {

using ilp_detail::Model;
using cbc_stop::CbcProgress;
using cbc_stop::ClpStop;

// The LP relaxation's simplex iterations at most: a dual simplex solve
// takes a few iterations per row and column; an LP that needs far more is
// given up (the unit bound stands) by this count rather than by a clock.
constexpr double kLpIterationsMin = 100000;
constexpr double kLpIterationsPerRow = 20;

}  // namespace

LpOutcome lp_relaxation(const mln::Network& net, double time_limit_s, StopToken* stop) {
  LpOutcome r;
  r.bound = unit_bound(net);
  Model md;
  for (size_t c = 0; c < net.clauses.size(); ++c) md.add_clause(net.clauses, c);
  r.state.assign(static_cast<size_t>(net.num_atoms) + 1, 0);
  if (md.obj.empty()) {  // only clauses with no literal: any state is optimal
    r.solved = r.integral = true;
    r.bound = md.constant;
    return r;
  }
  OsiClpSolverInterface si;
  md.load(si, false);
  // Clp's time cap is the caller's alone (time_limit_s, the user's
  // timeout through `stop`); the default stop is an iteration count that
  // grows with the model (kLpIterationsPerRow), so that whether the LP is
  // solved does not depend on the machine's speed.
  CbcProgress cap(0, 0, time_limit_s, 1);
  ClpStop clp_stop(stop, &cap);
  si.getModelPtr()->passInEventHandler(&clp_stop);
  const int max_it = static_cast<int>(std::min<double>(
      2e9, kLpIterationsMin + kLpIterationsPerRow * static_cast<double>(md.row_lb.size() + md.obj.size())));
  si.setIntParam(OsiMaxNumIteration, max_it);
  si.getModelPtr()->setMaximumIterations(max_it);
  si.initialSolve();
  if (!si.isProvenOptimal()) {
    r.state.clear();
    return r;
  }
  r.solved = true;
  // The LP optimum is a bound, less Clp's tolerances, which act on the
  // objective's terms: their magnitude (hard unit clauses move 5.2e7
  // between the constant and the columns) can be far above the value, so
  // 1e-9 of it comes off.  Never below the unit bound.
  const double v = si.getObjValue() + md.constant;
  const double scale = std::max(1.0, std::fabs(si.getObjValue()) + std::fabs(md.constant));
  r.bound = std::max(r.bound, v - 1e-9 * scale);
  const double* x = si.getColSolution();
  r.integral = true;
  for (int j : md.x_cols) {
    r.state[md.atom_of_col[j]] = x[j] >= 0.5 ? 1 : 0;
    if (std::fabs(x[j] - std::round(x[j])) > 1e-6) r.integral = false;
  }
  return r;
}

#endif  // MLN_HAVE_CBC

double lp_bound(const mln::Network& net, double time_limit_s, bool* solved) {
  LpOutcome r = lp_relaxation(net, time_limit_s);
  if (solved) *solved = r.solved;
  return r.bound;
}

}  // namespace mln::solver
