// The kernels of MC-SAT's many-chain GPU sampler (mcsat_gpu.cu): the
// per-chain state kept between launches and the warp that drives one chain.
// Included by mcsat_gpu.cu only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/marginal/mcsat_gpu.hpp"
#include "core/walk/walksat_gpu_common.cuh"

namespace mln::solver::mcsat_gpu_detail {

using gpu_detail::DeviceArray;
using gpu_detail::DevInstance;
using gpu_detail::DevInstanceStore;

constexpr unsigned kFull = 0xFFFFFFFFu;
constexpr int kWarpsPerBlock = 4;
constexpr int kTrailCap = 2048;  // flips remembered since M was last satisfied

// Per-chain scalars kept between launches.
struct ChainCtl {
  uint64_t rng;
  int64_t cost;  // fixed point
  int64_t flips;
  int64_t unsat_calls;
  double cost_sum;
  int32_t nviol;
  uint32_t scan;
  int32_t hard_ok;
  int32_t fresh_failures;  // fresh SampleSAT starts that missed SAT(M) in a row
  int64_t counted;         // samples this chain counted
};

// As kMaxFreshFailures in mcsat_cpu.cpp.
constexpr int kMaxFreshFailures = 3;

struct Params {
  int64_t budget, after, burn_in, samples, chains;
  double sa_probability, random_step, sa_temperature, inv_scale;
  uint64_t seed;
};

// Per-chain mutable arrays (chain-major).
struct ChainArrays {
  uint8_t* truth;     // chains x n
  uint8_t* prev;      // chains x n: the state before this step's SampleSAT
  int32_t* tc;        // chains x m
  uint8_t* alive;     // chains x m
  int32_t* viol;      // chains x m
  int32_t* vpos;      // chains x m
  uint32_t* trail;    // chains x kTrailCap
  ChainCtl* ctl;
  unsigned long long* count;  // n, summed over chains
  const float* keep;          // m: keep probability (hard: 2)
  const uint8_t* init;        // n or null
  const uint8_t* chain_init;  // chains x n or null
  // Features (learning; fk == 0: none): per clause CSR, per chain sums.
  int fk;
  const int64_t* foff;
  const int32_t* fidx;
  const float* fcoef;
  double* fsum;    // chains x fk
  double* fouter;  // chains x fk x fk
  // Host memory mapped into the device: nonzero once the caller stops.
  // Polled inside a step, so a launch (one step of a large chain can take
  // seconds) ends within a few thousand flips of a cancel.
  const volatile int* stop;
};

__device__ inline int64_t warp_sum(int64_t v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFull, v, o);
  return v;
}
__device__ inline int32_t warp_sum(int32_t v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFull, v, o);
  return v;
}
__device__ inline double warp_sum(double v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFull, v, o);
  return v;
}
// Uniform [0, 1) from a key and an index (independent of the lane order).
__device__ inline double hash_uniform(uint64_t key, uint64_t i) {
  return static_cast<double>(derive_seed(key, i) >> 11) * 0x1.0p-53;
}

// One chain, driven by one warp.  All lanes hold the same scalars.
struct Chain {
  DevInstance I;
  Params P;
  uint8_t* truth;
  uint8_t* prev;
  int32_t* tc;
  uint8_t* alive;
  int32_t* viol;
  int32_t* vpos;
  uint32_t* trail;
  unsigned lane;
  Rng rng;
  ChainCtl c;
  const volatile int* stop_flag;
  bool aborted = false;

  // Warp-uniform: lane 0 reads the host's flag, every lane gets its value.
  __device__ bool stop_requested() {
    int v = 0;
    if (lane == 0) v = *stop_flag;
    v = __shfl_sync(kFull, v, 0);
    if (v) aborted = true;
    return v != 0;
  }

  __device__ bool sat(int64_t cl) const {
    const int64_t w = I.w[cl];
    return w > 0 ? tc[cl] > 0 : (w < 0 ? tc[cl] == 0 : true);
  }

