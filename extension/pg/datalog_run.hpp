// Running a Datalog program over the caller's tables (docs/datalog.md):
// options, input relations resolved from the catalog and read through SPI
// (with the caller's privileges), evaluation on the operator engine.  Used
// by mln.datalog and mln.datalog_query (datalog_fn.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lang/datalog.hpp"
#include "mln/relation.hpp"
#include "pg/spi.hpp"

namespace mln::pg {

struct DatalogOptions {
  std::string device;              // '' (the mln.device setting), auto, cpu or gpu
  uint64_t max_rows = 0;           // 0: no limit (EvalOptions::max_rows); datalog_options gives the table's default
  bool verbose = false;            // progress as NOTICE (else DEBUG1)
  // mln.datalog: keep the outputs current (datalog_maintain_fn.cpp); the
  // result then also keeps every relation on the engine (the maintained state).
  bool maintain = false;
};

// The options jsonb (NULL: defaults).  Throws UserError for an unknown
// option or a bad value.
DatalogOptions datalog_options(Spi& spi, Datum options, bool isnull);

struct DatalogResult {
  lang::datalog::Program prog;
  lang::datalog::Symbols syms;
  std::vector<gpu::HostTable> rows;  // per relation; derived ones filled
  std::vector<gpu::Relation> rels;   // with DatalogOptions::maintain: every relation, on the engine
};

// Resolves a parsed (or built) program's input relations from the catalog
// and infers the types: mln.datalog's checks, before any row is read.
// Throws LangError, UserError.
void prepare_datalog(Spi& spi, lang::datalog::Program& p);

// An input relation's estimated rows (prepared): pg_class.reltuples of a
// table or materialized view that was analyzed or vacuumed, else count(*);
// `how` says which.  Checks the caller may read it, as reading it would.
double estimate_input(Spi& spi, const lang::datalog::Relation& rel, std::string& how);

// The SQL name of an input relation's table, quoted.
std::string source_name(const lang::datalog::Relation& rel);

// Fills an input relation's arity, columns and types from the catalog
// (columns read: source.columns, else all).  Throws UserError.
void resolve_input(Spi& spi, lang::datalog::Relation& rel);

// Reads a resolved input relation's rows into a host table (symbol ids for
// text), with the caller's privileges; rows with a NULL are left out.
gpu::HostTable read_input(Spi& spi, const lang::datalog::Relation& rel, lang::datalog::Symbols& syms);
// The same from `from` (SQL: a relation with rel's source columns, e.g. a
// trigger's transition table), through SQL.
gpu::HostTable read_rows(Spi& spi, const lang::datalog::Relation& rel, const std::string& from,
                         lang::datalog::Symbols& syms);

// Writes the rows of `t` (relation rel's columns, text as symbol ids of
// `syms`) into `table` (quoted), or deletes them from it (every equal row
// the table holds), 65,536 rows per statement: mln.datalog's tables and a
// maintained program's changes.
void write_rows(Spi& spi, const std::string& table, const lang::datalog::Relation& rel, const gpu::HostTable& t,
                const lang::datalog::Symbols& syms, bool insert);

// Resolves the inputs of `prog` (parsed, or built: ProbLog's grounding),
// reads them, evaluates.  Throws LangError, UserError, PgError (a missing
// privilege, a cancel) or EngineError.
void run_datalog(Spi& spi, lang::datalog::Program prog, const DatalogOptions& opts, DatalogResult& out);

}  // namespace mln::pg
