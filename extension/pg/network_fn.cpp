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
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

PG_FUNCTION_INFO_V1(mln_array_le);
}

#include <cstring>
#include <utility>

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
