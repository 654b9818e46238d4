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
//
// The step's formulas (lp_pdhg_rules.hpp) and the loop (pdhg_loop,
// lp_pdhg_detail.hpp) are shared with the GPU backend (lp_pdhg_gpu.cu).
// Here: the LP's construction, the bound g and the rounding, which both
// backends call; the OpenMP backend; the dispatch between the devices.
#include "core/bound/lp_pdhg.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/base/network_cost.hpp"
#include "core/bound/lp_bound.hpp"
#include "core/bound/lp_pdhg_detail.hpp"
#include "core/bound/lp_pdhg_gpu.hpp"
#include "core/bound/lp_pdhg_rules.hpp"
#include "core/walk/walksat_gpu.hpp"

namespace mln::solver {

LpShape lp_shape(const ClauseSet& cs) {
  const int64_t m = static_cast<int64_t>(cs.size());
  int64_t k = 0, nnz = 0, rows = 0;
#pragma omp parallel for schedule(static) reduction(+ : k, nnz, rows) if (m > (int64_t{1} << 20))
  for (int64_t c = 0; c < m; ++c) {
    const int64_t len = cs.offsets[c + 1] - cs.offsets[c];
    const double w = cs.weights[c];
    if (!lp_row_clause(len, w)) continue;
    ++k;
    nnz += len;
    rows += lp_rows_of(len, w);
  }
  return {k, nnz, rows};
}

namespace pdhg_detail {

// On OpenMP threads by blocks of clauses: each block's LP clauses and rows
// are counted, then placed at their prefix, as the serial loop would (10^8
// clauses took seconds on one thread beside the walk, issue #45).  The unit
// and empty clauses' terms are summed afterwards in clause order, so that
// c and the constant are the same doubles on any number of threads.
Lp build_lp(const mln::Network& net, const std::function<bool()>& stop) {
  Lp lp;
  if (stop && stop()) {  // before its arrays (two doubles an atom)
    lp.stopped = true;
    return lp;
  }
  std::atomic<bool> cut{false};
  auto halt = [&] {  // on the block loops' threads
    if (!stop) return false;
    if (cut.load(std::memory_order_relaxed)) return true;
    if (!stop()) return false;
    cut.store(true, std::memory_order_relaxed);
    return true;
  };
  const ClauseSet& cs = net.clauses;
  lp.cs = &cs;
  lp.n = net.num_atoms;
  lp.c.assign(static_cast<size_t>(lp.n) + 1, 0.0);
  lp.tx.assign(lp.c.size(), 0.0);
  const int64_t m = static_cast<int64_t>(cs.size());
  constexpr int64_t kBlock = int64_t{1} << 16;
  const int64_t nb = (m + kBlock - 1) / kBlock;
  std::vector<int64_t> bk(static_cast<size_t>(nb) + 1, 0), br(bk.size(), 0), bl(bk.size(), 0);
  std::vector<std::vector<int64_t>> small(static_cast<size_t>(nb));  // each block's unit and empty clauses
  const bool par = m > kBlock;
#pragma omp parallel for schedule(static) if (par)
  for (int64_t b = 0; b < nb; ++b) {
    if (halt()) continue;
    for (int64_t c = b * kBlock; c < std::min(m, (b + 1) * kBlock); ++c) {
      const int64_t len = cs.offsets[c + 1] - cs.offsets[c];
      const double w = cs.weights[c];
      if (w == 0 || (len == 0 && w < 0)) continue;  // never costs
      if (len <= 1) {
        small[b].push_back(c);
        continue;
      }
      ++bk[b + 1];  // lp_row_clause(len, w)
      br[b + 1] += lp_rows_of(len, w);
      bl[b + 1] += len;
    }
  }
  if (cut.load()) {
    lp.stopped = true;
    return lp;
  }
  for (int64_t b = 0; b < nb; ++b) {
    bk[b + 1] += bk[b];
    br[b + 1] += br[b];
    bl[b + 1] += bl[b];
  }
  lp.clause.resize(static_cast<size_t>(bk[nb]));
  lp.row_off.resize(static_cast<size_t>(bk[nb]) + 1);
  lp.row_off[0] = 0;
  lp.nnz = bl[nb];
  std::vector<int64_t> deg(lp.c.size(), 0);  // per atom: its entries in rows
#pragma omp parallel for schedule(static) if (par)
  for (int64_t b = 0; b < nb; ++b) {
    if (halt()) continue;
    int64_t k = bk[b], r = br[b];
    for (int64_t c = b * kBlock; c < std::min(m, (b + 1) * kBlock); ++c) {
      const int64_t len = cs.offsets[c + 1] - cs.offsets[c];
      const double w = cs.weights[c];
      if (!lp_row_clause(len, w)) continue;
      lp.clause[k] = c;
      r += lp_rows_of(len, w);
      lp.row_off[++k] = r;
      for (int64_t i = cs.offsets[c]; i < cs.offsets[c + 1]; ++i)
        __atomic_fetch_add(&deg[std::abs(cs.lits[i])], 1, __ATOMIC_RELAXED);
    }
  }
  if (cut.load()) {
    lp.stopped = true;
    return lp;
  }
  for (const std::vector<int64_t>& blk : small)
    for (int64_t c : blk) {
      // Empty: always costs w.  Unit: if_false + (if_true - if_false) x.
      const double w = cs.weights[c];
      double if_false = w, if_true = 0;
      if (cs.offsets[c + 1] > cs.offsets[c]) {
        const int32_t l = cs.lits[cs.offsets[c]];
        const bool atom_true_costs = (w < 0) == (l > 0);
        if_false = atom_true_costs ? 0 : std::fabs(w);
        if_true = atom_true_costs ? std::fabs(w) : 0;
        lp.c[std::abs(l)] += if_true - if_false;
      }
      lp.constant += if_false;
      lp.constant_abs += std::fabs(if_false);
      ++lp.constant_terms;
    }
#pragma omp parallel for schedule(static) if (par)
  for (size_t a = 0; a < deg.size(); ++a) lp.tx[a] = deg[a] > 0 ? 1.0 / deg[a] : 0.0;
  return lp;
}

int default_threads() { return omp_get_max_threads(); }

int eval_threads(int nt, int32_t n) {
  const int64_t per = 16 * (static_cast<int64_t>(n) + 1), budget = int64_t{8} << 30;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(nt, budget / per)));
}

