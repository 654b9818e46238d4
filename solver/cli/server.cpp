// The command line's statements (server.hpp).
#include "cli/server.hpp"

#include <stdexcept>

namespace mln::cli {

namespace {
// The advisory lock key of the extension's creation (mln.wait's locks use
// the two-key form, a separate key space).
constexpr const char* kCreateExtensionLock = "1835822592";  // "mln\0" as an integer
}  // namespace

void create_extension(mln::worker::Conn& c, bool update) {
  c.exec("SELECT pg_advisory_lock($1::bigint)", {kCreateExtensionLock});
  try {
    c.exec("CREATE EXTENSION IF NOT EXISTS pg_mln");
    mln::worker::Result v = c.exec(
        "SELECT installed_version, default_version, current_database() FROM pg_available_extensions "
        "WHERE name = 'pg_mln'");
    if (v.rows() == 1 && v.get(0, 0) != v.get(0, 1)) {
      // The server's library is the default version's; SQL objects of an
      // older one may call it with arguments it no longer takes.  A
      // private cluster is the command line's own: it updates.  A user's
      // database is theirs to update, so the run stops before it changes
      // anything.
      if (!update)
        throw std::runtime_error("the pg_mln extension in database \"" + v.get(0, 2) + "\" is version " + v.get(0, 0) +
                                 ", but the server has " + v.get(0, 1) + " installed: run ALTER EXTENSION pg_mln "
                                 "UPDATE in that database first");
      c.exec("ALTER EXTENSION pg_mln UPDATE");
    }
  } catch (...) {
    try {
      c.exec("SELECT pg_advisory_unlock($1::bigint)", {kCreateExtensionLock});
    } catch (...) {
    }
    throw;
  }
  c.exec("SELECT pg_advisory_unlock($1::bigint)", {kCreateExtensionLock});
}

}  // namespace mln::cli
