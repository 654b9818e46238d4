// A std::vector whose resize leaves new elements of trivial types unwritten.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace mln {

// Transparent huge pages for [p, p + bytes), where the kernel has them
// (a hint: nothing changes where it has not).
inline void advise_huge(void* p, size_t bytes) noexcept {
#ifdef MADV_HUGEPAGE
  madvise(p, bytes, MADV_HUGEPAGE);
#else
  (void)p, (void)bytes;
#endif
}

// An allocator whose construct() default-initialises: resize() then
// leaves new int and double elements unwritten (no serial zero fill), for
// arrays that threads write in full right after, which also spreads the
// first touch of the pages over them; the zero fills and their page faults
// are a large share of a walk's set-up.  With 4 kB pages the faults cost
// about what the zeroing did, hence the huge pages below
// (docs/solver/walk.md).
template <class T>
struct UninitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitAllocator<U>;
  };
  UninitAllocator() = default;
  template <class U>
  UninitAllocator(const UninitAllocator<U>&) noexcept {}
  // Arrays of kHugeBytes and more on 2 MB boundaries, in transparent huge
  // pages where the kernel gives them on request (its "madvise" mode, as on
  // this project's machines): their first touch then faults once per 2 MB,
  // not once per 4 kB.
  static constexpr size_t kHugeBytes = size_t{16} << 20;
  static constexpr size_t kHugePage = size_t{2} << 20;
  T* allocate(size_t n) {
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_array_new_length();
    const size_t bytes = n * sizeof(T);
    if (bytes < kHugeBytes) return std::allocator<T>::allocate(n);
    void* p = nullptr;
    if (posix_memalign(&p, kHugePage, bytes) != 0) throw std::bad_alloc();
    advise_huge(p, bytes);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n * sizeof(T) < kHugeBytes) std::allocator<T>::deallocate(p, n);
    else std::free(p);
  }
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible<U>::value) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
template <class T>
using HostArray = std::vector<T, UninitAllocator<T>>;

}  // namespace mln
