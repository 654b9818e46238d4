// The one rule for a failed CUDA call, in the relational engine (gpu/) and
// in the solver's walks and samplers: clear a non-sticky error so that the
// context stays usable, then throw the caller's error type with the call's
// text and CUDA's name and reason.  Never abort: a failed device is a
// fallback to the CPU or an error the user reads, not a dead process.
// CUDA translation units only.
#pragma once

#include <cuda_runtime.h>

#include <string>

namespace mln {

// "what: cudaErrorX (reason)"
inline std::string cuda_failure_message(cudaError_t e, const char* what) {
  return std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

// Throws make_error(e, message) when `e` is not cudaSuccess.
template <class MakeError>
inline void cuda_check(cudaError_t e, const char* what, MakeError make_error) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error
  throw make_error(e, cuda_failure_message(e, what));
}

}  // namespace mln
