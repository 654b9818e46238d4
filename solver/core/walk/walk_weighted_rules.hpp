// The "weighted" walk: parallel local search with dynamic clause weights
// (docs/solver/walk.md, "The weighted walk").  This header holds the rules of one
// round, written once for both drivers: the GPU kernels
// (walksat_gpu_weighted.cu) and the CPU driver (walk_weighted_cpu.cpp),
// which runs the same rounds with OpenMP loops, so that the rules are tested
// without a GPU and the two backends search alike.
//
// One round, over the clauses that cost something (the violated list):
//  1. propose: each violated clause scores its candidate atoms (all its
//     atoms; for a negative clause the atoms of its true literals) under the
//     dynamic weights dw, and proposes the best one when flipping it lowers
//     the weighted cost (score > 0).  A clause with no such atom is stuck: it
//     will have its weight raised, and with probability `noise` it proposes
//     its best atom anyway.  A proposal claims every clause of its atom with
//     a priority: improving moves first, then by score, random ties.
//  2. flip: a proposal flips when it holds the highest priority on all of
//     its atom's clauses.  Flipped atoms share no clause, so every flip's
//     score is exact and the counts need no atomics; an improving round
//     lowers the weighted cost by the sum of its scores.
//  3. settle: claims are cleared, violated clauses are carried to the next
//     list, and stuck clauses that are still violated get dw += inc.
// Scores use the dynamic weights; the true cost (fixed point, exact) is kept
// alongside and the best state is tracked by it.  With use_dw off the
// round is a greedy descent on the true weights (the final polish).
//
// Why this and not Tuffy's step rules in parallel (an earlier GPU design, since
// removed): there every violated clause moves at once, random-walk and uphill
// steps included, which on structured networks is a walk at a very high
// temperature (RC ends far above the CPU walk's cost;
// docs/solver/walk.md).  Here every flip the weights allow is downhill for the
// weighted cost; the search leaves a local minimum only by raising the weights
// of what stays violated (the clause weighting of SATLike and NuWLS), which all
// clauses can do at once.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/base/rng.hpp"

