// Pipelined fixed-offset heap scan (see heap_scan.hpp).
//
// The backend thread pins a batch of pages and, under each page's share
// lock, copies its line pointers (PageReader::pin_batch): buffer-manager
// work only, a few microseconds a page.  One helper thread meanwhile
// decodes the previous batch: plain memory reads at fixed offsets, no
// PostgreSQL call.  Two batches of 16 pages are in flight, the size of the
// bulk-read ring.  Rows the helper cannot take at fixed offsets (a NULL, or
// older than an added column) go back to the backend thread, which reads
// them with heap_getattr while their pages are still pinned.
//
// One helper, not an OpenMP team per batch: decoding a page takes far less
// time than pinning one, and waking a team of threads for every batch cost
// more than the decoding it shared out.
#include "pg/heap_scan.hpp"

#include "pg/guard.hpp"
#include "pg/heap_pages.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

extern "C" {
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_am.h"
#include "catalog/pg_type.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
}

namespace mln::pg {

namespace {

// A row the decoder left to the backend thread.
struct SlowRow {
  size_t row;
  HeapTupleHeader tup;
  uint32 len;
};

// Decodes one submitted batch at a time on its own thread.  Between wait()
// and the next submit() the helper touches nothing, so the backend thread
// may then patch the columns.
class Decoder {
 public:
  Decoder(gpu::HostTable& t, std::vector<int> offs, std::vector<uint8_t> is4, AttrNumber last, BlockNumber pages)
      : t_(t), offs_(std::move(offs)), is4_(std::move(is4)), last_(last), pages_(pages), th_([this] { run(); }) {}
  ~Decoder() {
    {
      std::lock_guard<std::mutex> g(mu_);
      state_.store(kStop, std::memory_order_release);
    }
    cv_.notify_all();
    th_.join();
  }
  void submit(const PinnedPages* b) {
    job_ = b;
    {
      std::lock_guard<std::mutex> g(mu_);
      state_.store(kBusy, std::memory_order_release);
    }
    cv_.notify_all();
  }
  // Until the submitted batch is decoded; rethrows what the helper threw.
  void wait() {
    await([&](int s) { return s != kBusy; });
    if (err_) std::rethrow_exception(std::exchange(err_, nullptr));
  }
  const std::vector<SlowRow>& slow() const { return slow_; }

 private:
  enum { kIdle, kBusy, kStop };

  // Spins briefly (the other side usually answers within microseconds),
  // then sleeps on the condition variable.
  template <typename P>
  int await(P done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
    int s;
    while (!done(s = state_.load(std::memory_order_acquire)))
      if (std::chrono::steady_clock::now() > until) {
        std::unique_lock<std::mutex> g(mu_);
        cv_.wait(g, [&] { return done(s = state_.load(std::memory_order_acquire)); });
        break;
      }
    return s;
  }

  void run() {
    for (;;) {
      if (await([](int s) { return s != kIdle; }) == kStop) return;
      try {
        decode(*job_);
      } catch (...) {
        err_ = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> g(mu_);
        // compare_exchange: a stop requested meanwhile stays a stop.
        int busy = kBusy;
        state_.compare_exchange_strong(busy, kIdle, std::memory_order_acq_rel);
      }
      cv_.notify_all();
    }
  }

  void decode(const PinnedPages& b) {
    slow_.clear();
    const int n = static_cast<int>(t_.cols.size());
    if (n == 0) return;
    size_t r = t_.cols[0].size();
    if (r == 0 && b.npages > 0) {
      // Size the columns from the first batch's rows per page.
      const double per_page = static_cast<double>(b.nlps + b.ntuples) / b.npages;
      for (auto& c : t_.cols) c.reserve(static_cast<size_t>(per_page * pages_ * 1.02) + 1024);
    }
    for (auto& c : t_.cols) c.resize(r + static_cast<size_t>(b.nlps + b.ntuples));
    int32_t* dst[MaxHeapAttributeNumber];
    for (int k = 0; k < n; ++k) dst[k] = t_.cols[k].data();
    const int* offs = offs_.data();
    const uint8_t* is4 = is4_.data();
    auto take = [&](const char* item, uint32 len) {
      auto h = reinterpret_cast<HeapTupleHeader>(const_cast<char*>(item));
      if ((h->t_infomask & HEAP_HASNULL) || HeapTupleHeaderGetNatts(h) < last_) {
        slow_.push_back({r++, h, len});
        return;
      }
      const char* d = item + h->t_hoff;
      for (int k = 0; k < n; ++k) {
        if (is4[k]) {
          int32 v;
          memcpy(&v, d + offs[k], sizeof v);
          dst[k][r] = v;
        } else {
          int16 v;
          memcpy(&v, d + offs[k], sizeof v);
          dst[k][r] = v;
        }
      }
      ++r;
    };
    for (int p = 0; p < b.npages; ++p) {
      const PinnedPages::Entry& e = b.entries[p];
      if (e.line_pointers) {
        for (int j = e.first; j < e.first + e.count; ++j) {
          const ItemIdData* lp = &b.lps[j];
          if (ItemIdIsNormal(lp)) take(e.page + ItemIdGetOffset(lp), ItemIdGetLength(lp));
        }
      } else {
        for (int j = e.first; j < e.first + e.count; ++j) take(reinterpret_cast<const char*>(b.tuples[j]), b.lengths[j]);
      }
    }
    for (auto& c : t_.cols) c.resize(r);
  }

