// The LP relaxation's bound by primal-dual hybrid gradient (lp_pdhg.hpp).
//
// The method, kept as simple as works:
//  - PDHG (Chambolle & Pock, "A first-order primal-dual algorithm for convex
//    problems with applications to imaging", JMIV 2011) on the LP as it
//    stands: x, z in [0,1], y >= 0, the constraint matrix read from the
//    network's clause CSR and an atom -> row transpose built once;
//  - diagonal preconditioning (Pock & Chambolle, "Diagonal preconditioning
//    for first order primal-dual algorithms in convex optimization", ICCV
//    2011, alpha = 1): step 1/(column's nonzeros) per variable and
//    1/(row's nonzeros) per row, which bounds the preconditioned operator's
//    norm by 1 without estimating it, so the step eta < 1 needs no search;
//  - a primal weight omega (tau = eta / omega, sigma = eta * omega) set at
//    each restart from the distance the primal and dual moved (PDLP:
//    Applegate et al., "Practical large-scale linear programming using
//    primal-dual hybrid gradient", NeurIPS 2021);
//  - reflected Halpern iteration with restarts on the fixed-point residual
//    (cuPDLPx: Lu, Peng & Yang, "cuPDLPx: a further enhanced GPU-based
//    first-order solver for linear programming", 2025; restart criteria as
//    in PDLP / cuPDLP.jl, Lu & Yang 2023): no averaging, so one iterate and
//    one anchor per variable.
// The bound is g(y) at the iterate's multipliers (clamped to y >= 0), never
// the primal objective; the primal objective reported is that of the
// iterate's x with each z at its best value for x, which is feasible, so
// primal - bound is a certified gap.
#include "core/map/lp_pdhg.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <system_error>

#include "core/base/network_cost.hpp"
#include "core/map/ilp_map.hpp"