  // Lane 0 edits the violated list; every lane tracks its length.
  __device__ void add_viol(int32_t cl) {
    if (lane == 0) { vpos[cl] = c.nviol; viol[c.nviol] = cl; }
    ++c.nviol;
    __syncwarp();
  }
  __device__ void del_viol(int32_t cl) {
    if (lane == 0) {
      const int32_t p = vpos[cl], last = viol[c.nviol - 1];
      viol[p] = last;
      vpos[last] = p;
      vpos[cl] = -1;
    }
    --c.nviol;
    __syncwarp();
  }

  // M = { cl : pick(cl) }, rebuilding the violated list (positions by
  // ballot prefix, so the order does not depend on scheduling).
  template <class Pick>
  __device__ void set_alive(Pick pick) {
    c.nviol = 0;
    for (int64_t base = 0; base < I.m; base += 32) {
      const int64_t cl = base + lane;
      bool v = false;
      if (cl < I.m) {
        const bool a = I.w[cl] != 0 && pick(cl);
        alive[cl] = a;
        vpos[cl] = -1;
        v = a && !sat(cl);
      }
      const unsigned mask = __ballot_sync(kFull, v);
      if (v) {
        const int32_t p = c.nviol + __popc(mask & ((1u << lane) - 1));
        vpos[cl] = p;
        viol[p] = static_cast<int32_t>(cl);
      }
      c.nviol += __popc(mask);
    }
    __syncwarp();
  }

  // True counts and cost from scratch, after the truth changed wholesale
  // (a fresh start): one pass over the clauses, lane-strided, instead of a
  // warp-wide flip per changed atom.  The violated list is rebuilt after it.
  __device__ void recount() {
    __syncwarp();
    int64_t cost = 0;
    for (int64_t cl = lane; cl < I.m; cl += 32) {
      int32_t t = 0;
      for (int64_t i = I.cl_off[cl]; i < I.cl_off[cl + 1]; ++i) {
        const uint32_t l = I.cl_lit[i];
        t += truth[l >> 1] == (l & 1);
      }
      tc[cl] = t;
      const int64_t w = I.w[cl];
      if (w > 0 && t == 0) cost += w;
      if (w < 0 && t > 0) cost -= w;
    }
    c.cost = warp_sum(cost);
    __syncwarp();
  }
  // The violated list over the alive set as it stands (after recount()).
  __device__ void relist() {
    set_alive([&](int64_t cl) { return alive[cl] != 0; });
  }

  // Change in violated alive clauses if atom a flipped (as in mcsat_cpu).
  __device__ int32_t delta(uint32_t a) const {
    const uint32_t v = truth[a] ^ 1u;
    int32_t d = 0;
    for (int64_t i = I.occ_off[a] + lane; i < I.occ_off[a + 1]; i += 32) {
      const uint32_t o = I.occ[i], cl = o >> 1;
      if (!alive[cl]) continue;
      const bool becomes_true = (o & 1) == v;
      const int32_t t = tc[cl];
      if (I.w[cl] > 0) d += becomes_true ? -(t == 0) : (t == 1);
      else d += becomes_true ? (t == 0) : -(t == 1);
    }
    return warp_sum(d);
  }

  __device__ void flip(uint32_t a) {
    const uint8_t v = truth[a] ^ 1;
    __syncwarp();
    if (lane == 0) truth[a] = v;
    int64_t dcost = 0;
    const int64_t lo = I.occ_off[a], hi = I.occ_off[a + 1];
    for (int64_t base = lo; base < hi; base += 32) {
      const int64_t i = base + lane;
      bool changed = false, now = false;
      uint32_t cl = 0;
      if (i < hi) {
        const uint32_t o = I.occ[i];
        cl = o >> 1;
        const bool was = sat(cl);
        tc[cl] += (o & 1) == v ? 1 : -1;
        now = sat(cl);
        if (was != now) {
          const int64_t w = I.w[cl], aw = w < 0 ? -w : w;
          dcost += now ? -aw : aw;
          changed = alive[cl] != 0;
        }
      }
      unsigned mask = __ballot_sync(kFull, changed);
      __syncwarp();
      while (mask) {  // list edits one at a time, in lane order
        const int src = __ffs(mask) - 1;
        mask &= mask - 1;
        const uint32_t cc = __shfl_sync(kFull, cl, src);
        const bool nw = __shfl_sync(kFull, now, src);
        if (nw) del_viol(static_cast<int32_t>(cc));
        else add_viol(static_cast<int32_t>(cc));
      }
    }
    c.cost += warp_sum(dcost);
    __syncwarp();
  }

