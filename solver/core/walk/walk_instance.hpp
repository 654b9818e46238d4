// The search layout of one (sub)network: every walk and sampler (walk/,
// marginal/, learn/) reads its clauses in this form, on the CPU and, laid
// out the same way, on the GPU.
#pragma once

#include <cstdint>

#include "format/host_array.hpp"
#include "format/network.hpp"

namespace mln::solver {

// HostArray: format/host_array.hpp (written in full on threads, not zeroed first).
using mln::HostArray;

// The clauses of one (sub)network in the layout the search uses.  Weights
// are fixed point (int64, scale 2^k): incremental make/break sums then stay
// exact, with no floating-point drift in "delta > 0" tests.
struct WalkInstance {
  int32_t n = 0;                   // atoms, 0-based here (network id - 1)
  int64_t m = 0;                   // clauses
  HostArray<int64_t> cl_off;       // CSR over clauses, size m + 1
  HostArray<uint32_t> cl_lit;      // atom << 1 | (literal is positive)
  HostArray<int64_t> occ_off;      // CSR over atoms, size n + 1
  HostArray<uint32_t> occ;         // clause << 1 | (literal is positive)
  HostArray<int64_t> w;            // fixed-point weights (signed)
  double scale = 1;                // fixed = round(weight * scale)
  int64_t hard_fixed = 0;          // kHardThreshold in fixed point
  int64_t max_clause_len = 0;
  // Set by walk_instance_header only: the arrays above are empty and the
  // GPU walk lays them out in device memory from these clauses (which must
  // outlive the instance).
  const mln::ClauseSet* source = nullptr;
  bool header_only() const { return source != nullptr && cl_off.empty(); }
};

// Builds the search layout of `net` (atoms 1..num_atoms become 0..n-1).
WalkInstance build_walk_instance(const mln::Network& net);

// The layout's sizes, scale and longest clause only, for the GPU walk to
// lay out on the device itself (walksat_gpu.hpp), where building the
// occurrence lists costs a fraction of the host's sort per atom
// (docs/solver/walk.md).
WalkInstance walk_instance_header(const mln::Network& net);

// The largest power-of-two scale that keeps `sum` (the summed |weight|)
// below 2^61, so that no sum of fixed-point weights overflows int64.
double fixed_point_scale_of_sum(double sum);

}  // namespace mln::solver
