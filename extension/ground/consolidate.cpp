// Soft-evidence unit clauses and consolidation (reference §5.6, §4.5).
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cmath>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
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

namespace {

// One bucket's merged clauses (and, when learning, their origins: counts
// per clause in ooff, the lists in orig).
struct MergedBucket {
  ClauseSet cs;
  std::vector<int64_t> ooff;
  std::vector<int32_t> orig;
};

// Merges the clauses of one bucket: ordered by (hash, position in the
// bucket), then, inside a run of equal hashes, by literals and weight;
// equal literal lists become one clause with the summed weight.
void merge_bucket(const RawClauses& raw, size_t bucket, bool track, MergedBucket& o) {
  const RawClauses::Bucket& bk = raw.bucket(bucket);
  std::vector<const int32_t*> rec;  // each record's first word
  rec.reserve(bk.clauses);
  for (const RawClauses::Block& k : bk.blocks)
    for (size_t at = 0; at < k.used; at += raw.record_words(k.words + at)) rec.push_back(k.words + at);
  auto len = [&](size_t i) { return RawClauses::length(rec[i]); };
  auto lits = [&](size_t i) { return raw.lits(rec[i]); };
  auto weight = [&](size_t i) { return raw.weight(rec[i]); };
  std::vector<std::pair<uint64_t, uint32_t>> key(rec.size());
  for (size_t i = 0; i < rec.size(); ++i) key[i] = {RawClauses::clause_hash(lits(i), len(i)), static_cast<uint32_t>(i)};
  std::sort(key.begin(), key.end());
  auto lit_less = [&](size_t a, size_t b) {
    return std::lexicographical_compare(lits(a), lits(a) + len(a), lits(b), lits(b) + len(b));
  };
  auto same = [&](size_t a, size_t b) { return len(a) == len(b) && std::equal(lits(a), lits(a) + len(a), lits(b)); };
  std::vector<size_t> run;
  for (size_t i = 0; i < key.size();) {
    size_t j = i;
    run.clear();
    for (; j < key.size() && key[j].first == key[i].first; ++j) run.push_back(key[j].second);
    if (run.size() > 1)
      std::sort(run.begin(), run.end(), [&](size_t a, size_t c) {
        if (lit_less(a, c)) return true;
        if (lit_less(c, a)) return false;
        return weight(a) < weight(c);
      });
    for (size_t a = 0; a < run.size();) {
      size_t e = a;
      double w = 0;
      for (; e < run.size() && same(run[a], run[e]); ++e) {
        w += weight(run[e]);
        if (track && raw.origin(rec[run[e]]) != 0) o.orig.push_back(raw.origin(rec[run[e]]));
      }
      o.cs.add(lits(run[a]), len(run[a]), w);
      if (track) o.ooff.push_back(static_cast<int64_t>(o.orig.size()));
      a = e;
    }
    i = j;
  }
}

}  // namespace

