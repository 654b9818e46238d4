// Columnar relations and the relational-operator engine interface.
//
// This header is the whole public surface of gpu/: it knows nothing of
// PostgreSQL and nothing of CUDA.  A Relation is a set of equally long int32
// columns that lives on one backend (host memory for the CPU backend, device
// memory for the CUDA backend).  Operators take relations and return new,
// owning relations on the same backend.  Output row order is unspecified:
// callers (and tests) sort before comparing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace mln::gpu {

enum class Backend { CPU, CUDA };

// Error raised by the engine.  `kind` lets callers map it to their own error
// codes (the extension maps OutOfMemory to ERRCODE_OUT_OF_MEMORY, ...).
class EngineError : public std::runtime_error {
 public:
  // OutOfMemory: the device's memory ran out; HostOutOfMemory: the host's
  // (the CPU backend's arrays, or any host allocation of either backend);
  // HostMemoryLimit: the CPU backend's arrays would pass
  // EngineOptions::host_memory_limit_bytes (a setting, not the machine).
  // Each names a different setting to change, so callers tell them apart by
  // kind.
  enum class Kind { InvalidArgument, OutOfMemory, HostOutOfMemory, HostMemoryLimit, DeviceUnavailable, DeviceFailure,
                    Cancelled };
  EngineError(Kind k, const std::string& msg) : std::runtime_error(msg), kind_(k) {}
  Kind kind() const noexcept { return kind_; }

 private:
  Kind kind_;
};

// Host-side columnar table: the unit of data exchange with callers.
struct HostTable {
  std::vector<std::vector<int32_t>> cols;
  size_t rows() const { return cols.empty() ? 0 : cols[0].size(); }
  int ncols() const { return static_cast<int>(cols.size()); }
};

// Opaque, backend-resident relation.  Cheap to copy (shared ownership).
class Relation {
 public:
  struct Impl;
  Relation() = default;
  explicit Relation(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  size_t rows() const;
  int ncols() const;
  Backend backend() const;
  const std::shared_ptr<Impl>& impl() const { return impl_; }

 private:
  std::shared_ptr<Impl> impl_;
};

enum class CmpOp { EQ, NE, LT, LE, GT, GE };

// One conjunct of a selection: column `col` OP (constant | column `rhs_col`).
struct Predicate {
  int col = 0;
  CmpOp op = CmpOp::EQ;
  bool rhs_is_col = false;
  int32_t rhs_const = 0;
  int rhs_col = 0;
};

// Output column of a join: take column `col` of the left (side 0) or right
// (side 1) input.
struct OutCol {
  int side = 0;
  int col = 0;
};

// Cooperative cancellation: the engine polls this between batches.  The
// callback must be thread-safe and must not call into PostgreSQL; the
// extension sets a flag from its interrupt check instead.
using CancelCheck = bool (*)();

// How join-like operators match keys.  Auto takes direct addressing when a
// join has one key column whose build-side values are dense (symbol ids
// are), else each backend's measured choice of hash table or sort
// (docs/operators.md).  Hash, Sort and Dense force one form, mainly to
// compare them (Dense still falls back where keys are not dense).  Either
// way results are the same multiset.
enum class Algorithm { Auto, Hash, Sort, Dense };

struct EngineOptions {
  // Upper bound on device memory used by one operator; inputs beyond it are
  // processed in partitions.  0 = no limit (CPU) / 80% of free memory (GPU).
  size_t memory_budget_bytes = 0;
  // Most host memory the CPU backend's arrays may hold at once (all CPU
  // engines of the process together); an allocation past it fails with
  // HostMemoryLimit instead of taking the machine's memory.  0 = no limit.
  size_t host_memory_limit_bytes = 0;
  int cpu_threads = 0;  // 0 = all hardware threads
  CancelCheck cancel = nullptr;
  Algorithm join_algorithm = Algorithm::Auto;      // join, semi_join, anti_join
  Algorithm distinct_algorithm = Algorithm::Auto;  // distinct (difference uses both)
};

// The engine: one instance per backend.  Every operator is a pure function
// of its inputs.
class Engine {
 public:
  virtual ~Engine() = default;
  virtual Backend backend() const = 0;
  virtual std::string name() const = 0;  // "cpu (N threads)" or the GPU's name

