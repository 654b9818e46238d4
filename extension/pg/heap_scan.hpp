// The fast path of scan_columns() (heap_read.cpp): a heap table whose
// requested int2/int4 columns sit at fixed offsets, read with the backend
// thread doing only buffer-manager work while a helper thread decodes.
#pragma once

extern "C" {
#include "postgres.h"
#include "access/attnum.h"
}

#include <utility>
#include <vector>

#include "mln/relation.hpp"

namespace mln::pg {

// Reads columns `nums` (attribute numbers; `atts` gives their types) of
// relation `relid` into t.cols.  Returns false, having read nothing, when
// the table does not qualify (not a heap, or a variable-width attribute
// before a requested one).  Sets has_null, and stops, on a NULL value.
// Runs PostgreSQL code through pg_call: errors surface as PgError.
bool scan_fixed_columns(Oid relid, const std::vector<std::pair<AttrNumber, Oid>>& atts,
                        const std::vector<AttrNumber>& nums, gpu::HostTable& t, bool& has_null);

}  // namespace mln::pg