std::vector<double> initial_x(const Lp& lp) {
  std::vector<double> x(static_cast<size_t>(lp.n) + 1, 0.0);
  for (int32_t a = 1; a <= lp.n; ++a)
    if (lp.tx[a] == 0) x[a] = lp.c[a] < 0 ? 1.0 : 0.0;  // in no row: its best value at once
  return x;
}

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
Eval evaluate(const Lp& lp, const double* xn, const double* y, std::vector<std::vector<long double>>& lacc, int nt) {
  const ClauseSet& cs = *lp.cs;
  const int32_t n = lp.n;
  const int64_t K = static_cast<int64_t>(lp.clause.size());
  long double g = lp.constant, gabs = lp.constant_abs, primal = lp.constant;
  nt = std::min(nt, static_cast<int>(lacc.size()));
  int team = 1;
  // Each thread's sums, added in thread order (OpenMP's reduction adds them
  // in the order the threads finish, so the bound's last bits, and the
  // decisions taken on it, changed from run to run): with static schedules
  // a run is then a function of its input and thread count.
  std::vector<long double> part(3 * static_cast<size_t>(std::max(1, nt)), 0.0L);
#pragma omp parallel num_threads(nt) if (nt > 1 && K > 4096)
  {
#pragma omp single
    team = omp_get_num_threads();
    const int tid = omp_get_thread_num();
    std::vector<long double>& acc = lacc[tid];
    long double tg = 0, tgabs = 0, tprimal = 0;
    if (acc.size() != static_cast<size_t>(n) + 1) acc.assign(static_cast<size_t>(n) + 1, 0.0L);
    else std::fill(acc.begin(), acc.end(), 0.0L);
#pragma omp for schedule(static, 1024)
    for (int64_t k = 0; k < K; ++k) {
      const int64_t c = lp.clause[k], off = cs.offsets[c], len = cs.offsets[c + 1] - off, r0 = lp.row_off[k];
      const double w = std::fabs(cs.weights[c]);
      const bool pos = cs.weights[c] > 0;
      long double ysum = 0, by = 0;
      double lmax = 0, lsum = 0;
      int negs = 0;
      for (int64_t i = 0; i < len; ++i) {
        const int32_t l = cs.lits[off + i];
        const double lv = l > 0 ? xn[l] : 1 - xn[-l];
        lmax = std::max(lmax, lv);
        lsum += lv;
        negs += l < 0;
        // A^T y+ for x: the literal's sign (w > 0) or minus it (w < 0).
        const long double yv = std::max(0.0, y[pos ? r0 : r0 + i]);
        acc[std::abs(l)] += (l > 0) == pos ? yv : -yv;
        if (!pos) {
          ysum += yv;
          by += l < 0 ? yv : 0.0L;
        }
      }
      if (pos) {
        ysum = std::max(0.0, y[r0]);
        by = (1 - negs) * ysum;
      }
      tg += by + std::min<long double>(0, w - ysum);
      tgabs += std::fabs(by) + w + 2 * ysum + static_cast<long double>(pos ? len : 1) * ysum;
      tprimal += w * (pos ? std::max(0.0, 1 - lsum) : lmax);
    }
    part[3 * tid] = tg, part[3 * tid + 1] = tgabs, part[3 * tid + 2] = tprimal;
  }
  for (int t = 0; t < team; ++t) g += part[3 * t], gabs += part[3 * t + 1], primal += part[3 * t + 2];
  std::fill(part.begin(), part.end(), 0.0L);
  int team2 = 1;
#pragma omp parallel num_threads(nt) if (nt > 1 && n > 4096)
  {
#pragma omp single
    team2 = omp_get_num_threads();
    const int tid = omp_get_thread_num();
    long double tg = 0, tgabs = 0, tprimal = 0;
#pragma omp for schedule(static, 4096)
    for (int32_t a = 1; a <= n; ++a) {
      long double rc = lp.c[a];
      for (int t = 0; t < team; ++t) rc -= lacc[t][a];
      tg += std::min<long double>(0, rc);
      tgabs += std::fabs(lp.c[a]);
      tprimal += lp.c[a] * xn[a];
    }
    part[3 * tid] = tg, part[3 * tid + 1] = tgabs, part[3 * tid + 2] = tprimal;
  }
  for (int t = 0; t < team2; ++t) g += part[3 * t], gabs += part[3 * t + 1], primal += part[3 * t + 2];
  const long double leaves = static_cast<long double>(lp.nnz) * 2 + lp.rows() * 2 + n + 3 * K + lp.constant_terms + 4;
  const long double u = std::numeric_limits<long double>::epsilon() / 2;
  const long double v = g - 2 * leaves * u * gabs;
  double bound = static_cast<double>(v);
  if (static_cast<long double>(bound) > v) bound = std::nextafter(bound, -std::numeric_limits<double>::infinity());
  return {bound, static_cast<double>(primal)};
}

