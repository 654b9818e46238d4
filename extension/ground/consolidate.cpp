// Soft-evidence unit clauses and consolidation (reference §5.6, §4.5).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <parallel/algorithm>
#include <utility>

#include "ground/internal.hpp"

namespace mln::ground::detail {

void add_soft_evidence_clauses(Ctx& c, const GroundOutput& out, RawClauses& raw) {
  (void)c;
  for (size_t i = 0; i < out.atoms.size(); ++i) {
    double p = out.atoms[i].prior;
    if (std::isnan(p)) continue;
    double w = p >= 1 ? kHardWeight : p <= 0 ? -kHardWeight : std::log(p / (1 - p));
    int32_t a = static_cast<int32_t>(i + 1);
    raw.add_sorted(&a, 1, w);
  }
}

// Merges identical literal lists by summed weight (GROUP BY lits).  Clauses
// are ordered by a 64-bit hash of their literals (libstdc++'s parallel sort),
// then, inside a run of equal hashes, by literals and weight; so the sums and
// the output order do not depend on the order in which the engine produced
// the raw clauses.
void consolidate(RawClauses& raw, ClauseSet& out) {
  const int64_t n = static_cast<int64_t>(raw.size());
  auto len = [&](size_t i) { return static_cast<size_t>(raw.offsets[i + 1] - raw.offsets[i]); };
  auto lits = [&](size_t i) { return &raw.lits[raw.offsets[i]]; };
  std::vector<std::pair<uint64_t, uint32_t>> key(static_cast<size_t>(n));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the literals
    const int32_t* l = lits(i);
    for (size_t k = 0; k < len(i); ++k) h = (h ^ static_cast<uint32_t>(l[k])) * 1099511628211ull;
    key[i] = {h, static_cast<uint32_t>(i)};
  }
  __gnu_parallel::sort(key.begin(), key.end());
  auto lit_less = [&](size_t a, size_t b) {
    return std::lexicographical_compare(lits(a), lits(a) + len(a), lits(b), lits(b) + len(b));
  };
  auto same = [&](size_t a, size_t b) { return len(a) == len(b) && std::equal(lits(a), lits(a) + len(a), lits(b)); };
  out = ClauseSet{};
  out.lits.reserve(raw.lits.size());
  std::vector<size_t> run;
  for (size_t i = 0; i < key.size();) {
    size_t j = i;
    run.clear();
    for (; j < key.size() && key[j].first == key[i].first; ++j) run.push_back(key[j].second);
    if (run.size() > 1)
      std::sort(run.begin(), run.end(), [&](size_t a, size_t b) {
        if (lit_less(a, b)) return true;
        if (lit_less(b, a)) return false;
        return raw.weights[a] < raw.weights[b];
      });
    for (size_t a = 0; a < run.size();) {
      size_t b = a;
      double w = 0;
      for (; b < run.size() && same(run[a], run[b]); ++b) w += raw.weights[run[b]];
      out.add(lits(run[a]), len(run[a]), w);
      a = b;
    }
    i = j;
  }
}

}  // namespace mln::ground::detail
