// Raw heap page writer (see heap_page_writer.hpp).  Plain PostgreSQL C
// code in C++ syntax: every function here is called inside pg_call (or, for
// build_int4_pages, on OpenMP threads without PostgreSQL calls), and none
// of them throws a C++ exception.
#include "pg/heap_page_writer.hpp"

extern "C" {
#include "access/heapam.h"
#include "access/heapam_xlog.h"
#include "access/heaptoast.h"
#include "access/xact.h"
#include "access/xloginsert.h"
#include "catalog/catalog.h"
#include "catalog/pg_am.h"
#include "catalog/pg_type_d.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/smgr.h"
}

#include <algorithm>
#include <chrono>

#include <omp.h>

namespace mln::pg {

namespace {
using Clock = std::chrono::steady_clock;
double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }
}  // namespace

// heap_prepare_insert(): the inserting transaction and command, no xmax.
static void stamp(HeapTupleHeader td, TransactionId xid, CommandId cid) {
  td->t_infomask &= ~HEAP_XACT_MASK;
  td->t_infomask2 &= ~HEAP2_XACT_MASK;
  td->t_infomask |= HEAP_XMAX_INVALID;
  HeapTupleHeaderSetXmin(td, xid);
  HeapTupleHeaderSetCmin(td, cid);
  HeapTupleHeaderSetXmax(td, 0);
}

bool RawHeapWriter::usable(Relation rel) {
  return rel->rd_rel->relkind == RELKIND_RELATION && rel->rd_rel->relam == HEAP_TABLE_AM_OID &&
         rel->rd_createSubid != InvalidSubTransactionId && rel->rd_createSubid == GetCurrentSubTransactionId() &&
         !rel->rd_rel->relhasindex && !rel->rd_rel->relhastriggers && rel->trigdesc == nullptr &&
         RelationGetNumberOfBlocks(rel) == 0 &&
         // Logical decoding needs each row in its WAL record with the
         // toasted values it refers to logged just before (heap_multi_insert
         // orders them so); under wal_level = logical rows go through it.
         !RelationIsLogicallyLogged(rel);
}

RawHeapWriter::RawHeapWriter(Relation rel)
    : rel_(rel),
      desc_(RelationGetDescr(rel)),
      xid_(GetCurrentTransactionId()),
      cid_(GetCurrentCommandId(true)),
      save_free_(RelationGetTargetPageFreeSpace(rel, HEAP_DEFAULT_FILLFACTOR)) {
  pages_ = static_cast<char*>(palloc(static_cast<Size>(BLCKSZ) * kBatch));
  scratch_ = static_cast<char*>(palloc(BLCKSZ));
  // A page's WAL record (page_rows_payload): never more than the page plus
  // a header and an alignment byte per row.
  wal_buf_ = static_cast<char*>(palloc(BLCKSZ + SizeOfHeapMultiInsert + MaxHeapTuplesPerPage * (SizeOfMultiInsertTuple + 1)));
  const int natts = desc_->natts;
  fixed_ = natts > 0;
  fixed_off_ = static_cast<int*>(palloc(sizeof(int) * (natts > 0 ? natts : 1)));
  Size off = 0;
  for (int i = 0; i < natts && fixed_; ++i) {
    Form_pg_attribute a = TupleDescAttr(desc_, i);
    fixed_ = a->attbyval && a->attlen > 0 && !a->attisdropped;
    off = att_align_nominal(off, a->attalign);
    fixed_off_[i] = static_cast<int>(off);
    off += a->attlen;
  }
  if (fixed_) {
    // heap_form_tuple's header for such a row, already stamped: no NULL
    // bitmap, no variable-width or external values.
    memset(&fixed_hdr_, 0, sizeof(fixed_hdr_));
    HeapTupleHeaderSetNatts(&fixed_hdr_, natts);
    fixed_hdr_.t_hoff = static_cast<uint8>(MAXALIGN(offsetof(HeapTupleHeaderData, t_bits)));
    stamp(&fixed_hdr_, xid_, cid_);
    fixed_len_ = fixed_hdr_.t_hoff + off;
  }
}

