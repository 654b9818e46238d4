// The forward sampler's backends (forward_sampler.hpp): each runs batches
// of blocks of 32 samples and adds their counts; the driver
// (forward_sampler.cpp) owns the stopping rule.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/problog/forward_sampler_kernel.hpp"
#include "core/problog/forward_sampler.hpp"

namespace mln::problog::fs {

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

// Per stratum: 1 where one pass over its rules fires all that can fire: no
// rule reads positively an atom that a rule at or after it defines, so its
// body atoms are final when it is visited (negated ones can only turn
// bodies false), and a second pass would fire nothing and draw nothing.
// The grounder's firing order (problog_build.cpp) makes every acyclic
// stratum so; its rules then cost one pass instead of two.
std::vector<uint8_t> one_pass_strata(const CpProgram& p);

// Every rule's alias table for choose_each (forward_sampler_kernel.hpp),
// rule r's at head_off[r] + r: a slot per head and one for no head (the
// probability its heads leave), built by Vose's method where the rule has
// kHeadsChosenEach heads or more (the others' slots are left unused).
std::vector<AliasSlot> alias_tables(const CpProgram& p);

std::unique_ptr<SamplerBackend> make_cpu_sampler(const CpProgram& prog, int threads);
// Throws gpu::EngineError(DeviceUnavailable) without a usable device (always in a
// build without CUDA), gpu::EngineError(OutOfMemory) when one block does not fit.
std::unique_ptr<SamplerBackend> make_cuda_sampler(const CpProgram& prog);
bool cuda_sampler_usable();

}  // namespace mln::problog::fs