  // Working memory of the backend (device memory for CUDA, the engine's host
  // arrays for the CPU) at its peak since the last reset_peak_memory().
  virtual size_t peak_memory_bytes() const = 0;
  virtual void reset_peak_memory() = 0;
  // Gives the memory the backend keeps for reuse back to the device (CUDA:
  // the freed blocks its stream-ordered pool holds, after the device has
  // finished; CPU: nothing).  Called when a statement is done with the
  // engine, so that a walk in another process (the worker) finds the
  // grounding's memory free (issue #45).
  virtual void release_cached_memory() = 0;
  // The working memory one operator may use: EngineOptions::memory_budget_bytes,
  // or on CUDA without it 80% of the device's free memory now; 0: no limit
  // (the CPU without the option).  For callers that size pieces of work.
  virtual size_t memory_budget_bytes() = 0;
  // EngineOptions::host_memory_limit_bytes (0: none), for callers that size
  // host-side pieces of work on the CPU backend.
  virtual size_t host_memory_limit_bytes() const = 0;
  // Throws EngineError(Cancelled) when EngineOptions::cancel says stop: for
  // callers' own long host loops beside the operators (which poll it).
  virtual void poll_cancel() const = 0;

  virtual Relation upload(const HostTable& t) = 0;
  virtual HostTable download(const Relation& r) = 0;
  // Rows [row0, row0 + n) of `r`: column c into dst[c], the caller's memory
  // (n values each).  For streaming a large result out in pieces through
  // reused buffers instead of one host copy of the whole relation.
  virtual void download_rows(const Relation& r, size_t row0, size_t n, int32_t* const* dst) = 0;
  virtual Relation empty(int ncols) = 0;
  // Rows [row0, row0 + n) of `r`, sharing its memory (no copy).
  virtual Relation slice(const Relation& r, size_t row0, size_t n) = 0;

  // Rows of `in` satisfying every predicate.
  virtual Relation select(const Relation& in, const std::vector<Predicate>& preds) = 0;
  // The listed columns, in that order (columns may repeat).
  virtual Relation project(const Relation& in, const std::vector<int>& cols) = 0;
  // Inner equi-join on lkeys[i] == rkeys[i]; output columns as listed.
  virtual Relation join(const Relation& l, const Relation& r, const std::vector<int>& lkeys,
                        const std::vector<int>& rkeys, const std::vector<OutCol>& out) = 0;
  // join(), unless its output would hold more than `max_rows` rows: then
  // nothing is kept and the result is a null Relation (impl() == nullptr).
  // *rows (when not null) gets the output's row count either way.  The count
  // is the join's own (each probe chunk's matches are counted before they
  // are written), so a join that fits costs what join() costs, and one past
  // the cap is counted without being materialised (for callers that then
  // evaluate it in pieces: extension/ground/datalog_rule.cpp).
  virtual Relation join_at_most(const Relation& l, const Relation& r, const std::vector<int>& lkeys,
                                const std::vector<int>& rkeys, const std::vector<OutCol>& out, size_t max_rows,
                                size_t* rows) = 0;
  // Rows of l that have (semi) / have no (anti) match in r.
  virtual Relation semi_join(const Relation& l, const Relation& r, const std::vector<int>& lkeys,
                             const std::vector<int>& rkeys) = 0;
  virtual Relation anti_join(const Relation& l, const Relation& r, const std::vector<int>& lkeys,
                             const std::vector<int>& rkeys) = 0;
  // Bag union (concatenation) of relations with equal arity.
  virtual Relation union_all(const Relation& a, const Relation& b) = 0;
  // Distinct rows over all columns.
  virtual Relation distinct(const Relation& in) = 0;
  // Distinct rows of a that are not rows of b (set difference).
  virtual Relation difference(const Relation& a, const Relation& b) = 0;
};

// Creates the CPU backend (always available).
std::unique_ptr<Engine> make_cpu_engine(const EngineOptions& opts = {});
// Creates the CUDA backend; throws EngineError(DeviceUnavailable) when the
// library was built without CUDA or no device is present.  Initialises CUDA
// lazily: call only from a process that may own a CUDA context.
std::unique_ptr<Engine> make_cuda_engine(const EngineOptions& opts = {});
// True when this library was compiled with the CUDA backend.
bool cuda_compiled();

// Description of the GPU, if any, without creating an engine.
struct DeviceInfo {
  bool cuda_compiled = false;
  int device_count = 0;
  std::string name;       // device 0
  size_t total_memory = 0;
  size_t free_memory = 0;
  int cc_major = 0, cc_minor = 0;
  std::string error;      // why no device, if none
};
DeviceInfo query_device();

// Semi-naive fixpoint driver for recursive rule sets.  Each rule derives new
// tuples of the recursive relation from the current `delta` (and the full
// relation); the driver keeps `full` duplicate-free and iterates until no
// rule derives a new tuple.
struct FixpointStats {
  int iterations = 0;
  size_t rows = 0;
};
using DeriveFn = std::function<Relation(Engine& eng, const Relation& full, const Relation& delta)>;
Relation fixpoint(Engine& eng, const Relation& base, const DeriveFn& derive,
                  FixpointStats* stats = nullptr, int max_iterations = 1 << 20);

}  // namespace mln::gpu