// The best primal point rounded: x >= 0.5 as lp_relaxation rounds, and
// x > 0.5, which differs where the LP's optimum is half-integral (class:
// many x = 0.5 whose rounding up violates their pairwise clauses).
void round_best(const mln::Network& net, const Lp& lp, const std::vector<double>& x_best, int nt, Clock::time_point t0,
                PdhgOutcome& out) {
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
}

}  // namespace pdhg_detail

namespace {

using namespace pdhg_detail;

// The OpenMP backend (pdhg_loop's B): the iterate (x, z, y), its anchor
// (x0, z0, y0), the last step's x (xn), A^T y for the x columns (aty), and
// the per-thread arrays that A^T is scattered into.  A x runs clause by
// clause; A^T y is scattered into per-thread atom arrays (an atom-major
// transpose reads y at random, which is slower on RC-like networks).
class CpuPdhg {
 public:
  CpuPdhg(const Lp& lp, int nt) : lp_(lp), nt_(nt) {
    x = initial_x(lp);
    xn = x0 = x_best = x;
    z.assign(lp.clause.size(), 0.0);
    z0 = z;
    y.assign(static_cast<size_t>(lp.rows()), 0.0);
    y0 = y;
    aty.assign(x.size(), 0.0);
    acc.assign(static_cast<size_t>(nt), std::vector<double>(x.size(), 0.0));
    lacc.resize(static_cast<size_t>(eval_threads(nt, lp.n)));  // sized by evaluate's threads
  }
  Eval evaluate() { return pdhg_detail::evaluate(lp_, xn.data(), y.data(), lacc, nt_); }
  void keep_best() { x_best = xn; }
  int eval_stride() const { return 1; }  // an evaluation costs about an iteration here
  double omega() const { return omega_; }
  StepNorms step(double lambda, double gamma, bool norms);
  void restart();
  std::vector<double> x_best;

