// Moving int columns between heap tables and the engine: a table scan
// straight into columnar buffers (no SPI, no row-at-a-time executor:
// heap_read.cpp), and raw pages or table_multi_insert into a result table
// (heap_write.cpp).
#pragma once

#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "format/network.hpp"
#include "mln/relation.hpp"

extern "C" {
#include "postgres.h"
#include "storage/lockdefs.h"
#include "utils/memutils.h"
}

namespace mln::pg {

// The relation named by a (possibly schema-qualified, quoted) name, locked
// with `lock`.
Oid relation_by_name(const std::string& qualified_table, LOCKMODE lock);

// Reads the named int2/int4 columns of a table (or materialized view).
// Throws UserError for a missing relation/column, a non-integer column, or
// a missing SELECT privilege.
gpu::HostTable scan_columns(Oid relid, const std::vector<std::string>& columns);
// The same, stopping at the first NULL with has_null set (what was read is
// then incomplete) instead of throwing.
gpu::HostTable scan_columns_or_null(Oid relid, const std::vector<std::string>& columns, bool& has_null);
// All int columns of a relation, in order (for "every column" defaults).
std::vector<std::string> relation_columns(Oid relid);
// Rows handed over in pieces: fill(row0, n, dst) writes rows [row0, row0 +
// n) of column c into dst[c].  Called from C++ frames only (it may throw).
struct RowSource {
  size_t rows = 0;
  int ncols = 0;
  std::function<void(size_t row0, size_t n, int32_t* const* dst)> fill;
};

// Creates `target` (unqualified names go to the current schema; an existing
// relation is an error) with int4 columns named `names`, and fills it from
// `src`: as raw pages, a piece at a time, when the new table takes them,
// else with table_multi_insert.  Returns the row count.
class Spi;
// Serialises the statements that create or replace the table `target` (a
// transaction-level advisory lock on its name): of two sessions creating it
// at once, the second waits for the first's commit and then sees its table,
// instead of failing on pg_type's unique index.
void lock_target_name(Spi& spi, const std::string& target);

uint64_t write_table(const std::string& target, const std::vector<std::string>& names, const RowSource& src);

// Appends evidence rows (int4 arguments, truth boolean, prior float8 where
// prior[i] is not NaN) to an existing predicate table with table_multi_insert.
uint64_t append_evidence(const std::string& qualified_table, const std::vector<std::vector<int32_t>>& args,
                         const std::vector<uint8_t>& truth, const std::vector<double>& prior);

// Appends (first_id + i, names[i]) rows, i < n, to a program's `_symbols` table with
// table_multi_insert.  rebuild_indexes: no index entries row by row, the
// table's indexes rebuilt after (for a batch about as large as the table).
uint64_t append_symbols(const std::string& qualified_table, int32_t first_id, const std::string* names, size_t n,
                        bool rebuild_indexes);

// Appends clauses to a new `_clauses` table (chunk int4, offsets int4[],
// lits int4[], weights float8[], wcode bytea) as chunks 0, 1, ...: each
// chunk as many clauses as fit one page-long row, its weights a dictionary
// and a code byte per clause (format/clause_chunks.hpp), kept inline where the
// table takes raw pages (no TOAST rows).  A range of clauses at a time (the
// network's clauses as consolidation hands them over, docs/grounding.md
// "Store beside consolidation"): chunk ids go on across ranges, and no chunk
// spans two.  add() reads the arrays only at clauses [first, last) and their
// literals, so the rest may be written meanwhile.  Every member may throw
// PgError; a writer abandoned by an error holds nothing that the
// transaction's abort does not release.
class ClauseChunkWriter {
 public:
  explicit ClauseChunkWriter(const std::string& qualified_table);
  ~ClauseChunkWriter();
  ClauseChunkWriter(const ClauseChunkWriter&) = delete;
  ClauseChunkWriter& operator=(const ClauseChunkWriter&) = delete;
  void add(const int64_t* offsets, const int32_t* lits, const double* weights, size_t first, size_t last);
  uint64_t finish();  // the chunk count; the writer is done
 private:
  struct State;
  std::unique_ptr<State> st_;
};

// Reads a predicate's evidence table (int4 argument columns `arg_columns`,
// `truth` boolean, `prior` float8 or NULL -> NaN) with a table scan.  (SPI
// materialised every row first: 0.17 s for the 330,000 evidence rows of
// smokers at 10^5.)
void scan_evidence(const std::string& qualified_table, const std::vector<std::string>& arg_columns,
                   std::vector<std::vector<int32_t>>& args, std::vector<uint8_t>& truth, std::vector<double>& prior);

// One row of a program's `_atoms` table.
struct AtomRow {
  int32_t id, pred;
  const int32_t* args;
  int nargs;
  int8_t evidence;  // -1: NULL (unknown), 0: false, 1: true
  double prior;     // NaN: NULL
  bool is_query;
};

// Appends `rows` ground atoms, row(i) giving the i-th, to an existing
// `_atoms` table (id int4, pred int4, args int4[], evidence boolean,
// prior float8, is_query boolean) with table_multi_insert.  row() must not
// throw.  (An INSERT ... SELECT FROM unnest() of the same arrays is far
// slower: docs/performance.md, "Measured choices".)
uint64_t append_atoms(const std::string& qualified_table, size_t rows, const std::function<AtomRow(size_t)>& row);

// A memory context for one statement's parameters at a time, emptied after
// each (chunk()): a stored chunk's arrays are palloc'd, and SPI's procedure
// context would otherwise keep every chunk's until the caller's SPI
// connection ends (for a ground network's _clauses, a second copy of the
// network).  On an error the transaction's abort frees it.
class StatementMemory {
 public:
  StatementMemory();
  ~StatementMemory() {
    if (std::uncaught_exceptions() == 0) MemoryContextDelete(cxt_);
  }
  StatementMemory(const StatementMemory&) = delete;
  StatementMemory& operator=(const StatementMemory&) = delete;
  // Runs f (which builds its parameters and runs its statement) in the context, then empties it.
  template <class F>
  void chunk(F&& f) {
    struct Back {
      MemoryContext to;
      ~Back() { MemoryContextSwitchTo(to); }
    } back{MemoryContextSwitchTo(cxt_)};
    f();
    MemoryContextReset(cxt_);
  }

 private:
  MemoryContext cxt_;
};

}  // namespace mln::pg
