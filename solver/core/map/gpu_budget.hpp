// Where a GPU-walked component's PDHG bound runs, from the two engines'
// device-memory needs and what the device has free (issue #45): beside the
// walk when both fit, after it (its memory given back first) when only one
// at a time does, else not at all (the unit bound: a CPU solve of an LP
// that large would need as much host memory as the GPU lacked).
#pragma once

#include <cstdint>

#include "core/bound/lp_pdhg.hpp"

namespace mln::solver {

// Device bytes at the peak of the GPU walk (walk_weighted_gpu.cuh's state
// and walksat_gpu_common.cuh's layout) on n atoms, m clauses, lits literals.
int64_t walk_device_bytes(int64_t n, int64_t m, int64_t lits);

// Device bytes at the peak of the GPU PDHG bound (lp_pdhg_gpu.cu: its LP,
// iterate and transpose, the transpose's sort at its widest).
int64_t pdhg_device_bytes(int64_t n, const LpShape& lp);

enum class BoundPlace { Beside, After, None };

// Beside when walk + bound fit in free_bytes less a margin (the context's
// and fragmentation's share), After when the bound fits alone, else None.
// free_bytes 0 (unknown): Beside, as without a plan.
BoundPlace place_bound(int64_t walk_bytes, int64_t bound_bytes, int64_t free_bytes);

const char* bound_place_name(BoundPlace p);

}  // namespace mln::solver