void RawHeapWriter::add(Datum* values, bool* isnull) {
  added_rows_ = true;
  const int natts = desc_->natts;
  bool hasnull = false;
  for (int i = 0; i < natts && !hasnull; ++i) hasnull = isnull[i];
  if (fixed_ && !hasnull) {
    add_fixed(values);
    return;
  }
  // heap_form_tuple(), formed in scratch space instead of a palloc'd tuple.
  Size hoff = offsetof(HeapTupleHeaderData, t_bits) + (hasnull ? BITMAPLEN(natts) : 0);
  hoff = MAXALIGN(hoff);
  const Size data_len = heap_compute_data_size(desc_, values, isnull);
  const Size len = hoff + data_len;
  if (len <= inline_max_) {
    // All of it zeroed, as heap_form_tuple's palloc0: heap_fill_tuple
    // skips alignment padding, and a reader takes a nonzero byte where
    // padding may be for a short varlena's header (att_align_pointer).
    memset(scratch_, 0, len);
    HeapTupleHeader td = reinterpret_cast<HeapTupleHeader>(scratch_);
    HeapTupleHeaderSetDatumLength(td, len);
    HeapTupleHeaderSetTypeId(td, desc_->tdtypeid);
    HeapTupleHeaderSetTypMod(td, desc_->tdtypmod);
    ItemPointerSetInvalid(&td->t_ctid);
    HeapTupleHeaderSetNatts(td, natts);
    td->t_hoff = static_cast<uint8>(hoff);
    heap_fill_tuple(desc_, values, isnull, scratch_ + hoff, data_len, &td->t_infomask, hasnull ? td->t_bits : nullptr);
    if (!(td->t_infomask & HEAP_HASEXTERNAL)) {
      stamp(td, xid_, cid_);
      place(td, len);
      return;
    }
  }
  // Too big, or holding values toasted elsewhere: the toaster, as heap_insert.
  HeapTuple tup = heap_form_tuple(desc_, values, isnull);
  stamp(tup->t_data, xid_, cid_);
  tup->t_tableOid = RelationGetRelid(rel_);
  HeapTuple toasted = heap_toast_insert_or_update(rel_, tup, nullptr, 0);
  stamp(toasted->t_data, xid_, cid_);
  if (MAXALIGN(toasted->t_len) > MaxHeapTupleSize)
    ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                    errmsg("row is too big: size %zu, maximum size %zu", static_cast<size_t>(toasted->t_len),
                           static_cast<size_t>(MaxHeapTupleSize))));
  place(toasted->t_data, toasted->t_len);
  if (toasted != tup) heap_freetuple(toasted);
  heap_freetuple(tup);
}

// The page that takes a tuple of `len` bytes: the open one if it has room
// (rewriteheap.c's test), else a new one.
Page RawHeapWriter::page_for(Size len) {
  if (open_ && MAXALIGN(len) + save_free_ > PageGetHeapFreeSpace(pages_ + static_cast<Size>(filled_) * BLCKSZ)) {
    open_ = false;
    if (++filled_ == kBatch) flush_pages();
  }
  Page page = pages_ + static_cast<Size>(filled_) * BLCKSZ;
  if (!open_) {
    PageInit(page, BLCKSZ, 0);
    open_ = true;
  }
  return page;
}

// PageAddItem() for a fixed-layout row: the slot (append_fixed), then the
// values at their offsets.  The page was zeroed by PageInit, so alignment
// padding is zero.
void RawHeapWriter::add_fixed(const Datum* values) {
  char* data = append_fixed(page_for(fixed_len_), next_blk_ + filled_);
  for (int i = 0; i < desc_->natts; ++i)
    store_att_byval(data + fixed_off_[i], values[i], TupleDescAttr(desc_, i)->attlen);
  ++rows_;
}

// One fixed-layout row's slot on `page` (block `blk`), which has room: the
// header template, a line pointer, the tuple's own TID.  Returns where the
// row's values go.  Touches only `page`: build_int4_pages() calls it on
// OpenMP threads.
char* RawHeapWriter::append_fixed(Page page, BlockNumber blk) const {
  PageHeader ph = reinterpret_cast<PageHeader>(page);
  const OffsetNumber off = OffsetNumberNext(PageGetMaxOffsetNumber(page));
  ph->pd_upper = static_cast<LocationIndex>(ph->pd_upper - MAXALIGN(fixed_len_));
  char* tup = page + ph->pd_upper;
  memcpy(tup, &fixed_hdr_, fixed_hdr_.t_hoff);
  ItemIdSetNormal(PageGetItemId(page, off), ph->pd_upper, fixed_len_);
  ph->pd_lower = static_cast<LocationIndex>(ph->pd_lower + sizeof(ItemIdData));
  ItemPointerSet(&reinterpret_cast<HeapTupleHeader>(tup)->t_ctid, blk, off);
  return tup + fixed_hdr_.t_hoff;
}

