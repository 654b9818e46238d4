// Engine selection: one CPU engine and at most one CUDA engine per backend.
#include "pg/guard.hpp"
#include "pg/engine.hpp"

#include "ground/datalog_eval.hpp"

#include <csignal>
#include <memory>
#include <thread>

#include <pthread.h>

extern "C" {
#include "storage/ipc.h"
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
  // The machine's memory is read once per backend (it reads /proc and /sys).
  static const size_t half_machine = static_cast<size_t>(ground::datalog::detail::host_memory_bytes() / 2);
  o.host_memory_limit_bytes = guc_cpu_memory_limit_mb > 0 ? static_cast<size_t>(guc_cpu_memory_limit_mb) << 20
                                                           : half_machine;
  o.cpu_threads = guc_cpu_threads;
  o.cancel = &interrupt_pending;
  return o;
}

// The settings an engine was made with: a SET of mln.gpu_memory_limit,
// mln.cpu_memory_limit or mln.cpu_threads after the first use makes it anew
// (an engine holds no state between statements).
gpu::EngineOptions cpu_made_with, cuda_made_with;
bool same_settings(const gpu::EngineOptions& a, const gpu::EngineOptions& b) {
  return a.memory_budget_bytes == b.memory_budget_bytes && a.host_memory_limit_bytes == b.host_memory_limit_bytes &&
         a.cpu_threads == b.cpu_threads;
}

// Probes the GPU once per backend.
void probe_cuda() {
  if (cuda_probed) return;
  cuda_probed = true;
  gpu::DeviceInfo d = gpu::query_device();
  cuda_usable = d.cuda_compiled && d.device_count > 0;
  cuda_reason = cuda_usable ? "" : (d.error.empty() ? "no CUDA device" : d.error);
}

// The background warm-up (mln.device_warmup): probes the GPU and creates the
// CUDA engine on a helper thread, so that CUDA's context creation (a large
// part of a second) overlaps whatever the session does next (the command line:
// the evidence COPY).  The thread calls no PostgreSQL function and runs with
// every signal blocked, so PostgreSQL's handlers stay on the main thread.
// engine_for() joins it before it looks at the engine; so does backend exit.
std::thread warmup;
std::unique_ptr<gpu::Engine> warm_engine;
std::string warm_error;
gpu::EngineOptions warm_made_with;

void join_warmup() {
  if (!warmup.joinable()) return;
  warmup.join();
  if (warm_engine && !cuda_engine) {
    cuda_engine = std::move(warm_engine);
    cuda_made_with = warm_made_with;
  }
  // A failed warm-up leaves nothing behind: engine_for() tries again in the
  // foreground and reports the error there.
  if (!warm_error.empty()) cuda_probed = false;
  warm_engine.reset();
  warm_error.clear();
}

// Backend exit: a C callback, so nothing may be thrown out of it.
void join_warmup_at_exit(int, Datum) {
  try {
    join_warmup();
  } catch (...) {
  }
}

// The device asked for: the argument, or the mln.device GUC when it is
// empty.  Throws UserError for a name other than auto, gpu or cpu.
std::string requested_device(const std::string& device_arg) {
  const std::string device = !device_arg.empty() ? device_arg : guc_device == 1 ? "gpu" : guc_device == 2 ? "cpu" : "auto";
  if (device != "auto" && device != "gpu" && device != "cpu")
    throw UserError{ERRCODE_INVALID_PARAMETER_VALUE, "invalid device \"" + device + "\"",
                    "", "valid devices are 'auto', 'gpu' and 'cpu'"};
  return device;
}

}  // namespace

bool start_device_warmup(const std::string& device_arg) {
  const std::string device = requested_device(device_arg);
  if (device == "cpu" || cuda_engine || warmup.joinable()) return device != "cpu";
  if (!gpu::cuda_compiled()) probe_cuda();  // the stub's probe is free
  if (cuda_probed && !cuda_usable) return false;
  static bool exit_hook = false;
  if (!exit_hook) {
    pg_call([] { before_shmem_exit(join_warmup_at_exit, 0); });
    exit_hook = true;
  }
  cuda_probed = true;  // set by the thread's probe; engine_for() waits for it
  const gpu::EngineOptions opts = options();
  warm_made_with = opts;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  try {
    warmup = std::thread([opts] {
      try {
        gpu::DeviceInfo d = gpu::query_device();
        cuda_usable = d.cuda_compiled && d.device_count > 0;
        cuda_reason = cuda_usable ? "" : (d.error.empty() ? "no CUDA device" : d.error);
        if (cuda_usable) warm_engine = gpu::make_cuda_engine(opts);
      } catch (const std::exception& e) {
        warm_error = e.what();
      } catch (...) {
        warm_error = "unknown error";
      }
    });
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    cuda_probed = false;
    return false;  // no thread: the engine is created in the foreground when needed
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return true;
}

gpu::Engine& engine_for(const std::string& device_arg) {
  const std::string device = requested_device(device_arg);
  join_warmup();
  if (device != "cpu") {
    probe_cuda();
    if (cuda_usable) {
      const gpu::EngineOptions want = options();
      if (!cuda_engine || !same_settings(cuda_made_with, want)) {
        cuda_engine.reset();
        cuda_made_with = want;
        cuda_engine = gpu::make_cuda_engine(want);
      }
      return *cuda_engine;
    }
    if (device == "gpu")
      throw gpu::EngineError(gpu::EngineError::Kind::DeviceUnavailable,
                             "device 'gpu' requested but no GPU is usable: " + cuda_reason);
  }
  const gpu::EngineOptions want = options();
  if (!cpu_engine || !same_settings(cpu_made_with, want)) {
    cpu_made_with = want;
    cpu_engine = gpu::make_cpu_engine(want);
  }
  return *cpu_engine;
}

}  // namespace mln::pg
