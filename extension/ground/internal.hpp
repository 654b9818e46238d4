// Internal state shared by the grounding phases (not part of the API).
//
// Each predicate keeps a host "master" copy of its Tuffy table pred_<p>
// (arguments, truth, prior, club; the tuple id is the row index) and a
// lazily uploaded engine relation with the layout below.  Every plan is a
// sequence of engine operators over these relations; the host only appends
// rows, flips flags and builds the final literal lists.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ground/grounder.hpp"

namespace mln::ground::detail {

// Engine layout of a predicate table: args 0..k-1, then these columns.
struct PredCols {
  int k;
  int tid() const { return k; }
  int truth() const { return k + 1; }  // 0 false, 1 true, 2 unknown (NULL)
  int club() const { return k + 2; }
  int prior() const { return k + 3; }  // 1 when a prior is present
  int zero() const { return k + 4; }   // constant 0: cross products and constant columns
  int ncols() const { return k + 5; }
};

constexpr int32_t kTruthNull = 2;

struct PredState {
  const lang::PredicateDecl* decl = nullptr;
  int index = 0;
  int arity = 0;
  bool closed_world = false;
  bool completely_specified = false;
  bool safe_ref_only = true;
  bool scoped = false;
  bool has_query = false;  // query patterns registered (also for closed-world predicates)
  bool has_soft = false;   // some row carries a prior
  std::vector<QueryPattern> queries;

  // Host master copy of pred_<p>; tuple id = row index.
  std::vector<std::vector<int32_t>> args;
  std::vector<int8_t> truth;  // -1 unknown, 0, 1
  std::vector<double> prior;  // NaN if none
  std::vector<uint8_t> club;

  // Engine cache of the table (layout PredCols), rebuilt after appends.
  gpu::Relation full;
  bool full_valid = false;

  // Closure state.
  std::vector<uint8_t> active;   // by tid
  std::vector<int32_t> atom_id;  // by tid, 0 = none
  gpu::Relation act;             // [tid] of active tuples

  size_t rows() const { return truth.size(); }
  bool immutable() const { return closed_world && !has_soft; }
  bool no_need_to_ground() const { return (safe_ref_only && closed_world) || completely_specified; }
  PredCols cols() const { return PredCols{arity}; }
};

// A binding table: column 0 is the constant zero, column 1+i is vars[i].
struct Bindings {
  gpu::Relation rel;
  std::vector<std::string> vars;
  int col(const std::string& v) const {
    for (size_t i = 0; i < vars.size(); ++i)
      if (vars[i] == v) return static_cast<int>(i) + 1;
    return -1;
  }
};

// Keeps column 0 and the variables whose column `live` marks (live[1 + i]
// for vars[i]); the rows and their order stay as they are (plan.cpp).
void keep_live_columns(gpu::Engine& eng, Bindings& b, const std::vector<uint8_t>& live);

// Type of a clause variable, from the first argument position it occupies.
struct VarType {
  std::string type;
  lang::TypeKind kind = lang::TypeKind::Symbol;
};
using VarTypes = std::unordered_map<std::string, VarType>;

struct Ctx {
  Ctx(const GroundInput& i, gpu::Engine& e, const GroundOptions& o);

  const GroundInput& in;
  const lang::Program& prog;
  gpu::Engine& eng;
  const GroundOptions& opts;
  std::vector<PredState> preds;
  std::unordered_map<std::string, std::vector<int32_t>> domains;
  std::unordered_map<std::string, gpu::Relation> domain_rels;  // [zero, v]
  gpu::Relation unit;                                          // one row: [0]
  std::vector<uint8_t> relevant;                               // by clause index
  // Learning: the query predicates' evidence rows, held back from the
  // tables (columnar args per predicate, and truth).
  std::vector<PredEvidence> training;

