// RawHeapWriter builds heap pages in private memory and appends them with
// smgrextend, for a relation created in the current subtransaction that is
// still empty and has no indexes or triggers, outside wal_level = logical
// (usable()).  Where the
// relation needs WAL, each page is logged as the record heap_multi_insert()
// writes for a page it initialises (XLOG_HEAP2_MULTI_INSERT with
// XLOG_HEAP_INIT_PAGE: the rows without the fixed part of their headers,
// which redo rebuilds), about half the bytes of a full-page image; finish()
// then syncs the relation, since the pages bypassed shared buffers.  This
// is how PostgreSQL's own rewriteheap.c (CLUSTER, VACUUM FULL) and the
// B-tree build (nbtsort.c) write a new relation, except that those log
// full-page images (log_newpage); PostgreSQL 15 has no public bulk-write
// API (17's bulk_write.c).  Used by heap_write.cpp.
//
// Every member runs PostgreSQL code: call them inside pg_call (except
// build_int4_pages, plain memory writes).  It owns nothing that outlives
// an ERROR: memory is palloc'd in the current context.
#pragma once

extern "C" {
#include "postgres.h"
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "storage/bufpage.h"
#include "utils/rel.h"
}

namespace mln::pg {

class RawHeapWriter {
 public:
  // Whether `rel` can take raw pages: a heap table created in the current
  // subtransaction, with no blocks, indexes or triggers.
  static bool usable(Relation rel);
  explicit RawHeapWriter(Relation rel);
  // Adds one row (values/isnull in attribute order, all attributes).
  void add(Datum* values, bool* isnull);
  // Rows up to a whole page (MaxHeapTupleSize) stay inline, as
  // heap_insert leaves a row it cannot shrink; by default a row over
  // TOAST_TUPLE_THRESHOLD goes to the toaster, as heap_insert sends it.
  // For rows sized to a page by their writer (the clause chunks): a toasted
  // value costs a TOAST row, its index entry and WAL record per 2 kB.
  void keep_rows_inline() { inline_max_ = MaxHeapTupleSize; }
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
  Size inline_max_ = TOAST_TUPLE_THRESHOLD;  // longest row placed as formed (keep_rows_inline)
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
