// The weighted walk's three round phases (walk_weighted_rules.hpp's
// propose, flip, settle) with a WARP per violated entry, its lanes over the
// occurrence lists.  The per-thread rules walk an atom's occurrences one by
// one (~30 dependent loads per proposal), and a round waits for its slowest
// thread: ~90 us a round at 10^6 clauses on an H200, ~28 us by warps
// (the one-chain sampler's SAT phase, docs/solver.md).
//
// Same decisions as the per-thread rules: the lanes sum each literal's gain
// (dyadic dynamic weights and int64 true weights sum exactly in any order),
// and every lane runs the proposal's control flow with the same random
// stream, so the tie-breaks, the noise and the priority are the rules'.
// Flip updates the true counts with atomics (an atom that occurs twice in a
// clause is then still counted in order).
#pragma once

#include "walk_weighted_rules.hpp"

namespace mln::solver::gpu_detail::warp_rules {

using namespace weighted;

constexpr unsigned kFull = 0xffffffffu;

template <class T>
__device__ inline T warp_sum(T v) {
  for (int s = 16; s > 0; s >>= 1) v += __shfl_xor_sync(kFull, v, s);
  return v;
}

// gain<Acc>(I, S, a, mag) with the lanes over a's occurrences; every lane
// returns the total.
template <class Acc, class Mag>
__device__ inline Acc warp_gain(const Inst& I, const State& S, uint32_t a, Mag mag, int lane) {
  const uint8_t ta = S.truth[a];
  Acc s = 0;
  for (int64_t k = I.occ_off[a] + lane; k < I.occ_off[a + 1]; k += 32) {
    const uint32_t o = I.occ[k], c = o >> 1;
    const bool lit_true = (o & 1) == ta;
    const int32_t t = S.tc[c];
    const int64_t w = I.w[c];
    const bool breaks = (w > 0 && lit_true && t == 1) || (w < 0 && !lit_true && t == 0);
    const bool makes = (w > 0 && !lit_true && t == 0) || (w < 0 && lit_true && t == 1);
    if (breaks) s -= mag(c);
    else if (makes) s += mag(c);
  }
  return warp_sum(s);
}

__device__ inline double warp_score(const Inst& I, const State& S, uint32_t a, int use_dw, int lane) {
  if (use_dw) return warp_gain<double>(I, S, a, [&](uint32_t c) { return S.dw[c]; }, lane);
  return static_cast<double>(warp_gain<long long>(I, S, a, [&](uint32_t c) { return static_cast<long long>(abs64(I.w[c])); }, lane));
}

// propose() for violated entry i, by one warp.
__device__ inline void propose(const Inst& I, const State& S, int in, int64_t i, const RoundParams& P, int lane) {
  const uint32_t c = static_cast<uint32_t>(S.viol[in][i]);
  Rng rng(derive_seed(P.seed ^ (static_cast<uint64_t>(P.round) * 0xA24BAED4963EE407ull), static_cast<uint64_t>(i)) | 1);
  const int64_t lo = I.cl_off[c], hi = I.cl_off[c + 1];
  if (hi == lo) {
    if (lane == 0) {
      S.cand[i] = 0;
      S.bump[i] = 0;
    }
    return;
  }
  const bool negative = I.w[c] < 0;
  double best = 0;
  uint32_t best_a = 0, ties = 0;
  for (int64_t k = lo; k < hi; ++k) {
    const uint32_t l = I.cl_lit[k], a = l >> 1;
    if (negative && S.truth[a] != (l & 1)) continue;
    const double s = warp_score(I, S, a, P.use_dw, lane);
    if (ties == 0 || s > best) {
      best = s;
      best_a = a;
      ties = 1;
    } else if (s == best && rng.below(++ties) == 0) {
      best_a = a;
    }
  }
  const bool improving = ties > 0 && best > 0;
  if (lane == 0) S.bump[i] = !improving;
  const double noise = S.pfrozen[part_of(S, I.cl_lit[lo] >> 1)] ? P.kick : P.noise;
  if (ties == 0 || (!improving && !(P.use_dw && rng.uniform() < noise))) {
    if (lane == 0) S.cand[i] = 0;
    return;
  }
  const unsigned long long pr = priority(improving, best, P.seed, P.round, best_a);
  if (lane == 0) {
    S.cand[i] = best_a + 1;
    S.prio[i] = pr;
  }
  for (int64_t k = I.occ_off[best_a] + lane; k < I.occ_off[best_a + 1]; k += 32)
    atomic_max_u64(&S.claim[I.occ[k] >> 1], pr);
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
  if (S.cand[i] != 0) {
    const uint32_t a = S.cand[i] - 1;
    for (int64_t k = I.occ_off[a] + lane; k < I.occ_off[a + 1]; k += 32) store_u64(&S.claim[I.occ[k] >> 1], 0);
  }
  if (lane != 0) return;
  const uint32_t c = static_cast<uint32_t>(S.viol[in][i]);
  const int64_t w = I.w[c];
  if (!costly(w, S.tc[c])) return;
  S.viol[in ^ 1][atomic_add_u64(&S.ctr[kViol0 + (in ^ 1)], 1)] = static_cast<int32_t>(c);
  if (S.bump[i] && P.use_dw) {
    const double aw = static_cast<double>(abs64(w));
    const double up = S.dw[c] + P.inc_rel * aw + P.inc_abs, top = P.cap * aw + P.inc_abs;
    S.dw[c] = up < top ? up : top;
  }
}

}  // namespace mln::solver::gpu_detail::warp_rules