void RawHeapWriter::place(HeapTupleHeader td, Size len) {
  Page page = page_for(len);
  const OffsetNumber off = PageAddItem(page, reinterpret_cast<Item>(td), len, InvalidOffsetNumber, false, true);
  if (off == InvalidOffsetNumber) elog(ERROR, "pg_mln: failed to add a tuple to a new heap page");
  // RelationPutHeapTuple(): the stored tuple's ctid is its own TID.
  HeapTupleHeader stored = reinterpret_cast<HeapTupleHeader>(PageGetItem(page, PageGetItemId(page, off)));
  ItemPointerSet(&stored->t_ctid, next_blk_ + filled_, off);
  ++rows_;
}

// The rows of a new page as heap_multi_insert()'s WAL record carries them:
// each without the fixed part of its header, which redo rebuilds (xmin from
// the record, the TID from the row's position).  Written at `out` (an even
// address, as the record's data starts); returns the length.  Plain memory
// work: build_int4_pages() runs it off the backend thread.
static uint32 page_rows_payload(const char* page_bytes, char* out) {
  Page page = const_cast<Page>(page_bytes);
  const OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
  char* p = out;
  for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off = OffsetNumberNext(off)) {
    ItemId lp = PageGetItemId(page, off);
    auto tup = reinterpret_cast<HeapTupleHeader>(PageGetItem(page, lp));
    auto* h = reinterpret_cast<xl_multi_insert_tuple*>(SHORTALIGN(p));
    h->datalen = static_cast<uint16>(ItemIdGetLength(lp) - SizeofHeapTupleHeader);
    h->t_infomask2 = tup->t_infomask2;
    h->t_infomask = tup->t_infomask;
    h->t_hoff = tup->t_hoff;
    p = reinterpret_cast<char*>(h) + SizeOfMultiInsertTuple;
    memcpy(p, reinterpret_cast<char*>(tup) + SizeofHeapTupleHeader, h->datalen);
    p += h->datalen;
  }
  return static_cast<uint32>(p - out);
}

// heap_multi_insert()'s WAL record for one whole new page
// (XLOG_HEAP2_MULTI_INSERT with XLOG_HEAP_INIT_PAGE), with the rows laid
// out by page_rows_payload().  About half the bytes of a full-page image:
// a 4-column int4 row takes 24 bytes instead of 44.
void RawHeapWriter::log_page_rows(Page page, BlockNumber blk, const char* payload, uint32 len) {
  auto* xlrec = reinterpret_cast<xl_heap_multi_insert*>(wal_buf_);
  xlrec->flags = 0;
  xlrec->ntuples = PageGetMaxOffsetNumber(page);  // no offsets[]: an init page's rows are 1..ntuples
  XLogBeginInsert();
  XLogRegisterData(wal_buf_, SizeOfHeapMultiInsert);
  XLogRegisterBlock(0, &rel_->rd_node, MAIN_FORKNUM, blk, page, REGBUF_STANDARD | REGBUF_WILL_INIT);
  XLogRegisterBufData(0, const_cast<char*>(payload), static_cast<int>(len));
  XLogSetRecordFlags(XLOG_INCLUDE_ORIGIN);
  const XLogRecPtr lsn = XLogInsert(RM_HEAP2_ID, XLOG_HEAP2_MULTI_INSERT | XLOG_HEAP_INIT_PAGE);
  PageSetLSN(page, lsn);  // a macro that evaluates its argument twice
}

// Writes `n` complete pages that follow the relation's end: each one's WAL
// record first, then the page.  `payloads` (page i's at i * BLCKSZ, lens[i]
// long), when given, are the pages' rows laid out by page_rows_payload()
// already.
void RawHeapWriter::write_pages(char* pages, int n, const char* payloads, const uint32* lens) {
  const bool wal = RelationNeedsWAL(rel_);
  for (int i = 0; i < n; ++i) {
    Page page = pages + static_cast<Size>(i) * BLCKSZ;
    const BlockNumber blk = next_blk_ + i;
    const auto t0 = Clock::now();
    if (wal) {
      if (payloads) {
        log_page_rows(page, blk, payloads + static_cast<Size>(i) * BLCKSZ, lens[i]);
      } else {
        char* out = wal_buf_ + SizeOfHeapMultiInsert;
        log_page_rows(page, blk, out, page_rows_payload(page, out));
      }
    }
    const auto t1 = Clock::now();
    PageSetChecksumInplace(page, blk);
    // skipFsync: finish() syncs the relation once (rewriteheap.c does the same).
    smgrextend(RelationGetSmgr(rel_), MAIN_FORKNUM, blk, page, true);
    wal_secs_ += seconds(t0, t1);
    extend_secs_ += seconds(t1, Clock::now());
  }
  next_blk_ += n;
  CHECK_FOR_INTERRUPTS();
}

