// SPI wrappers (see spi.hpp).
#include "pg/spi.hpp"

#include <algorithm>
#include <cstring>
#include <exception>

extern "C" {
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
}

namespace mln::pg {

namespace {

// A flat one-dimensional array without nulls of a fixed-width element type.
Datum flat_array(Oid elem, int elen, const void* data, size_t n) {
  size_t nbytes = ARR_OVERHEAD_NONULLS(1) + static_cast<size_t>(elen) * n;
  if (nbytes >= MaxAllocSize)
    throw UserError{ERRCODE_PROGRAM_LIMIT_EXCEEDED, "array of " + std::to_string(n) + " values is too large",
                    "", ""};
  ArrayType* a = static_cast<ArrayType*>(pg_call([&] { return palloc0(nbytes); }));
  SET_VARSIZE(a, nbytes);
  a->ndim = 1;
  a->dataoffset = 0;
  a->elemtype = elem;
  ARR_DIMS(a)[0] = static_cast<int>(n);
  ARR_LBOUND(a)[0] = 1;
  if (n) std::memcpy(ARR_DATA_PTR(a), data, static_cast<size_t>(elen) * n);
  return PointerGetDatum(a);
}

}  // namespace

Param text_param(const std::string& s) {
  return {TEXTOID, pg_call([&] { return PointerGetDatum(cstring_to_text_with_len(s.data(), s.size())); })};
}
Param int4_param(int32_t v) { return {INT4OID, Int32GetDatum(v)}; }
Param int8_param(int64_t v) { return {INT8OID, Int64GetDatum(v)}; }
Param float8_param(double v) { return {FLOAT8OID, Float8GetDatum(v)}; }
Param bool_param(bool v) { return {BOOLOID, BoolGetDatum(v)}; }
Param jsonb_param(const std::string& json) {
  return {JSONBOID, pg_call([&] { return DirectFunctionCall1(jsonb_in, CStringGetDatum(json.c_str())); })};
}
Param int4_array_param(const int32_t* v, size_t n) { return {INT4ARRAYOID, flat_array(INT4OID, 4, v, n)}; }
Param int4_array_param(const std::vector<int32_t>& v) { return int4_array_param(v.data(), v.size()); }
Param float8_array_param(const std::vector<double>& v) {
  return {FLOAT8ARRAYOID, flat_array(FLOAT8OID, 8, v.data(), v.size())};
}
Param bool_array_param(const std::vector<uint8_t>& v) {
  static_assert(sizeof(bool) == 1, "bool must be one byte");
  return {BOOLARRAYOID, flat_array(BOOLOID, 1, v.data(), v.size())};
}
Param text_array_param(const std::vector<std::string>& v) {
  Datum d = pg_call([&] {
    Datum* elems = static_cast<Datum*>(palloc(sizeof(Datum) * (v.empty() ? 1 : v.size())));
    for (size_t i = 0; i < v.size(); ++i)
      elems[i] = PointerGetDatum(cstring_to_text_with_len(v[i].data(), v[i].size()));
    return PointerGetDatum(construct_array(elems, static_cast<int>(v.size()), TEXTOID, -1, false, TYPALIGN_INT));
  });
  return {TEXTARRAYOID, d};
}

Spi::Spi() {
  pg_call([] {
    if (SPI_connect() != SPI_OK_CONNECT) elog(ERROR, "SPI_connect failed");
  });
  connected_ = true;
}

Spi::~Spi() {
  // On an error path the transaction's abort cleans SPI up; calling into
  // PostgreSQL while an exception unwinds could raise again.
  if (connected_ && std::uncaught_exceptions() == 0) SPI_finish();
}

namespace {
// Runs a statement with parameters; returns SPI's result code.
int run(const std::string& sql, const std::vector<Param>& params, bool read_only) {
  return pg_call([&] {
    std::vector<Oid> types(params.size());
    std::vector<Datum> values(params.size());
    std::vector<char> nulls(params.size() + 1, ' ');
    for (size_t i = 0; i < params.size(); ++i) {
      types[i] = params[i].type;
      values[i] = params[i].value;
      nulls[i] = params[i].isnull ? 'n' : ' ';
    }
    int rc = SPI_execute_with_args(sql.c_str(), static_cast<int>(params.size()), types.data(), values.data(),
                                   nulls.data(), read_only, 0);
    if (rc < 0) elog(ERROR, "SPI_execute failed (%d): %s", rc, sql.c_str());
    return rc;
  });
}
}  // namespace

uint64_t Spi::exec(const std::string& sql, const std::vector<Param>& params) {
  run(sql, params, false);
  return SPI_processed;
}

Rows Spi::query(const std::string& sql, const std::vector<Param>& params) {
  run(sql, params, false);
  Rows r;
  r.tt_ = SPI_tuptable;
  r.n_ = SPI_processed;
  return r;
}

bool Rows::isnull(size_t row, int col) const {
  bool isnull;
  SPI_getbinval(tt_->vals[row], tt_->tupdesc, col + 1, &isnull);
  return isnull;
}

int32_t Rows::int4(size_t row, int col) const {
  bool isnull;
  Datum d = SPI_getbinval(tt_->vals[row], tt_->tupdesc, col + 1, &isnull);
  return isnull ? 0 : DatumGetInt32(d);
}
int64_t Rows::int8(size_t row, int col) const {
  bool isnull;
  Datum d = SPI_getbinval(tt_->vals[row], tt_->tupdesc, col + 1, &isnull);
  return isnull ? 0 : DatumGetInt64(d);
}
double Rows::float8(size_t row, int col) const {
  bool isnull;
  Datum d = SPI_getbinval(tt_->vals[row], tt_->tupdesc, col + 1, &isnull);
  return isnull ? 0.0 : DatumGetFloat8(d);
}
bool Rows::boolean(size_t row, int col) const {
  bool isnull;
  Datum d = SPI_getbinval(tt_->vals[row], tt_->tupdesc, col + 1, &isnull);
  return isnull ? false : DatumGetBool(d);
}
std::string Rows::text(size_t row, int col) const {
  return pg_call([&] {
    char* s = SPI_getvalue(tt_->vals[row], tt_->tupdesc, col + 1);
    return s ? std::string(s) : std::string();
  });
}
std::vector<std::string> Rows::text_array(size_t row, int col) const {
  std::vector<std::string> out;
  pg_call([&] {
    bool isnull;
    Datum d = SPI_getbinval(tt_->vals[row], tt_->tupdesc, col + 1, &isnull);
    if (isnull) return;
    ArrayType* a = DatumGetArrayTypeP(d);
    Datum* elems;
    bool* nulls;
    int n;
    deconstruct_array(a, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
    for (int i = 0; i < n; ++i) out.push_back(nulls[i] ? std::string() : std::string(text_to_cstring(reinterpret_cast<::text*>(DatumGetPointer(elems[i])))));
  });
  return out;
}
// An array column's elements (T: int4 or float8, `oid` its type).
template <class T>
static std::vector<T> array_of(SPITupleTable* tt, size_t row, int col, Oid oid, const char* what) {
  std::vector<T> out;
  pg_call([&] {
    bool isnull;
    Datum d = SPI_getbinval(tt->vals[row], tt->tupdesc, col + 1, &isnull);
    if (isnull) return;
    ArrayType* a = DatumGetArrayTypeP(d);
    if (ARR_HASNULL(a) || ARR_ELEMTYPE(a) != oid) elog(ERROR, "expected %s without nulls", what);
    int n = ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a));
    const T* p = reinterpret_cast<const T*>(ARR_DATA_PTR(a));
    out.assign(p, p + n);
  });
  return out;
}

