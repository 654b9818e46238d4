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
void consolidate(RawClauses& raw, ClauseSet& out, std::vector<int64_t>* origin_off, std::vector<int32_t>* origins) {
  const bool track = raw.track_origins && origin_off && origins;
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
  // Merge pass, in parallel over blocks of the sorted keys cut at hash-run
  // boundaries; each block fills its own ClauseSet and the blocks are joined
  // in order, so the output is the same as one serial pass.  (Serially this
  // pass took 16 of 28 s at 10^8 ground clauses, RC at 560,000 papers.)
  const size_t nk = key.size();
  const int nblocks = static_cast<int>(std::max<size_t>(1, std::min<size_t>(nk / 65536, 256)));
  std::vector<size_t> cut(nblocks + 1, nk);
  cut[0] = 0;
  for (int b = 1; b < nblocks; ++b) {
    size_t at = std::max(cut[b - 1], nk / nblocks * b);
    while (at > 0 && at < nk && key[at].first == key[at - 1].first) ++at;
    cut[b] = at;
  }
  std::vector<ClauseSet> part(nblocks);
  std::vector<std::vector<int64_t>> part_ooff(nblocks);  // per block: origin counts per clause
  std::vector<std::vector<int32_t>> part_orig(nblocks);
#pragma omp parallel for schedule(dynamic, 1)
  for (int b = 0; b < nblocks; ++b) {
    ClauseSet& o = part[b];
    std::vector<size_t> run;
    for (size_t i = cut[b]; i < cut[b + 1];) {
      size_t j = i;
      run.clear();
      for (; j < cut[b + 1] && key[j].first == key[i].first; ++j) run.push_back(key[j].second);
      if (run.size() > 1)
        std::sort(run.begin(), run.end(), [&](size_t a, size_t c) {
          if (lit_less(a, c)) return true;
          if (lit_less(c, a)) return false;
          return raw.weights[a] < raw.weights[c];
        });
      for (size_t a = 0; a < run.size();) {
        size_t e = a;
        double w = 0;
        for (; e < run.size() && same(run[a], run[e]); ++e) {
          w += raw.weights[run[e]];
          if (track && raw.origin[run[e]] != 0) part_orig[b].push_back(raw.origin[run[e]]);
        }
        o.add(lits(run[a]), len(run[a]), w);
        if (track) part_ooff[b].push_back(static_cast<int64_t>(part_orig[b].size()));
        a = e;
      }
      i = j;
    }
  }
  out = ClauseSet{};
  size_t total_lits = 0, total_clauses = 0;
  for (const ClauseSet& o : part) total_lits += o.lits.size(), total_clauses += o.size();
  out.lits.reserve(total_lits);
  out.weights.reserve(total_clauses);
  out.offsets.reserve(total_clauses + 1);
  if (track) {
    origin_off->assign(1, 0);
    origins->clear();
    for (int b = 0; b < nblocks; ++b) {
      const int64_t base = static_cast<int64_t>(origins->size());
      origins->insert(origins->end(), part_orig[b].begin(), part_orig[b].end());
      for (int64_t e : part_ooff[b]) origin_off->push_back(base + e);
    }
  }
  for (ClauseSet& o : part) {
    const int64_t base = static_cast<int64_t>(out.lits.size());
    out.lits.insert(out.lits.end(), o.lits.begin(), o.lits.end());
    out.weights.insert(out.weights.end(), o.weights.begin(), o.weights.end());
    for (size_t k = 1; k < o.offsets.size(); ++k) out.offsets.push_back(base + o.offsets[k]);
    o = ClauseSet{};
  }
}

}  // namespace mln::ground::detail
