// Host copy-bandwidth probe (the CPU backend's roofline for the benchmarks).
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "mln/device_copy.hpp"

namespace mln::gpu {

// Best wall time of `reps` std::memcpy calls of `bytes` bytes.
double time_host_copy(size_t bytes, int reps) {
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    std::memcpy(dst.data(), src.data(), bytes);
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  if (bytes && dst[bytes - 1] != 1) std::abort();  // keeps the copy observable
  return best;
}

}  // namespace mln::gpu
