// One block of 32 forward samples of a ground CP-theory (forward_sampler.hpp),
// the same code on CPU threads and in the CUDA kernel.  Bit i of a word is
// sample i of the block: an atom is one word, a rule's "fired" flags one
// word, and a rule's body is tested for all 32 samples with a few ANDs.
// Every thread walks the same rules in the same order, so the threads of a
// warp stay together; only the head choices draw per sample (and rules of
// many heads draw for each sample on its own: choose_each).  State words
// are strided (`stride`): the CUDA kernel keeps word w of thread t at
// w * stride + t, so a warp's reads of one atom are one transaction.
#pragma once

#include <cstdint>

#include "mln/host_device.hpp"

namespace mln::problog::fs {

// One slot of a rule's alias table (alias_tables()): a slot drawn
// uniformly is itself with probability `keep`, else `alias`.
struct AliasSlot {
  double keep = 1;
  int32_t alias = 0, unused = 0;
};

// The program's arrays, wherever they live.
struct CpView {
  int32_t num_atoms = 0, num_strata = 0, num_queries = 0, num_evidence = 0;
  int64_t num_rules = 0;
  const int32_t* stratum_begin = nullptr;
  const uint8_t* one_pass = nullptr;  // per stratum: one_pass_strata()
  const int64_t *pos_off = nullptr, *neg_off = nullptr, *head_off = nullptr;
  const int32_t *pos = nullptr, *neg = nullptr, *head = nullptr;
  const double* head_cond = nullptr;
  const AliasSlot* alias = nullptr;  // rule r's table at head_off[r] + r: alias_tables()
  const int32_t* queries = nullptr;
  const int32_t* evidence = nullptr;
  const uint8_t* evidence_value = nullptr;
};

// SplitMix64: a stream from the seed and a sample number alone, so the
// samples do not depend on the backend, the thread count or the batches.
struct Rng {
  uint64_t s;
  MLN_HD uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  MLN_HD double uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
};

MLN_HD inline Rng stream_rng(uint64_t seed, uint64_t first_sample) {
  Rng r{seed ^ (first_sample * 0xD1B54A32D192ED03ull)};
  r.next();
  return Rng{r.next()};
}

// The samples of block `block` in [begin, end) (sample numbers).
MLN_HD inline uint32_t valid_mask(uint64_t block, uint64_t begin, uint64_t end) {
  const uint64_t lo = block * 32 > begin ? block * 32 : begin, hi = block * 32 + 32 < end ? block * 32 + 32 : end;
  if (lo >= hi) return 0;
  const uint32_t below_hi = hi - block * 32 >= 32 ? 0xFFFFFFFFu : ((1u << (hi - block * 32)) - 1u);
  const uint32_t below_lo = (1u << (lo - block * 32)) - 1u;
  return below_hi & ~below_lo;
}

// A block's random stream, keyed by the number of its first sample drawn:
// a block split between two batches draws each part from its own stream.
MLN_HD inline Rng block_rng(uint64_t seed, uint64_t block, uint64_t begin) {
  return stream_rng(seed, block * 32 > begin ? block * 32 : begin);
}

MLN_HD inline int popcount32(uint32_t x) {
#if defined(__CUDA_ARCH__)
  return __popc(x);
#else
  return __builtin_popcount(x);
#endif
}

MLN_HD inline int lowest_bit(uint32_t x) {  // x != 0
#if defined(__CUDA_ARCH__)
  return __ffs(static_cast<int>(x)) - 1;
#else
  return __builtin_ctz(x);
#endif
}

// floor(r n / 2^64): r's share of n, uniform on 0 .. n - 1 up to n / 2^64.
MLN_HD inline uint64_t scale_to(uint64_t r, uint64_t n) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(r, n);
#else
  return static_cast<uint64_t>((static_cast<unsigned __int128>(r) * n) >> 64);
#endif
}

// The samples of `m` whose uniform draw u falls below p, all 32 decided
// together: u's binary digits are drawn one word at a time (bit i of a word
// for sample i), most significant first, and a sample is decided at its
// first digit that differs from p's (about 7 words for 32 samples, instead
// of 32 draws).  Exact for u on 53-bit dyadic rationals, as a double draw.
MLN_HD inline uint32_t bernoulli_mask(uint32_t m, double p, Rng& rng) {
  if (p >= 1.0) return m;
  if (!(p > 0.0)) return 0;
  const double scaled = p * 9007199254740992.0;  // 2^53
  uint64_t pk = static_cast<uint64_t>(scaled);
  if (static_cast<double>(pk) < scaled) ++pk;  // u < p  <=>  U < ceil(p 2^53)
  uint32_t undecided = m, chosen = 0;
  for (int k = 52; k >= 0 && undecided; --k) {
    const uint32_t r = static_cast<uint32_t>(rng.next());
    if ((pk >> k) & 1u) {
      chosen |= undecided & ~r;  // digit 0 below p's 1: u < p
      undecided &= r;
    } else {
      undecided &= ~r;  // digit 1 above p's 0: u > p
    }
  }
  return chosen;  // still undecided: U == ceil(p 2^53), not below
}

