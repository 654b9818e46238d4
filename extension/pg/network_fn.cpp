// The ground network's chunked clause rows, for the worker and for people.
//
// mln._array_le(anyarray) returns bytea: the elements of an int4[] or
// float8[] without NULLs as raw little-endian bytes.  The worker reads the
// ground network's chunk arrays through it (solver/worker/network_io.cpp):
// a binary COPY of the arrays themselves sends every element through its
// type's send function (4.4 of the 7 s it took to read the 17.8M clauses of
// RC at 10^5 papers); this is one memcpy per chunk.  Plain C: no C++ object
// lives in this frame, so ereport is safe here.
extern "C" {
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

PG_FUNCTION_INFO_V1(mln_array_le);
PG_FUNCTION_INFO_V1(mln_clause_rows);
}

#include <algorithm>
#include <cstring>
#include <utility>

#include "format/clause_chunks.hpp"

extern "C" Datum mln_array_le(PG_FUNCTION_ARGS) {
  ArrayType* a = PG_GETARG_ARRAYTYPE_P(0);
  const Oid et = ARR_ELEMTYPE(a);
  if (et != INT4OID && et != FLOAT8OID)
    ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
                    errmsg("mln._array_le takes int4[] or float8[], not %s[]", format_type_be(et))));
  if (ARR_HASNULL(a) && array_contains_nulls(a))
    ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("mln._array_le: the array contains NULLs")));
  const int n = ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a));
  const size_t width = et == INT4OID ? 4 : 8;  // no padding between elements of either type
  const size_t bytes = static_cast<size_t>(n) * width;
  bytea* out = static_cast<bytea*>(palloc(VARHDRSZ + bytes));
  SET_VARSIZE(out, VARHDRSZ + bytes);
  char* d = VARDATA(out);
  if (bytes > 0) std::memcpy(d, ARR_DATA_PTR(a), bytes);
#ifdef WORDS_BIGENDIAN
  for (size_t i = 0; i < bytes; i += width)
    for (size_t l = 0, r = width - 1; l < r; ++l, --r) std::swap(d[i + l], d[i + r]);
#endif
  PG_RETURN_BYTEA_P(out);
}

// Whether sch._clauses has the weight codes' column (grounded since
// 0.12.0; before, a weight per clause).
static bool clauses_have_codes(const char* sch) {
  Oid type = TEXTOID;
  Datum arg = CStringGetTextDatum(psprintf("%s._clauses", quote_identifier(sch)));
  if (SPI_execute_with_args(mln::chunks::kHasCodesSql, 1, &type, &arg, nullptr, true, 1) != SPI_OK_SELECT ||
      SPI_processed != 1)
    elog(ERROR, "mln._clause_rows: reading the catalog failed");
  bool isnull = false;
  const Datum d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
  return !isnull && DatumGetBool(d);
}

