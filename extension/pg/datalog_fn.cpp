// mln.datalog(program, target_schema, options) and mln.datalog_query(program,
// relation, options) (docs/datalog.md).  mln.datalog writes every derived
// relation as a table of target_schema, replacing a table of that name in
// the caller's transaction (DROP TABLE, then CREATE TABLE: a failure rolls
// both back, and a table that views depend on or that the caller does not
// own is PostgreSQL's error, never dropped); mln.datalog_query returns one
// relation's rows under the caller's column definition list.
#include "pg/guard.hpp"
#include "pg/args.hpp"
#include "pg/datalog_run.hpp"
#include "pg/heap_io.hpp"
#include "pg/spi.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

extern "C" {
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"
PG_FUNCTION_INFO_V1(mln_datalog);
PG_FUNCTION_INFO_V1(mln_datalog_query);
}

namespace mln::pg {
namespace {

namespace dl = lang::datalog;

// Refuses a schema that does not exist or that the caller may not create in
// (before any work: the error names the schema, not a table).
void check_target_schema(Spi& spi, const std::string& schema) {
  Rows r = spi.query("SELECT has_schema_privilege(oid, 'CREATE') FROM pg_namespace WHERE nspname = $1",
                     {text_param(schema)});
  if (r.size() == 0)
    throw UserError{ERRCODE_INVALID_SCHEMA_NAME, "schema \"" + schema + "\" does not exist", "", ""};
  if (!r.boolean(0, 0))
    throw UserError{ERRCODE_INSUFFICIENT_PRIVILEGE, "permission denied to create tables in schema \"" + schema + "\"",
                    "", "mln.datalog writes the derived relations there: use a schema you own or may create in"};
}

// One derived relation as the table schema.rel.  Integer-only relations go
// through write_table (raw pages); with text, CREATE TABLE and INSERT from
// unnest() of one array per column, 65,536 rows at a time.
uint64_t write_relation(Spi& spi, const std::string& schema, const dl::Relation& rel, const gpu::HostTable& t,
                        const dl::Symbols& syms) {
  const std::string target = qualified(schema, rel.name);
  lock_target_name(spi, target);
  // DROP TABLE (not IF EXISTS, whose NOTICE every first call would print):
  // a view or another kind of relation of that name is PostgreSQL's error.
  if (spi.query("SELECT to_regclass($1) IS NOT NULL", {text_param(target)}).boolean(0, 0))
    spi.exec("DROP TABLE " + target);
  bool all_int = true;
  for (dl::ColType ty : rel.types) all_int = all_int && ty == dl::ColType::Int;
  if (all_int) {
    RowSource src;
    src.rows = t.rows();
    src.ncols = t.ncols();
    src.fill = [&t](size_t row0, size_t n, int32_t* const* dst) {
      for (int c = 0; c < t.ncols(); ++c) std::copy_n(t.cols[c].begin() + static_cast<long>(row0), n, dst[c]);
    };
    return write_table(target, rel.cols, src);
  }
  std::string create = "CREATE TABLE " + target + " (";
  for (int c = 0; c < rel.arity; ++c)
    create += (c ? ", " : "") + qi(rel.cols[c]) + (rel.types[c] == dl::ColType::Text ? " text" : " integer") +
              " NOT NULL";
  spi.exec(create + ")");
  write_rows(spi, target, rel, t, syms, true);
  return t.rows();
}

// Whether the caller's column definition list fits the relation: as many
// columns, text for text, integer or bigint for integers.
void check_columns(const dl::Relation& rel, TupleDesc desc) {
  std::string want;
  for (int c = 0; c < rel.arity; ++c)
    want += std::string(c ? ", " : "") + rel.cols[c] + (rel.types[c] == dl::ColType::Text ? " text" : " int");
  const std::string hint = "SELECT * FROM mln.datalog_query(program, '" + rel.name + "') AS t(" + want + ")";
  if (desc->natts != rel.arity)
    throw UserError{ERRCODE_DATATYPE_MISMATCH, "relation \"" + rel.name + "\" has " + std::to_string(rel.arity) +
                        " column(s), the column definition list " + std::to_string(desc->natts), "", hint};
  for (int c = 0; c < rel.arity; ++c) {
    const Oid t = TupleDescAttr(desc, c)->atttypid;
    const bool ok = rel.types[c] == dl::ColType::Text ? t == TEXTOID : (t == INT4OID || t == INT8OID);
    if (!ok)
      throw UserError{ERRCODE_DATATYPE_MISMATCH, "column " + std::to_string(c + 1) + " of relation \"" + rel.name +
                          "\" is " + dl::type_name(rel.types[c]) + ", not the type of the column definition list",
                      "", hint};
  }
}

// Registers a maintained program (docs/datalog.md, "Maintained outputs"):
// its row in mln.datalog_maintained and the triggers on its input tables
// (mln._datalog_maintain checks that each is a table the caller may put
// triggers on), in the caller's transaction, after its tables are written.
void maintain_outputs(Spi& spi, const std::string& schema, const std::string& text, Datum options,
                      const dl::Program& p) {
  std::vector<int32_t> oids;
  for (const dl::Relation& rel : p.rels)
    if (rel.input)
      oids.push_back(static_cast<int32_t>(
          spi.query("SELECT to_regclass($1)::oid::int4", {text_param(source_name(rel))}).int4(0, 0)));
  spi.query("SELECT mln._datalog_maintain($1, $2, $3, $4::int4[]::oid[])",
            {text_param(schema), text_param(text), Param{JSONBOID, options, false}, int4_array_param(oids)});
}

std::vector<std::pair<std::string, uint64_t>> written;  // mln.datalog's result rows
std::unique_ptr<DatalogResult> result;                  // mln.datalog_query's result, until it is returned

}  // namespace
}  // namespace mln::pg

