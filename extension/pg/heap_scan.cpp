// Pipelined fixed-offset heap scan (see heap_scan.hpp).
//
// The backend thread pins a batch of pages and, under each page's share
// lock, copies its line pointers (PageReader::pin_batch): buffer-manager
// work only, a few microseconds a page.  One helper thread meanwhile
// decodes the previous batch (plain memory reads at fixed offsets, no
// PostgreSQL call), and the backend thread joins it once the next batch is
// pinned: the two claim pages from one counter, so whichever of pinning
// and decoding is slower sets the pace, not their sum.  Two batches of 16
// pages are in flight, the size of the bulk-read ring.  Rows that cannot
// be taken at fixed offsets (a NULL, or older than an added column) go to
// the backend thread, which reads them with heap_getattr while their pages
// are still pinned.
//
// One helper, not an OpenMP team per batch: waking a team of threads for
// every batch cost more than the decoding it shared out.
#include "pg/heap_scan.hpp"

#include "pg/guard.hpp"
#include "pg/heap_page_reader.hpp"
#include "pg/helper_thread.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
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

// A row the decoders left to the backend thread.
struct SlowRow {
  size_t row;
  int page;  // its page in the batch
  HeapTupleHeader tup;
  uint32 len;
};

// Decodes one batch at a time, page by page, on a helper thread and on the
// backend thread once it has pinned the next batch: both claim pages from
// one counter.  Each page owns a slice of the columns as long as its line
// pointers (or listed tuples); a slice with items that are not rows is
// closed up in finish().  Between finish() and the next start() the helper
// touches nothing, so the backend thread may then resize and patch the
// columns.
class Decoder {
 public:
  Decoder(gpu::HostTable& t, std::vector<int> offs, std::vector<uint8_t> is4, AttrNumber last, BlockNumber pages)
      : t_(t), offs_(std::move(offs)), is4_(std::move(is4)), last_(last), pages_(pages) {}

  // Hands batch `b` to the helper, which first sizes the columns for it
  // (the new memory's first touch is the helper's, not this thread's).
  void start(const PinnedPages* b) {
    job_ = b;
    size_t at = t_.cols.empty() ? 0 : t_.cols[0].size();
    for (int p = 0; p < b->npages; ++p) {
      first_[p] = at;
      at += static_cast<size_t>(b->entries[p].count);
    }
    size_to_ = at;
    ready_.store(false, std::memory_order_relaxed);
    next_.store(0, std::memory_order_relaxed);
    helper_.submit([this] {
      size_columns();
      ready_.store(true, std::memory_order_release);
      work(slow_[1]);
    });
  }

  // The backend thread's share, then the wait for the helper's; closes up
  // the slices and returns the rows left to the backend thread (rethrows
  // what the helper threw).
  const std::vector<SlowRow>& finish() {
    slow_[0].clear();
    // The helper sizes the columns first (a memset's time, while this
    // thread pinned the next batch): wait for that, or for its failure.
    while (!ready_.load(std::memory_order_acquire) && helper_.busy()) std::this_thread::yield();
    if (ready_.load(std::memory_order_acquire)) work(slow_[0]);
    helper_.wait();
    const PinnedPages& b = *job_;
    size_t at = b.npages > 0 ? first_[0] : 0;
    for (int p = 0; p < b.npages; ++p) {
      if (first_[p] != at)
        for (auto& c : t_.cols) memmove(c.data() + at, c.data() + first_[p], sizeof(int32_t) * rows_[p]);
      shift_[p] = first_[p] - at;
      at += static_cast<size_t>(rows_[p]);
    }
    for (auto& c : t_.cols) c.resize(at);
    slow_[0].insert(slow_[0].end(), slow_[1].begin(), slow_[1].end());
    slow_[1].clear();
    for (SlowRow& r : slow_[0]) r.row -= shift_[r.page];
    return slow_[0];
  }

 private:
  void size_columns() {
    const PinnedPages& b = *job_;
    if (b.npages > 0 && !t_.cols.empty() && t_.cols[0].empty()) {
      // Size the columns from the first batch's rows per page.
      const double per_page = static_cast<double>(size_to_) / b.npages;
      for (auto& c : t_.cols) c.reserve(static_cast<size_t>(per_page * pages_ * 1.02) + 1024);
    }
    for (auto& c : t_.cols) c.resize(size_to_);
    for (size_t k = 0; k < t_.cols.size(); ++k) dst_[k] = t_.cols[k].data();
  }

  // Claims pages of the current batch until none is left.
  void work(std::vector<SlowRow>& slow) {
    const PinnedPages& b = *job_;
    const int n = static_cast<int>(t_.cols.size());
    for (int p; (p = next_.fetch_add(1, std::memory_order_relaxed)) < b.npages;) {
      const PinnedPages::Entry& e = b.entries[p];
      size_t r = first_[p];
      auto take = [&](const char* item, uint32 len) {
        auto h = reinterpret_cast<HeapTupleHeader>(const_cast<char*>(item));
        if ((h->t_infomask & HEAP_HASNULL) || HeapTupleHeaderGetNatts(h) < last_) {
          slow.push_back({r++, p, h, len});
          return;
        }
        const char* d = item + h->t_hoff;
        for (int k = 0; k < n; ++k) {
          if (is4_[k]) {
            int32 v;
            memcpy(&v, d + offs_[k], sizeof v);
            dst_[k][r] = v;
          } else {
            int16 v;
            memcpy(&v, d + offs_[k], sizeof v);
            dst_[k][r] = v;
          }
        }
        ++r;
      };
      if (e.line_pointers) {
        for (int j = e.first; j < e.first + e.count; ++j) {
          const ItemIdData* lp = &b.lps[j];
          if (ItemIdIsNormal(lp)) take(e.page + ItemIdGetOffset(lp), ItemIdGetLength(lp));
        }
      } else {
        for (int j = e.first; j < e.first + e.count; ++j) take(reinterpret_cast<const char*>(b.tuples[j]), b.lengths[j]);
      }
      rows_[p] = static_cast<int>(r - first_[p]);
    }
  }

  gpu::HostTable& t_;
  const std::vector<int> offs_;
  const std::vector<uint8_t> is4_;
  const AttrNumber last_;
  const BlockNumber pages_;
  const PinnedPages* job_ = nullptr;
  int32_t* dst_[MaxHeapAttributeNumber];
  size_t first_[PinnedPages::kPages];  // each page's first row slot
  int rows_[PinnedPages::kPages];      // rows each page gave
  size_t shift_[PinnedPages::kPages];  // how far finish() moved them
  size_t size_to_ = 0;                 // the columns' length for the batch
  std::atomic<bool> ready_{false};     // the helper has sized them
  std::atomic<int> next_{0};           // the next page to claim
  std::vector<SlowRow> slow_[2];       // [0] backend thread, [1] helper
  HelperThread helper_;  // last: joined before the members above go
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
    if (pages > 0) dec.start(&batch[0]);
    while (pages > 0) {
      const int nxt = 1 - cur;
      // Pinning the next batch overlaps the decoding of this one; then the
      // backend thread decodes what the helper has not claimed yet.
      const int next_pages = pg_call([&] { return rd->pin_batch(batch[nxt]); });
      const std::vector<SlowRow>& slow = dec.finish();
      if (!slow.empty())
        pg_call([&] {
          TupleDesc desc = RelationGetDescr(rel);
          for (const SlowRow& s : slow) {
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
      if (next_pages > 0) dec.start(&batch[nxt]);
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