std::vector<int32_t> Rows::int4_array(size_t row, int col) const {
  return array_of<int32_t>(tt_, row, col, INT4OID, "an int4[]");
}

std::vector<double> Rows::float8_array(size_t row, int col) const {
  return array_of<double>(tt_, row, col, FLOAT8OID, "a float8[]");
}

std::string Rows::bytes(size_t row, int col) const {
  std::string out;
  pg_call([&] {
    bool isnull;
    Datum d = SPI_getbinval(tt_->vals[row], tt_->tupdesc, col + 1, &isnull);
    if (isnull) return;
    bytea* b = DatumGetByteaPP(d);
    out.assign(VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b));
  });
  return out;
}

void store_job_bytes(Spi& spi, const char* table, int64_t job, const std::string& bytes) {
  constexpr size_t kPiece = size_t(64) << 20;
  const std::string sql = std::string("INSERT INTO ") + table + "(job, piece, data) VALUES ($1, $2, $3)";
  for (size_t at = 0, piece = 0; at < bytes.size() || piece == 0; at += kPiece, ++piece) {
    const size_t n = std::min(kPiece, bytes.size() - at);
    bytea* b = pg_call([&] {
      bytea* v = static_cast<bytea*>(palloc(VARHDRSZ + n));
      SET_VARSIZE(v, VARHDRSZ + n);
      return v;
    });
    std::copy_n(bytes.data() + at, n, VARDATA(b));
    spi.exec(sql, {int8_param(job), int4_param(static_cast<int32_t>(piece)), {BYTEAOID, PointerGetDatum(b)}});
    pg_call([&] { pfree(b); });
  }
}

std::string qi(const std::string& ident) {
  return pg_call([&] { return std::string(quote_identifier(ident.c_str())); });
}
std::string qualified(const std::string& schema, const std::string& name) { return qi(schema) + "." + qi(name); }

}  // namespace mln::pg
