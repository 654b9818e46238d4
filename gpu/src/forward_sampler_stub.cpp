// The forward sampler's CUDA entry points in a build without CUDA.
#include "forward_sampler_impl.hpp"
#include "mln/relation.hpp"

namespace mln::gpu::fs {

std::unique_ptr<SamplerBackend> make_cuda_sampler(const CpProgram&) {
  throw EngineError(EngineError::Kind::DeviceUnavailable, "built without CUDA");
}

bool cuda_sampler_usable() { return false; }

}  // namespace mln::gpu::fs
