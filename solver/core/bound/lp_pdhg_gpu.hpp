// The PDHG bound (lp_pdhg.hpp) with its iterations on the GPU
// (lp_pdhg_gpu.cu; lp_pdhg_gpu_stub.cpp without CUDA).  lp_bound_pdhg calls
// it for device "gpu" and "auto"; the bound is the same certified g(y),
// evaluated on the host by lp_pdhg.cpp's function.
// No CUDA types here.
#pragma once

#include "core/bound/lp_pdhg.hpp"
#include "format/network.hpp"

namespace mln::solver {

// lp_bound_pdhg on the current CUDA device (opts.device is not read; the
// caller checked that a device is usable).  Throws GpuError
// (core/walk/walksat_gpu.hpp) on any CUDA failure, out of device memory
// included, and where the LP has 2^31 rows or more; std::bad_alloc when
// the host runs out.
PdhgOutcome lp_bound_pdhg_gpu(const mln::Network& net, const PdhgOptions& opts);

}  // namespace mln::solver