  gpu::HostTable& t_;
  const std::vector<int> offs_;
  const std::vector<uint8_t> is4_;
  const AttrNumber last_;
  const BlockNumber pages_;
  std::vector<SlowRow> slow_;
  const PinnedPages* job_ = nullptr;
  std::exception_ptr err_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<int> state_{kIdle};
  std::thread th_;  // last: starts once the members above exist
};

}  // namespace

bool scan_fixed_columns(Oid relid, const std::vector<std::pair<AttrNumber, Oid>>& atts,
                        const std::vector<AttrNumber>& nums, gpu::HostTable& t, bool& has_null) {
  const int n = static_cast<int>(nums.size());
  Relation rel = pg_call([&] { return table_open(relid, AccessShareLock); });
  std::vector<int> offs(static_cast<size_t>(std::max(n, 1)));
  std::vector<uint8_t> is4;
  for (auto& a : atts) is4.push_back(a.second == INT4OID);
  AttrNumber last = 0;
  for (AttrNumber a : nums) last = std::max(last, a);
  std::optional<PageReader> rd;
  const bool ok = rel->rd_rel->relam == HEAP_TABLE_AM_OID && pg_call([&] {
    rd.emplace(rel, GetActiveSnapshot(), nums.data(), n);
    return rd->fixed_offsets(offs.data());
  });
  if (!ok) {
    pg_call([&] { table_close(rel, NoLock); });
    return false;
  }
  auto batch = std::make_unique<PinnedPages[]>(2);
  {
    // Declared after `batch`: the helper is joined before the batches go,
    // also when an ERROR unwinds through here (the pins are then released
    // by the abort's resource-owner cleanup).
    Decoder dec(t, std::move(offs), std::move(is4), last, rd->pages());
    int cur = 0;
    int pages = pg_call([&] { return rd->pin_batch(batch[0]); });
    if (pages > 0) dec.submit(&batch[0]);
    while (pages > 0) {
      const int nxt = 1 - cur;
      // Pinning the next batch overlaps the decoding of this one.
      const int next_pages = pg_call([&] { return rd->pin_batch(batch[nxt]); });
      dec.wait();
      if (!dec.slow().empty())
        pg_call([&] {
          TupleDesc desc = RelationGetDescr(rel);
          for (const SlowRow& s : dec.slow()) {
            HeapTupleData tup;
            tup.t_data = s.tup;
            tup.t_len = s.len;
            tup.t_tableOid = RelationGetRelid(rel);
            ItemPointerSetInvalid(&tup.t_self);
            for (int k = 0; k < n; ++k) {
              bool isnull;
              Datum v = heap_getattr(&tup, nums[k], desc, &isnull);
              has_null |= isnull;
              t.cols[k][s.row] = isnull ? 0 : atts[k].second == INT4OID ? DatumGetInt32(v) : DatumGetInt16(v);
            }
            if (has_null) break;
          }
        });
      if (has_null) break;
      if (next_pages > 0) dec.submit(&batch[nxt]);
      cur = nxt;
      pages = next_pages;
    }
  }
  pg_call([&] {
    PageReader::release_batch(batch[0]);
    PageReader::release_batch(batch[1]);
    table_close(rel, NoLock);
  });
  return true;
}

}  // namespace mln::pg
