// The weighted walk's three round phases (walk_weighted_rules.hpp's
// propose, flip, settle) with a WARP per violated entry, its lanes over the
// occurrence lists.  The per-thread rules walk an atom's occurrences one by
// one (~30 dependent loads per proposal), and a round waits for its slowest
// thread; by warps a round is several times shorter (the one-chain
// sampler's SAT phase, docs/solver/marginal.md).
//
// Same decisions as the per-thread rules, and mostly their code: propose
// and settle are the rules' propose_by and settle_by with lane 0 writing
// and the lanes striding over the occurrences; the lanes sum each literal's
// gain (dyadic dynamic weights and int64 true weights sum exactly in any
// order), and every lane runs the proposal's control flow with the same
// random stream, so the tie-breaks, the noise and the priority are the
// rules'.
// Flip updates the true counts with atomics (an atom that occurs twice in a
// clause is then still counted in order).
#pragma once

#include "core/walk/walk_weighted_rules.hpp"

namespace mln::solver::gpu_detail::warp_rules {

using namespace weighted;

constexpr unsigned kFull = 0xffffffffu;

// A round goes by warps while its violated list holds at most this many
// entries per warp (the tail of a walk); longer lists go by threads.
constexpr int64_t kEntriesPerWarp = 8;

template <class T>
__device__ inline T warp_sum(T v) {
  for (int s = 16; s > 0; s >>= 1) v += __shfl_xor_sync(kFull, v, s);
  return v;
}

// score() with the lanes over a's occurrences (each type summed across the
// lanes before the conversion, as score() converts its int64 sum); every
// lane returns the total.
__device__ inline double warp_score(const Inst& I, const State& S, uint32_t a, int use_dw, int lane) {
  if (use_dw) return warp_sum(gain<double>(I, S, a, [&](uint32_t c) { return S.dw[c]; }, lane, 32));
  return static_cast<double>(warp_sum(gain<int64_t>(I, S, a, [&](uint32_t c) { return abs64(I.w[c]); }, lane, 32)));
}

// propose() for violated entry i, by one warp (walk_weighted_rules.hpp's
// propose_by with the lanes over the occurrences).
__device__ inline void propose(const Inst& I, const State& S, int in, int64_t i, const RoundParams& P, int lane) {
  propose_by(I, S, in, i, P, [&](uint32_t a) { return warp_score(I, S, a, P.use_dw, lane); }, lane == 0, lane, 32);
}

// flip() for entry i, by one warp.
__device__ inline void flip(const Inst& I, const State& S, int in, int64_t i, int64_t round, int lane) {
  if (S.cand[i] == 0) return;
  const uint32_t a = S.cand[i] - 1;
  const unsigned long long pr = S.prio[i];
  bool lost = false;
  for (int64_t k = I.occ_off[a] + lane; k < I.occ_off[a + 1]; k += 32)
    lost |= load_u64(&S.claim[I.occ[k] >> 1]) != pr;
  if (__any_sync(kFull, lost)) return;
  const uint32_t mark = static_cast<uint32_t>(round + 1);
  uint32_t before = 0;
  if (lane == 0) before = atomic_exch_u32(&S.stamp[a], mark);
  if (__shfl_sync(kFull, before, 0) == mark) return;  // the same atom, proposed by another clause
  const uint8_t nv = S.truth[a] ^ 1;
  __syncwarp();
  if (lane == 0) S.truth[a] = nv;
  long long dcost = 0;
  for (int64_t k = I.occ_off[a] + lane; k < I.occ_off[a + 1]; k += 32) {
    const uint32_t o = I.occ[k], c = o >> 1;
    const int64_t w = I.w[c];
    const int32_t d = ((o & 1) == nv) ? 1 : -1;
    const int32_t t = atomicAdd(&S.tc[c], d);
    atomicXor(reinterpret_cast<unsigned*>(&S.crit[c]), a);
    const bool was = costly(w, t), now = costly(w, t + d);
    if (now && !was) {
      dcost += abs64(w);
      S.viol[in ^ 1][atomic_add_u64(&S.ctr[kViol0 + (in ^ 1)], 1)] = static_cast<int32_t>(c);
    } else if (was && !now) {
      dcost -= abs64(w);
    }
  }
  dcost = warp_sum(dcost);
  if (lane == 0) {
    atomic_add_u64(&S.ctr[kCost], static_cast<unsigned long long>(dcost));
    atomic_add_u64(&S.pcost[part_of(S, a)], static_cast<unsigned long long>(dcost));
    atomic_inc_u32(&S.pflips[part_of(S, a)]);
    atomic_add_u64(&S.ctr[kFlips], 1);
  }
}

// settle() for entry i, by one warp: the lanes clear the claims, lane 0
// does the rest.
__device__ inline void settle(const Inst& I, const State& S, int in, int64_t i, const RoundParams& P, int lane) {
  settle_by(I, S, in, i, P, lane == 0, lane, 32);
}

}  // namespace mln::solver::gpu_detail::warp_rules
