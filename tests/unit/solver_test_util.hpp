// Helpers shared by the solver tests: small networks and brute force.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "format/network.hpp"
#include "core/base/rng.hpp"

namespace mln::solver::testing {

// Adds a clause from a literal list.
inline void add_clause(mln::Network& net, std::vector<int32_t> lits, double w) {
  std::sort(lits.begin(), lits.end());
  net.clauses.add(lits.data(), lits.size(), w);
}

// Tuffy's smoke network (docs/tuffy-reference.md section 5.9).
inline mln::Network smoke_network() {
  mln::Network net;
  net.num_atoms = 6;
  add_clause(net, {-6, 3}, 0.5);
  add_clause(net, {4}, 0.5);
  add_clause(net, {5}, 0.4);
  add_clause(net, {6}, 0.8);
  add_clause(net, {2}, 0.5);
  add_clause(net, {-5, 1}, 0.5);
  net.is_query = {0, 1, 1, 1, 1, 0, 0};  // Cancer(*) are the query atoms
  return net;
}

// Random network over n atoms: clauses of 1-3 literals, mixed positive and
// negative weights, some hard clauses.  Every atom is a query atom.
inline mln::Network random_mixed_network(int32_t n, int m, uint64_t seed) {
  Rng rng(derive_seed(seed, 77));
  mln::Network net;
  net.num_atoms = n;
  net.is_query.assign(n + 1, 1);
  for (int c = 0; c < m; ++c) {
    int k = 1 + static_cast<int>(rng.below(3));
    std::vector<int32_t> lits;
    while (static_cast<int>(lits.size()) < k) {
      int32_t a = 1 + static_cast<int32_t>(rng.below(n));
      bool dup = false;
      for (int32_t l : lits) dup |= (l == a || l == -a);
      if (!dup) lits.push_back((rng.next() >> 63) ? a : -a);
    }
    double r = rng.uniform(), w;
    if (r < 0.08) w = kHardWeight;
    else if (r < 0.35) w = -(0.1 + 2.0 * rng.uniform());
    else w = 0.1 + 2.0 * rng.uniform();
    add_clause(net, lits, w);
  }
  return net;
}

// The tolerance two computations of one cost are compared with.
inline double tol(double v) { return 1e-9 * std::max(1.0, std::fabs(v)); }

// Exact minimum cost over all 2^n assignments (n <= 20).
inline double brute_force_min_cost(const mln::Network& net) {
  const int n = net.num_atoms;
  std::vector<uint8_t> truth(n + 1, 0);
  double best = std::numeric_limits<double>::infinity();
  for (uint32_t bits = 0; bits < (1u << n); ++bits) {
    for (int a = 1; a <= n; ++a) truth[a] = (bits >> (a - 1)) & 1;
    best = std::min(best, total_cost(net.clauses, truth));
  }
  return best;
}

// P(atom true) by enumerating all 2^n worlds, P(x) ~ exp(-cost(x)).
inline std::vector<double> brute_force_marginals(const mln::Network& net) {
  const int n = net.num_atoms;
  std::vector<uint8_t> truth(n + 1, 0);
  std::vector<double> cost(size_t{1} << n);
  for (uint32_t bits = 0; bits < (1u << n); ++bits) {
    for (int a = 1; a <= n; ++a) truth[a] = (bits >> (a - 1)) & 1;
    cost[bits] = total_cost(net.clauses, truth);
  }
  const double lo = *std::min_element(cost.begin(), cost.end());
  std::vector<double> p(n + 1, 0.0);
  double z = 0;
  for (uint32_t bits = 0; bits < (1u << n); ++bits) {
    const double w = std::exp(-(cost[bits] - lo));
    z += w;
    for (int a = 1; a <= n; ++a)
      if ((bits >> (a - 1)) & 1) p[a] += w;
  }
  for (int a = 1; a <= n; ++a) p[a] /= z;
  return p;
}

inline double mean_abs_error(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 1; i < a.size(); ++i) s += std::fabs(a[i] - b[i]);
  return a.size() > 1 ? s / static_cast<double>(a.size() - 1) : 0.0;
}

}  // namespace mln::solver::testing
