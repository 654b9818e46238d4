// One MC-SAT chain whose SampleSAT moves run in parallel inside the chain,
// for the GPU (one chain on the whole device).  The rules of one SampleSAT
// round, written for host and device like walk_weighted_rules.hpp;
// mcsat_parallel_cpu.cpp drives them with OpenMP loops, mcsat_parallel_gpu.cu
// inside its cooperative step kernel.
//
// A round: every violated alive clause proposes a WalkSAT flip (with
// probability 1 - sa_probability), and every atom proposes a coin-flip value
// (with probability sa_rate) as a Metropolis move.  Proposals claim the
// ALIVE clauses of their atom by priority; a proposal that holds all of them
// moves.  The moving atoms share no alive clause, so each Metropolis move's
// delta (violated alive clauses) is exact and the moves together are a
// product of independent single-site Metropolis moves (the selection does
// not depend on the state).  True counts of clauses that are not alive may
// be shared by two moving atoms: they are updated atomically.
//
// The SAT phase of a step is not these rounds: WalkSAT proposals from every
// violated clause at once rarely reach SAT(M) from a coin-flip start on
// large planted instances, the same "every violated clause moves" problem
// as Tuffy's step rules run in parallel (walk_weighted_rules.hpp).  Both
// drivers reach SAT(M) with the weighted walk (alive clauses weighing 1)
// and run these rounds for the sweeps after it, every step then in SAT(M)
// (docs/solver/marginal.md).
#pragma once

#include <cmath>
#include <cstdint>

#include "core/walk/walk_weighted_rules.hpp"

