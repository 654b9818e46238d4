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

class RawHeapWriter {
 public:
  // Whether `rel` can take raw pages: a heap table created in the current
  // subtransaction, with no blocks, indexes or triggers.
  static bool usable(Relation rel);
  explicit RawHeapWriter(Relation rel);
  // Adds one row (values/isnull in attribute order, all attributes).
  void add(Datum* values, bool* isnull);
  // Whether this relation takes int4 pages (build_int4_pages): every
  // attribute int4, no row added through add(), and no earlier
  // write_int4_pages() call that ended on a partly filled page.
  bool takes_int4_columns() const;
  // Rows of int4 columns that one such page holds.
  int int4_rows_per_page();
  // Rows of int4 values (cols[k][r] for attribute k + 1, none NULL) in two
  // halves, so that the next pages are built while this thread writes the
  // last ones (write_table).  Every row has the same length, so every page
  // holds the same number of rows and pages are built independently.
  // build_int4_pages() lays out `rows` rows as the pages that follow block
  // `blk0` in `pages` (room for kInt4PiecePages pages at most): plain memory
  // writes on OpenMP threads, no PostgreSQL call, so any one thread may run
  // it once int4_rows_per_page() has been called.  Given `payloads` (BLCKSZ
  // per page) and `lens`, it also lays out each page's WAL record data
  // there, so that the backend thread only inserts it.  write_int4_pages()
  // WAL-logs and appends them (with those payloads when given); `blk0` must
  // be where the relation ends, and every call but the last must pass a
  // multiple of int4_rows_per_page() rows.
  static constexpr int kInt4PiecePages = 1024;
  void build_int4_pages(const int32* const* cols, size_t rows, BlockNumber blk0, char* pages,
                        char* payloads = nullptr, uint32* lens = nullptr);
  void write_int4_pages(char* pages, size_t rows, BlockNumber blk0, const char* payloads = nullptr,
                        const uint32* lens = nullptr);
  // Writes the last pages, syncs where WAL-logged, counts the inserts.
  void finish();

 private:
  void place(HeapTupleHeader tup, Size len);
  Page page_for(Size len);
  void add_fixed(const Datum* values);
  char* append_fixed(Page page, BlockNumber blk) const;
  void flush_pages();
  void log_page_rows(Page page, BlockNumber blk, const char* payload, uint32 len);
  void write_pages(char* pages, int n, const char* payloads = nullptr, const uint32* lens = nullptr);

  static constexpr int kBatch = 32;  // pages buffered before they are written
  Relation rel_;
  TupleDesc desc_;
  TransactionId xid_;
  CommandId cid_;
  Size save_free_;
  char* pages_;         // kBatch pages, BLCKSZ each
  char* scratch_;       // one tuple being formed
  char* wal_buf_;       // one page's WAL record (log_page_rows, page_rows_payload)
  int filled_ = 0;      // complete pages waiting in pages_
  bool open_ = false;   // pages_[filled_] holds rows
  BlockNumber next_blk_ = 0;  // block number of pages_[0]
  uint64 rows_ = 0;
  bool added_rows_ = false;    // add() was called
  bool partial_int4_ = false;  // a write_int4_pages() call ended mid-page
  int int4_per_page_ = 0;      // int4_rows_per_page(), once computed
  char empty_hdr_[SizeOfPageHeaderData];  // an empty page's header, for build_int4_pages()
  double build_secs_ = 0, wal_secs_ = 0, extend_secs_ = 0;  // reported at DEBUG1 by finish()
  // Rows of fixed-width by-value attributes without NULLs (an operator's
  // int4 result) skip heap_form_tuple's generic path: their layout is
  // computed once and the values are stored straight into the page.
  bool fixed_ = false;
  Size fixed_len_ = 0;          // header + data, unaligned
  int* fixed_off_ = nullptr;    // data offset of each attribute
  HeapTupleHeaderData fixed_hdr_;
};

}  // namespace mln::pg
