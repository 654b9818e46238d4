// Values as little-endian bytes: the arrays mln's bytea columns keep
// (a plan's part_of, a part's probabilities), written and read the same
// way by the planner here and by the worker.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace mln::solver {

template <class T>
using LeBits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

// Appends v's little-endian bytes to b.
template <class T>
void append_le(std::string& b, T v) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "4- and 8-byte values");
  LeBits<T> bits;
  std::memcpy(&bits, &v, sizeof(T));
  for (size_t k = 0; k < sizeof(T); ++k) b.push_back(static_cast<char>(bits >> (8 * k)));
}

// The value whose little-endian bytes start at p.
template <class T>
T read_le(const char* p) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "4- and 8-byte values");
  LeBits<T> bits = 0;
  for (size_t k = 0; k < sizeof(T); ++k) bits |= static_cast<LeBits<T>>(static_cast<unsigned char>(p[k])) << (8 * k);
  T v;
  std::memcpy(&v, &bits, sizeof(T));
  return v;
}

// Every value's little-endian bytes, in order.
template <class T>
std::string le_bytes(const std::vector<T>& v) {
  std::string b;
  b.reserve(v.size() * sizeof(T));
  for (const T& x : v) append_le(b, x);
  return b;
}

}  // namespace mln::solver