  __device__ uint32_t walk_pick() {
    const uint32_t cl = static_cast<uint32_t>(viol[rng.below(static_cast<uint32_t>(c.nviol))]);
    const int64_t lo = I.cl_off[cl], hi = I.cl_off[cl + 1];
    const bool neg = I.w[cl] < 0;
    auto candidate = [&](uint32_t l) { return !neg || truth[l >> 1] == (l & 1); };
    if (rng.uniform() < P.random_step) {
      uint32_t k = rng.below(neg ? static_cast<uint32_t>(tc[cl]) : static_cast<uint32_t>(hi - lo));
      for (int64_t i = lo; i < hi; ++i)
        if (candidate(I.cl_lit[i]) && k-- == 0) return I.cl_lit[i] >> 1;
    }
    int32_t best = INT32_MAX;
    uint32_t a = I.cl_lit[lo] >> 1, ties = 0;
    for (int64_t i = lo; i < hi; ++i) {
      const uint32_t l = I.cl_lit[i];
      if (!candidate(l)) continue;
      const int32_t d = delta(l >> 1);
      if (d < best) { best = d; a = l >> 1; ties = 1; }
      else if (d == best && rng.below(++ties) == 0) a = l >> 1;
    }
    return a;
  }

  // SampleSAT, as SampleSat::run in mcsat_cpu.cpp.  A revert needs the
  // trail; a violation episode longer than kTrailCap flips (none seen in
  // practice: WalkSAT repairs one accepted uphill move in a few flips)
  // cannot be undone and counts as an unsatisfied call.
  __device__ bool run(int64_t budget, int64_t after, double sa_probability, bool revert) {
    bool reached = c.nviol == 0;
    int64_t after_left = after, tlen = 0;
    const uint32_t n = static_cast<uint32_t>(I.n);
    for (int64_t k = 0; k < budget; ++k) {
      if ((k & 1023) == 1023 && stop_requested()) return false;
      if (reached) {
        if (after_left == 0) break;
        --after_left;
      }
      ++c.flips;
      uint32_t a;
      if (c.nviol > 0 && !(rng.uniform() < sa_probability)) {
        a = walk_pick();
      } else {
        a = c.scan;
        if (++c.scan >= n) c.scan = 0;
        if (rng.next() >> 63) continue;
        const int32_t d = delta(a);
        if (d > 0 && !(rng.uniform() < exp(-d * P.sa_temperature))) continue;
      }
      flip(a);
      if (c.nviol == 0) {
        reached = true;
        tlen = 0;
      } else {
        if (tlen < kTrailCap && lane == 0) trail[tlen] = a;
        ++tlen;
      }
    }
    __syncwarp();
    if (revert && c.nviol > 0) {
      if (tlen <= kTrailCap) {
        for (int64_t i = tlen - 1; i >= 0; --i) flip(trail[i]);
      } else {
        return false;
      }
    }
    return reached;
  }
};