namespace mln::solver::weighted {

// Atomic operations that compile for both the GPU and the host (GCC
// builtins; relaxed: each phase's writes are read in a later phase).
MLN_HD inline void atomic_max_u64(unsigned long long* p, unsigned long long v) {
#if defined(__CUDA_ARCH__)
  atomicMax(p, v);
#else
  unsigned long long cur = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (cur < v && !__atomic_compare_exchange_n(p, &cur, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
#endif
}
MLN_HD inline unsigned long long atomic_add_u64(unsigned long long* p, unsigned long long v) {
#if defined(__CUDA_ARCH__)
  return atomicAdd(p, v);
#else
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}
MLN_HD inline void atomic_inc_u32(uint32_t* p) {
#if defined(__CUDA_ARCH__)
  atomicAdd(reinterpret_cast<unsigned*>(p), 1u);
#else
  __atomic_fetch_add(p, 1u, __ATOMIC_RELAXED);
#endif
}
MLN_HD inline uint32_t atomic_exch_u32(uint32_t* p, uint32_t v) {
#if defined(__CUDA_ARCH__)
  return atomicExch(reinterpret_cast<unsigned*>(p), v);
#else
  return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
#endif
}
MLN_HD inline unsigned long long load_u64(const unsigned long long* p) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const volatile unsigned long long*>(p);
#else
  return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}
MLN_HD inline void store_u64(unsigned long long* p, unsigned long long v) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<volatile unsigned long long*>(p) = v;
#else
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
#endif
}

// The clause structure (read only): WalkInstance's arrays, 0-based atoms.
struct Inst {
  int32_t n;
  int64_t m;
  const int64_t* cl_off;
  const uint32_t* cl_lit;  // atom << 1 | positive
  const int64_t* occ_off;
  const uint32_t* occ;     // clause << 1 | positive
  const int64_t* w;        // fixed-point weights (signed)
  // Atoms n_free..n-1 are held: their literals count, but no clause
  // proposes them (a spread job's part walks its own atoms with its
  // neighbours' held at their values; spread.hpp, PartWalker).
  int64_t n_free = INT64_MAX;
};

// Counters of a round, in one small array (device memory on the GPU).
enum Counter : int {
  kCost = 0,      // true cost of `truth`, fixed point (as int64 bits)
  kBestCost = 1,  // sum of the parts' best costs
  kViol0 = 2,     // length of violated list 0
  kViol1 = 3,     // length of violated list 1
  kFlips = 4,     // flips made since the driver last reset it
  kImproved = 5,  // this round lowered some part's best cost
  kAnyFrozen = 6,  // some part flipped nothing this round
  kCounters = 8
};

// The search state.  viol[0] and viol[1] alternate: round r reads list
// r % 2 and writes the other.
struct State {
  uint8_t* truth;
  int32_t* tc;               // true literals per clause
  uint32_t* crit;            // XOR of the atoms of the true literals
  double* dw;                // dynamic weight per clause (> 0)
  unsigned long long* claim; // per clause: highest priority this round
  uint32_t* stamp;           // per atom: last round it flipped
  int32_t* viol[2];
  uint32_t* cand;            // per violated entry: atom + 1, or 0
  unsigned long long* prio;  // per violated entry
  uint8_t* bump;             // per violated entry: stuck, raise its weight
  unsigned long long* ctr;   // Counter
  // Independent parts (components solved together in one walk): each keeps
  // its own cost and best cost, and its atoms' best state follows its own
  // best.  part == nullptr: one part.
  const int32_t* part;       // per atom: its part
  int32_t parts;
  unsigned long long* pcost;  // per part: current cost (int64 bits)
  unsigned long long* pbest;  // per part: best cost
  uint8_t* pimproved;         // per part: the last round lowered its best
  uint32_t* pflips;           // per part: flips this round
  uint32_t* pstill;           // per part: rounds in a row without a flip
  uint8_t* pfrozen;           // per part: frozen (kicked next round)
};

MLN_HD inline int32_t part_of(const State& S, uint32_t a) { return S.part ? S.part[a] : 0; }

struct RoundParams {
  uint64_t seed;
  int64_t round;
  double noise;    // probability that a stuck clause proposes its best atom anyway
  double inc_rel;  // a stuck clause's weight grows by inc_rel * |w| + inc_abs
  double inc_abs;
  double cap;      // ... up to cap * |w| + inc_abs
  double kick;     // the noise of a frozen part's clauses
  uint32_t freeze_rounds;  // a part is frozen after this many rounds in a row without a flip
  int use_dw;      // 0: score by the true weights (greedy descent)
};

MLN_HD inline bool costly(int64_t w, int32_t t) { return (w > 0 && t == 0) || (w < 0 && t > 0); }
MLN_HD inline int64_t abs64(int64_t w) { return w < 0 ? -w : w; }

// Gain of flipping atom a (> 0 is downhill) with clause c weighing
// mag(c) (> 0) in type Acc; with first and stride, the share of a's
// occurrences first, first + stride, ... (a warp's lane: lane, 32).
template <class Acc, class Mag>
MLN_HD inline Acc gain(const Inst& I, const State& S, uint32_t a, Mag mag, int first = 0, int stride = 1) {
  const uint8_t ta = S.truth[a];
  Acc s = 0;
  for (int64_t k = I.occ_off[a] + first; k < I.occ_off[a + 1]; k += stride) {
    const uint32_t o = I.occ[k], c = o >> 1;
    const bool lit_true = (o & 1) == ta;
    const int32_t t = S.tc[c];
    const int64_t w = I.w[c];
    // Breaks: the last true literal of a positive clause, or the first of a
    // negative one; makes: the reverse.
    const bool breaks = (w > 0 && lit_true && t == 1) || (w < 0 && !lit_true && t == 0);
    const bool makes = (w > 0 && !lit_true && t == 0) || (w < 0 && lit_true && t == 1);
    if (breaks) s -= mag(c);
    else if (makes) s += mag(c);
  }
  return s;
}

// Score of flipping atom a: by the dynamic weights with use_dw, else by the
// true weights (summed exactly in int64, then converted).
MLN_HD inline double score(const Inst& I, const State& S, uint32_t a, int use_dw) {
  if (use_dw) return gain<double>(I, S, a, [&](uint32_t c) { return S.dw[c]; });
  return static_cast<double>(gain<int64_t>(I, S, a, [&](uint32_t c) { return abs64(I.w[c]); }));
}

// Priority of a proposal: improving moves above the rest, then the score
// (the top 20 bits of its float), then 11 random bits of (round, atom),
// then the atom itself, so that two atoms never tie.
MLN_HD inline unsigned long long priority(bool improving, double s, uint64_t seed, int64_t round, uint32_t a) {
  unsigned long long key = 0;
  if (improving) {
    const float f = static_cast<float>(s);
    uint32_t bits;
#if defined(__CUDA_ARCH__)
    bits = __float_as_uint(f);
#else
    std::memcpy(&bits, &f, sizeof bits);
#endif
    key = (1ull << 20) | (bits >> 11);  // s > 0: the sign bit is 0
  }
  uint64_t x = seed ^ (static_cast<uint64_t>(round) * 0xD1B54A32D192ED03ull) ^ (uint64_t(a) * 0x9E3779B97F4A7C15ull);
  const uint64_t h = splitmix64(x) & 0x7FF;
  return (key << 43) | (h << 32) | a;
}

// Pulls clause c's dynamic weight back towards |w| (smoothing).
MLN_HD inline void smooth_clause(const Inst& I, const State& S, int64_t c, double keep) {
  const double base = static_cast<double>(abs64(I.w[c]));
  S.dw[c] = base + keep * (S.dw[c] - base);
}

// Phase 1 for violated entry i of list `in`, its parts given: score(a) the
// gain of flipping atom a, `lead` whether this thread writes the entry's
// results, the claims over a's occurrences first, first + stride, ... (one
// thread: true, 0, 1; a warp, walk_weighted_warp.cuh: lane 0, lane, 32).
// Every thread of a warp draws the same random stream and so takes the
// same decisions.
template <class Score>
MLN_HD inline void propose_by(const Inst& I, const State& S, int in, int64_t i, const RoundParams& P, Score score,
                              bool lead, int first, int stride) {
  const uint32_t c = static_cast<uint32_t>(S.viol[in][i]);
  // The stream is the clause's, not the entry's: the lists are filled by
  // atomic appends, so a clause's place in them changes from run to run
  // (threads, the GPU's scheduling), and a stream drawn by place made the
  // tie-breaks and the noise, hence the answer, change with it.
  Rng rng(derive_seed(P.seed ^ (static_cast<uint64_t>(P.round) * 0xA24BAED4963EE407ull), static_cast<uint64_t>(c)) | 1);
  const int64_t lo = I.cl_off[c], hi = I.cl_off[c + 1];
  if (hi == lo) {  // a clause with no literal costs what it costs
    if (lead) {
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
    if (negative && S.truth[a] != (l & 1)) continue;  // only a true literal's flip can help
    if (a >= I.n_free) continue;                       // held
    const double s = score(a);
    if (ties == 0 || s > best) {
      best = s;
      best_a = a;
      ties = 1;
    } else if (s == best && rng.below(++ties) == 0) {
      best_a = a;
    }
  }
  const bool improving = ties > 0 && best > 0;
  if (lead) S.bump[i] = !improving;
  // A part that flipped nothing for freeze_rounds rounds is frozen (every
  // violated clause stuck, its weights at their caps): its clauses propose
  // with the kick noise instead, and its weights were released
  // (smooth_frozen).
  const double noise = S.pfrozen[part_of(S, I.cl_lit[lo] >> 1)] ? P.kick : P.noise;
  if (ties == 0 || (!improving && !(P.use_dw && rng.uniform() < noise))) {
    if (lead) S.cand[i] = 0;
    return;
  }
  const unsigned long long pr = priority(improving, best, P.seed, P.round, best_a);
  if (lead) {
    S.cand[i] = best_a + 1;
    S.prio[i] = pr;
  }
  for (int64_t k = I.occ_off[best_a] + first; k < I.occ_off[best_a + 1]; k += stride)
    atomic_max_u64(&S.claim[I.occ[k] >> 1], pr);
}

// Phase 1 for violated entry i of list `in`, by one thread.
MLN_HD inline void propose(const Inst& I, const State& S, int in, int64_t i, const RoundParams& P) {
  propose_by(I, S, in, i, P, [&](uint32_t a) { return score(I, S, a, P.use_dw); }, true, 0, 1);
}

// Phase 2 for entry i: flips its atom if the proposal won every clause of
// the atom and is the atom's first winning proposal this round.
MLN_HD inline void flip(const Inst& I, const State& S, int in, int64_t i, int64_t round) {
  if (S.cand[i] == 0) return;
  const uint32_t a = S.cand[i] - 1;
  const unsigned long long pr = S.prio[i];
  for (int64_t k = I.occ_off[a]; k < I.occ_off[a + 1]; ++k)
    if (load_u64(&S.claim[I.occ[k] >> 1]) != pr) return;
  const uint32_t mark = static_cast<uint32_t>(round + 1);
  if (atomic_exch_u32(&S.stamp[a], mark) == mark) return;  // the same atom, proposed by another clause
  const uint8_t nv = S.truth[a] ^ 1;
  S.truth[a] = nv;
  int64_t dcost = 0;
  for (int64_t k = I.occ_off[a]; k < I.occ_off[a + 1]; ++k) {
    const uint32_t o = I.occ[k], c = o >> 1;
    const int64_t w = I.w[c];
    int32_t t = S.tc[c];
    const bool was = costly(w, t);
    t += ((o & 1) == nv) ? 1 : -1;
    S.tc[c] = t;
    S.crit[c] ^= a;
    const bool now = costly(w, t);
    if (now && !was) {
      dcost += abs64(w);
      S.viol[in ^ 1][atomic_add_u64(&S.ctr[kViol0 + (in ^ 1)], 1)] = static_cast<int32_t>(c);
    } else if (was && !now) {
      dcost -= abs64(w);
    }
  }
  atomic_add_u64(&S.ctr[kCost], static_cast<unsigned long long>(dcost));
  atomic_add_u64(&S.pcost[part_of(S, a)], static_cast<unsigned long long>(dcost));
  atomic_inc_u32(&S.pflips[part_of(S, a)]);
  atomic_add_u64(&S.ctr[kFlips], 1);
}

// Phase 3 for entry i: the claims cleared over the occurrences first,
// first + stride, ... (as propose_by), the rest by the `lead` thread.
MLN_HD inline void settle_by(const Inst& I, const State& S, int in, int64_t i, const RoundParams& P, bool lead, int first,
                             int stride) {
  if (S.cand[i] != 0) {
    const uint32_t a = S.cand[i] - 1;
    for (int64_t k = I.occ_off[a] + first; k < I.occ_off[a + 1]; k += stride) store_u64(&S.claim[I.occ[k] >> 1], 0);
  }
  if (!lead) return;
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

// Phase 3 for entry i, by one thread.
MLN_HD inline void settle(const Inst& I, const State& S, int in, int64_t i, const RoundParams& P) {
  settle_by(I, S, in, i, P, true, 0, 1);
}

// True literals of clause c in `truth`.
MLN_HD inline int32_t true_literals(const Inst& I, const uint8_t* truth, int64_t c) {
  int32_t t = 0;
  for (int64_t k = I.cl_off[c]; k < I.cl_off[c + 1]; ++k) t += truth[I.cl_lit[k] >> 1] == (I.cl_lit[k] & 1);
  return t;
}

// Counts, critical atoms and the cost of clause c from `truth` (list 0 is
// filled; dw is reset to |w| when reset_dw).
MLN_HD inline void init_clause(const Inst& I, const State& S, int64_t c, int reset_dw) {
  int32_t t = 0;
  uint32_t x = 0;
  for (int64_t k = I.cl_off[c]; k < I.cl_off[c + 1]; ++k) {
    const uint32_t l = I.cl_lit[k];
    if (S.truth[l >> 1] == (l & 1)) {
      ++t;
      x ^= l >> 1;
    }
  }
  S.tc[c] = t;
  S.crit[c] = x;
  S.claim[c] = 0;
  const int64_t w = I.w[c];
  if (reset_dw) S.dw[c] = static_cast<double>(abs64(w));
  if (costly(w, t)) {
    S.viol[0][atomic_add_u64(&S.ctr[kViol0], 1)] = static_cast<int32_t>(c);
    atomic_add_u64(&S.ctr[kCost], static_cast<unsigned long long>(abs64(w)));
    const int32_t k = I.cl_off[c + 1] > I.cl_off[c] ? part_of(S, I.cl_lit[I.cl_off[c]] >> 1) : 0;
    atomic_add_u64(&S.pcost[k], static_cast<unsigned long long>(abs64(w)));
  }
}

// Part k's best := its current cost (the start; ctr[kBestCost] must be 0).
MLN_HD inline void mark_part(const State& S, int32_t k) {
  S.pbest[k] = S.pcost[k];
  atomic_add_u64(&S.ctr[kBestCost], S.pcost[k]);
}

// End of a round for part k: a lower cost becomes its best (and the total
// best moves by the difference).
MLN_HD inline void end_part(const State& S, int32_t k, const RoundParams& P) {
  const uint32_t still = S.pflips[k] == 0 ? S.pstill[k] + 1 : 0;
  const bool frozen = P.use_dw && still >= P.freeze_rounds;
  S.pstill[k] = frozen ? 0 : still;
  S.pfrozen[k] = frozen;
  S.pflips[k] = 0;
  if (frozen) S.ctr[kAnyFrozen] = 1;
  const long long cost = static_cast<long long>(S.pcost[k]), best = static_cast<long long>(S.pbest[k]);
  const bool better = cost < best;
  S.pimproved[k] = better;
  if (better) {
    S.pbest[k] = static_cast<unsigned long long>(cost);
    atomic_add_u64(&S.ctr[kBestCost], static_cast<unsigned long long>(cost - best));
    S.ctr[kImproved] = 1;
  }
}

// Atom a's best value follows its part's best.
MLN_HD inline void copy_best_atom(const State& S, uint8_t* best, int32_t a) {
  if (S.pimproved[part_of(S, a)]) best[a] = S.truth[a];
}


// A frozen part's clause gives back part of its weight gain (after
// end_part; nothing to do when no part is frozen).
MLN_HD inline void smooth_frozen(const Inst& I, const State& S, int64_t c, double keep) {
  if (I.cl_off[c + 1] > I.cl_off[c] && S.pfrozen[part_of(S, I.cl_lit[I.cl_off[c]] >> 1)]) smooth_clause(I, S, c, keep);
}

// End of a round (one thread, after end_part, the best copy and
// smooth_frozen): the list just read is emptied for the round after next.
MLN_HD inline void end_round(const State& S, int in) {
  S.ctr[kImproved] = 0;
  S.ctr[kAnyFrozen] = 0;
  S.ctr[kViol0 + in] = 0;
}

}  // namespace mln::solver::weighted
