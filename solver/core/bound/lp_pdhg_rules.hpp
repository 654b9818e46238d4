// The PDHG step's per-atom and per-clause rules (lp_pdhg.hpp's LP), one
// definition run by the OpenMP driver (lp_pdhg.cpp) and by the CUDA kernels
// (lp_pdhg_gpu.cu), so that the two backends iterate by the same formulas
// and the CPU tests check the GPU's arithmetic as well.
//
// Rows of clause k (two or more literals, w != 0): w > 0, one row
// sum_i s_i x_{a_i} + z_k >= 1 - #negated; w < 0, one row per literal i
// z_k - s_i x_{a_i} >= (s_i < 0), where s_i is the literal's sign.
// No CUDA types, no allocation: plain arithmetic on the caller's arrays.
#pragma once

#include <cmath>
#include <cstdint>

#include "mln/host_device.hpp"

namespace mln::solver::pdhg_detail {

// The step sizes and the reflected Halpern update's coefficients of one
// iteration: v <- a1 T(v) - a2 v + a3 v0.
struct StepCoef {
  double tau = 0, sigma = 0;  // primal and dual steps (eta / omega, eta * omega)
  double a1 = 0, a2 = 0, a3 = 0;
};

MLN_HD inline double clip01(double v) { return v < 0 ? 0 : v > 1 ? 1 : v; }

// Atom a's PDHG step: x's projected gradient step on c - A^T y (tx: 1 / its
// nonzeros; 0: in no row, where x stays at its best value).
MLN_HD inline double x_step(double x, double tx, double c, double aty, double tau) {
  return tx == 0 ? x : clip01(x - tau * tx * (c - aty));
}

// Atom a's Halpern update from the step's xn; returns its share of the
// primal distance in the preconditioner's metric (0 for an atom in no row).
MLN_HD inline double x_update(double& x, double xn, double x0, double tx, const StepCoef& p) {
  if (tx == 0) return 0;
  const double d = (xn - x) * (xn - x) / tx;
  x = p.a1 * xn - p.a2 * x + p.a3 * x0;
  return d;
}

// One clause's z and y steps and their Halpern updates, from the atoms'
// step xn and iterate x (extrapolated 2 xn - x): `lits` its `len`
// literals, `w` its weight, `y`/`y0` its rows (one if w > 0, len if w < 0),
// `z`/`z0` its clause variable.  Adds the primal (z) and dual distances
// moved to px and dy.
MLN_HD inline void clause_step(const int32_t* lits, int64_t len, double w, double* y, const double* y0, double& z,
                               double z0, const double* xn, const double* x, const StepCoef& p, double& px,
                               double& dy) {
  const bool pos = w > 0;
  const int64_t rows = pos ? 1 : len;
  const double tz = pos ? 1.0 : 1.0 / static_cast<double>(len);
  double ysum = 0;
  for (int64_t r = 0; r < rows; ++r) ysum += y[r];
  const double zn = clip01(z - p.tau * tz * (fabs(w) - ysum));
  const double zb = 2 * zn - z;
  px += (zn - z) * (zn - z) / tz;
  z = p.a1 * zn - p.a2 * z + p.a3 * z0;
  if (pos) {
    double act = zb, b = 1;
    for (int64_t i = 0; i < len; ++i) {
      const int32_t l = lits[i];
      const int32_t a = l > 0 ? l : -l;
      const double xb = 2 * xn[a] - x[a];
      act += l > 0 ? xb : -xb;
      b -= l < 0 ? 1 : 0;
    }
    const double S = 1.0 / static_cast<double>(len + 1);
    const double v = y[0] + p.sigma * S * (b - act);
    const double yn = v > 0 ? v : 0;
    dy += (yn - y[0]) * (yn - y[0]) / S;
    y[0] = p.a1 * yn - p.a2 * y[0] + p.a3 * y0[0];
  } else {
    for (int64_t i = 0; i < len; ++i) {
      const int32_t l = lits[i];
      const int32_t a = l > 0 ? l : -l;
      const double xb = 2 * xn[a] - x[a];
      const double b = l < 0 ? 1.0 : 0.0, act = l > 0 ? zb - xb : zb + xb;
      const double v = y[i] + p.sigma * 0.5 * (b - act);
      const double yn = v > 0 ? v : 0;
      dy += (yn - y[i]) * (yn - y[i]) / 0.5;
      y[i] = p.a1 * yn - p.a2 * y[i] + p.a3 * y0[i];
    }
  }
}

// The coefficient of literal i's atom in its row (clause weight w): the
// literal's sign in the one row of w > 0, minus it in row i of w < 0.
MLN_HD inline bool x_coef_negative(int32_t l, double w) { return (l > 0) != (w > 0); }

// One clause's distances from the anchor since the last restart, in the
// preconditioner's metric: z's into dx, its rows' into dy.
MLN_HD inline void clause_restart_norms(int64_t len, double w, const double* y, const double* y0, double z, double z0,
                                        double& dx, double& dy) {
  const bool pos = w > 0;
  dx += (z - z0) * (z - z0) * (pos ? 1.0 : static_cast<double>(len));
  const int64_t rows = pos ? 1 : len;
  const double S = pos ? static_cast<double>(len + 1) : 2.0;
  for (int64_t r = 0; r < rows; ++r) dy += (y[r] - y0[r]) * (y[r] - y0[r]) * S;
}

}  // namespace mln::solver::pdhg_detail
