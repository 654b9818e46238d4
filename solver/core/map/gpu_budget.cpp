// The GPU engines' device-memory needs and the bound's place (gpu_budget.hpp).
#include "core/map/gpu_budget.hpp"

#include <algorithm>

namespace mln::solver {

// The walk lays its clauses out first (walksat_gpu.cu's lay_out_on_device:
// 24 bytes per clause and 16 per literal, then 16 and 20 while the
// occurrences sort, 8 per atom for their offsets), then keeps 16 per clause
// and 8 per literal (offsets, weights; literals, occurrences) beside its
// state: per clause 45 bytes (true counts 4, break counts 4, dynamic
// weights 8, claims 8, the violated lists' two buffers 8, candidates 4,
// priorities 8, bumps 1), per atom 10 (truth, best, stamps, parts).  A
// radix sort's scratch: 2 bytes per literal (CUB's onesweep keeps about one).
int64_t walk_device_bytes(int64_t n, int64_t m, int64_t lits) {
  const int64_t layout = std::max(24 * m + 16 * lits, 16 * m + 22 * lits) + 8 * n;
  const int64_t walking = 61 * m + 8 * lits + 18 * n;
  return std::max(layout, walking);
}

// Per LP clause: literal offsets, weights, first rows 24, z and its anchor
// 16; per row y and its anchor 16; per literal the literals and A^T's
// entries 8, and while A^T sorts its keys (two buffers), values and the
// sort's scratch 14 more; per atom c, tx, x, xn, x0, A^T y and A^T's
// offsets 56.
int64_t pdhg_device_bytes(int64_t n, const LpShape& lp) {
  return 40 * lp.clauses + 16 * lp.rows + 22 * lp.nnz + 56 * n;
}

BoundPlace place_bound(int64_t walk_bytes, int64_t bound_bytes, int64_t free_bytes) {
  if (free_bytes <= 0) return BoundPlace::Beside;
  // The context, the sort's scratch and fragmentation: 1 GiB and 5% of the need.
  auto fits = [free_bytes](int64_t need) { return need + (int64_t{1} << 30) + need / 20 <= free_bytes; };
  if (fits(walk_bytes + bound_bytes)) return BoundPlace::Beside;
  if (fits(bound_bytes)) return BoundPlace::After;
  return BoundPlace::None;
}

const char* bound_place_name(BoundPlace p) {
  switch (p) {
    case BoundPlace::Beside: return "beside the walk";
    case BoundPlace::After: return "after the walk";
    case BoundPlace::None: return "not on the GPU";
  }
  return "?";
}

}  // namespace mln::solver
