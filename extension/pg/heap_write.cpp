// Writing columns and rows into heap tables (see heap_io.hpp): write_table,
// append_evidence, append_atoms.  A table this subtransaction created gets
// raw pages (heap_page_writer.hpp); any other, table_multi_insert.
#include "format/clause_chunks.hpp"
#include "pg/guard.hpp"
#include "pg/heap_io.hpp"
#include "pg/heap_page_writer.hpp"
#include "pg/helper_thread.hpp"
#include "pg/spi.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <new>
#include <optional>

extern "C" {
#include "access/heapam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/varlena.h"
}

namespace mln::pg {

namespace {

// Rows into a new table's raw pages (RawHeapWriter), each formed in one
// virtual slot by fill(slot, row), their values in a context reset every
// 1,000 rows: multi_insert's raw path, and the clause chunks' writer, which
// keeps one open across its ranges.  Plain PostgreSQL code: every member
// runs under pg_call; its memory is palloc'd in the current context.
class RawRows {
 public:
  explicit RawRows(Relation rel)
      : w_(new (palloc(sizeof(RawHeapWriter))) RawHeapWriter(rel)),  // no C++ allocation under PG_TRY
        slot_(MakeSingleTupleTableSlot(RelationGetDescr(rel), &TTSOpsVirtual)),
        values_(AllocSetContextCreate(CurrentMemoryContext, "mln raw rows values", ALLOCSET_DEFAULT_SIZES)) {}
  RawHeapWriter& writer() { return *w_; }
  template <typename Fill>
  void add(size_t rows, Fill&& fill) {
    for (size_t r = 0; r < rows; ++r) {
      MemoryContext old = MemoryContextSwitchTo(values_);
      ExecClearTuple(slot_);
      fill(slot_, r);
      ExecStoreVirtualTuple(slot_);
      w_->add(slot_->tts_values, slot_->tts_isnull);
      MemoryContextSwitchTo(old);
      if (++in_values_ == 1000) {
        MemoryContextReset(values_);
        in_values_ = 0;
      }
    }
  }
  // The last pages; the slot and the values' context go.
  void finish() {
    w_->finish();
    ExecDropSingleTupleTableSlot(slot_);
    MemoryContextDelete(values_);
  }

