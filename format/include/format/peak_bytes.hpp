// Bytes held now and their high-water mark, updated from any thread: the
// memory peaks the engine and the GPU MaxWalkSAT report.
#pragma once

#include <atomic>
#include <cstddef>

namespace mln {

class PeakBytes {
 public:
  // Records `delta` bytes taken (> 0) or given back (< 0).
  void add(std::ptrdiff_t delta) {
    const size_t now = now_.fetch_add(static_cast<size_t>(delta)) + static_cast<size_t>(delta);
    size_t peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
  }
  // Bytes held now.
  size_t now() const { return now_.load(); }
  // The high-water mark; reset = true first starts a new mark at the current use.
  size_t peak(bool reset = false) {
    if (reset) peak_ = now_.load();
    return peak_.load();
  }

 private:
  std::atomic<size_t> now_{0};
  std::atomic<size_t> peak_{0};
};

}  // namespace mln