// mln._clause_rows(sch name) returns table (clause bigint, weight float8,
// lits int4[]): one row per ground clause of the chunked _clauses table, for
// mln.ground_clauses.  Each chunk's arrays are detoasted once and the rows
// go into a tuplestore: a per-row slice in SQL would detoast the whole
// chunk for every clause.  Plain C, like mln._array_le.
extern "C" Datum mln_clause_rows(PG_FUNCTION_ARGS) {
  const char* sch = NameStr(*PG_GETARG_NAME(0));
  InitMaterializedSRF(fcinfo, 0);
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "mln._clause_rows: SPI_connect failed");
  StringInfoData q;
  initStringInfo(&q);
  // wcode: a table grounded since 0.12.0 (format/clause_chunks.hpp); before, a weight per clause.
  appendStringInfo(&q,
                   "SELECT chunk, offsets, lits, weights, %s FROM %s._clauses ORDER BY chunk",
                   clauses_have_codes(sch) ? "wcode" : "NULL::bytea", quote_identifier(sch));
  Portal cur = SPI_cursor_open_with_args(nullptr, q.data, 0, nullptr, nullptr, nullptr, true, 0);
  MemoryContext rows = AllocSetContextCreate(CurrentMemoryContext, "mln clause rows", ALLOCSET_DEFAULT_SIZES);
  MemoryContext chunk = AllocSetContextCreate(CurrentMemoryContext, "mln clause chunk", ALLOCSET_DEFAULT_SIZES);
  for (;;) {
    SPI_cursor_fetch(cur, true, 1);
    if (SPI_processed == 0) break;
    HeapTuple tup = SPI_tuptable->vals[0];
    TupleDesc td = SPI_tuptable->tupdesc;
    bool isnull[5];
    Datum d[5];
    for (int i = 0; i < 5; ++i) d[i] = SPI_getbinval(tup, td, i + 1, &isnull[i]);
    if (isnull[0] || isnull[1] || isnull[2] || isnull[3]) elog(ERROR, "mln._clause_rows: a clause chunk with NULLs");
    MemoryContext before = MemoryContextSwitchTo(chunk);  // the detoasted arrays: freed after the chunk
    ArrayType* offs = DatumGetArrayTypeP(d[1]);
    ArrayType* lits = DatumGetArrayTypeP(d[2]);
    ArrayType* ws = DatumGetArrayTypeP(d[3]);
    bytea* code = isnull[4] ? nullptr : DatumGetByteaPP(d[4]);
    MemoryContextSwitchTo(before);
    const int nd = ArrayGetNItems(ARR_NDIM(ws), ARR_DIMS(ws));
    const int nw = code ? static_cast<int>(VARSIZE_ANY_EXHDR(code)) : nd;  // clauses in the chunk
    const int nl = ArrayGetNItems(ARR_NDIM(lits), ARR_DIMS(lits));
    if (ARR_HASNULL(offs) || ARR_HASNULL(lits) || ARR_HASNULL(ws) ||
        ArrayGetNItems(ARR_NDIM(offs), ARR_DIMS(offs)) != nw + 1)
      elog(ERROR, "mln._clause_rows: chunk %d is malformed", DatumGetInt32(d[0]));
    const int32* o = reinterpret_cast<const int32*>(ARR_DATA_PTR(offs));
    const int32* l = reinterpret_cast<const int32*>(ARR_DATA_PTR(lits));
    const float8* dict = reinterpret_cast<const float8*>(ARR_DATA_PTR(ws));
    const float8* w = dict;  // a weight per clause, or decoded from the codes
    if (code) {
      float8* decoded = static_cast<float8*>(MemoryContextAlloc(chunk, sizeof(float8) * std::max(1, nw)));
      if (!mln::chunks::decode_weights(dict, nd, reinterpret_cast<const uint8_t*>(VARDATA_ANY(code)), nw, decoded))
        elog(ERROR, "mln._clause_rows: chunk %d is malformed", DatumGetInt32(d[0]));
      w = decoded;
    }
    for (int i = 0; i < nw; ++i) {
      if (o[i] < 0 || o[i] > o[i + 1] || o[i + 1] > nl) elog(ERROR, "mln._clause_rows: chunk %d is malformed", DatumGetInt32(d[0]));
      MemoryContext old = MemoryContextSwitchTo(rows);
      Datum* el = static_cast<Datum*>(palloc(sizeof(Datum) * (o[i + 1] - o[i] + 1)));
      for (int k = o[i]; k < o[i + 1]; ++k) el[k - o[i]] = Int32GetDatum(l[k]);
      Datum v[3] = {Int64GetDatum(static_cast<int64>(DatumGetInt32(d[0])) * 65536 + i + 1), Float8GetDatum(w[i]),
                    PointerGetDatum(construct_array(el, o[i + 1] - o[i], INT4OID, 4, true, TYPALIGN_INT))};
      bool n[3] = {false, false, false};
      MemoryContextSwitchTo(old);
      tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, n);
      MemoryContextReset(rows);
    }
    SPI_freetuptable(SPI_tuptable);
    MemoryContextReset(chunk);
    CHECK_FOR_INTERRUPTS();
  }
  SPI_cursor_close(cur);
  MemoryContextDelete(chunk);
  MemoryContextDelete(rows);
  SPI_finish();
  return (Datum)0;
}