// A rule of this many heads or more chooses each sample's head on its own
// (choose_each); fewer, all 32 samples' together (choose_together).  On a
// CPU core, sampling GROWINGHEAD (rules of 1 to N heads that fire in nearly
// every sample) costs the same with this at 8 to 32 and 2x more at 64.
constexpr int64_t kHeadsChosenEach = 8;

// Rule r's heads for the samples of m, all 32 together: the first head with
// its conditional probability, the next among the samples left with its
// own, and so on: a few random words per head, whatever the samples.
MLN_HD inline void choose_together(const CpView& g, int64_t r, uint32_t m, uint32_t* atoms, int64_t stride,
                                   Rng& rng) {
  for (int64_t k = g.head_off[r]; k < g.head_off[r + 1] && m; ++k) {
    const uint32_t chosen = bernoulli_mask(m, g.head_cond[k], rng);
    atoms[g.head[k] * stride] |= chosen;
    m &= ~chosen;
  }
}

// The same choice per sample, by Walker's alias method: a slot of the
// rule's table drawn uniformly (a head, or past the last one: no head),
// then the slot or its alias by a second draw: two draws and one table
// slot per sample, whatever the heads.  The heads' probabilities are the
// same; the draws are other than choose_together's.  Per block of 32
// samples on a CPU core, GROWINGHEAD 1000 takes 0.45 ms this way and 8.1 ms by
// choose_together alone (which walks the ~970 heads its samples reach, a
// few random words each), GROWINGHEAD 2000 2.5 and 35 ms (and 20 ms by
// bisection of the cumulative probabilities, whose dependent reads stall
// once the tables leave the cache).
MLN_HD inline void choose_each(const CpView& g, int64_t r, uint32_t m, uint32_t* atoms, int64_t stride, Rng& rng) {
  const int64_t first = g.head_off[r], n = g.head_off[r + 1] - first;
  const AliasSlot* table = g.alias + first + r;  // n + 1 slots
  while (m) {
    const int i = lowest_bit(m);
    m &= m - 1;
    const int64_t slot = static_cast<int64_t>(scale_to(rng.next(), static_cast<uint64_t>(n + 1)));
    const AliasSlot a = table[slot];
    const int64_t k = rng.uniform() < a.keep ? slot : a.alias;
    if (k < n) atoms[g.head[first + k] * stride] |= 1u << i;
  }
}

// Samples the block into atoms[] (num_atoms words) using fired[] (num_rules
// words); returns the samples that satisfy the evidence.  Stratum by
// stratum, passes over its rules until one fires nothing (one pass where
// one_pass says that a second cannot fire anything): a rule fires in a
// sample where its body holds and it has not fired, choosing at most one
// head.  Negated atoms belong to lower strata, so they are final when read.
MLN_HD inline uint32_t sample_block(const CpView& g, uint32_t* atoms, uint32_t* fired, int64_t stride, uint32_t valid,
                                    Rng& rng) {
  for (int32_t a = 0; a < g.num_atoms; ++a) atoms[a * stride] = 0;
  for (int64_t r = 0; r < g.num_rules; ++r) fired[r * stride] = 0;
  for (int32_t s = 0; s < g.num_strata && valid; ++s) {
    uint32_t any = 1;
    while (any) {
      any = 0;
      for (int64_t r = g.stratum_begin[s]; r < g.stratum_begin[s + 1]; ++r) {
        uint32_t m = valid & ~fired[r * stride];
        for (int64_t k = g.pos_off[r]; k < g.pos_off[r + 1] && m; ++k) m &= atoms[g.pos[k] * stride];
        for (int64_t k = g.neg_off[r]; k < g.neg_off[r + 1] && m; ++k) m &= ~atoms[g.neg[k] * stride];
        if (!m) continue;
        fired[r * stride] |= m;
        any |= m;
        if (g.head_off[r + 1] - g.head_off[r] >= kHeadsChosenEach) choose_each(g, r, m, atoms, stride, rng);
        else choose_together(g, r, m, atoms, stride, rng);
      }
      if (g.one_pass[s]) break;
    }
  }
  uint32_t accept = valid;
  for (int32_t e = 0; e < g.num_evidence; ++e) {
    const uint32_t w = atoms[g.evidence[e] * stride];
    accept &= g.evidence_value[e] ? w : ~w;
  }
  return accept;
}

}  // namespace mln::problog::fs
