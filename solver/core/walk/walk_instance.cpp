// The search layout of a (sub)network (walk_instance.hpp).
#include "core/walk/walk_instance.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace mln::solver {

double fixed_point_scale_of_sum(double sum) {
  int k = 40;
  while (k > -60 && std::ldexp(sum + 1.0, k) >= 0x1.0p61) --k;
  return std::ldexp(1.0, k);
}

WalkInstance walk_instance_header(const mln::Network& net) {
  WalkInstance in;
  const auto& cs = net.clauses;
  in.n = net.num_atoms;
  in.m = static_cast<int64_t>(cs.size());
  if (in.m >= (int64_t{1} << 31)) throw std::length_error("walksat: more than 2^31 clauses in one (sub)network");
  double wsum = 0;
  for (double w : cs.weights) wsum += std::fabs(w);
  in.scale = fixed_point_scale_of_sum(wsum);
  // Clamped: with small weights the scale is up to 2^40 and 1e7 * 2^40
  // overflows int64 (llround gave LLONG_MIN, so -dontBreak refused every
  // flip).  No fixed-point weight reaches 2^61 (fixed_point_scale_of_sum), so 2^62
  // means "no clause is hard", which is then true.
  in.hard_fixed = static_cast<int64_t>(std::llround(std::min(kHardThreshold * in.scale, 0x1.0p62)));
  int64_t max_len = 0;
#pragma omp parallel for schedule(static) reduction(max : max_len) if (in.m >= 100000)
  for (int64_t c = 0; c < in.m; ++c) max_len = std::max(max_len, cs.offsets[c + 1] - cs.offsets[c]);
  in.max_clause_len = max_len;
  in.source = &cs;
  return in;
}

WalkInstance build_walk_instance(const mln::Network& net) {
  WalkInstance in = walk_instance_header(net);
  in.source = nullptr;
  const auto& cs = net.clauses;
  in.cl_off.resize(cs.offsets.size());
  in.cl_lit.resize(cs.lits.size());
  in.w.resize(in.m);
  // On OpenMP threads (a piece may hold 10^7-10^8 clauses): literals and
  // weights per clause, atom degrees by atomic counts, the occurrence lists
  // filled by atomic cursors and then sorted per atom, so that each list is in
  // clause order whatever the threads did.
  std::vector<int64_t> deg(in.n + 1, 0);
  bool bad = false;
  const int32_t n = in.n;
  // Threads only for large pieces: small ones are built by many worker
  // threads at once, where a team each would only oversubscribe the cores.
  const bool par = in.m >= 100000;
#pragma omp parallel for schedule(static) reduction(|| : bad) if (par)
  for (int64_t c = 0; c < in.m; ++c) {
    in.cl_off[c] = cs.offsets[c];
    in.w[c] = static_cast<int64_t>(std::llround(cs.weights[c] * in.scale));
    for (int64_t i = cs.offsets[c]; i < cs.offsets[c + 1]; ++i) {
      const int32_t l = cs.lits[i];
      const uint32_t a = static_cast<uint32_t>((l > 0 ? l : -l) - 1);
      if (l == 0 || static_cast<int32_t>(a) >= n) {
        bad = true;
        continue;
      }
      in.cl_lit[i] = a << 1 | (l > 0 ? 1u : 0u);
      __atomic_fetch_add(&deg[a + 1], 1, __ATOMIC_RELAXED);
    }
  }
  in.cl_off[in.m] = cs.offsets[in.m];
  if (bad) throw std::invalid_argument("walksat: literal out of range");
  for (int32_t a = 0; a < in.n; ++a) deg[a + 1] += deg[a];
  in.occ_off.assign(deg.begin(), deg.end());
  in.occ.resize(in.cl_lit.size());
#pragma omp parallel for schedule(static) if (par)
  for (int64_t c = 0; c < in.m; ++c)
    for (int64_t i = in.cl_off[c]; i < in.cl_off[c + 1]; ++i) {
      const uint32_t l = in.cl_lit[i];
      in.occ[__atomic_fetch_add(&deg[l >> 1], 1, __ATOMIC_RELAXED)] = static_cast<uint32_t>(c) << 1 | (l & 1);
    }
#pragma omp parallel for schedule(dynamic, 1024) if (par)
  for (int32_t a = 0; a < n; ++a) std::sort(in.occ.begin() + in.occ_off[a], in.occ.begin() + in.occ_off[a + 1]);
  return in;
}

}  // namespace mln::solver
