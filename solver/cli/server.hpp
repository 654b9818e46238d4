// The command line's first use of a database: the extension is created
// under a lock.
#pragma once

#include <string>
#include <vector>

#include "worker/pq.hpp"

namespace mln::cli {

// CREATE EXTENSION IF NOT EXISTS pg_mln; where the installed version is
// not the server's default, ALTER EXTENSION pg_mln UPDATE with `update`
// (a private cluster), else a runtime_error that says how to update.
// Runs under a session advisory lock: runs that start together on a
// database without the extension would otherwise both create it, and all
// but one fail on the catalog's unique indexes.
void create_extension(mln::worker::Conn& c, bool update);

}  // namespace mln::cli
