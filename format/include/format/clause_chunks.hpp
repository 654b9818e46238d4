// The ground network's clauses as stored (a program's _clauses table): chunk
// rows of as many clauses as fit one heap page, each with its clauses'
// literal offsets and literals, its weights as a dictionary of at most 255
// distinct values (first seen first) and a byte per clause that indexes it
// (column wcode; issue #45: a float8 per clause was 8 of RC's 20.7 bytes per
// clause).  A table without wcode (grounded before 0.12.0) has a weight
// per clause.  Shared by the writer (extension/pg/heap_write.cpp) and the
// readers (solver/worker/network_io.cpp, extension/pg/network_fn.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <vector>

#include "format/network.hpp"

namespace mln::chunks {

constexpr size_t kMaxWeights = 255;  // a byte per clause

// Whether a _clauses table ($1: its qualified name, as text) has the weight
// codes' column: one boolean row.  Both readers ask it before reading.
constexpr const char* kHasCodesSql =
    "SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = 'wcode' "
    "AND NOT attisdropped)";

// The chunks of a clause set: chunk k is clauses [start[k], start[k + 1]),
// its weights dict[dict_start[k] .. dict_start[k + 1]) and its clauses'
// codes code[start[k] ..).
struct Plan {
  std::vector<size_t> start{0};
  std::vector<size_t> dict_start{0};
  std::vector<double> dict;
  std::vector<uint8_t> code;
  size_t most = 0;  // clauses in the longest chunk
  size_t chunks() const { return start.size() - 1; }
};

// Weights are the same when their bits are (a dictionary of doubles must
// not merge -0.0 with 0.0 nor lose a NaN).
inline uint64_t weight_bits(double w) {
  uint64_t b;
  std::memcpy(&b, &w, sizeof b);
  return b;
}

// Cuts clauses [first, last) into chunks (offsets and weights: a clause
// set's arrays, clause c's literals offsets[c] .. offsets[c + 1]): each as
// many clauses as row_bytes(clauses, literals, weights) keeps within
// max_bytes and at most kMaxWeights distinct weights; a clause too long for
// any row is a chunk of its own.  Chunk starts are clause indices; the
// codes are from `first` (code[c - first]).  Serial: the dictionary is
// searched from its last hit, which RC's merged clauses keep near (a dozen
// weights a chunk).
template <class RowBytes>
Plan plan(const int64_t* offsets, const double* weights, size_t first, size_t last, size_t max_bytes,
          RowBytes row_bytes) {
  Plan p;
  p.start[0] = first;
  p.code.resize(last - first);
  std::vector<uint64_t> bits;  // this chunk's dictionary, as bits
  std::vector<double> vals;    // and as weights
  size_t c0 = first, hit = 0;
  for (size_t c = first; c < last; ++c) {
    const uint64_t b = weight_bits(weights[c]);
    size_t k = bits.size();
    if (!bits.empty()) {
      if (bits[hit] == b) k = hit;
      else
        for (size_t i = 0; i < bits.size(); ++i)
          if (bits[i] == b) {
            k = i;
            break;
          }
    }
    const size_t d = bits.size() + (k == bits.size() ? 1 : 0);
    const size_t lits = static_cast<size_t>(offsets[c + 1] - offsets[c0]);
    if (c > c0 && (d > kMaxWeights || row_bytes(c + 1 - c0, lits, d) > max_bytes)) {  // c starts the next chunk
      p.start.push_back(c);
      p.most = std::max(p.most, c - c0);
      p.dict.insert(p.dict.end(), vals.begin(), vals.end());
      p.dict_start.push_back(p.dict.size());
      bits.clear();
      vals.clear();
      c0 = c;
      k = 0;
    }
    if (k == bits.size()) {
      bits.push_back(b);
      vals.push_back(weights[c]);
    }
    hit = k;
    p.code[c - first] = static_cast<uint8_t>(k);
  }
  if (last > c0) {
    p.start.push_back(last);
    p.most = std::max(p.most, last - c0);
    p.dict.insert(p.dict.end(), vals.begin(), vals.end());
    p.dict_start.push_back(p.dict.size());
  }
  return p;
}

// The chunks of a whole clause set.
template <class RowBytes>
Plan plan(const ClauseSet& cs, size_t max_bytes, RowBytes row_bytes) {
  return plan(cs.offsets.data(), cs.weights.data(), 0, cs.size(), max_bytes, row_bytes);
}

// The weights of a chunk's n clauses from its dictionary (d entries) and
// codes; false when a code is past the dictionary (a corrupt row).
inline bool decode_weights(const double* dict, size_t d, const uint8_t* code, size_t n, double* out) {
  for (size_t i = 0; i < n; ++i) {
    if (code[i] >= d) return false;
    out[i] = dict[code[i]];
  }
  return true;
}

}  // namespace mln::chunks
