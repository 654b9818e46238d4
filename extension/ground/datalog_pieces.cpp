// A rule evaluated in pieces (docs/datalog.md, "Large joins"): the split
// threshold and the union of the pieces' outputs.  Pure C++ over gpu::Engine.
#include <cstdio>
#include <cstdlib>
#include <string>

#include <unistd.h>

#include "ground/datalog_eval.hpp"

namespace mln::ground::datalog {

uint64_t split_rows_for(const EvalOptions& o) {
  uint64_t rows = o.split_rows;
  if (rows == 0)
    if (const char* env = std::getenv("MLN_DATALOG_SPLIT_ROWS")) rows = std::strtoull(env, nullptr, 10);
  if (rows == 0 || rows > kMaxRelationRows) rows = kMaxRelationRows;
  return rows;
}

namespace detail {

uint64_t host_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  uint64_t bytes = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
  // A container's memory is its cgroup's limit where that is lower (v2's
  // memory.max, v1's memory.limit_in_bytes; "max" or a huge v1 value: none).
  for (const char* path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    if (FILE* f = std::fopen(path, "r")) {
      unsigned long long v = 0;
      if (std::fscanf(f, "%llu", &v) == 1 && v > 0 && (bytes == 0 || v < bytes)) bytes = v;
      std::fclose(f);
    }
  }
  return bytes;
}

void PieceUnion::add(const gpu::Relation& part) {
  if (part.rows() == 0) return;
  // The batch is concatenated at the flush: it must stay a relation.
  if (pending_rows_ + part.rows() > kMaxRelationRows) flush();
  pending_.push_back(part);
  pending_rows_ += part.rows();
  if (pending_rows_ >= acc_.rows()) flush();
}

gpu::Relation PieceUnion::result() {
  flush();
  return acc_;
}

void PieceUnion::flush() {
  if (pending_.empty()) return;
  // Concatenated pairwise, balanced: each row is copied O(log parts) times.
  while (pending_.size() > 1) {
    std::vector<gpu::Relation> next;
    for (size_t i = 0; i + 1 < pending_.size(); i += 2) next.push_back(eng_.union_all(pending_[i], pending_[i + 1]));
    if (pending_.size() % 2) next.push_back(pending_.back());
    pending_.swap(next);
  }
  const gpu::Relation fresh = acc_.impl() ? eng_.difference(pending_[0], acc_) : eng_.distinct(pending_[0]);
  pending_.clear();
  pending_rows_ = 0;
  if (acc_.rows() + fresh.rows() > kMaxRelationRows)
    throw LimitExceeded("the rule at line " + std::to_string(line_) + " derives more than " +
                        std::to_string(kMaxRelationRows) + " rows, the most a relation holds");
  acc_ = acc_.impl() ? eng_.union_all(acc_, fresh) : fresh;
}

}  // namespace detail

}  // namespace mln::ground::datalog
