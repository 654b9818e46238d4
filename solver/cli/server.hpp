// The command line's statements: a server error keeps its DETAIL and HINT
// (what psql would show), and the extension is created under a lock.
#pragma once

#include <string>
#include <vector>

#include "worker/pq.hpp"

namespace mln::cli {

// A server error with the fields the server sends beside its message.
class ServerError : public mln::worker::DbError {
 public:
  ServerError(const std::string& msg, std::string sqlstate, std::string detail, std::string hint)
      : DbError(msg, std::move(sqlstate)), detail_(std::move(detail)), hint_(std::move(hint)) {}
  const std::string& detail() const { return detail_; }
  const std::string& hint() const { return hint_; }
  // The same error under another message (one that names the file it concerns).
  ServerError with_message(const std::string& msg) const { return ServerError(msg, sqlstate(), detail_, hint_); }
  // The same error with another hint (one in the command line's terms).
  ServerError with_hint(const std::string& hint) const { return ServerError(what(), sqlstate(), detail_, hint); }

 private:
  std::string detail_, hint_;
};

// Conn::exec, except that a failure throws ServerError (Conn::exec's
// DbError carries the message only).
mln::worker::Result query(mln::worker::Conn& c, const std::string& sql, const std::vector<std::string>& params = {});

// CREATE EXTENSION IF NOT EXISTS pg_mln, then (with `update`) ALTER
// EXTENSION pg_mln UPDATE when the installed version is not the default.
// Runs under a session advisory lock: runs that start together on a
// database without the extension would otherwise both create it, and all
// but one fail on the catalog's unique indexes.
void create_extension(mln::worker::Conn& c, bool update);

}  // namespace mln::cli
