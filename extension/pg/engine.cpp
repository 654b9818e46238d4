// Engine selection: one CPU engine and at most one CUDA engine per backend.
#include "pg/guard.hpp"
#include "pg/engine.hpp"

#include <memory>

extern "C" {
#include "utils/errcodes.h"
}

namespace mln::pg {

namespace {

std::unique_ptr<gpu::Engine> cpu_engine;
std::unique_ptr<gpu::Engine> cuda_engine;
bool cuda_probed = false;
bool cuda_usable = false;
std::string cuda_reason;

// Polled by engine worker threads: reads PostgreSQL's interrupt flags only
// (no PostgreSQL calls from other threads).
bool interrupt_pending() { return InterruptPending && (QueryCancelPending || ProcDiePending); }

gpu::EngineOptions options() {
  gpu::EngineOptions o;
  o.memory_budget_bytes = static_cast<size_t>(guc_gpu_memory_limit_mb) * 1024 * 1024;
  o.cpu_threads = guc_cpu_threads;
  o.cancel = &interrupt_pending;
  return o;
}

// Probes the GPU once per backend.
void probe_cuda() {
  if (cuda_probed) return;
  cuda_probed = true;
  gpu::DeviceInfo d = gpu::query_device();
  cuda_usable = d.cuda_compiled && d.device_count > 0;
  cuda_reason = cuda_usable ? "" : (d.error.empty() ? "no CUDA device" : d.error);
}

}  // namespace

gpu::Engine& engine_for(const std::string& device_arg) {
  std::string device = device_arg;
  if (device.empty()) device = guc_device == 1 ? "gpu" : guc_device == 2 ? "cpu" : "auto";
  if (device != "auto" && device != "gpu" && device != "cpu")
    throw UserError{ERRCODE_INVALID_PARAMETER_VALUE, "invalid device \"" + device + "\"",
                    "", "valid devices are 'auto', 'gpu' and 'cpu'"};
  if (device != "cpu") {
    probe_cuda();
    if (cuda_usable) {
      if (!cuda_engine) cuda_engine = gpu::make_cuda_engine(options());
      return *cuda_engine;
    }
    if (device == "gpu")
      throw gpu::EngineError(gpu::EngineError::Kind::DeviceUnavailable,
                             "device 'gpu' requested but no GPU is usable: " + cuda_reason);
  }
  if (!cpu_engine) cpu_engine = gpu::make_cpu_engine(options());
  return *cpu_engine;
}

}  // namespace mln::pg
