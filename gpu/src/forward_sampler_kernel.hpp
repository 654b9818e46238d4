// One block of 32 forward samples of a ground CP-theory (forward_sampler.hpp),
// the same code on CPU threads and in the CUDA kernel.  Bit i of a word is
// sample i of the block: an atom is one word, a rule's "fired" flags one
// word, and a rule's body is tested for all 32 samples with a few ANDs.
// Every thread walks the same rules in the same order, so the threads of a
// warp stay together; only the head choices draw per sample.  State words
// are strided (`stride`): the CUDA kernel keeps word w of thread t at
// w * stride + t, so a warp's reads of one atom are one transaction.
#pragma once

#include <cstdint>

#include "mln/host_device.hpp"

namespace mln::gpu::fs {

// The program's arrays, wherever they live.
struct CpView {
  int32_t num_atoms = 0, num_strata = 0, num_queries = 0, num_evidence = 0;
  int64_t num_rules = 0;
  const int32_t* stratum_begin = nullptr;
  const int64_t *pos_off = nullptr, *neg_off = nullptr, *head_off = nullptr;
  const int32_t *pos = nullptr, *neg = nullptr, *head = nullptr;
  const double* head_cond = nullptr;
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

// Samples the block into atoms[] (num_atoms words) using fired[] (num_rules
// words); returns the samples that satisfy the evidence.  Stratum by
// stratum, passes over its rules until one fires nothing: a rule fires in a
// sample where its body holds and it has not fired, choosing at most one
// head: the first head with its conditional probability, the next among
// the samples left with its own, and so on.  Negated atoms belong to lower
// strata, so they are final when read.
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
        for (int64_t k = g.head_off[r]; k < g.head_off[r + 1] && m; ++k) {
          const uint32_t chosen = bernoulli_mask(m, g.head_cond[k], rng);
          atoms[g.head[k] * stride] |= chosen;
          m &= ~chosen;
        }
      }
    }
  }
  uint32_t accept = valid;
  for (int32_t e = 0; e < g.num_evidence; ++e) {
    const uint32_t w = atoms[g.evidence[e] * stride];
    accept &= g.evidence_value[e] ? w : ~w;
  }
  return accept;
}

}  // namespace mln::gpu::fs
