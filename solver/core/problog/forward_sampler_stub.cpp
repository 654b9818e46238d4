// The forward sampler's CUDA entry points in a build without CUDA.
#include "core/problog/forward_sampler_impl.hpp"
#include "mln/relation.hpp"

namespace mln::problog::fs {

std::unique_ptr<SamplerBackend> make_cuda_sampler(const CpProgram&) {
  throw gpu::EngineError(gpu::EngineError::Kind::DeviceUnavailable, "built without CUDA");
}

bool cuda_sampler_usable() { return false; }

}  // namespace mln::problog::fs
