// The forward sampler's backends (forward_sampler.hpp): each runs batches
// of blocks of 32 samples and adds their counts; the driver
// (forward_sampler.cpp) owns the stopping rule.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "mln/forward_sampler.hpp"

namespace mln::gpu::fs {

class SamplerBackend {
 public:
  virtual ~SamplerBackend() = default;
  // Samples [begin, end) (sample numbers; block b holds samples 32b ..
  // 32b + 31); adds the accepted samples to counts[0] and each query's true
  // accepted samples to counts[1 + q].
  virtual void run(uint64_t begin, uint64_t end, uint64_t seed, std::vector<uint64_t>& counts) = 0;
  // Blocks one batch runs at full width.
  virtual uint64_t batch_blocks() const = 0;
  virtual const char* name() const = 0;
};

std::unique_ptr<SamplerBackend> make_cpu_sampler(const CpProgram& prog, int threads);
// Throws EngineError(DeviceUnavailable) without a usable device (always in a
// build without CUDA), EngineError(OutOfMemory) when one block does not fit.
std::unique_ptr<SamplerBackend> make_cuda_sampler(const CpProgram& prog);
bool cuda_sampler_usable();

}  // namespace mln::gpu::fs