__global__ void mcsat_kernel(DevInstance I, Params P, ChainArrays A, int phase, int64_t step_begin,
                             int64_t step_end) {
  const int64_t chain = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  if (chain >= P.chains) return;
  const unsigned lane = threadIdx.x & 31;
  Chain ch{I, P, A.truth + chain * I.n, A.prev + chain * I.n, A.tc + chain * I.m, A.alive + chain * I.m, A.viol + chain * I.m,
           A.vpos + chain * I.m, A.trail + chain * kTrailCap, lane, Rng(1), A.ctl[chain], A.stop};
  ch.rng.s = ch.c.rng;
  const uint64_t chain_seed = derive_seed(P.seed, static_cast<uint64_t>(chain));
  if (phase == 0) {  // start state, true counts, WalkSAT on the hard clauses
    for (int64_t a = lane; a < I.n; a += 32)
      ch.truth[a] = A.chain_init ? A.chain_init[chain * I.n + a]
                    : A.init   ? A.init[a]
                               : static_cast<uint8_t>(derive_seed(chain_seed, 0x494E4954ull + a) >> 63);
    ch.recount();
    ch.set_alive([&](int64_t cl) { return A.keep[cl] > 1.5f; });
    for (int t = 0; t < 10 && ch.c.nviol > 0 && !ch.aborted; ++t) ch.run(P.budget, 0, 0.0, false);
    ch.c.hard_ok = ch.c.nviol == 0;
  } else {
    const int64_t mine = P.samples / P.chains + (chain < P.samples % P.chains ? 1 : 0);
    const int64_t end = min(step_end, P.burn_in + mine);
    for (int64_t step = step_begin; step < end && !ch.stop_requested(); ++step) {
      const uint64_t key = ch.rng.next();
      ch.set_alive([&](int64_t cl) { return ch.sat(cl) && hash_uniform(key, cl) < A.keep[cl]; });
      // SampleSAT from a fresh coin-flip state; when it misses SAT(M), the
      // step goes on from the previous state (as mcsat_cpu explains).
      bool sampled = false;
      if (ch.c.fresh_failures < kMaxFreshFailures) {
        const uint64_t coins = ch.rng.next();
        for (int64_t a = lane; a < I.n; a += 32) {
          ch.prev[a] = ch.truth[a];
          ch.truth[a] = static_cast<uint8_t>(derive_seed(coins, static_cast<uint64_t>(a)) >> 63);
        }
        ch.recount();
        ch.relist();
        sampled = ch.run(P.budget, P.after, P.sa_probability, true);
        ch.c.fresh_failures = sampled ? 0 : ch.c.fresh_failures + 1;
        if (!sampled) {  // back to the state before the fresh start
          __syncwarp();
          for (int64_t a = lane; a < I.n; a += 32) ch.truth[a] = ch.prev[a];
          ch.recount();
          ch.relist();
        }
      }
      if (!sampled && !ch.aborted) {
        ++ch.c.unsat_calls;
        ch.run(P.budget, P.after, P.sa_probability, true);
      }
      if (ch.aborted) break;  // the step was cut short: not a sample
      if (step < P.burn_in) continue;
      ++ch.c.counted;
      for (int64_t a = lane; a < I.n; a += 32)
        if (ch.truth[a]) atomicAdd(&A.count[a], 1ull);
      ch.c.cost_sum += static_cast<double>(ch.c.cost) * P.inv_scale;
      if (A.fk > 0) {  // clause features of this sample (a clause counts when a literal is true)
        double f[kGpuMaxFeatures];
        for (int k = 0; k < A.fk; ++k) f[k] = 0;
        for (int64_t cl = lane; cl < I.m; cl += 32)
          if (ch.tc[cl] > 0)
            for (int64_t i = A.foff[cl]; i < A.foff[cl + 1]; ++i) f[A.fidx[i]] += A.fcoef[i];
        for (int k = 0; k < A.fk; ++k) f[k] = warp_sum(f[k]);
        double* sum = A.fsum + chain * A.fk;
        double* outer = A.fouter + chain * A.fk * A.fk;
        for (int e = static_cast<int>(lane); e < A.fk * A.fk; e += 32) {
          double fa = 0, fb = 0;
          for (int k = 0; k < A.fk; ++k) {  // f[e / fk], f[e % fk] without dynamic indexing of registers
            if (k == e / A.fk) fa = f[k];
            if (k == e % A.fk) fb = f[k];
          }
          outer[e] += fa * fb;
        }
        if (lane == 0)
          for (int k = 0; k < A.fk; ++k) sum[k] += f[k];
        __syncwarp();
      }
    }
  }
  ch.c.rng = ch.rng.s;
  __syncwarp();
  if (lane == 0) A.ctl[chain] = ch.c;
}

}  // namespace mln::solver::mcsat_gpu_detail