  // Calls opts.progress (which may throw to cancel).
  void progress(const std::string& phase, double f) const {
    if (opts.progress) opts.progress(phase, f);
  }
  // The engine relation of predicate p's table (uploads it when stale).
  const gpu::Relation& full(int p);
  // Appends rows (columnar args, sorted here for determinism) with the given
  // truth/club/prior; returns the number appended.
  size_t append(int p, std::vector<std::vector<int32_t>> rows, int8_t truth, uint8_t club,
                double prior);
  // Domain relation [zero, v] of a type (empty for numeric types).
  const gpu::Relation& domain(const std::string& type);
  // Symbol id (or raw integer) of a constant term in an argument of `type kind`.
  int32_t constant_id(const lang::Term& t, lang::TypeKind kind) const;
  // The symbol's text (or the raw integer as text for Int types).
  std::string symbol_text(int32_t v, lang::TypeKind kind) const;
};

// ---- phases (one file each) ----
void load_evidence(Ctx& c);                                  // grounder.cpp
void compute_safe_ref_only(Ctx& c);                          // kbmc.cpp
void run_kbmc(Ctx& c, GroundOutput& out);                    // kbmc.cpp
void run_rules(Ctx& c);                                      // rules.cpp
void mark_queries(Ctx& c);                                   // rules.cpp
void compute_closure(Ctx& c, GroundOutput& out);             // closure.cpp
void activate_all(Ctx& c);                                   // closure.cpp
void build_atom_table(Ctx& c, GroundOutput& out);            // closure.cpp
class RawClauses;
void ground_active_clauses(Ctx& c, RawClauses& raw);         // active_clauses.cpp
void add_soft_evidence_clauses(Ctx& c, const GroundOutput& out, RawClauses& raw);  // consolidate.cpp
void add_key_constraint_clauses(Ctx& c, RawClauses& raw);    // key_constraints.cpp
// With raw.track_origins, also the merged clauses' origins (CSR, zeros dropped).
// consolidate()'s waves, where they are watched: `merged` after each
// wave, on the merging thread, with the output so far; `stop` asked before
// each (the output is then incomplete); `threads` merge (0: OpenMP's count)
// `buckets` at a time.
struct Waves {
  std::function<void(const ClauseSet& so_far)> merged;
  const std::atomic<bool>* stop = nullptr;
  int threads = 0;
  size_t buckets = 0;  // per wave (0: two per thread)
};
// Buckets per wave of consolidate_streamed: 32 ranges handed over.
constexpr size_t kStreamBuckets = 32;
void consolidate(RawClauses& raw, ClauseSet& out, std::vector<int64_t>* origin_off = nullptr,
                 std::vector<int32_t>* origins = nullptr, const Waves* waves = nullptr);  // consolidate.cpp
// consolidate() on a thread of its own while the calling thread hands each
// wave's clauses to `sink` (GroundOptions::on_clauses), in order; rethrows
// the merge's error or the sink's (which stops the merge).  No origins.
void consolidate_streamed(RawClauses& raw, ClauseSet& out, const ClauseSink& sink);  // consolidate.cpp

// Raw ground clauses before consolidation (Tuffy's cbuffer), held so that
// consolidation never holds them and the merged network both whole: each
// clause is one record [length, weight, origin (learning only), literals...]
// in the bucket that the top kBucketBits bits of its literals' hash name
// (clause_hash, the key consolidate() sorts by), so consolidate() merges one
// bucket at a time, in hash order, and gives each bucket's memory back as
// its merged clauses go out.  While there are at most kMaxWeights distinct
// weights (a plan without embedded weights gives all its clauses one) and
// the clause has fewer than 2^15 literals, the length and the weight's
// index in the table of distinct weights share the first word (top bit
// set, length in bits 16-30, index in bits 0-15): a two-literal clause
// takes 12 bytes.  Otherwise the first word is the length and two more
// hold the weight itself.  A bucket is a list of blocks mapped on their own
// (munmap returns them to the system at once, which freed heap memory would
// not), growing from 64 kB to 4 MB; a record never straddles two blocks.
class RawClauses {
 public:
  static constexpr int kBucketBits = 10;
  static constexpr size_t kBuckets = size_t{1} << kBucketBits;
  struct Block {
    int32_t* words = nullptr;
    size_t used = 0, cap = 0;  // in words
  };
  struct Bucket {
    std::vector<Block> blocks;
    size_t clauses = 0;
  };

  RawClauses() : buckets_(kBuckets) {}
  ~RawClauses() { clear(); }
  RawClauses(const RawClauses&) = delete;
  RawClauses& operator=(const RawClauses&) = delete;

  // Learning only: each record keeps +-(first-order clause + 1) of a
  // learnable origin, or 0; negated when add() flips a unit clause.
  bool track_origins = false;
  // Adds a clause: sorts and dedups `l`, drops zeros, flips [-a],w to [a],-w,
  // and drops empty clauses.
  void add(std::vector<int32_t>& l, double w, int32_t from = 0);
  void add_sorted(const int32_t* l, size_t n, double w, int32_t from = 0);
  size_t size() const { return n_; }
  size_t total_lits() const { return lits_; }
  const Bucket& bucket(size_t b) const { return buckets_[b]; }
  // The parts of the record at r.
  int header_words(const int32_t* r) const { return (r[0] < 0 ? 1 : 3) + (track_origins ? 1 : 0); }
  size_t record_words(const int32_t* r) const { return static_cast<size_t>(header_words(r)) + length(r); }
  static size_t length(const int32_t* r) {
    return static_cast<size_t>(r[0] < 0 ? (static_cast<uint32_t>(r[0]) >> 16) & 0x7fff : static_cast<uint32_t>(r[0]));
  }
  const int32_t* lits(const int32_t* r) const { return r + header_words(r); }
  double weight(const int32_t* r) const {
    if (r[0] < 0) return weights_[static_cast<uint32_t>(r[0]) & 0xffff];
    double w;
    std::memcpy(&w, r + 1, sizeof w);
    return w;
  }
  int32_t origin(const int32_t* r) const { return r[header_words(r) - 1]; }  // track_origins only
  // Unmaps bucket b's blocks.
  void release(size_t b);
  // Unmaps every block (size() and total_lits() stay as they were).
  void clear();
  // FNV-1a over the literals: consolidation's sort key.
  static uint64_t clause_hash(const int32_t* l, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t k = 0; k < n; ++k) h = (h ^ static_cast<uint32_t>(l[k])) * 1099511628211ull;
    return h;
  }
  static size_t bucket_of(uint64_t hash) { return static_cast<size_t>(hash >> (64 - kBucketBits)); }

 private:
  static constexpr size_t kMaxWeights = size_t{1} << 16;
  int32_t* room(Bucket& b, size_t words);
  int32_t weight_index(double w);  // -1 once the table is full
  std::vector<Bucket> buckets_;
  size_t n_ = 0, lits_ = 0;
  std::vector<double> weights_;                  // the distinct weights
  std::unordered_map<uint64_t, int32_t> index_;  // a weight's bits -> its index
  uint64_t last_bits_ = 0;                       // the last weight looked up, and its index
  int32_t last_index_ = -2;
};

}  // namespace mln::ground::detail
