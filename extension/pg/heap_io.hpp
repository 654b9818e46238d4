// Moving int columns between heap tables and the engine: a table scan
// straight into columnar buffers (no SPI, no row-at-a-time executor), and
// table_multi_insert into a result table.
#pragma once

#include <string>
#include <vector>

#include "mln/relation.hpp"

extern "C" {
#include "postgres.h"
}

namespace mln::pg {

// Reads the named int2/int4 columns of a table (or materialized view).
// Throws UserError for a missing relation/column, a non-integer column, or
// a missing SELECT privilege.
gpu::HostTable scan_columns(Oid relid, const std::vector<std::string>& columns);
// All int columns of a relation, in order (for "every column" defaults).
std::vector<std::string> relation_columns(Oid relid);
// Creates `target` (unqualified names go to the current schema; an existing
// relation is an error) with int4 columns named `names`, and fills it with
// table_multi_insert.  Returns the row count.
uint64_t write_table(const std::string& target, const std::vector<std::string>& names, const gpu::HostTable& t);

// Appends evidence rows (int4 arguments, truth boolean, prior float8 where
// prior[i] is not NaN) to an existing predicate table with table_multi_insert.
uint64_t append_evidence(const std::string& qualified_table, const std::vector<std::vector<int32_t>>& args,
                         const std::vector<uint8_t>& truth, const std::vector<double>& prior);

}  // namespace mln::pg