// Merges identical literal lists by summed weight (GROUP BY lits).  Clauses
// are ordered by a 64-bit hash of their literals, then, inside a run of
// equal hashes, by literals and weight; so the sums and the output order do
// not depend on the order in which the engine produced the raw clauses.
// The raw clauses are bucketed by the hash's top bits (RawClauses), so the
// buckets are merged in order, a few at a time on OpenMP threads, and each
// bucket is unmapped as its clauses are appended: the peak is about the raw
// clauses, not the raw and the merged ones together.  The output's arrays
// are reserved at the raw sizes (an upper bound; pages never written are
// not resident), so they never grow by copying.
void consolidate(RawClauses& raw, ClauseSet& out, std::vector<int64_t>* origin_off, std::vector<int32_t>* origins,
                 const Waves* waves) {
  const bool track = raw.track_origins && origin_off && origins;
  out = ClauseSet{};
  out.lits.reserve(raw.total_lits());
  out.weights.reserve(raw.size());
  out.offsets.reserve(raw.size() + 1);
  if (track) {
    origin_off->assign(1, 0);
    origins->clear();
  }
  const int threads = waves && waves->threads > 0 ? waves->threads : std::max(1, omp_get_max_threads());
  const size_t wave = waves && waves->buckets > 0 ? waves->buckets : static_cast<size_t>(threads) * 2;
  std::vector<MergedBucket> part(wave);
  for (size_t b0 = 0; b0 < RawClauses::kBuckets; b0 += wave) {
    if (waves && waves->stop && waves->stop->load()) return;
    const size_t nb = std::min(wave, RawClauses::kBuckets - b0);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (size_t k = 0; k < nb; ++k) merge_bucket(raw, b0 + k, track, part[k]);
    // The wave's parts go to their places in the output on the threads too
    // (one thread appending them was most of consolidation's time on 16
    // cores): part k after the clauses and literals of the parts before it.
    std::vector<size_t> c_at(nb + 1), l_at(nb + 1);
    c_at[0] = out.weights.size();
    l_at[0] = out.lits.size();
    for (size_t k = 0; k < nb; ++k) {
      c_at[k + 1] = c_at[k] + part[k].cs.size();
      l_at[k + 1] = l_at[k] + part[k].cs.lits.size();
    }
    out.lits.resize(l_at[nb]);  // within the reserve: no copy, new elements unwritten
    out.weights.resize(c_at[nb]);
    out.offsets.resize(c_at[nb] + 1);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (size_t k = 0; k < nb; ++k) {
      const ClauseSet& o = part[k].cs;
      std::copy(o.lits.begin(), o.lits.end(), out.lits.begin() + static_cast<std::ptrdiff_t>(l_at[k]));
      std::copy(o.weights.begin(), o.weights.end(), out.weights.begin() + static_cast<std::ptrdiff_t>(c_at[k]));
      for (size_t c = 1; c < o.offsets.size(); ++c)
        out.offsets[c_at[k] + c] = static_cast<int64_t>(l_at[k]) + o.offsets[c];
      raw.release(b0 + k);  // a bucket of its own: no other thread touches it
    }
    for (size_t k = 0; k < nb; ++k) {
      MergedBucket& o = part[k];
      if (track) {
        const int64_t base = static_cast<int64_t>(origins->size());
        origins->insert(origins->end(), o.orig.begin(), o.orig.end());
        for (int64_t e : o.ooff) origin_off->push_back(base + e);
      }
      o = MergedBucket{};
    }
    if (waves && waves->merged) waves->merged(out);
  }
}

// The calling thread hands each wave to `sink` while the consolidation
// thread merges the next: a queue of the waves' ends, under a mutex (which
// also orders the merged arrays' writes before the sink's reads).  The
// output's arrays never move (consolidate() reserves them whole), so the
// sink reads a range while the next wave is appended past it.  Waves of
// kStreamBuckets buckets, each its own range: the ranges (and the stored
// chunks' boundaries) do not depend on the thread count or the timing.
void consolidate_streamed(RawClauses& raw, ClauseSet& out, const ClauseSink& sink) {
  struct Handoff {
    std::mutex mu;
    std::condition_variable cv;
    const int64_t* offsets = nullptr;
    const int32_t* lits = nullptr;
    const double* weights = nullptr;
    std::deque<size_t> ends;  // each merged wave's end, not yet handed over
    bool done = false;
    std::exception_ptr error;
    std::atomic<bool> stop{false};
  } h;
  Waves waves;
  // A core of its own for the calling thread, which stores while the others
  // merge, where there are cores enough that the store is the longer of the
  // two (RC 10^9 on 16 cores: merging 36 s, storing 52 s).  On a few cores
  // the merge is: RC 10^8 on 2 cores merged on one thread 23.2 s, with the
  // store (5.6 s) beside it, where two threads merged in about 12.
  const int cores = std::max(1, omp_get_max_threads());
  waves.threads = cores > 4 ? cores - 1 : cores;
  waves.buckets = kStreamBuckets;
  waves.stop = &h.stop;
  waves.merged = [&h](const ClauseSet& cs) {
    std::lock_guard<std::mutex> lock(h.mu);
    h.offsets = cs.offsets.data();
    h.lits = cs.lits.data();
    h.weights = cs.weights.data();
    h.ends.push_back(cs.size());
    h.cv.notify_one();
  };
  std::thread merger([&] {
    try {
      consolidate(raw, out, nullptr, nullptr, &waves);
    } catch (...) {
      std::lock_guard<std::mutex> lock(h.mu);
      h.error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(h.mu);
    h.done = true;
    h.cv.notify_one();
  });
  size_t sent = 0;
  try {
    for (;;) {
      std::unique_lock<std::mutex> lock(h.mu);
      h.cv.wait(lock, [&] { return !h.ends.empty() || h.done; });
      if (h.ends.empty()) break;  // done
      const size_t end = h.ends.front();
      h.ends.pop_front();
      const int64_t* offsets = h.offsets;
      const int32_t* lits = h.lits;
      const double* weights = h.weights;
      lock.unlock();
      sink(offsets, lits, weights, sent, end);
      sent = end;
    }
  } catch (...) {  // the sink's (a cancel): the merger stops after its wave
    h.stop = true;
    merger.join();
    throw;
  }
  merger.join();
  if (h.error) std::rethrow_exception(h.error);
}

}  // namespace mln::ground::detail
