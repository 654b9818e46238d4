// The command line's statements (server.hpp).
#include "cli/server.hpp"

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
    if (update) {
      mln::worker::Result v = c.exec(
          "SELECT installed_version IS DISTINCT FROM default_version FROM pg_available_extensions "
          "WHERE name = 'pg_mln'");
      if (v.rows() == 1 && v.get(0, 0) == "t") c.exec("ALTER EXTENSION pg_mln UPDATE");
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
