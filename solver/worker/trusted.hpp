// The worker reads and writes a program's tables with its own rights, so it
// touches only relations in which nothing a role wrote can run: a role that
// owns a program owns its schema and could put a view over its own function
// (or a policy, a trigger, a default, a type with an implicit cast) where a
// table was, and that code would run as the worker and could read every
// other program (issue #59).  Each table is locked first, so that it cannot
// be swapped between the check and the read or write.
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "worker/pq.hpp"

namespace mln::worker {

// Locks `schema.table` for each of `tables` (ACCESS SHARE to read, ACCESS
// EXCLUSIVE to write) in the connection's open transaction, then refuses
// (DbError, naming the table and what is wrong) unless each is
//  - an ordinary table (no view, foreign or partitioned table) with no
//    row-level security, rules, triggers or child tables,
//  - owned by the program's owner or by the worker's own role,
//  - of columns of built-in types only (no domains, no types of a role's,
//    whose casts and operators are a role's functions), without defaults
//    or generated columns, indexes on expressions or partial indexes, or
//    constraints other than primary keys and unique ones.
// Must be called inside a transaction block.
void check_trusted_tables(Conn& c, const std::string& program, const std::string& schema,
                          const std::vector<std::string>& tables, bool write);

// Runs read() in a REPEATABLE READ READ ONLY transaction opened here when
// the connection has none (else in the caller's), after
// check_trusted_tables on `tables`; commits what it opened.
template <class Read>
auto trusted_read(Conn& c, const std::string& program, const std::string& schema,
                  const std::vector<std::string>& tables, Read read) -> decltype(read()) {
  const bool own = PQtransactionStatus(c.raw()) == PQTRANS_IDLE;
  if (own) c.exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  try {
    check_trusted_tables(c, program, schema, tables, false);
    if constexpr (std::is_void_v<decltype(read())>) {
      read();
      if (own) c.exec("COMMIT");
    } else {
      auto out = read();
      if (own) c.exec("COMMIT");
      return out;
    }
  } catch (...) {
    if (own) {
      try {
        c.exec("ROLLBACK");
      } catch (...) {
      }
    }
    throw;
  }
}

}  // namespace mln::worker