 private:
  const Lp& lp_;
  const int nt_;
  std::vector<double> x, xn, x0, z, z0, y, y0, aty;
  std::vector<std::vector<double>> acc;
  std::vector<std::vector<long double>> lacc;
  double omega_ = 1;         // primal weight
  const double eta_ = 0.99;  // step; < 1 by the preconditioning
};

// One PDHG step T(v) from v = (x, z, y), then the reflected Halpern update
// v <- lambda ((1 + gamma) T(v) - gamma v) + (1 - lambda) v0.  The
// distances are summed whatever `norms` says (they cost nothing here).
StepNorms CpuPdhg::step(double lambda, double gamma, bool) {
  const ClauseSet& cs = *lp_.cs;
  StepCoef p;
  p.tau = eta_ / omega_;
  p.sigma = eta_ * omega_;
  p.a1 = lambda * (1 + gamma);
  p.a2 = lambda * gamma;
  p.a3 = 1 - lambda;
  const int32_t n = lp_.n;
  const int64_t K = static_cast<int64_t>(lp_.clause.size());
  const int nt = nt_;
  double px = 0, dy = 0;
  int team = 1;
  // Each thread's distances, added in thread order (evaluate's reason).
  std::vector<double> part(2 * static_cast<size_t>(std::max(1, nt)), 0.0);
#pragma omp parallel for num_threads(nt) schedule(static, 4096) if (nt > 1 && n > 4096)
  for (int32_t a = 1; a <= n; ++a) xn[a] = x_step(x[a], lp_.tx[a], lp_.c[a], aty[a], p.tau);
#pragma omp parallel num_threads(nt) if (nt > 1 && K > 4096)
  {
#pragma omp single
    team = omp_get_num_threads();
    const int tid = omp_get_thread_num();
    std::vector<double>& ac = acc[tid];
    std::fill(ac.begin(), ac.end(), 0.0);
    double tpx = 0, tdy = 0;
#pragma omp for schedule(static, 1024)
    for (int64_t k = 0; k < K; ++k) {
      const int64_t c = lp_.clause[k], off = cs.offsets[c], len = cs.offsets[c + 1] - off, r0 = lp_.row_off[k];
      const double w = cs.weights[c];
      const int32_t* lits = cs.lits.data() + off;
      clause_step(lits, len, w, y.data() + r0, y0.data() + r0, z[k], z0[k], xn.data(), x.data(), p, tpx, tdy);
      for (int64_t i = 0; i < len; ++i) {  // A^T y: the new y of the literal's row
        const double v = y[w > 0 ? r0 : r0 + i];
        ac[std::abs(lits[i])] += x_coef_negative(lits[i], w) ? -v : v;
      }
    }
    part[2 * tid] = tpx, part[2 * tid + 1] = tdy;
  }
  for (int t = 0; t < team; ++t) px += part[2 * t], dy += part[2 * t + 1];
  std::fill(part.begin(), part.end(), 0.0);
  int team2 = 1;
#pragma omp parallel num_threads(nt) if (nt > 1 && n > 4096)
  {
#pragma omp single
    team2 = omp_get_num_threads();
    const int tid = omp_get_thread_num();
    double tpx = 0;
#pragma omp for schedule(static, 4096)
    for (int32_t a = 1; a <= n; ++a) {
      double sum = 0;
      for (int t = 0; t < team; ++t) sum += acc[t][a];
      aty[a] = sum;
      tpx += x_update(x[a], xn[a], x0[a], lp_.tx[a], p);
    }
    part[2 * tid] = tpx;
  }
  for (int t = 0; t < team2; ++t) px += part[2 * t];
  return {px, dy};
}

// Restart: a new anchor at the current iterate, omega moved (next_omega).
void CpuPdhg::restart() {
  double dx = 0, dy = 0;
  for (int32_t a = 1; a <= lp_.n; ++a)
    if (lp_.tx[a] > 0) dx += (x[a] - x0[a]) * (x[a] - x0[a]) / lp_.tx[a];
  const ClauseSet& cs = *lp_.cs;
  for (size_t k = 0; k < lp_.clause.size(); ++k) {
    const int64_t c = lp_.clause[k], r0 = lp_.row_off[k];
    clause_restart_norms(cs.offsets[c + 1] - cs.offsets[c], cs.weights[c], y.data() + r0, y0.data() + r0, z[k], z0[k],
                         dx, dy);
  }
  omega_ = next_omega(omega_, dx, dy);
  x0 = x;
  z0 = z;
  y0 = y;
}

PdhgOutcome lp_bound_pdhg_cpu(const mln::Network& net, const PdhgOptions& opts) {
  const auto t0 = Clock::now();
  const int nt = opts.threads > 0 ? opts.threads : default_threads();
  const Lp lp = build_lp(net, [&] { return out_of_time(opts, t0); });
  PdhgOutcome out;
  out.bound = unit_bound(net);
  if (lp.stopped || out_of_time(opts, t0)) {  // stopped in its set-up: the unit bound, no state
    out.seconds = seconds_since(t0);
    return out;
  }
  CpuPdhg b(lp, nt);
  pdhg_loop(b, opts, t0, out);
  round_best(net, lp, b.x_best, nt, t0, out);
  return out;
}

}  // namespace

