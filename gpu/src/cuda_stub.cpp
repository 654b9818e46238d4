// Stand-ins for the CUDA entry points when the library is built without CUDA.
#include "mln/relation.hpp"

namespace mln::gpu {

// Always fails: this build has no CUDA backend.
std::unique_ptr<Engine> make_cuda_engine(const EngineOptions&) {
  throw EngineError(EngineError::Kind::DeviceUnavailable, "built without CUDA");
}

// False: this build has no CUDA backend.
bool cuda_compiled() { return false; }

// Reports that no device can be used.
DeviceInfo query_device() {
  DeviceInfo info;
  info.error = "built without CUDA";
  return info;
}

}  // namespace mln::gpu

#include "mln/device_copy.hpp"

namespace mln::gpu {

// Host copies only: this build has no CUDA backend.
double time_backend_copy(Backend b, size_t bytes, int reps) {
  if (b == Backend::CUDA) throw EngineError(EngineError::Kind::DeviceUnavailable, "built without CUDA");
  return time_host_copy(bytes, reps);
}

}  // namespace mln::gpu