using namespace mln::pg;

// mln.datalog(program text, target_schema name, options jsonb default '{}')
//   returns table(relation text, rows bigint)
Datum mln_datalog(PG_FUNCTION_ARGS) {
  written.clear();
  MLN_GUARDED({
    if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
      throw UserError{ERRCODE_NULL_VALUE_NOT_ALLOWED, "mln.datalog: program and target_schema must not be null", "", ""};
    const std::string text = text_arg(fcinfo, 0);
    const std::string schema = NameStr(*PG_GETARG_NAME(1));
    Spi spi;
    const DatalogOptions opts = datalog_options(spi, PG_ARGISNULL(2) ? 0 : PG_GETARG_DATUM(2), PG_ARGISNULL(2));
    check_target_schema(spi, schema);
    auto res = std::make_unique<DatalogResult>();
    run_datalog(spi, dl::parse(text), opts, *res);
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t r = 0; r < res->prog.rels.size(); ++r) {
      const auto& rel = res->prog.rels[r];
      if (rel.derived) written.emplace_back(rel.name, write_relation(spi, schema, rel, res->rows[r], res->syms));
    }
    const double write_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    pg_call([&] { elog(opts.verbose ? NOTICE : DEBUG1, "pg_mln: datalog results written in %.3f s", write_s); });
    if (opts.maintain) maintain_outputs(spi, schema, text, PG_GETARG_DATUM(2), res->prog);
  });
  InitMaterializedSRF(fcinfo, 0);
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  for (const auto& [name, rows] : written) {
    Datum values[2] = {CStringGetTextDatum(name.c_str()), Int64GetDatum(static_cast<int64>(rows))};
    bool nulls[2] = {false, false};
    tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
  }
  written.clear();
  return (Datum)0;
}

// mln.datalog_query(program text, relation text, options jsonb default '{}')
//   returns setof record (the caller lists the columns: AS t(a int, b text))
Datum mln_datalog_query(PG_FUNCTION_ARGS) {
  int rel = -1;
  MLN_GUARDED({
    result.reset();
    if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
      throw UserError{ERRCODE_NULL_VALUE_NOT_ALLOWED, "mln.datalog_query: program and relation must not be null", "", ""};
    const std::string text = text_arg(fcinfo, 0), name = text_arg(fcinfo, 1);
    ReturnSetInfo* rsi = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
    if (!rsi || !rsi->expectedDesc)
      throw UserError{ERRCODE_FEATURE_NOT_SUPPORTED, "mln.datalog_query must be called in FROM with a column definition list", "", ""};
    Spi spi;
    const DatalogOptions opts = datalog_options(spi, PG_ARGISNULL(2) ? 0 : PG_GETARG_DATUM(2), PG_ARGISNULL(2));
    if (opts.maintain)
      throw UserError{ERRCODE_INVALID_PARAMETER_VALUE, "option \"maintain\" applies to mln.datalog, not to mln.datalog_query",
                      "", "mln.datalog(program, target_schema, '{\"maintain\": true}') keeps tables current"};
    result = std::make_unique<DatalogResult>();
    run_datalog(spi, dl::parse(text), opts, *result);
    rel = result->prog.find(name);
    if (rel < 0 || !result->prog.rels[rel].derived)
      throw UserError{ERRCODE_UNDEFINED_OBJECT, "the program derives no relation \"" + name + "\"", "",
                      "mln.datalog_query returns a relation that a rule or a fact of the program defines"};
    check_columns(result->prog.rels[rel], rsi->expectedDesc);
  });
  InitMaterializedSRF(fcinfo, 0);
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  const auto& r = result->prog.rels[rel];
  const mln::gpu::HostTable& t = result->rows[rel];
  // From here PostgreSQL may raise: nothing below owns C++ resources (a
  // failure leaves `result` to the next call, which resets it).
  Datum* values = static_cast<Datum*>(palloc(sizeof(Datum) * r.arity));
  bool* nulls = static_cast<bool*>(palloc0(sizeof(bool) * r.arity));
  for (size_t i = 0; i < t.rows(); ++i) {
    for (int c = 0; c < r.arity; ++c) {
      const int32_t v = t.cols[c][i];
      const Oid ty = TupleDescAttr(rsinfo->setDesc, c)->atttypid;
      values[c] = r.types[c] == mln::lang::datalog::ColType::Text ? CStringGetTextDatum(result->syms.text(v).c_str())
                  : ty == INT8OID                                  ? Int64GetDatum(v)
                                                                   : Int32GetDatum(v);
    }
    tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    for (int c = 0; c < r.arity; ++c)
      if (r.types[c] == mln::lang::datalog::ColType::Text) pfree(DatumGetPointer(values[c]));
  }
  result.reset();
  return (Datum)0;
}