namespace mln::solver::mcsat_parallel {

using weighted::atomic_add_u64;
using weighted::atomic_exch_u32;
using weighted::atomic_max_u64;
using weighted::Inst;
using weighted::load_u64;
using weighted::store_u64;

MLN_HD inline void atomic_add_i32(int32_t* p, int32_t v) {
#if defined(__CUDA_ARCH__)
  atomicAdd(p, v);
#else
  __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}

struct State {
  uint8_t* truth;
  int32_t* tc;
  uint8_t* alive;
  unsigned long long* claim;  // per clause
  uint32_t* stamp;            // per atom: last round it moved
  int32_t* viol[2];           // violated alive clauses, alternating
  uint32_t* cand;             // per violated entry: WalkSAT atom + 1, or 0
  unsigned long long* sa;     // per atom: its Metropolis proposal's priority, or 0
  uint8_t* sa_val;            // per atom: the proposed value
  unsigned long long* ctr;    // [0] flips, [1] nviol list 0, [2] nviol list 1
};

struct RoundParams {
  uint64_t seed;
  int64_t round;
  double sa_probability;  // share of violated clauses that do NOT propose a WalkSAT move
  double sa_rate;         // probability that an atom proposes a Metropolis move
  double random_step;     // WalkSAT's random pick
  double sa_temperature;  // uphill delta d accepted with exp(-d * sa_temperature)
};

// Whether clause c costs nothing (MC-SAT's "satisfied").
MLN_HD inline bool sat(const Inst& I, const State& S, int64_t c) { return !weighted::costly(I.w[c], S.tc[c]); }

// Change in whether alive clause c (weight w, t true literals) is violated
// if the atom of occurrence o takes value v.
MLN_HD inline int32_t delta_term(uint32_t o, uint32_t v, int32_t t, int64_t w) {
  const bool becomes_true = (o & 1) == v;
  if (w > 0) return becomes_true ? -(t == 0) : (t == 1);
  return becomes_true ? (t == 0) : -(t == 1);
}

// Change in the number of violated alive clauses if atom a flipped.
MLN_HD inline int32_t delta(const Inst& I, const State& S, uint32_t a) {
  int32_t d = 0;
  const uint32_t v = S.truth[a] ^ 1u;
  for (int64_t k = I.occ_off[a]; k < I.occ_off[a + 1]; ++k) {
    const uint32_t o = I.occ[k], c = o >> 1;
    if (S.alive[c]) d += delta_term(o, v, S.tc[c], I.w[c]);
  }
  return d;
}

// A proposal's priority: random in (round, atom), the atom in the low bits.
MLN_HD inline unsigned long long priority(uint64_t seed, int64_t round, uint32_t a) {
  uint64_t x = seed ^ (static_cast<uint64_t>(round) * 0xD1B54A32D192ED03ull) ^ (uint64_t(a) * 0x9E3779B97F4A7C15ull);
  return ((splitmix64(x) | 1ull) << 32) | a;  // never 0
}

MLN_HD inline void claim_alive(const Inst& I, const State& S, uint32_t a, unsigned long long pr) {
  for (int64_t k = I.occ_off[a]; k < I.occ_off[a + 1]; ++k)
    if (S.alive[I.occ[k] >> 1]) atomic_max_u64(&S.claim[I.occ[k] >> 1], pr);
}

MLN_HD inline bool holds_alive(const Inst& I, const State& S, uint32_t a, unsigned long long pr) {
  for (int64_t k = I.occ_off[a]; k < I.occ_off[a + 1]; ++k)
    if (S.alive[I.occ[k] >> 1] && load_u64(&S.claim[I.occ[k] >> 1]) != pr) return false;
  return true;
}

// Phase 1a, violated alive entry i of list `in`: a WalkSAT proposal.
MLN_HD inline void propose_walk(const Inst& I, const State& S, int in, int64_t i, const RoundParams& P) {
  S.cand[i] = 0;
  const uint32_t c = static_cast<uint32_t>(S.viol[in][i]);
  // The clause's stream, not the entry's: the list's order is that of
  // atomic appends, which changes from run to run (walk_weighted_rules.hpp).
  Rng rng(derive_seed(P.seed ^ (static_cast<uint64_t>(P.round) * 0xA24BAED4963EE407ull), static_cast<uint64_t>(c)) | 1);
  if (rng.uniform() < P.sa_probability) return;
  const int64_t lo = I.cl_off[c], hi = I.cl_off[c + 1];
  const bool neg = I.w[c] < 0;
  auto candidate = [&](uint32_t l) { return !neg || S.truth[l >> 1] == (l & 1); };
  uint32_t cands = 0;
  for (int64_t k = lo; k < hi; ++k) cands += candidate(I.cl_lit[k]);
  if (cands == 0) return;
  uint32_t a = 0;
  if (rng.uniform() < P.random_step) {
    uint32_t pick = rng.below(cands);
    for (int64_t k = lo; k < hi; ++k)
      if (candidate(I.cl_lit[k]) && pick-- == 0) { a = I.cl_lit[k] >> 1; break; }
  } else {
    int32_t best = 0x7FFFFFFF;
    uint32_t ties = 0;
    for (int64_t k = lo; k < hi; ++k) {
      const uint32_t l = I.cl_lit[k];
      if (!candidate(l)) continue;
      const int32_t d = delta(I, S, l >> 1);
      if (d < best) { best = d; a = l >> 1; ties = 1; }
      else if (d == best && rng.below(++ties) == 0) a = l >> 1;
    }
  }
  S.cand[i] = a + 1;
  claim_alive(I, S, a, priority(P.seed, P.round, a));
}

// Phase 1b, atom a: a Metropolis proposal (a coin-flip value; proposing
// its own value is a move that stays).
MLN_HD inline void propose_sa(const Inst& I, const State& S, uint32_t a, const RoundParams& P) {
  S.sa[a] = 0;
  Rng rng(derive_seed(P.seed ^ (static_cast<uint64_t>(P.round) * 0x9FB21C651E98DF25ull), a) | 1);
  if (!(rng.uniform() < P.sa_rate)) return;
  const uint8_t v = static_cast<uint8_t>(rng.next() >> 63);
  if (v == S.truth[a]) return;
  const unsigned long long pr = priority(P.seed, P.round, a);
  S.sa[a] = pr;
  S.sa_val[a] = v;
  claim_alive(I, S, a, pr);
}

// Flips atom a (it holds its alive clauses): counts, newly violated alive
// clauses onto list in ^ 1.
MLN_HD inline void do_flip(const Inst& I, const State& S, int in, uint32_t a) {
  const uint8_t v = S.truth[a] ^ 1;
  S.truth[a] = v;
  for (int64_t k = I.occ_off[a]; k < I.occ_off[a + 1]; ++k) {
    const uint32_t o = I.occ[k], c = o >> 1;
    if (!S.alive[c]) {  // possibly shared with another moving atom
      atomic_add_i32(&S.tc[c], (o & 1) == v ? 1 : -1);
      continue;
    }
    const bool was = sat(I, S, c);
    S.tc[c] += (o & 1) == v ? 1 : -1;
    if (was && !sat(I, S, c)) S.viol[in ^ 1][atomic_add_u64(&S.ctr[1 + (in ^ 1)], 1)] = static_cast<int32_t>(c);
  }
  atomic_add_u64(&S.ctr[0], 1);
}

// Phase 2a: WalkSAT proposals that won move.
MLN_HD inline void flip_walk(const Inst& I, const State& S, int in, int64_t i, const RoundParams& P) {
  if (S.cand[i] == 0) return;
  const uint32_t a = S.cand[i] - 1;
  if (!holds_alive(I, S, a, priority(P.seed, P.round, a))) return;
  const uint32_t mark = static_cast<uint32_t>(P.round + 1);
  if (atomic_exch_u32(&S.stamp[a], mark) == mark) return;
  do_flip(I, S, in, a);
}

// Phase 2b: Metropolis proposals that won move with min(1, exp(-d * T)).
// One pass over a's occurrences checks the claims and sums the delta (as
// holds_alive and delta would): a's alive clauses change only if a moves.
MLN_HD inline void flip_sa(const Inst& I, const State& S, int in, uint32_t a, const RoundParams& P) {
  const unsigned long long pr = S.sa[a];
  if (pr == 0) return;
  int32_t d = 0;
  const uint32_t v = S.truth[a] ^ 1u;
  for (int64_t k = I.occ_off[a]; k < I.occ_off[a + 1]; ++k) {
    const uint32_t o = I.occ[k], c = o >> 1;
    if (!S.alive[c]) continue;
    if (load_u64(&S.claim[c]) != pr) return;
    d += delta_term(o, v, S.tc[c], I.w[c]);
  }
  const uint32_t mark = static_cast<uint32_t>(P.round + 1);
  if (atomic_exch_u32(&S.stamp[a], mark) == mark) return;  // moved by a WalkSAT proposal already
  if (d > 0) {
    Rng rng(derive_seed(P.seed ^ (static_cast<uint64_t>(P.round) * 0x3C6EF372FE94F82Bull), a) | 1);
    if (!(rng.uniform() < std::exp(-d * P.sa_temperature))) return;
  }
  do_flip(I, S, in, a);
}

// Phase 3a, violated entry i: carried to the next list if still violated.
MLN_HD inline void settle_viol(const Inst& I, const State& S, int in, int64_t i) {
  const uint32_t c = static_cast<uint32_t>(S.viol[in][i]);
  if (S.cand[i] != 0) {
    const uint32_t a = S.cand[i] - 1;
    for (int64_t k = I.occ_off[a]; k < I.occ_off[a + 1]; ++k) store_u64(&S.claim[I.occ[k] >> 1], 0);
  }
  if (!sat(I, S, c)) S.viol[in ^ 1][atomic_add_u64(&S.ctr[1 + (in ^ 1)], 1)] = static_cast<int32_t>(c);
}

// Phase 3b, atom a: its Metropolis claims cleared.
MLN_HD inline void settle_sa(const Inst& I, const State& S, uint32_t a) {
  if (S.sa[a] == 0) return;
  for (int64_t k = I.occ_off[a]; k < I.occ_off[a + 1]; ++k)
    if (S.alive[I.occ[k] >> 1]) store_u64(&S.claim[I.occ[k] >> 1], 0);  // claim_alive's
}

}  // namespace mln::solver::mcsat_parallel
