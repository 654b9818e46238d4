// Live grounding's state (live.hpp): tuples, hash indexes over them, the
// per-predicate tables with an overlay that keeps the state before an
// update readable, and the clauses' precomputed shapes.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ground/kbmc_search.hpp"
#include "ground/live.hpp"

namespace mln::ground::live {

using Tuple = std::vector<int32_t>;

struct TupleHash {
  size_t operator()(const Tuple& t) const {
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (int32_t v : t) h = (h ^ static_cast<uint32_t>(v)) * 0x100000001B3ull + (h >> 29);
    return static_cast<size_t>(h);
  }
};

template <class V>
using TupleMap = std::unordered_map<Tuple, V, TupleHash>;
using TupleSet = std::unordered_set<Tuple, TupleHash>;

// A set of tuples with indexes by bound argument positions (a bit mask),
// built on the first lookup with that mask and kept up to date after.
class TupleIndex {
 public:
  bool contains(const Tuple& t) const { return all_.count(t) > 0; }
  size_t size() const { return all_.size(); }
  const TupleSet& all() const { return all_; }
  void insert(const Tuple& t);
  void erase(const Tuple& t);
  // Calls f for each tuple whose arguments at the mask's positions equal
  // `key`'s.  f must not change this index (callers defer their writes).
  void for_each_match(uint32_t mask, const Tuple& key, const std::function<void(const Tuple&)>& f);

 private:
  static uint64_t project(uint32_t mask, const Tuple& t);
  using Buckets = std::unordered_map<uint64_t, std::vector<Tuple>>;
  Buckets& by(uint32_t mask);
  TupleSet all_;
  std::map<uint32_t, Buckets> masks_;
};

// Which state a read sees: before the update in progress, or after it.
enum class View { Old, New };

// A tuple's row in Tuffy's predicate table.
struct Row {
  bool exists = false;
  int8_t truth = -1;  // -1 unknown, 0 false, 1 true
  uint8_t club = 0;   // 0 unknown, 1 unknown query, 2 evidence, 3 query evidence
  bool unknown() const { return exists && club < 2; }
};

struct Pred {
  int arity = 0;
  bool cw = false, cs = false, immutable = false;
  bool materialised = false;                       // KBMC inserts its candidates
  std::vector<kbmc::Pattern> patterns;             // relevant patterns (constants: kConst + id)
  std::vector<std::vector<int32_t>> queries;       // query patterns (negative: variables)
  std::vector<const std::vector<int32_t>*> domain_of;  // per argument: nullptr until bound
  std::vector<std::string> arg_types;
  TupleMap<int8_t> ev;                             // explicit evidence: truth
  TupleIndex ev_true, ev_false, active;
  TupleMap<int8_t> old_ev;                         // during an update: truth before (-2 absent)
  TupleMap<uint8_t> old_active;                    // during an update: activity before
  // The overlay's tuples that were evidence true, false, or active before,
  // indexed like the sets above (an update of many rows reads them often).
  TupleIndex old_ev_true, old_ev_false, old_active_on;
  void note_old_ev(const Tuple& t, int8_t truth) {
    if (!old_ev.emplace(t, truth).second) return;
    if (truth == 1) old_ev_true.insert(t);
    if (truth == 0) old_ev_false.insert(t);
  }
  void note_old_active(const Tuple& t, bool was) {
    if (old_active.emplace(t, was ? 1 : 0).second && was) old_active_on.insert(t);
  }
  void clear_old() {
    old_ev.clear();
    old_active.clear();
    old_ev_true = TupleIndex();
    old_ev_false = TupleIndex();
    old_active_on = TupleIndex();
  }
};

// A literal argument: a clause variable (var >= 0) or a constant id.
struct Arg {
  int var = -1;
  int32_t konst = 0;
};

struct ClauseShape {
  // Per literal and phase: whether a tuple's change between absent and an
  // inactive candidate row can change a binding through it.  It can where
  // the literal is inner and passes on an unknown row, or is positive on a
  // ** predicate; in the closure also where it activates (an absent tuple
  // is never activated).  In the clause phase, never through the clause's
  // only mutable literal (an inactive atom leaves no literal).  Elsewhere
  // such a change is skipped (live_update.cpp).
  std::vector<bool> closure_reads_candidates, clause_reads_candidates;
  int index = 0;       // in Program::clauses
  bool pos = true;     // weight sign
  double weight = 0;   // as ground() stores it
  bool worth = false;  // the closure visits it (Tuffy's worth test, and an open-world negative literal if w < 0)
  bool any_mutable = false;
  int mutable_lits = 0;
  int nvars = 0;
  std::vector<int> preds;
  std::vector<bool> positive, inner;
  std::vector<std::vector<Arg>> args;
  std::vector<std::string> var_types;
  std::vector<int> order;  // plan order: negative literals, then positive
};

// A literal of a clause bound to a tuple.
struct Atomref {
  int pred;
  Tuple tuple;
};

enum class Phase { Closure, Clauses };

// The evidence of `in` as Tuffy's tables hold it, per predicate: the last
// row of a tuple wins; a prior of 0 or 1 is hard evidence (load_evidence).
// Throws lang::LangError for an arity mismatch.
std::vector<TupleMap<int8_t>> evidence_maps(const GroundInput& in, size_t npreds);
// Each type's domain as a set (type_domains may repeat a value).
std::map<std::string, std::unordered_set<int32_t>> domain_sets(const GroundInput& in);

}  // namespace mln::ground::live

