// Internal representation of a Relation: equally long int32 columns held in
// backend memory (host for CPU, device for CUDA), shared between relations.
//
// Relations are immutable once built, so columns are shared by reference
// counting: project() and union with an empty side copy no data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mln/relation.hpp"

#include "mln/host_device.hpp"

namespace mln::gpu {

// A typed, reference-counted array in one backend's memory.
template <class T>
struct Buf {
  std::shared_ptr<void> mem;  // owns the allocation (deleter frees it)
  T* ptr = nullptr;
  size_t n = 0;
  // Pointer to the first element (nullptr when empty).
  T* data() const { return ptr; }
  // Number of elements.
  size_t size() const { return n; }
};

using Column = Buf<int32_t>;

struct Relation::Impl {
  Backend backend = Backend::CPU;
  size_t rows = 0;
  std::vector<Column> cols;
};

using RelPtr = std::shared_ptr<Relation::Impl>;

// Throws EngineError(InvalidArgument) with `msg` unless `cond` holds.
inline void mln_expects(bool cond, const std::string& msg) {
  if (!cond) throw EngineError(EngineError::Kind::InvalidArgument, msg);
}
#define MLN_EXPECTS(cond, msg) ::mln::gpu::mln_expects((cond), (msg))

}  // namespace mln::gpu
