// Page-at-a-time heap access for the operators' table I/O (heap_io.cpp).
//
//  * PageReader reads the visible tuples of a heap relation one page at a
//    time through the buffer manager, and takes the requested attributes
//    with heap_getattr (cached offsets for fixed-width prefixes): no slot,
//    no pin per tuple.  It is heapgetpage() (heapam.c) without the executor
//    around it: the same visibility test, all-visible pages skip it.
//  * RawHeapWriter builds heap pages in private memory and appends them
//    with smgrextend, WAL-logged as full pages (log_newpages) where the
//    relation needs WAL, for a relation created in the current
//    subtransaction that is still empty and has no indexes.  This is how
//    PostgreSQL's own rewriteheap.c (CLUSTER, VACUUM FULL) and the B-tree
//    build (nbtsort.c) write a new relation; PostgreSQL 15 has no public
//    bulk-write API (17's bulk_write.c).
//
// Every member runs PostgreSQL code: call them inside pg_call.  Neither
// class owns anything that outlives an ERROR: buffers are released before a
// call returns, memory is palloc'd in the current context.
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

  // Batch mode, for decoding on other threads (scan_columns): pins the next
  // pages (at most kBatchPages, the bulk-read ring's size), lists their
  // visible tuples and keeps the pins; the share locks are released, as
  // heapgetpage() does before its caller reads the tuples.  Returns the
  // number of tuples listed (0 at the end).  A pinned page cannot be pruned
  // or defragmented, so the listed tuples stay put until release_batch().
  int pin_batch();
  const HeapTupleHeader* batch_tuples() const { return tuples_; }
  const uint32* batch_lengths() const { return lengths_; }
  void release_batch();
  // Byte offsets of the attributes read, from the start of a tuple's data,
  // for tuples without NULLs: false when an attribute before one of them
  // is variable-width (the offsets then differ from row to row).
  bool fixed_offsets(int* offsets) const;
  static constexpr int kBatchPages = 32;

 private:
  template <typename F>
  Buffer lock_visible(BlockNumber b, F&& f);

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
  Buffer pinned_[kBatchPages];
  int npinned_ = 0;
  HeapTupleHeader* tuples_;
  uint32* lengths_;
};

class RawHeapWriter {
 public:
  // Whether `rel` can take raw pages: a heap table created in the current
  // subtransaction, with no blocks, indexes or triggers.
  static bool usable(Relation rel);
  explicit RawHeapWriter(Relation rel);
  // Adds one row (values/isnull in attribute order, all attributes).
  void add(Datum* values, bool* isnull);
  // Whether add_int4_columns() takes this relation: every attribute int4,
  // and no row added yet.
  bool takes_int4_columns() const;
  // Adds `rows` rows of int4 values, cols[k][r] for attribute k + 1, none
  // NULL.  Every row has the same length, so every page holds the same
  // number of rows and pages are built independently, on OpenMP threads
  // (plain memory writes: no PostgreSQL call there); WAL and smgrextend stay
  // on this thread.
  void add_int4_columns(const int32* const* cols, size_t rows);
  // Writes the last pages, syncs where WAL-logged, counts the inserts.
  void finish();

 private:
  void place(HeapTupleHeader tup, Size len);
  Page page_for(Size len);
  void add_fixed(const Datum* values);
  char* append_fixed(Page page, BlockNumber blk) const;
  void flush_pages();
  void write_pages(char* pages, int n);
  int fixed_rows_per_page();

  static constexpr int kBatch = 32;  // pages per log_newpages record (XLR_MAX_BLOCK_ID)
  Relation rel_;
  TupleDesc desc_;
  TransactionId xid_;
  CommandId cid_;
  Size save_free_;
  char* pages_;         // kBatch pages, BLCKSZ each
  char* scratch_;       // one tuple being formed
  int filled_ = 0;      // complete pages waiting in pages_
  bool open_ = false;   // pages_[filled_] holds rows
  BlockNumber next_blk_ = 0;  // block number of pages_[0]
  uint64 rows_ = 0;
  // Rows of fixed-width by-value attributes without NULLs (an operator's
  // int4 result) skip heap_form_tuple's generic path: their layout is
  // computed once and the values are stored straight into the page.
  bool fixed_ = false;
  Size fixed_len_ = 0;          // header + data, unaligned
  int* fixed_off_ = nullptr;    // data offset of each attribute
  HeapTupleHeaderData fixed_hdr_;
};

}  // namespace mln::pg