namespace mln::ground {

struct LiveGrounder::State {
  using Tuple = live::Tuple;
  using View = live::View;
  using Phase = live::Phase;
  using Row = live::Row;
  using Binding = std::vector<int32_t>;  // a value per clause variable
  using Visit = std::function<void(const Binding&)>;

  struct Domain {
    std::unordered_set<int32_t> set;
    std::vector<int32_t> list;
    std::unordered_set<int32_t> added, removed;  // during an update
  };

  State(const GroundInput& in, const GroundOptions& o);

  const lang::Program& prog;
  GroundOptions opts;
  int64_t max_clauses = 0;  // 0: none
  void check_size() const {
    if (max_clauses > 0 && static_cast<int64_t>(clauses.size()) > max_clauses)
      throw std::length_error("live grounding: more than " + std::to_string(max_clauses) + " clauses");
  }
  std::vector<live::Pred> preds;
  std::vector<live::ClauseShape> shapes;
  std::vector<std::vector<std::pair<int, int>>> uses;  // per predicate: (shape, literal) on it
  std::map<std::string, Domain> domains;
  std::vector<live::TupleMap<int32_t>> ids;  // per predicate: atom id, kept once given
  std::vector<live::Atomref> atom_of;         // id - 1 -> the atom
  // Consolidated clauses: sorted signed literals -> the weights merged into
  // it, with their counts (summed in ascending order, as consolidate() does);
  // ordered, so that the network does not depend on the updates' history.
  std::map<Tuple, std::map<double, int64_t>> clauses;

  // Calls opts.progress now and then (it may throw to cancel), with the
  // fraction done so far (the build sets it as it goes; an update is one step).
  void tick() {
    if (opts.progress && (++ticks & 1023) == 0) opts.progress("live", progress_at);
  }
  uint64_t ticks = 0;
  double progress_at = 0;

  // Rows and activity (live_rows.cpp).
  // The truth of t's explicit evidence row in `view`; -2 where it has none.
  int8_t explicit_truth(const live::Pred& p, const Tuple& t, View view) const;
  bool in_domain(const std::string& type, int32_t v, View view) const;
  bool matches(const kbmc::Pattern& pat, const live::Pred& p, const Tuple& t, View view) const;
  bool candidate(const live::Pred& p, const Tuple& t, View view) const;
  Row row(int pred, const Tuple& t, View view) const;
  bool active(int pred, const Tuple& t, View view) const;
  int32_t id_of(int pred, const Tuple& t);
  // Enumerates the bindings of shape c that extend `b` (bound[v] marks the
  // bound variables) through the literals other than `skip`, over the rows
  // each literal can pass in `phase` (a superset: callers test each binding).
  void extend(const live::ClauseShape& c, int skip, Binding& b, std::vector<uint8_t>& bound, View view,
              Phase phase, const Visit& f);
  // extend() from literal `lit` bound to tuple t (nothing when they do not unify).
  void seeded(const live::ClauseShape& c, int lit, const Tuple& t, View view, Phase phase, const Visit& f);
  Tuple tuple_of(const live::ClauseShape& c, int lit, const Binding& b) const;
  // Whether tuple t changed only between absent and an inactive candidate
  // row: no explicit evidence before or after, inactive in both views.
  bool candidate_only(int pred, const Tuple& t) const;

  // The closure's worklist: for each atom taken from `work`, the bindings
  // that read it (seeded() at each of its clause literals; a change between
  // absent and inactive candidate only where a literal reads candidates)
  // are tested in `view`, and admit() takes the atoms they activate (it may
  // push onto `work`).
  void closure_from(std::deque<live::Atomref>& work, View view,
                    const std::function<void(std::vector<live::Atomref>&)>& admit);
  // The §5.4 test: whether binding b fires, and the atoms it activates.
  bool fires(const live::ClauseShape& c, const Binding& b, View view, std::vector<live::Atomref>* out);
  // The §5.5 ground clause of binding b: false when there is none.
  bool ground_clause(const live::ClauseShape& c, const Binding& b, View view, Tuple& lits, double& w);

 private:
  void for_rows(int pred, uint32_t mask, const Tuple& key, unsigned kinds, View view,
                const std::function<void(const Tuple&)>& f);
  void for_candidates(int pred, uint32_t mask, const Tuple& key, View view, const std::function<void(const Tuple&)>& f);
  bool query_match(const live::Pred& p, const Tuple& t) const;
};

}  // namespace mln::ground
