// A Datalog program over the caller's relations (docs/datalog.md).  Input
// relations are read with SPI as the calling role, so its privileges
// (tables, views, row-level security) apply; integer columns are cast to
// int4 (a value beyond it is SQL's "integer out of range"), text columns go
// through the symbol dictionary; rows with a NULL in a read column are left
// out (Datalog has no NULL).  Integer tables the heap read can serve with
// the same rows are read by it instead (scan_input).
#include "pg/datalog_run.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "ground/datalog_eval.hpp"
#include "pg/engine.hpp"
#include "pg/heap_io.hpp"
#include "pg/json_options.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "utils/errcodes.h"
}

namespace mln::pg {

namespace dl = lang::datalog;
namespace ev = ground::datalog;

DatalogOptions datalog_options(Spi& spi, Datum options, bool isnull) {
  const JsonOptions opts(spi, options, isnull, "mln.datalog", kDatalogOptions);
  opts.reject_unknown();
  DatalogOptions o;
  o.device = opts.choice(options::Id::kDevice);
  o.max_rows = static_cast<uint64_t>(opts.whole(options::Id::kMaxRows));
  o.verbose = opts.boolean(options::Id::kVerbose);
  o.maintain = opts.boolean(options::Id::kMaintain);
  return o;
}

// The SQL name of an input relation's table, quoted.
std::string source_name(const dl::Relation& rel) {
  const std::string table = rel.source.table.empty() ? rel.name : rel.source.table;
  return rel.source.schema.empty() ? qi(table) : qualified(rel.source.schema, table);
}

void resolve_input(Spi& spi, dl::Relation& rel) {
  const std::string name = source_name(rel);
  const std::string where = " (line " + std::to_string(rel.first.line) + ", column " + std::to_string(rel.first.col) + ")";
  Rows oid = spi.query("SELECT to_regclass($1)::oid", {text_param(name)});
  if (oid.isnull(0, 0))
    throw UserError{ERRCODE_UNDEFINED_TABLE, "relation " + name + " does not exist (read for Datalog relation \"" +
                        rel.name + "\", line " + std::to_string(rel.first.line) + ", column " +
                        std::to_string(rel.first.col) + ")",
                    "", "no rule derives \"" + rel.name + "\", so it is read from a table or view: create it, or "
                        "declare where it comes from with .input " + rel.name + "(col int, ...) from schema.table(column, ...)"};
  Rows cols = spi.query(
      "SELECT a.attname::text, t.typname::text FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
      "WHERE a.attrelid = $1::oid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
      {int8_param(oid.int8(0, 0))});
  std::vector<std::string> names, types;
  for (size_t i = 0; i < cols.size(); ++i) names.push_back(cols.text(i, 0)), types.push_back(cols.text(i, 1));
  std::vector<std::string> read = rel.source.columns.empty() ? names : rel.source.columns;
  if (rel.arity < 0) {
    rel.arity = static_cast<int>(read.size());
    rel.types.assign(read.size(), dl::ColType::Unknown);
    for (size_t c = 0; c < read.size(); ++c) rel.cols.push_back("c" + std::to_string(c + 1));
  }
  if (static_cast<int>(read.size()) != rel.arity)
    throw UserError{ERRCODE_DATATYPE_MISMATCH, "Datalog relation \"" + rel.name + "\"" + where + " has " +
                        std::to_string(rel.arity) + " column(s) but " + name + " has " + std::to_string(read.size()),
                    "", "name the columns to read: .input " + rel.name + " from table(column, ...)"};
  rel.source.columns = read;
  for (size_t c = 0; c < read.size(); ++c) {
    if (rel.types[c] != dl::ColType::Unknown) continue;  // declared: read with a cast
    auto it = std::find(names.begin(), names.end(), read[c]);
    if (it == names.end()) continue;  // SELECT reports the missing column
    const std::string& t = types[static_cast<size_t>(it - names.begin())];
    if (t == "int2" || t == "int4" || t == "int8")
      rel.types[c] = dl::ColType::Int;
    else if (t == "text" || t == "varchar" || t == "bpchar" || t == "name")
      rel.types[c] = dl::ColType::Text;
    else
      throw UserError{ERRCODE_DATATYPE_MISMATCH, "column \"" + read[c] + "\" of " + name + " has type " + t +
                          ": Datalog columns are integers or text",
                      "declare the column's type to read it with a cast: .input " + rel.name + "(a int, ...)", ""};
  }
}

// The heap read (scan_columns: pages straight into columns, no executor)
// serves an input when it gives exactly what the SQL read would: every
// column an int2/int4 column read as it is (no cast), a table or
// materialized view the caller may SELECT as a whole, no row-level security
// in force for the caller, and no NULL in the columns read (SPI leaves such
// rows out; the scan stops at the first and the SQL read takes over).
// Returns false, having read nothing, when it does not qualify.
bool scan_input(Spi& spi, const dl::Relation& rel, gpu::HostTable& t) {
  for (dl::ColType ty : rel.types)
    if (ty != dl::ColType::Int) return false;
  Rows r = spi.query(
      "SELECT c.oid::int8, c.relkind IN ('r', 'm') AND c.relam = (SELECT oid FROM pg_am WHERE amname = 'heap') "
      "  AND has_table_privilege(c.oid, 'SELECT') AND row_security_active(c.oid) IS FALSE "
      "  AND (SELECT bool_and(a.atttypid IN ('int2'::regtype, 'int4'::regtype)) FROM pg_attribute a "
      "       WHERE a.attrelid = c.oid AND a.attname = ANY($2::text[]) AND NOT a.attisdropped) "
      "FROM pg_class c WHERE c.oid = to_regclass($1)",
      {text_param(source_name(rel)), text_array_param(rel.source.columns)});
  if (r.size() == 0 || r.isnull(0, 1) || r.text(0, 1) != "t") return false;
  const Oid relid = static_cast<Oid>(r.int8(0, 0));
  bool has_null = false;
  gpu::HostTable scanned = scan_columns_or_null(relid, rel.source.columns, has_null);
  if (has_null) return false;
  t = std::move(scanned);
  return true;
}

gpu::HostTable read_input(Spi& spi, const dl::Relation& rel, dl::Symbols& syms) {
  gpu::HostTable fast;
  if (scan_input(spi, rel, fast)) return fast;
  return read_rows(spi, rel, source_name(rel), syms);
}

gpu::HostTable read_rows(Spi& spi, const dl::Relation& rel, const std::string& from, dl::Symbols& syms) {
  std::string sql = "SELECT ", where;
  for (int c = 0; c < rel.arity; ++c) {
    const std::string col = qi(rel.source.columns[c]);
    sql += (c ? ", " : "") + col + (rel.types[c] == dl::ColType::Int ? "::int4" : "::text");
    where += (c ? " AND " : " WHERE ") + col + " IS NOT NULL";
  }
  Rows r = spi.query(sql + " FROM " + from + where);
  gpu::HostTable t;
  t.cols.assign(rel.arity, std::vector<int32_t>(r.size()));
  for (int c = 0; c < rel.arity; ++c)
    for (size_t i = 0; i < r.size(); ++i) {
      if (i % 65536 == 0) check_interrupts();
      t.cols[c][i] = rel.types[c] == dl::ColType::Int ? r.int4(i, c) : syms.intern(r.text(i, c));
    }
  return t;
}

void write_rows(Spi& spi, const std::string& table, const dl::Relation& rel, const gpu::HostTable& t,
                const dl::Symbols& syms, bool insert) {
  std::string cols, unnest, alias, match;
  for (int c = 0; c < rel.arity; ++c) {
    const std::string col = qi(rel.cols[c]), d = "c" + std::to_string(c);
    cols += (c ? ", " : "") + col;
    unnest += (c ? ", $" : "$") + std::to_string(c + 1) + (rel.types[c] == dl::ColType::Text ? "::text[]" : "::int4[]");
    alias += (c ? ", " : "") + d;
    match += (c ? " AND t." : "t.") + col + " = d." + d;
  }
  const std::string sql =
      insert ? "INSERT INTO " + table + " (" + cols + ") SELECT * FROM unnest(" + unnest + ")"
             : "DELETE FROM " + table + " t USING unnest(" + unnest + ") AS d(" + alias + ") WHERE " + match;
  const size_t chunk = 65536;
  for (size_t row0 = 0; row0 < t.rows(); row0 += chunk) {
    check_interrupts();
    const size_t n = std::min(chunk, t.rows() - row0);
    std::vector<Param> params;
    for (int c = 0; c < rel.arity; ++c) {
      const int32_t* v = t.cols[c].data() + row0;
      if (rel.types[c] == dl::ColType::Int) {
        params.push_back(int4_array_param(v, n));
      } else {
        std::vector<std::string> s(n);
        for (size_t i = 0; i < n; ++i) s[i] = syms.text(v[i]);
        params.push_back(text_array_param(s));
      }
    }
    spi.exec(sql, params);
  }
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

void prepare_datalog(Spi& spi, dl::Program& p) {
  for (dl::Relation& rel : p.rels)
    if (rel.input) resolve_input(spi, rel);
  dl::infer_types(p);
}

double estimate_input(Spi& spi, const dl::Relation& rel, std::string& how) {
  const std::string name = source_name(rel);
  spi.query("SELECT FROM " + name + " LIMIT 0");  // the caller's privileges, as when reading it
  Rows r = spi.query("SELECT reltuples::float8 FROM pg_class WHERE oid = to_regclass($1) "
                     "AND relkind IN ('r', 'm') AND reltuples >= 0", {text_param(name)});
  if (r.size() > 0) {
    how = "reltuples";
    return r.float8(0, 0);
  }
  how = "count(*)";
  return static_cast<double>(spi.query("SELECT count(*) FROM " + name).int8(0, 0));
}

void run_datalog(Spi& spi, dl::Program prog, const DatalogOptions& opts, DatalogResult& out) {
  const auto t0 = std::chrono::steady_clock::now();
  // A new backend's first GPU call starts the engine (~0.3 s): on a thread,
  // while the inputs are resolved and read.
  start_device_warmup(opts.device);
  out.prog = std::move(prog);
  prepare_datalog(spi, out.prog);
  dl::Program& p = out.prog;
  std::vector<gpu::HostTable> host(p.rels.size());
  for (size_t r = 0; r < p.rels.size(); ++r)
    if (p.rels[r].input) host[r] = read_input(spi, p.rels[r], out.syms);
  const double read_s = seconds_since(t0);
  gpu::Engine& eng = engine_for(opts.device);
  const double start_s = seconds_since(t0) - read_s;
  std::vector<gpu::Relation> inputs(p.rels.size());
  for (size_t r = 0; r < p.rels.size(); ++r)
    if (p.rels[r].input) inputs[r] = eng.upload(host[r]), host[r] = gpu::HostTable();
  dl::encode_constants(p, out.syms);
  const double upload_s = seconds_since(t0) - read_s - start_s;
  const int level = opts.verbose ? NOTICE : DEBUG1;
  ev::EvalOptions eo;
  eo.max_rows = opts.max_rows;
  eo.progress = [&](int stratum, int iteration, uint64_t delta) {
    check_interrupts();  // a cancel between iterations (the engine polls inside operators)
    pg_call([&] {
      elog(level, "pg_mln: datalog stratum %d iteration %d: %llu new rows", stratum, iteration,
           static_cast<unsigned long long>(delta));
    });
  };
  std::vector<gpu::Relation> rels;
  try {
    rels = ev::evaluate(eng, p, std::move(inputs), eo);
  } catch (const ev::LimitExceeded& e) {
    throw UserError{ERRCODE_PROGRAM_LIMIT_EXCEEDED, std::string("datalog: ") + e.what(), "",
                    "raise the limit with options => '{\"max_rows\": N}' (0: none), or look for a recursion "
                    "through arithmetic that never ends"};
  } catch (const ev::ArithmeticError& e) {
    const bool div = std::string(e.what()) == "division by zero";
    throw UserError{div ? ERRCODE_DIVISION_BY_ZERO : ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
                    std::string("datalog: ") + e.what(), "", ""};
  }
  const double eval_s = seconds_since(t0) - read_s - start_s - upload_s;
  out.rows.assign(p.rels.size(), {});
  for (size_t r = 0; r < p.rels.size(); ++r)
    if (p.rels[r].derived) out.rows[r] = eng.download(rels[r]);
  if (opts.maintain) out.rels = std::move(rels);
  const std::string engine = guc_regress ? "<hidden>" : eng.name();
  const double total_s = seconds_since(t0);
  pg_call([&] {
    elog(level,
         "pg_mln: datalog on %s: %.3f s (parse and read %.3f s, engine start %.3f s, upload %.3f s, evaluate %.3f s, "
         "download %.3f s)",
         engine.c_str(), total_s, read_s, start_s, upload_s, eval_s, total_s - read_s - start_s - upload_s - eval_s);
  });
}

}  // namespace mln::pg