PdhgOutcome lp_bound_pdhg(const mln::Network& net, const PdhgOptions& opts) {
  std::string gpu_error;
  if (opts.device != options::Device::kCpu) {
    std::string why;
    const bool have = gpu_walksat_available(&why);
    if (opts.device == options::Device::kGpu && !have)
      throw std::runtime_error("lp_bound_pdhg: device 'gpu' requested but no GPU is usable: " + why);
    if (have) {
      const auto t0 = Clock::now();
      try {
        PdhgOptions on_gpu = opts;
        if (opts.gpu_max_iterations > 0) on_gpu.max_iterations = opts.gpu_max_iterations;
        return lp_bound_pdhg_gpu(net, on_gpu);
      } catch (const GpuError& e) {  // out of device memory, or a failed device: the CPU solves it
        if (!opts.cpu_fallback) throw;
        gpu_error = e.what();
      }
      // The CPU gets what is left of the time cap, and its own iterations.
      PdhgOptions rest = opts;
      if (opts.time_limit_s > 0) rest.time_limit_s = std::max(1e-3, opts.time_limit_s - seconds_since(t0));
      PdhgOutcome out = lp_bound_pdhg_cpu(net, rest);
      out.gpu_error = gpu_error;
      return out;
    }
  }
  return lp_bound_pdhg_cpu(net, opts);
}

}  // namespace mln::solver
