// PageReader: the visible tuples of a heap relation read one page at a
// time through the buffer manager, the requested attributes taken with
// heap_getattr (cached offsets for fixed-width prefixes): no slot, no pin
// per tuple.  It is heapgetpage() (heapam.c) without the executor around
// it: the same visibility test, all-visible pages skip it.  Its batch mode
// pins pages for heap_scan.cpp's decoder thread.  Used by heap_read.cpp.
//
// Every member runs PostgreSQL code: call them inside pg_call.  It owns
// nothing that outlives an ERROR: buffers are released before a call
// returns (pin_batch's pins are left to the abort's resource-owner
// cleanup), memory is palloc'd in the current context.
#pragma once

extern "C" {
#include "postgres.h"
#include "access/htup_details.h"
#include "storage/buf.h"
#include "storage/bufpage.h"
#include "utils/rel.h"
#include "utils/snapshot.h"
}

namespace mln::pg {

// Pages pinned by PageReader::pin_batch: plain memory that another thread
// may read until the pins are released.
struct PinnedPages {
  // Two batches in flight fill the bulk-read ring (32 buffers).
  static constexpr int kPages = 16;
  static constexpr int kItems = kPages * MaxHeapTuplesPerPage;
  struct Entry {
    const char* page;
    int first, count;    // its slice of lps (line_pointers) or of tuples/lengths
    bool line_pointers;  // all-visible: every normal item in its slice is a row
  };
  Buffer pins[kPages];
  Entry entries[kPages];
  int npages = 0;
  ItemIdData lps[kItems];
  HeapTupleHeader tuples[kItems];
  uint32 lengths[kItems];
  int nlps = 0, ntuples = 0;
};

class PageReader {
 public:
  // `atts`: 1-based attribute numbers to read, `n` of them.
  PageReader(Relation rel, Snapshot snap, const AttrNumber* atts, int n);
  ~PageReader();
  // Reads the next non-empty page; false at the end of the relation.
  bool next();
  int rows() const { return rows_; }
  const Datum* values(int r) const { return values_ + static_cast<size_t>(r) * natts_; }
  const bool* nulls(int r) const { return nulls_ + static_cast<size_t>(r) * natts_; }
  // Pages in the relation when the scan started (for size estimates).
  BlockNumber pages() const { return nblocks_; }

  // Batch mode, for decoding on another thread (heap_scan.cpp): releases
  // b's pins, then pins the next pages (at most PinnedPages::kPages) that
  // may hold visible rows.  Under each page's share lock it copies the line
  // pointer array of an all-visible page (every normal item on it is
  // visible), or lists the tuples the snapshot sees on any other page; then
  // it drops the lock and keeps the pin, as heapgetpage() does before its
  // caller reads the tuples.  Returns the number of pages pinned (0 at the
  // end of the relation).
  //
  // Why another thread may read the pages: a pinned page cannot be pruned
  // or defragmented (that takes a cleanup lock), so every item the copy
  // calls normal keeps its offset and its data.  A concurrent insert may
  // add or reuse line pointers after the lock is dropped; the copy does not
  // show them, and their rows are not visible to this snapshot anyway.
  int pin_batch(PinnedPages& b);
  static void release_batch(PinnedPages& b);
  // Byte offsets of the attributes read, from the start of a tuple's data,
  // for tuples without NULLs: false when an attribute before one of them
  // is variable-width (the offsets then differ from row to row).
  bool fixed_offsets(int* offsets) const;

 private:
  Buffer lock_page(BlockNumber b, bool& all_visible);
  template <typename F>
  void list_visible(Buffer buf, bool all_visible, F&& f);

  Relation rel_;
  Snapshot snap_;
  const AttrNumber* atts_;
  int natts_;
  BlockNumber nblocks_, blk_ = 0;
  BufferAccessStrategy strategy_;
  bool serializable_;
  Datum* values_;
  bool* nulls_;
  int rows_ = 0;
};
}  // namespace mln::pg
