// Choosing and caching the operator engine of this backend.
#pragma once

#include <string>

#include "mln/relation.hpp"

namespace mln::pg {

// Settings behind the GUCs (defined in module.cpp).
extern int guc_device;            // 0 auto, 1 gpu, 2 cpu
extern int guc_gpu_memory_limit_mb;
extern int guc_cpu_threads;
extern int guc_cpu_memory_limit_mb;  // 0: half of the machine's memory
extern bool guc_regress;
extern bool guc_unit_propagation;

// Resolves 'auto' | 'gpu' | 'cpu' (nullptr/empty: the mln.device GUC) to an
// engine, creating it lazily (CUDA is initialised here, in a backend, never
// in the postmaster).  Throws UserError for bad names, EngineError when 'gpu'
// is asked for without a usable GPU.
gpu::Engine& engine_for(const std::string& device);

// Starts creating the CUDA engine on a helper thread (see engine.cpp) unless
// the device is 'cpu', the engine exists, or no GPU is known to be usable.
// Returns false when nothing was started and no GPU engine exists.  Throws
// UserError for a bad device name, never for a missing GPU (engine_for
// reports that).
bool start_device_warmup(const std::string& device);

}  // namespace mln::pg
