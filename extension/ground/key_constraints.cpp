// Key constraints (reference §5.7): for predicates with '!' (dependent)
// arguments, hard mutual-exclusion pairs and hard existence clauses over the
// active atoms.  Each unordered pair is stored once (Tuffy stores both
// orders, which never merge).
#include <algorithm>
#include <numeric>

#include "ground/internal.hpp"

namespace mln::ground::detail {

void add_key_constraint_clauses(Ctx& c, RawClauses& raw) {
  for (auto& s : c.preds) {
    if (!s.decl->has_key_constraint()) continue;
    std::vector<int> keys;
    for (int k = 0; k < s.arity; ++k)
      if (!s.decl->dependent[k]) keys.push_back(k);
    // [key args..., aid, zero] of the active atoms.
    gpu::HostTable t;
    t.cols.resize(keys.size() + 2);
    for (size_t r = 0; r < s.rows(); ++r) {
      if (!s.atom_id[r]) continue;
      for (size_t i = 0; i < keys.size(); ++i) t.cols[i].push_back(s.args[keys[i]][r]);
      t.cols[keys.size()].push_back(s.atom_id[r]);
      t.cols[keys.size() + 1].push_back(0);
    }
    if (t.rows() == 0) continue;
    int kc = static_cast<int>(keys.size());
    std::vector<int> jk;
    for (int i = 0; i < kc; ++i) jk.push_back(i);
    if (jk.empty()) jk.push_back(kc + 1);  // every argument dependent: one key
    gpu::Relation a = c.eng.upload(t);
    // Mutual exclusion: same key, different atom (so a different label), a < b.
    gpu::Relation pairs = c.eng.join(a, a, jk, jk, {{0, kc}, {1, kc}});
    pairs = c.eng.select(pairs, {gpu::Predicate{0, gpu::CmpOp::LT, true, 0, 1}});
    gpu::HostTable ph = c.eng.download(pairs);
    for (size_t r = 0; r < ph.rows(); ++r) {
      int32_t l[2] = {-ph.cols[1][r], -ph.cols[0][r]};  // sorted: -b < -a when a < b
      raw.add_sorted(l, 2, kHardWeight);
    }
    // Existence: per key, at least one active label is true.
    size_t n = t.rows();
    std::vector<size_t> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    auto less = [&](size_t x, size_t y) {
      for (int i = 0; i < kc; ++i)
        if (t.cols[i][x] != t.cols[i][y]) return t.cols[i][x] < t.cols[i][y];
      return false;
    };
    std::sort(idx.begin(), idx.end(), less);
    std::vector<int32_t> lits;
    for (size_t i = 0; i < n;) {
      size_t j = i;
      lits.clear();
      for (; j < n && !less(idx[i], idx[j]); ++j) lits.push_back(t.cols[kc][idx[j]]);
      raw.add(lits, kHardWeight);
      i = j;
    }
  }
}

}  // namespace mln::ground::detail