namespace mln::solver {

namespace {

using Clock = std::chrono::steady_clock;

// The LP over the network's own CSR.  Rows of clause k (two or more
// literals, w != 0): w > 0, one row  sum_i s_i x_{a_i} + z_k >= 1 - #negated;
// w < 0, one row per literal i  z_k - s_i x_{a_i} >= (s_i < 0), where s_i is
// the literal's sign (lp_relaxation's rows, ilp_map.cpp).  Products with A
// run clause by clause; those with A^T scatter into per-thread atom arrays
// (an atom-major transpose read y at random and was ~5x slower on RC).
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
};

Lp build_lp(const mln::Network& net) {
  Lp lp;
  const ClauseSet& cs = net.clauses;
  lp.cs = &cs;
  lp.n = net.num_atoms;
  lp.c.assign(static_cast<size_t>(lp.n) + 1, 0.0);
  lp.tx.assign(lp.c.size(), 0.0);
  lp.row_off.push_back(0);
  for (size_t c = 0; c < cs.size(); ++c) {
    const int64_t len = cs.offsets[c + 1] - cs.offsets[c];
    const double w = cs.weights[c];
    if (w == 0 || (len == 0 && w < 0)) continue;  // never costs
    if (len <= 1) {
      // Empty: always costs w.  Unit: if_false + (if_true - if_false) x.
      double if_false = w, if_true = 0;
      if (len == 1) {
        const int32_t l = cs.lits[cs.offsets[c]];
        const bool atom_true_costs = (w < 0) == (l > 0);
        if_false = atom_true_costs ? 0 : std::fabs(w);
        if_true = atom_true_costs ? std::fabs(w) : 0;
        lp.c[std::abs(l)] += if_true - if_false;
      }
      lp.constant += if_false;
      lp.constant_abs += std::fabs(if_false);
      ++lp.constant_terms;
      continue;
    }
    lp.clause.push_back(static_cast<int64_t>(c));
    lp.row_off.push_back(lp.row_off.back() + (w > 0 ? 1 : len));
    for (int64_t i = cs.offsets[c]; i < cs.offsets[c + 1]; ++i) lp.tx[std::abs(cs.lits[i])] += 1;
    lp.nnz += len;
  }
  for (double& t : lp.tx) t = t > 0 ? 1.0 / t : 0.0;
  return lp;
}

double clip01(double v) { return v < 0 ? 0 : v > 1 ? 1 : v; }

// The iteration's state: the iterate (x, z, y), its anchor (x0, z0, y0),
// the last PDHG step's x (xn), A^T y for the x columns (aty), and the
// per-thread arrays that A^T is scattered into.
struct State {
  std::vector<double> x, xn, x0, z, z0, y, y0, aty;
  std::vector<std::vector<double>> acc;
  std::vector<std::vector<long double>> lacc;
  double omega = 1;  // primal weight
  double eta = 0.99; // step; < 1 by the preconditioning
};

// Squared distances moved by one PDHG step, in the preconditioner's metric.
struct StepNorms {
  double px = 0, dy = 0;  // primal (x and z), dual
};

// One PDHG step T(v) from v = (x, z, y), then the reflected Halpern update
// v <- lambda ((1 + gamma) T(v) - gamma v) + (1 - lambda) v0.
StepNorms step(const Lp& lp, State& s, double lambda, double gamma, int nt) {
  const ClauseSet& cs = *lp.cs;
  const double tau = s.eta / s.omega, sigma = s.eta * s.omega;
  const double a1 = lambda * (1 + gamma), a2 = lambda * gamma, a3 = 1 - lambda;
  const int32_t n = lp.n;
  const int64_t K = static_cast<int64_t>(lp.clause.size());
  double px = 0, dy = 0;
  int team = 1;
#pragma omp parallel for num_threads(nt) schedule(static, 4096) if (nt > 1 && n > 4096)
  for (int32_t a = 1; a <= n; ++a)
    s.xn[a] = lp.tx[a] == 0 ? s.x[a] : clip01(s.x[a] - tau * lp.tx[a] * (lp.c[a] - s.aty[a]));
#pragma omp parallel num_threads(nt) if (nt > 1 && K > 4096)
  {
#pragma omp single
    team = omp_get_num_threads();
    std::vector<double>& acc = s.acc[omp_get_thread_num()];
    std::fill(acc.begin(), acc.end(), 0.0);
#pragma omp for schedule(static, 1024) reduction(+ : px, dy)
    for (int64_t k = 0; k < K; ++k) {
      const int64_t c = lp.clause[k], off = cs.offsets[c], len = cs.offsets[c + 1] - off, r0 = lp.row_off[k];
      const double w = cs.weights[c];
      const bool pos = w > 0;
      const double tz = pos ? 1.0 : 1.0 / static_cast<double>(len);
      double ysum = 0;
      for (int64_t r = r0; r < lp.row_off[k + 1]; ++r) ysum += s.y[r];
      const double zn = clip01(s.z[k] - tau * tz * (std::fabs(w) - ysum));
      const double zb = 2 * zn - s.z[k];
      px += (zn - s.z[k]) * (zn - s.z[k]) / tz;
      s.z[k] = a1 * zn - a2 * s.z[k] + a3 * s.z0[k];
      auto xbar = [&](int32_t a) { return 2 * s.xn[a] - s.x[a]; };
      auto dual = [&](int64_t r, double b, double act, double S) {
        const double yn = std::max(0.0, s.y[r] + sigma * S * (b - act));
        dy += (yn - s.y[r]) * (yn - s.y[r]) / S;
        s.y[r] = a1 * yn - a2 * s.y[r] + a3 * s.y0[r];
      };
      if (pos) {
        double act = zb, b = 1;
        for (int64_t i = 0; i < len; ++i) {
          const int32_t l = cs.lits[off + i];
          act += l > 0 ? xbar(l) : -xbar(-l);
          b -= l < 0;
        }
        dual(r0, b, act, 1.0 / static_cast<double>(len + 1));
        for (int64_t i = 0; i < len; ++i) {  // x's coefficient: the literal's sign
          const int32_t l = cs.lits[off + i];
          acc[std::abs(l)] += l > 0 ? s.y[r0] : -s.y[r0];
        }
      } else {
        for (int64_t i = 0; i < len; ++i) {  // x's coefficient: minus the literal's sign
          const int32_t l = cs.lits[off + i];
          dual(r0 + i, l < 0 ? 1.0 : 0.0, l > 0 ? zb - xbar(l) : zb + xbar(-l), 0.5);
          acc[std::abs(l)] += l > 0 ? -s.y[r0 + i] : s.y[r0 + i];
        }
      }
    }
  }
#pragma omp parallel for num_threads(nt) schedule(static, 4096) reduction(+ : px) if (nt > 1 && n > 4096)
  for (int32_t a = 1; a <= n; ++a) {
    double sum = 0;
    for (int t = 0; t < team; ++t) sum += s.acc[t][a];
    s.aty[a] = sum;
    if (lp.tx[a] == 0) continue;
    px += (s.xn[a] - s.x[a]) * (s.xn[a] - s.x[a]) / lp.tx[a];
    s.x[a] = a1 * s.xn[a] - a2 * s.x[a] + a3 * s.x0[a];
  }
  return {px, dy};
}

// g(y+) at y+ = max(0, y) (a certified bound, see below) and the primal
// objective of xn with each z at its best (feasible, so >= the LP optimum).
struct Eval {
  double bound = 0, primal = 0;
};

// Rounding: every term of g is a product of a double with +-1 or a small
// integer (exact in long double) and the terms are summed in a tree whose
// inner nodes also take min(0, .), which is 1-Lipschitz.  Each addition's
// error is at most u |its result| <= u * (sum of |leaves| under it), so the
// computed value is within depth * u * sum|leaves| of the exact g, where
// the depth is below the number of leaves.  Subtracting 2 * leaves * u *
// sum|leaves| (then rounding down to double) makes the result <= the exact
// g(y+) <= the LP optimum.  With long double (u = 2^-64 on x86) the margin
// is ~1e-13 of sum|leaves| at 10^6 clauses; where long double is double it
// is still ~1e-10.
Eval evaluate(const Lp& lp, State& s, int nt) {
  const ClauseSet& cs = *lp.cs;
  const int32_t n = lp.n;
  const int64_t K = static_cast<int64_t>(lp.clause.size());
  long double g = lp.constant, gabs = lp.constant_abs, primal = lp.constant;
  int team = 1;
#pragma omp parallel num_threads(nt) if (nt > 1 && K > 4096)
  {
#pragma omp single
    team = omp_get_num_threads();
    std::vector<long double>& acc = s.lacc[omp_get_thread_num()];
    std::fill(acc.begin(), acc.end(), 0.0L);
#pragma omp for schedule(static, 1024) reduction(+ : g, gabs, primal)
    for (int64_t k = 0; k < K; ++k) {
      const int64_t c = lp.clause[k], off = cs.offsets[c], len = cs.offsets[c + 1] - off, r0 = lp.row_off[k];
      const double w = std::fabs(cs.weights[c]);
      const bool pos = cs.weights[c] > 0;
      long double ysum = 0, by = 0;
      double lmax = 0, lsum = 0;
      int negs = 0;
      for (int64_t i = 0; i < len; ++i) {
        const int32_t l = cs.lits[off + i];
        const double lv = l > 0 ? s.xn[l] : 1 - s.xn[-l];
        lmax = std::max(lmax, lv);
        lsum += lv;
        negs += l < 0;
        // A^T y+ for x: the literal's sign (w > 0) or minus it (w < 0).
        const long double yv = std::max(0.0, s.y[pos ? r0 : r0 + i]);
        acc[std::abs(l)] += (l > 0) == pos ? yv : -yv;
        if (!pos) {
          ysum += yv;
          by += l < 0 ? yv : 0.0L;
        }
      }
      if (pos) {
        ysum = std::max(0.0, s.y[r0]);
        by = (1 - negs) * ysum;
      }
      g += by + std::min<long double>(0, w - ysum);
      gabs += std::fabs(by) + w + 2 * ysum + static_cast<long double>(pos ? len : 1) * ysum;
      primal += w * (pos ? std::max(0.0, 1 - lsum) : lmax);
    }
  }
#pragma omp parallel for num_threads(nt) schedule(static, 4096) reduction(+ : g, gabs, primal) if (nt > 1 && n > 4096)
  for (int32_t a = 1; a <= n; ++a) {
    long double rc = lp.c[a];
    for (int t = 0; t < team; ++t) rc -= s.lacc[t][a];
    g += std::min<long double>(0, rc);
    gabs += std::fabs(lp.c[a]);
    primal += lp.c[a] * s.xn[a];
  }
  const long double leaves = static_cast<long double>(lp.nnz) * 2 + lp.rows() * 2 + n + 3 * K + lp.constant_terms + 4;
  const long double u = std::numeric_limits<long double>::epsilon() / 2;
  const long double v = g - 2 * leaves * u * gabs;
  double bound = static_cast<double>(v);
  if (static_cast<long double>(bound) > v) bound = std::nextafter(bound, -std::numeric_limits<double>::infinity());
  return {bound, static_cast<double>(primal)};
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Restart: a new anchor at the current iterate, and the primal weight moved
// halfway (in log scale) toward the ratio of the dual to the primal distance
// travelled since the last restart (PDLP's smoothing 0.5).
void restart(const Lp& lp, State& s) {
  double dx = 0, dy = 0;
  for (int32_t a = 1; a <= lp.n; ++a)
    if (lp.tx[a] > 0) dx += (s.x[a] - s.x0[a]) * (s.x[a] - s.x0[a]) / lp.tx[a];
  const ClauseSet& cs = *lp.cs;
  for (size_t k = 0; k < lp.clause.size(); ++k) {
    const int64_t c = lp.clause[k];
    const double len = static_cast<double>(cs.offsets[c + 1] - cs.offsets[c]);
    const bool pos = cs.weights[c] > 0;
    dx += (s.z[k] - s.z0[k]) * (s.z[k] - s.z0[k]) * (pos ? 1.0 : len);
    for (int64_t r = lp.row_off[k]; r < lp.row_off[k + 1]; ++r)
      dy += (s.y[r] - s.y0[r]) * (s.y[r] - s.y0[r]) * (pos ? len + 1 : 2.0);
  }
  if (dx > 1e-20 && dy > 1e-20) s.omega = std::exp(0.5 * std::log(std::sqrt(dy / dx)) + 0.5 * std::log(s.omega));
  s.x0 = s.x;
  s.z0 = s.z;
  s.y0 = s.y;
}

}  // namespace

PdhgOutcome lp_bound_pdhg(const mln::Network& net, const PdhgOptions& opts) {
  const auto t0 = Clock::now();
  const int nt = opts.threads > 0 ? opts.threads : omp_get_max_threads();
  const Lp lp = build_lp(net);
  State s;
  s.x.assign(static_cast<size_t>(lp.n) + 1, 0.0);
  for (int32_t a = 1; a <= lp.n; ++a)
    if (lp.tx[a] == 0) s.x[a] = lp.c[a] < 0 ? 1.0 : 0.0;  // in no row: its best value at once
  s.xn = s.x0 = s.x;
  s.z.assign(lp.clause.size(), 0.0);
  s.z0 = s.z;
  s.y.assign(static_cast<size_t>(lp.rows()), 0.0);
  s.y0 = s.y;
  s.aty.assign(s.x.size(), 0.0);
  s.acc.assign(static_cast<size_t>(nt), std::vector<double>(s.x.size(), 0.0));
  s.lacc.assign(static_cast<size_t>(nt), std::vector<long double>(s.x.size(), 0.0L));
  PdhgOutcome out;
  out.bound = unit_bound(net);
  out.primal = std::numeric_limits<double>::infinity();
  std::vector<double> x_best = s.x;
  const int every = std::max(1, opts.eval_every);
  const double gamma = 1.0;  // full reflection (cuPDLPx)
  int64_t k = 0;             // iterations since the last restart
  double r_start = -1, r_last = std::numeric_limits<double>::infinity();
  for (int64_t it = 0;; ++it) {
    const bool last = it >= opts.max_iterations || (opts.stop && opts.stop->should_stop()) ||
                      (opts.time_limit_s > 0 && seconds_since(t0) >= opts.time_limit_s);
    if (it % every == 0 || last) {
      const Eval e = evaluate(lp, s, nt);
      out.bound = std::max(out.bound, e.bound);
      if (e.primal < out.primal) {
        out.primal = e.primal;
        x_best = s.xn;
      }
      out.iterations = it;
      out.seconds = seconds_since(t0);
      if (opts.progress) opts.progress({out.seconds, it, out.bound, out.primal});
      const double target = opts.bound_target ? opts.bound_target->load() : std::numeric_limits<double>::infinity();
      if (out.primal - out.bound <= opts.rel_gap * std::max(1.0, std::fabs(out.primal)) || out.bound >= target) {
        out.converged = true;
        break;
      }
      if (last) break;
    }
    const StepNorms d = step(lp, s, static_cast<double>(k + 1) / static_cast<double>(k + 2), gamma, nt);
    const double r = std::sqrt(s.omega * d.px + d.dy / s.omega);
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
        restart(lp, s);
        ++out.restarts;
        k = 0;
        r_last = std::numeric_limits<double>::infinity();
      }
    }
  }
  // The best primal point rounded: x >= 0.5 as lp_relaxation rounds, and
  // x > 0.5, which differs where the LP's optimum is half-integral (class:
  // many x = 0.5 whose rounding up violates their pairwise clauses).
  auto cost_of = [&](const std::vector<uint8_t>& t) {
    return nt > 1 ? total_cost_threads(net.clauses, t) : total_cost(net.clauses, t);
  };
  for (const bool strict : {false, true}) {
    std::vector<uint8_t> t(static_cast<size_t>(lp.n) + 1, 0);
    for (int32_t a = 1; a <= lp.n; ++a) t[a] = (strict ? x_best[a] > 0.5 : x_best[a] >= 0.5) ? 1 : 0;
    const double c = cost_of(t);
    if (out.state.empty() || c < out.state_cost) {
      out.state = std::move(t);
      out.state_cost = c;
    }
  }
  out.bound = std::min(out.bound, out.state_cost);
  out.seconds = seconds_since(t0);
  return out;
}

PdhgThread::PdhgThread(const mln::Network& net, PdhgOptions po, StopToken* parent) : stop_(parent, &cancel_) {
  po.stop = &stop_;
  po.bound_target = &target_;
  po.progress = [this](const PdhgProgress& pr) { bound_ = pr.bound; };
  try {
    th_ = std::thread([this, &net, po] {
      try {
        out_ = lp_bound_pdhg(net, po);
        ok_ = true;
        bound_ = out_.bound;
        if (!out_.state.empty()) state_cost_ = out_.state_cost;
      } catch (...) {  // out of memory: the caller's other bound stands
      }
      done_ = true;
    });
    started_ = true;
  } catch (const std::system_error&) {  // no thread: the caller solves in place or does without
  }
}

bool PdhgThread::join(PdhgOutcome& out) {
  if (th_.joinable()) th_.join();
  if (!ok_) return false;
  out = std::move(out_);
  ok_ = false;
  return true;
}

void PdhgThread::cancel_and_join() {
  cancel_ = true;
  if (th_.joinable()) th_.join();
}

}  // namespace mln::solver
