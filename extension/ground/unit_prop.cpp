// Hard-clause unit propagation on the consolidated network (issue #25;
// docs/grounding.md, "Unit propagation").
//
// A host pass, not a plan of gpu/ operators: it runs once per grounding,
// after consolidation, on the network that is already in host memory (the
// store reads it from there), and it is two linear, memory-bound sweeps over
// the clauses plus a queue over the hard clauses, each visited at most once.
// On the GPU it would cost two transfers of the network for work that takes
// a fraction of consolidation's sort.  The sweeps run on OpenMP threads.
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <vector>

#include "ground/grounder.hpp"

namespace mln::ground {
namespace {

constexpr int8_t kUnset = -1;

bool is_hard(double w) { return w >= kHardThreshold || w <= -kHardThreshold; }

// A clause of `len` literals and weight w starts the forcing (it fixes
// atoms, or is a conflict, before any atom is fixed).
bool starts_forcing(double w, int64_t len) { return is_hard(w) && (w < 0 || len <= 1); }

// The forcing: the fixpoint of the hard clauses' implications.
class Forcing {
 public:
  explicit Forcing(const Network& net) : cs_(net.clauses), val_(static_cast<size_t>(net.num_atoms) + 1, kUnset) {}

  // Fixes what the hard clauses force; false when they contradict each
  // other (then val() is meaningless).
  bool run() {
    const int64_t n = static_cast<int64_t>(cs_.size());
    // The initial forcings; the hard w>0 clauses of two or more literals
    // wait for their literals to become false.
    for (int64_t c = 0; c < n && !conflict_; ++c) {
      const double w = cs_.weights[c];
      if (!is_hard(w)) continue;
      const int64_t b = cs_.offsets[c], e = cs_.offsets[c + 1];
      if (!starts_forcing(w, e - b)) {
        hard_.push_back(c);
      } else if (w < 0) {
        for (int64_t i = b; i < e; ++i) assign(-cs_.lits[i]);
      } else if (e - b == 0) {
        conflict_ = true;  // a hard clause no state satisfies
      } else {
        assign(cs_.lits[b]);
      }
    }
    if (conflict_ || queue_.empty()) return !conflict_;
    // Occurrences of atoms in the waiting clauses: (index into hard_ << 1) | (literal > 0).
    if (hard_.size() > (std::numeric_limits<uint32_t>::max() >> 1)) {
      skipped_ = true;  // beyond any real network (2^31 hard clauses)
      return true;
    }
    const size_t na = val_.size();
    std::vector<int64_t> occ_off(na + 1, 0);
    for (int64_t c : hard_)
      for (int64_t i = cs_.offsets[c]; i < cs_.offsets[c + 1]; ++i) ++occ_off[std::abs(cs_.lits[i]) + 1];
    for (size_t a = 0; a < na; ++a) occ_off[a + 1] += occ_off[a];
    std::vector<uint32_t> occ(static_cast<size_t>(occ_off[na]));
    std::vector<int64_t> fill(occ_off.begin(), occ_off.end() - 1);
    std::vector<int32_t> open(hard_.size());  // literals not yet known false
    for (size_t k = 0; k < hard_.size(); ++k) {
      const int64_t c = hard_[k];
      open[k] = static_cast<int32_t>(cs_.offsets[c + 1] - cs_.offsets[c]);
      for (int64_t i = cs_.offsets[c]; i < cs_.offsets[c + 1]; ++i) {
        const int32_t l = cs_.lits[i];
        occ[fill[std::abs(l)]++] = static_cast<uint32_t>(k << 1) | (l > 0 ? 1u : 0u);
      }
    }
    for (size_t q = 0; q < queue_.size() && !conflict_; ++q) {
      const int32_t a = queue_[q];
      const uint32_t v = static_cast<uint32_t>(val_[a]);
      for (int64_t j = occ_off[a]; j < occ_off[a + 1] && !conflict_; ++j) {
        if ((occ[j] & 1u) == v) continue;  // the literal is true: the clause holds
        const uint32_t k = occ[j] >> 1;
        if (--open[k] > 1) continue;
        // One literal is left that is not known false: unless some literal
        // is already true (fixed, not yet dequeued), it must be.
        const int64_t c = hard_[k];
        int32_t last = 0;
        bool holds = false;
        for (int64_t i = cs_.offsets[c]; i < cs_.offsets[c + 1] && !holds; ++i) {
          const int32_t l = cs_.lits[i];
          const int8_t x = val_[std::abs(l)];
          if (x == kUnset) last = l;
          else holds = (l > 0) == (x == 1);
        }
        if (holds) continue;
        if (last == 0) conflict_ = true;  // every literal false
        else assign(last);
      }
    }
    return !conflict_;
  }

  const std::vector<int8_t>& val() const { return val_; }
  const std::vector<int32_t>& fixed() const { return queue_; }
  bool skipped() const { return skipped_; }

 private:
  // Makes literal l true.
  void assign(int32_t l) {
    const int32_t a = std::abs(l);
    const int8_t v = l > 0 ? 1 : 0;
    if (val_[a] == kUnset) {
      val_[a] = v;
      queue_.push_back(a);
    } else if (val_[a] != v) {
      conflict_ = true;
    }
  }

