// The command line's statements (server.hpp).
#include "cli/server.hpp"

namespace mln::cli {

mln::worker::Result query(mln::worker::Conn& c, const std::string& sql, const std::vector<std::string>& params) {
  std::vector<const char*> vals(params.size());
  for (size_t i = 0; i < params.size(); ++i) vals[i] = params[i].c_str();
  PGresult* r =
      PQexecParams(c.raw(), sql.c_str(), static_cast<int>(params.size()), nullptr, vals.data(), nullptr, nullptr, 0);
  const ExecStatusType st = PQresultStatus(r);
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return mln::worker::Result(r);
  auto field = [r](int code) {
    const char* v = r ? PQresultErrorField(r, code) : nullptr;
    return std::string(v ? v : "");
  };
  std::string msg = field(PG_DIAG_MESSAGE_PRIMARY);
  if (msg.empty()) msg = PQerrorMessage(c.raw());  // no result: the connection failed
  while (!msg.empty() && msg.back() == '\n') msg.pop_back();
  ServerError e(msg, field(PG_DIAG_SQLSTATE), field(PG_DIAG_MESSAGE_DETAIL), field(PG_DIAG_MESSAGE_HINT));
  PQclear(r);
  throw e;
}

namespace {
// The advisory lock key of the extension's creation (mln.wait's locks use
// the two-key form, a separate key space).
constexpr const char* kCreateExtensionLock = "1835822592";  // "mln\0" as an integer
}  // namespace

void create_extension(mln::worker::Conn& c, bool update) {
  query(c, "SELECT pg_advisory_lock($1::bigint)", {kCreateExtensionLock});
  try {
    query(c, "CREATE EXTENSION IF NOT EXISTS pg_mln");
    if (update) {
      mln::worker::Result v =
          query(c,
                "SELECT installed_version IS DISTINCT FROM default_version FROM pg_available_extensions "
                "WHERE name = 'pg_mln'");
      if (v.rows() == 1 && v.get(0, 0) == "t") query(c, "ALTER EXTENSION pg_mln UPDATE");
    }
  } catch (...) {
    try {
      query(c, "SELECT pg_advisory_unlock($1::bigint)", {kCreateExtensionLock});
    } catch (...) {
    }
    throw;
  }
  query(c, "SELECT pg_advisory_unlock($1::bigint)", {kCreateExtensionLock});
}

}  // namespace mln::cli