void RawHeapWriter::flush_pages() {
  write_pages(pages_, filled_);
  filled_ = 0;
}

bool RawHeapWriter::takes_int4_columns() const {
  if (!fixed_ || added_rows_ || partial_int4_ || open_ || filled_ > 0) return false;
  for (int i = 0; i < desc_->natts; ++i) {
    Form_pg_attribute a = TupleDescAttr(desc_, i);
    if (a->atttypid != INT4OID) return false;
  }
  return true;
}

// Rows of the fixed layout that one page takes under page_for()'s rule,
// found by filling a scratch page the way add_fixed() does.  Also keeps an
// empty page's header (PageInit) for build_int4_pages().
int RawHeapWriter::int4_rows_per_page() {
  if (int4_per_page_ > 0) return int4_per_page_;
  Page page = scratch_;
  PageInit(page, BLCKSZ, 0);
  memcpy(empty_hdr_, page, SizeOfPageHeaderData);
  int n = 0;
  for (; MAXALIGN(fixed_len_) + save_free_ <= PageGetHeapFreeSpace(page); ++n) append_fixed(page, 0);
  if (n < 1) elog(ERROR, "pg_mln: a row of %zu bytes does not fit a page", static_cast<size_t>(fixed_len_));
  return int4_per_page_ = n;
}

void RawHeapWriter::build_int4_pages(const int32* const* cols, size_t rows, BlockNumber blk0, char* pages,
                                     char* payloads, uint32* lens) {
  const auto t0 = Clock::now();
  const int per_page = int4_per_page_;
  const int natts = desc_->natts;
  const int n = static_cast<int>((rows + per_page - 1) / static_cast<size_t>(per_page));
  const int* off = fixed_off_;
  // add_fixed() for each row of each page, pages in parallel, on all cores
  // but one: the backend thread writes the previous pages meanwhile.
  const int threads = std::max(1, omp_get_max_threads() - 1);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int i = 0; i < n; ++i) {
    char* page = pages + static_cast<Size>(i) * BLCKSZ;
    memset(page, 0, BLCKSZ);
    memcpy(page, empty_hdr_, SizeOfPageHeaderData);
    const size_t r0 = static_cast<size_t>(i) * per_page;
    const int m = static_cast<int>(std::min<size_t>(per_page, rows - r0));
    for (int j = 0; j < m; ++j) {
      char* data = append_fixed(page, blk0 + i);
      for (int k = 0; k < natts; ++k) memcpy(data + off[k], &cols[k][r0 + j], sizeof(int32));
    }
    if (payloads) lens[i] = page_rows_payload(page, payloads + static_cast<Size>(i) * BLCKSZ);
  }
  build_secs_ += seconds(t0, Clock::now());
}

void RawHeapWriter::write_int4_pages(char* pages, size_t rows, BlockNumber blk0, const char* payloads,
                                     const uint32* lens) {
  if (!takes_int4_columns() || int4_per_page_ < 1 || blk0 != next_blk_)
    elog(ERROR, "pg_mln: int4 pages built for block %u, the relation is at block %u", blk0, next_blk_);
  const size_t per_page = static_cast<size_t>(int4_per_page_);
  write_pages(pages, static_cast<int>((rows + per_page - 1) / per_page), payloads, lens);
  rows_ += rows;
  partial_int4_ = rows % per_page != 0;
}

void RawHeapWriter::finish() {
  if (open_) {
    open_ = false;
    ++filled_;
  }
  flush_pages();
  // The pages bypassed shared buffers, so a checkpoint since their WAL
  // records would not have flushed them: sync now (end_heap_rewrite()).
  // Without WAL (wal_level = minimal, a relation new in this transaction)
  // the commit syncs it (smgrDoPendingSyncs).
  if (RelationNeedsWAL(rel_) && next_blk_ > 0) smgrimmedsync(RelationGetSmgr(rel_), MAIN_FORKNUM);
  pgstat_count_heap_insert(rel_, static_cast<PgStat_Counter>(rows_));
  ereport(DEBUG1, (errmsg_internal("pg_mln: raw pages: %u pages, %s (parallel page build %.3f s, WAL %.3f s, smgrextend %.3f s)",
                                   next_blk_, RelationNeedsWAL(rel_) ? "WAL-logged" : "no WAL", build_secs_, wal_secs_,
                                   extend_secs_)));
}

}  // namespace mln::pg