  const ClauseSet& cs_;
  std::vector<int8_t> val_;      // by atom id: kUnset, 0, 1
  std::vector<int32_t> queue_;   // fixed atoms, in the order they were fixed
  std::vector<int64_t> hard_;    // hard w>0 clauses of two or more literals
  bool conflict_ = false;
  bool skipped_ = false;
};

// What becomes of one clause under the fixed atoms.
enum class Fate : uint8_t { kSame, kDrop, kConstant, kShorter };

struct Verdict {
  Fate fate;
  int64_t len;  // literals kept (kSame, kShorter)
};

inline Verdict judge(const ClauseSet& cs, const std::vector<int8_t>& val, int64_t c) {
  const int64_t b = cs.offsets[c], e = cs.offsets[c + 1];
  const double w = cs.weights[c];
  int64_t fixed = 0;
  for (int64_t i = b; i < e; ++i) {
    const int32_t l = cs.lits[i];
    const int8_t x = val[std::abs(l)];
    if (x == kUnset) continue;
    if ((l > 0) == (x == 1)) return {w < 0 ? Fate::kConstant : Fate::kDrop, 0};  // a true literal
    ++fixed;
  }
  if (fixed == 0) return {Fate::kSame, e - b};
  if (fixed == e - b) return {w > 0 ? Fate::kConstant : Fate::kDrop, 0};  // every literal false
  return {Fate::kShorter, e - b - fixed};
}

}  // namespace

bool may_start_forcing(const int64_t* offsets, const double* weights, size_t first, size_t last) {
  for (size_t c = first; c < last; ++c)
    if (starts_forcing(weights[c], offsets[c + 1] - offsets[c])) return true;
  return false;
}

UnitPropStats unit_propagate(Network& net) {
  UnitPropStats st;
  st.ran = true;
  ClauseSet& cs = net.clauses;
  const int64_t n = static_cast<int64_t>(cs.size());
  st.clauses_before = n;
  Forcing f(net);
  if (!f.run()) {
    st.hard_conflict = true;
    return st;
  }
  const std::vector<int32_t>& fixed = f.fixed();
  if (fixed.empty() || f.skipped()) return st;
  const std::vector<int8_t>& val = f.val();
  st.atoms_fixed = static_cast<int64_t>(fixed.size());

  // Two sweeps over blocks of clauses: count, then write.  The blocks do
  // not depend on the thread count, so neither does the constant's sum.
  const int nb = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(n / 65536, 1024)));
  auto lo = [&](int b) { return n / nb * b + std::min<int64_t>(b, n % nb); };
  struct Block {
    int64_t clauses = 0, lits = 0, removed = 0, shortened = 0, constants = 0;
    double constant = 0;
  };
  std::vector<Block> blk(nb + 1);
#pragma omp parallel for schedule(dynamic, 1)
  for (int b = 0; b < nb; ++b) {
    Block& k = blk[b];
    for (int64_t c = lo(b); c < lo(b + 1); ++c) {
      const Verdict v = judge(cs, val, c);
      switch (v.fate) {
        case Fate::kSame: ++k.clauses, k.lits += v.len; break;
        case Fate::kShorter: ++k.clauses, k.lits += v.len, ++k.shortened; break;
        case Fate::kDrop: ++k.removed; break;
        case Fate::kConstant:
          ++k.removed, ++k.constants;
          k.constant += std::abs(cs.weights[c]);
          break;
      }
    }
  }
  // Block starts in the output (exclusive prefix sums in blk[b].clauses/lits).
  int64_t constants = 0;
  Block total;
  for (int b = 0; b < nb; ++b) {
    const Block k = blk[b];
    blk[b].clauses = total.clauses, blk[b].lits = total.lits;
    total.clauses += k.clauses, total.lits += k.lits;
    st.clauses_removed += k.removed, st.clauses_shortened += k.shortened;
    constants += k.constants, st.constant_cost += k.constant;
  }
  const int64_t out_clauses = total.clauses + (constants > 0 ? 1 : 0) + st.atoms_fixed;
  const int64_t out_lits = total.lits + st.atoms_fixed;
  ClauseSet out;
  out.offsets.resize(static_cast<size_t>(out_clauses) + 1);
  out.lits.resize(static_cast<size_t>(out_lits));
  out.weights.resize(static_cast<size_t>(out_clauses));
  out.offsets[0] = 0;
#pragma omp parallel for schedule(dynamic, 1)
  for (int b = 0; b < nb; ++b) {
    int64_t oc = blk[b].clauses, ol = blk[b].lits;
    for (int64_t c = lo(b); c < lo(b + 1); ++c) {
      const Verdict v = judge(cs, val, c);
      if (v.fate == Fate::kDrop || v.fate == Fate::kConstant) continue;
      const int64_t start = ol;
      double w = cs.weights[c];
      for (int64_t i = cs.offsets[c]; i < cs.offsets[c + 1]; ++i)
        if (v.fate == Fate::kSame || val[std::abs(cs.lits[i])] == kUnset) out.lits[ol++] = cs.lits[i];
      if (ol - start == 1 && out.lits[start] < 0) {  // the grounder's form of a negative unit: [a], -w
        out.lits[start] = -out.lits[start];
        w = -w;
      }
      out.weights[oc] = w;
      out.offsets[++oc] = ol;
    }
  }
  // Then the constant, then each fixed atom's unit clause by atom id.
  int64_t oc = total.clauses, ol = total.lits;
  if (constants > 0) {
    out.weights[oc] = st.constant_cost;
    out.offsets[++oc] = ol;
  }
  std::vector<int32_t> atoms(fixed);
  std::sort(atoms.begin(), atoms.end());
  for (int32_t a : atoms) {
    out.lits[ol++] = a;
    out.weights[oc] = val[a] == 1 ? kHardWeight : -kHardWeight;
    out.offsets[++oc] = ol;
  }
  cs = std::move(out);
  return st;
}

}  // namespace mln::ground