 private:
  RawHeapWriter* w_;
  TupleTableSlot* slot_;
  MemoryContext values_;
  size_t in_values_ = 0;
};

// Appends `rows` rows to a table; fill(slot, row) sets the slot's values.
// A table this subtransaction created and has not written yet (an
// operator's result, a program's new `_atoms`) gets its pages built here
// and appended raw (RawHeapWriter: no shared buffers, one WAL record per
// page).  Any other table goes through table_multi_insert, 1,000 slots at
// a time; where it has indexes (a user may index a predicate table), their
// entries are inserted here, as COPY does (a unique index raises its usual
// error).  What fill allocates (e.g. array values) lives in a context reset
// after each batch.  Runs under pg_call: fill must only touch the slot and
// plain C++ data.
// With rebuild_indexes, the rows get no index entries one by one: the
// table's indexes are rebuilt from the heap afterwards (reindex_relation,
// a sorted build), which for a batch as large as the table is several
// times faster than single inserts (docs/performance.md, "Measured choices").
template <typename Fill>
void multi_insert(Oid relid, size_t rows, Fill&& fill, bool rebuild_indexes = false) {
  pg_call([&] {
    Relation rel = table_open(relid, RowExclusiveLock);
    if (RawHeapWriter::usable(rel)) {
      RawRows out(rel);
      out.add(rows, fill);
      out.finish();
      table_close(rel, RowExclusiveLock);
      CommandCounterIncrement();
      return;
    }
    const int batch = 1000;
    MemoryContext values = AllocSetContextCreate(CurrentMemoryContext, "mln multi_insert values", ALLOCSET_DEFAULT_SIZES);
    CommandId cid = GetCurrentCommandId(true);
    BulkInsertState bis = GetBulkInsertState();
    EState* estate = nullptr;
    ResultRelInfo* rri = nullptr;
    const bool rebuild = rebuild_indexes && rel->rd_rel->relhasindex;
    if (rel->rd_rel->relhasindex && !rebuild) {
      estate = CreateExecutorState();
      rri = makeNode(ResultRelInfo);
      InitResultRelInfo(rri, rel, 1, nullptr, 0);
      ExecOpenIndices(rri, false);
    }
    TupleTableSlot** slots = static_cast<TupleTableSlot**>(palloc(sizeof(TupleTableSlot*) * batch));
    for (int i = 0; i < batch; ++i) slots[i] = MakeSingleTupleTableSlot(RelationGetDescr(rel), &TTSOpsVirtual);
    size_t r = 0;
    while (r < rows) {
      int m = 0;
      MemoryContext old = MemoryContextSwitchTo(values);
      for (; m < batch && r < rows; ++m, ++r) {
        ExecClearTuple(slots[m]);
        fill(slots[m], r);
        ExecStoreVirtualTuple(slots[m]);
      }
      MemoryContextSwitchTo(old);
      table_multi_insert(rel, slots, m, cid, 0, bis);  // copies the values into the tuples, sets their TIDs
      if (rri && rri->ri_NumIndices > 0) {
        for (int i = 0; i < m; ++i) {
          list_free(ExecInsertIndexTuples(rri, slots[i], estate, false, false, nullptr, NIL));
          ResetPerTupleExprContext(estate);
        }
      }
      MemoryContextReset(values);
      CHECK_FOR_INTERRUPTS();
    }
    MemoryContextDelete(values);
    for (int i = 0; i < batch; ++i) ExecDropSingleTupleTableSlot(slots[i]);
    if (rri) {
      ExecCloseIndices(rri);
      FreeExecutorState(estate);
    }
    FreeBulkInsertState(bis);
    table_close(rel, RowExclusiveLock);
    CommandCounterIncrement();
    if (rebuild) {  // a unique index raises its usual error here
      ReindexParams params = {};
      reindex_relation(relid, 0, &params);
      CommandCounterIncrement();
    }
  });
}

// A one-dimensional array of n by-value elements (int4, float8) without
// NULLs, built directly (construct_array's per-element loop cost a third of
// storing the atoms); palloc'd in the current context, not a C++
// allocation: a failure must not unwind through pg_call's PG_TRY.
template <typename T>
ArrayType* flat_array(const T* v, int n, Oid elemtype) {
  if (n == 0) return construct_empty_array(elemtype);
  const Size bytes = ARR_OVERHEAD_NONULLS(1) + sizeof(T) * static_cast<Size>(n);
  ArrayType* a = static_cast<ArrayType*>(palloc0(bytes));
  SET_VARSIZE(a, bytes);
  a->ndim = 1;
  a->dataoffset = 0;
  a->elemtype = elemtype;
  ARR_DIMS(a)[0] = n;
  ARR_LBOUND(a)[0] = 1;
  memcpy(ARR_DATA_PTR(a), v, sizeof(T) * static_cast<size_t>(n));
  return a;
}
ArrayType* int4_array(const int32_t* v, int n) { return flat_array(v, n, INT4OID); }

// A clause chunk row's bytes at most, for n clauses of L literals and d
// distinct weights: the tuple header, chunk, three array headers, their
// data, the codes' bytea and alignment (format/clause_chunks.hpp).
constexpr Size chunk_row_bytes(Size n, Size lits, Size d) {
  return MAXALIGN(SizeofHeapTupleHeader) + 4 + 3 * ARR_OVERHEAD_NONULLS(1) + 4 * (n + 1) + 4 * lits + 7 + 8 * d +
         VARHDRSZ + n;
}

}  // namespace

StatementMemory::StatementMemory()
    : cxt_(pg_call([] { return AllocSetContextCreate(CurrentMemoryContext, "mln statement", ALLOCSET_DEFAULT_SIZES); })) {}

void lock_target_name(Spi& spi, const std::string& target) {
  spi.query("SELECT pg_advisory_xact_lock(7106670, hashtext($1))", {text_param(target)});
}

uint64_t write_table(const std::string& target, const std::vector<std::string>& names, const RowSource& src) {
  // Parse and check the target name, then create the table.
  std::string sql = "CREATE TABLE " + target + " (";
  {
    Spi spi;
    lock_target_name(spi, target);
    bool exists = spi.query("SELECT to_regclass($1) IS NOT NULL", {text_param(target)}).boolean(0, 0);
    if (exists)
      throw UserError{ERRCODE_DUPLICATE_TABLE, "relation \"" + target + "\" already exists", "",
                      "pick a new target name; pg_mln never overwrites an existing table"};
    // `target` may be schema-qualified; quote each part.
    Rows parts = spi.query("SELECT unnest(parse_ident($1))", {text_param(target)});
    std::string q;
    for (size_t i = 0; i < parts.size(); ++i) q += (i ? "." : "") + qi(parts.text(i, 0));
    sql = "CREATE TABLE " + q + " (";
    for (size_t k = 0; k < names.size(); ++k) sql += (k ? ", " : "") + qi(names[k]) + " int4 NOT NULL";
    spi.exec(sql + ")");
  }
  Oid relid = relation_by_name(target, NoLock);  // locked by CREATE TABLE
  const size_t rows = src.rows;
  const int ncols = src.ncols;
  // The new table takes raw pages (it is empty, this subtransaction made
  // it): the rows come in pieces of whole pages, through reused buffers,
  // and go straight into pages built in parallel.
  Relation rel = nullptr;
  std::unique_ptr<RawHeapWriter> w;  // (not std::optional: its header template ends in a flexible array)
  bool needs_wal = false;
  const int per_page = pg_call([&] {
    rel = table_open(relid, RowExclusiveLock);
    needs_wal = RelationNeedsWAL(rel);
    if (RawHeapWriter::usable(rel) && RelationGetDescr(rel)->natts == ncols) {
      w = std::make_unique<RawHeapWriter>(rel);
      if (w->takes_int4_columns()) return w->int4_rows_per_page();
    }
    table_close(rel, RowExclusiveLock);
    return 0;
  });
  if (per_page > 0) {
    // Two pieces in flight: the helper thread downloads piece k + 1 and
    // builds its pages while this thread WAL-logs and appends piece k.
    const size_t piece = std::min<size_t>(rows, static_cast<size_t>(per_page) * RawHeapWriter::kInt4PiecePages);
    struct Piece {
      std::vector<std::vector<int32_t>> cols;
      std::vector<int32_t*> dst;
      std::vector<char> pages;
      std::vector<char> wal;        // each page's WAL record data, laid out by the builder
      std::vector<uint32> wal_len;
      size_t r0 = 0, rows = 0;
      BlockNumber blk0 = 0;
    };
    Piece buf[2];
    for (Piece& p : buf) {
      p.cols.assign(static_cast<size_t>(ncols), std::vector<int32_t>(piece));
      for (auto& c : p.cols) p.dst.push_back(c.data());
      p.pages.resize(static_cast<size_t>(BLCKSZ) * RawHeapWriter::kInt4PiecePages);
      if (needs_wal) {
        p.wal.resize(p.pages.size());
        p.wal_len.resize(RawHeapWriter::kInt4PiecePages);
      }
    }
    auto produce = [&](Piece& p, size_t r0, BlockNumber blk0) {
      p.r0 = r0;
      p.rows = std::min(piece, rows - r0);
      p.blk0 = blk0;
      src.fill(r0, p.rows, p.dst.data());
      w->build_int4_pages(p.dst.data(), p.rows, blk0, p.pages.data(), needs_wal ? p.wal.data() : nullptr,
                          needs_wal ? p.wal_len.data() : nullptr);
    };
    {
      HelperThread helper;  // after buf: joined before the pieces go, also on an error
      int cur = 0;
      // The new table is empty (RawHeapWriter::usable): its pages start at block 0.
      if (rows > 0) helper.submit([&] { produce(buf[0], 0, 0); });
      for (size_t done = 0; done < rows; cur = 1 - cur) {
        helper.wait();
        Piece& p = buf[cur];
        done = p.r0 + p.rows;
        const BlockNumber next_blk = p.blk0 + static_cast<BlockNumber>((p.rows + per_page - 1) / per_page);
        if (done < rows) helper.submit([&, done, next_blk, nxt = 1 - cur] { produce(buf[nxt], done, next_blk); });
        pg_call([&] {
          w->write_int4_pages(p.pages.data(), p.rows, p.blk0, needs_wal ? p.wal.data() : nullptr,
                              needs_wal ? p.wal_len.data() : nullptr);
        });
      }
    }
    pg_call([&] {
      w->finish();
      table_close(rel, RowExclusiveLock);
      CommandCounterIncrement();
    });
    return rows;
  }
  // Any other table: all rows first (fill may throw; multi_insert's
  // callback runs inside PostgreSQL frames), then table_multi_insert.
  std::vector<std::vector<int32_t>> all(static_cast<size_t>(ncols), std::vector<int32_t>(rows));
  std::vector<int32_t*> dst;
  for (auto& c : all) dst.push_back(c.data());
  if (rows > 0) src.fill(0, rows, dst.data());
  multi_insert(relid, rows, [&](TupleTableSlot* sl, size_t r) {
    for (int k = 0; k < ncols; ++k) {
      sl->tts_values[k] = Int32GetDatum(all[k][r]);
      sl->tts_isnull[k] = false;
    }
  });
  return rows;
}

uint64_t append_evidence(const std::string& qualified_table, const std::vector<std::vector<int32_t>>& args,
                         const std::vector<uint8_t>& truth, const std::vector<double>& prior) {
  const size_t rows = truth.size();
  const int nargs = static_cast<int>(args.size());
  Oid relid = relation_by_name(qualified_table, RowExclusiveLock);
  multi_insert(relid, rows, [&](TupleTableSlot* sl, size_t r) {
    if (sl->tts_tupleDescriptor->natts != nargs + 2) elog(ERROR, "evidence table %s has an unexpected shape", qualified_table.c_str());
    for (int k = 0; k < nargs; ++k) {
      sl->tts_values[k] = Int32GetDatum(args[k][r]);
      sl->tts_isnull[k] = false;
    }
    sl->tts_values[nargs] = BoolGetDatum(truth[r] != 0);
    sl->tts_isnull[nargs] = false;
    sl->tts_isnull[nargs + 1] = std::isnan(prior[r]);
    sl->tts_values[nargs + 1] = sl->tts_isnull[nargs + 1] ? (Datum)0 : Float8GetDatum(prior[r]);
  });
  return rows;
}

uint64_t append_symbols(const std::string& qualified_table, int32_t first_id, const std::string* names, size_t n,
                        bool rebuild_indexes) {
  Oid relid = relation_by_name(qualified_table, RowExclusiveLock);
  multi_insert(
      relid, n,
      [&](TupleTableSlot* sl, size_t r) {
        if (sl->tts_tupleDescriptor->natts != 2) elog(ERROR, "%s has an unexpected shape", qualified_table.c_str());
        const std::string& name = names[r];
        sl->tts_values[0] = Int32GetDatum(first_id + static_cast<int32_t>(r));
        sl->tts_values[1] = PointerGetDatum(cstring_to_text_with_len(name.data(), static_cast<int>(name.size())));
        sl->tts_isnull[0] = sl->tts_isnull[1] = false;
      },
      rebuild_indexes);
  return n;
}

// The writer's state: the relation kept open while raw pages go in (a
// table that takes them: new and empty), else each range through
// multi_insert.  Memory in a context of its own, freed by finish() or with
// its parent on an error.
struct ClauseChunkWriter::State {
  Oid relid = InvalidOid;
  Relation rel = nullptr;
  RawRows* raw = nullptr;  // palloc'd in cx (no C++ allocation under pg_call's PG_TRY)
  MemoryContext cx = nullptr;
  int32_t next_chunk = 0;
  std::vector<int32_t> offs;  // one chunk's offsets, from 0
};

namespace {

// Chunk k of `plan` as a row: its id, offsets from 0, literals, weight
// dictionary and codes (format/clause_chunks.hpp).  Only palloc and plain
// memory: runs under pg_call.
void fill_chunk(TupleTableSlot* sl, int32_t id, const chunks::Plan& plan, size_t k, const int64_t* offsets,
                const int32_t* lits, std::vector<int32_t>& offs) {
  if (sl->tts_tupleDescriptor->natts != 5) elog(ERROR, "the clause chunks' table has an unexpected shape");
  const size_t c0 = plan.start[k], c1 = plan.start[k + 1], first = plan.start[0];
  const size_t d0 = plan.dict_start[k], d1 = plan.dict_start[k + 1];
  const int64_t l0 = offsets[c0];
  for (size_t c = c0; c <= c1; ++c) offs[c - c0] = static_cast<int32_t>(offsets[c] - l0);
  bytea* code = static_cast<bytea*>(palloc(VARHDRSZ + (c1 - c0)));
  SET_VARSIZE(code, VARHDRSZ + (c1 - c0));
  memcpy(VARDATA(code), &plan.code[c0 - first], c1 - c0);
  Datum* v = sl->tts_values;
  v[0] = Int32GetDatum(id);
  v[1] = PointerGetDatum(int4_array(offs.data(), static_cast<int>(c1 - c0 + 1)));
  v[2] = PointerGetDatum(int4_array(&lits[l0], static_cast<int>(offsets[c1] - l0)));
  v[3] = PointerGetDatum(flat_array(&plan.dict[d0], static_cast<int>(d1 - d0), FLOAT8OID));
  v[4] = PointerGetDatum(code);
  for (int i = 0; i < 5; ++i) sl->tts_isnull[i] = false;
}

}  // namespace

ClauseChunkWriter::ClauseChunkWriter(const std::string& qualified_table) : st_(std::make_unique<State>()) {
  State& s = *st_;
  s.relid = relation_by_name(qualified_table, RowExclusiveLock);
  pg_call([&] {
    s.cx = AllocSetContextCreate(CurrentMemoryContext, "mln clause chunks", ALLOCSET_DEFAULT_SIZES);
    MemoryContext old = MemoryContextSwitchTo(s.cx);
    Relation rel = table_open(s.relid, RowExclusiveLock);
    if (RawHeapWriter::usable(rel)) {
      s.rel = rel;
      s.raw = new (palloc(sizeof(RawRows))) RawRows(rel);
      // Rows sized to a page stay inline: no TOAST rows (chunk_row_bytes).
      s.raw->writer().keep_rows_inline();
    } else {
      table_close(rel, RowExclusiveLock);
    }
    MemoryContextSwitchTo(old);
  });
}

// Nothing of PostgreSQL's: after an error the abort closes the relation and
// frees the memory contexts.
ClauseChunkWriter::~ClauseChunkWriter() = default;

void ClauseChunkWriter::add(const int64_t* offsets, const int32_t* lits, const double* weights, size_t first,
                            size_t last) {
  // Chunk boundaries and weight codes: each chunk as many clauses as fit a
  // page-long row (a longer clause alone in its row, which the toaster
  // takes), its weights a dictionary and a byte per clause.
  const chunks::Plan plan = chunks::plan(offsets, weights, first, last, MaxHeapTupleSize, chunk_row_bytes);
  State& s = *st_;
  s.offs.resize(std::max(s.offs.size(), plan.most + 1));  // sized here: fill_chunk runs under pg_call
  const int32_t id0 = s.next_chunk;
  auto fill = [&](TupleTableSlot* sl, size_t k) {
    fill_chunk(sl, id0 + static_cast<int32_t>(k), plan, k, offsets, lits, s.offs);
  };
  if (s.raw) pg_call([&] { s.raw->add(plan.chunks(), fill); });
  else multi_insert(s.relid, plan.chunks(), fill);
  s.next_chunk += static_cast<int32_t>(plan.chunks());
}

uint64_t ClauseChunkWriter::finish() {
  State& s = *st_;
  pg_call([&] {
    if (s.raw) {
      s.raw->finish();
      table_close(s.rel, RowExclusiveLock);
      CommandCounterIncrement();
    }
    MemoryContextDelete(s.cx);
  });
  const uint64_t n = static_cast<uint64_t>(s.next_chunk);
  st_ = std::make_unique<State>();
  return n;
}

uint64_t append_atoms(const std::string& qualified_table, size_t rows, const std::function<AtomRow(size_t)>& row) {
  Oid relid = relation_by_name(qualified_table, RowExclusiveLock);
  multi_insert(relid, rows, [&](TupleTableSlot* sl, size_t r) {
    if (sl->tts_tupleDescriptor->natts != 6) elog(ERROR, "%s has an unexpected shape", qualified_table.c_str());
    const AtomRow a = row(r);
    Datum* v = sl->tts_values;
    bool* null = sl->tts_isnull;
    v[0] = Int32GetDatum(a.id);
    v[1] = Int32GetDatum(a.pred);
    v[2] = PointerGetDatum(int4_array(a.args, a.nargs));
    v[3] = BoolGetDatum(a.evidence == 1);
    v[4] = std::isnan(a.prior) ? (Datum)0 : Float8GetDatum(a.prior);
    v[5] = BoolGetDatum(a.is_query);
    null[0] = null[1] = null[2] = null[5] = false;
    null[3] = a.evidence < 0;
    null[4] = std::isnan(a.prior);
  });
  return rows;
}

}  // namespace mln::pg
