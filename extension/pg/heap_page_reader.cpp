// Page-at-a-time heap reader (see heap_page_reader.hpp).  Plain PostgreSQL
// C code in C++ syntax: every function here is called inside pg_call, and
// none of them throws a C++ exception.
#include "pg/heap_page_reader.hpp"

extern "C" {
#include "access/heapam.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "utils/snapmgr.h"
}

#include <algorithm>

namespace mln::pg {

PageReader::PageReader(Relation rel, Snapshot snap, const AttrNumber* atts, int n)
    : rel_(rel), snap_(snap), atts_(atts), natts_(n) {
  TupleDesc desc = RelationGetDescr(rel);
  for (int k = 0; k < n; ++k)
    if (atts[k] < 1 || atts[k] > desc->natts || !TupleDescAttr(desc, atts[k] - 1)->attbyval)
      elog(ERROR, "pg_mln: the page reader takes by-value attributes only (attribute %d)", atts[k]);
  nblocks_ = RelationGetNumberOfBlocks(rel);
  // As heap_beginscan does: a ring buffer for tables over a quarter of shared_buffers.
  strategy_ = nblocks_ > static_cast<BlockNumber>(NBuffers / 4) ? GetAccessStrategy(BAS_BULKREAD) : nullptr;
  serializable_ = IsMVCCSnapshot(snap) && IsolationIsSerializable();
  if (serializable_) PredicateLockRelation(rel, snap);
  const size_t cells = static_cast<size_t>(MaxHeapTuplesPerPage) * (n > 0 ? n : 1);
  values_ = static_cast<Datum*>(palloc(sizeof(Datum) * cells));
  nulls_ = static_cast<bool*>(palloc(sizeof(bool) * cells));
}

// Nothing to release: the arrays and the strategy live in the caller's
// memory context.  next() keeps no pin between calls; pin_batch()'s pins
// last until release_batch() (or the next pin_batch()), and an error in
// between leaves them to the abort's resource-owner cleanup.
PageReader::~PageReader() = default;

// heapgetpage(), first half: pins and share-locks block b; all_visible
// when no tuple on it needs a visibility test.
Buffer PageReader::lock_page(BlockNumber b, bool& all_visible) {
  if ((b & 255) == 0) CHECK_FOR_INTERRUPTS();
  Buffer buf = ReadBufferExtended(rel_, MAIN_FORKNUM, b, RBM_NORMAL, strategy_);
  LockBuffer(buf, BUFFER_LOCK_SHARE);
  Page page = BufferGetPage(buf);
  TestForOldSnapshot(snap_, rel_, page);
  all_visible = PageIsAllVisible(page) && !snap_->takenDuringRecovery;
  return buf;
}

// heapgetpage(), second half: calls f(tuple) for each tuple of the locked
// page that the snapshot sees (an all-visible page needs no per-tuple test).
template <typename F>
void PageReader::list_visible(Buffer buf, bool all_visible, F&& f) {
  Page page = BufferGetPage(buf);
  const BlockNumber b = BufferGetBlockNumber(buf);
  const OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
  for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off = OffsetNumberNext(off)) {
    ItemId lp = PageGetItemId(page, off);
    if (!ItemIdIsNormal(lp)) continue;
    HeapTupleData tup;
    tup.t_data = reinterpret_cast<HeapTupleHeader>(PageGetItem(page, lp));
    tup.t_len = ItemIdGetLength(lp);
    tup.t_tableOid = RelationGetRelid(rel_);
    ItemPointerSet(&tup.t_self, b, off);
    if (!all_visible || serializable_) {
      const bool visible = all_visible || HeapTupleSatisfiesVisibility(&tup, snap_, buf);
      if (serializable_) HeapCheckForSerializableConflictOut(visible, rel_, &tup, buf, snap_);
      if (!visible) continue;
    }
    f(tup);
  }
}

bool PageReader::next() {
  rows_ = 0;
  TupleDesc desc = RelationGetDescr(rel_);
  while (blk_ < nblocks_) {
    bool all_visible;
    Buffer buf = lock_page(blk_++, all_visible);
    list_visible(buf, all_visible, [&](HeapTupleData& tup) {
      Datum* v = values_ + static_cast<size_t>(rows_) * natts_;
      bool* nl = nulls_ + static_cast<size_t>(rows_) * natts_;
      // heap_getattr: cached offsets when the tuple has no NULLs, and
      // attributes added later (missing in old tuples) handled.
      for (int k = 0; k < natts_; ++k) v[k] = heap_getattr(&tup, atts_[k], desc, &nl[k]);
      ++rows_;
    });
    UnlockReleaseBuffer(buf);
    if (rows_ > 0) return true;
  }
  return false;
}

int PageReader::pin_batch(PinnedPages& b) {
  release_batch(b);
  b.nlps = b.ntuples = 0;
  while (blk_ < nblocks_ && b.npages < PinnedPages::kPages) {
    bool all_visible;
    Buffer buf = lock_page(blk_++, all_visible);
    Page page = BufferGetPage(buf);
    PinnedPages::Entry e{reinterpret_cast<const char*>(page), 0, 0, all_visible && !serializable_};
    if (e.line_pointers) {
      // The whole line pointer array in one copy; the decoder skips the
      // items that are not normal.
      e.first = b.nlps;
      e.count = PageGetMaxOffsetNumber(page);
      memcpy(&b.lps[b.nlps], PageGetItemId(page, FirstOffsetNumber), sizeof(ItemIdData) * e.count);
      b.nlps += e.count;
    } else {
      e.first = b.ntuples;
      list_visible(buf, all_visible, [&](HeapTupleData& tup) {
        b.tuples[b.ntuples] = tup.t_data;
        b.lengths[b.ntuples] = tup.t_len;
        ++b.ntuples;
      });
      e.count = b.ntuples - e.first;
    }
    LockBuffer(buf, BUFFER_LOCK_UNLOCK);
    if (e.count > 0) {
      b.pins[b.npages] = buf;
      b.entries[b.npages++] = e;
    } else {
      ReleaseBuffer(buf);
    }
  }
  return b.npages;
}

void PageReader::release_batch(PinnedPages& b) {
  for (int i = 0; i < b.npages; ++i) ReleaseBuffer(b.pins[i]);
  b.npages = 0;
}

bool PageReader::fixed_offsets(int* offsets) const {
  TupleDesc desc = RelationGetDescr(rel_);
  AttrNumber last = 0;
  for (int k = 0; k < natts_; ++k) last = std::max(last, atts_[k]);
  int off = 0;
  for (AttrNumber a = 1; a <= last; ++a) {
    Form_pg_attribute at = TupleDescAttr(desc, a - 1);
    if (at->attlen <= 0) return false;
    off = att_align_nominal(off, at->attalign);
    for (int k = 0; k < natts_; ++k)
      if (atts_[k] == a) offsets[k] = off;
    off += at->attlen;
  }
  return true;
}
}  // namespace mln::pg
