// Small, fast, portable random numbers for the search.
//
// Hand-written rather than <random>: std::uniform_*_distribution results
// differ between standard libraries, and results must be a function of the
// seed alone (same truth vector on every machine and thread count).  The
// same generator runs on the GPU (see walksat_gpu_common.cuh).
#pragma once

#include <cstdint>

#include "mln/host_device.hpp"

namespace mln::solver {

// One step of SplitMix64: used to derive independent seeds.
MLN_HD inline uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Seed of stream `index` under the run seed (component, walk, ...).
MLN_HD inline uint64_t derive_seed(uint64_t seed, uint64_t index) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + index;
  splitmix64(x);
  return splitmix64(x);
}

// xoshiro128**-style generator with 64-bit state (xorshift64*): tiny state
// so that thousands of GPU walks can keep one in a register.
struct Rng {
  uint64_t s;
  MLN_HD explicit Rng(uint64_t seed = 1) : s(seed ? seed : 0x853C49E6748FEA9Bull) {}
  // Next 64 random bits.
  MLN_HD uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1Dull;
  }
  // Uniform double in [0, 1).
  MLN_HD double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n), n > 0 (Lemire's multiply-shift).
  MLN_HD uint32_t below(uint32_t n) {
    return static_cast<uint32_t>(((next() >> 32) * static_cast<uint64_t>(n)) >> 32);
  }
};

}  // namespace mln::solver
