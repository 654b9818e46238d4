// The GPU PDHG bound's entry point when the library is built without CUDA.
#include "core/bound/lp_pdhg_gpu.hpp"

#ifndef MLN_HAVE_CUDA
#include "core/walk/walksat_gpu.hpp"

namespace mln::solver {

PdhgOutcome lp_bound_pdhg_gpu(const mln::Network&, const PdhgOptions&) {
  throw GpuError("pg_mln was built without CUDA");
}

}  // namespace mln::solver
#endif
