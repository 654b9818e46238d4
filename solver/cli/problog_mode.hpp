// pg_mln -problog FILE (docs/problog.md, "On the command line"): a ProbLog /
// CP-logic program answered by mln.problog in the server, no worker
// involved (the function samples in the backend).
#pragma once

#include <atomic>

#include "cli/options.hpp"

namespace mln::cli {

// Reads and checks o.problog here (a file it cannot read: the system's
// reason; a program error: the file, line and column), before any server is
// started; then runs it through mln.problog with -problogOptions, in the
// database of -dsn / -conf / the private server, and writes one line per
// query atom, "query<TAB>probability<TAB>ci_low<TAB>ci_high<TAB>samples", to
// -o (replacing it only once the answer is in) or else to stdout.  Errors
// are thrown (std::runtime_error, worker::DbError); `interrupted` cancels
// the call.  Returns the exit status.
int run_problog(const Options& o, const std::atomic<bool>& interrupted);

}  // namespace mln::cli
