// Small RAII layer over libpq for the worker and the command line.
#pragma once

#include <libpq-fe.h>

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "format/host_array.hpp"

namespace mln::worker {

// A database error, with SQLSTATE, DETAIL and HINT when the server sent
// them (what psql would show).
class DbError : public std::runtime_error {
 public:
  DbError(const std::string& msg, std::string sqlstate = "", std::string detail = "", std::string hint = "")
      : std::runtime_error(msg), sqlstate_(std::move(sqlstate)), detail_(std::move(detail)), hint_(std::move(hint)) {}
  const std::string& sqlstate() const { return sqlstate_; }
  const std::string& detail() const { return detail_; }
  const std::string& hint() const { return hint_; }
  // The same error under another message (one that names the file it concerns).
  DbError with_message(const std::string& msg) const { return DbError(msg, sqlstate_, detail_, hint_); }
  // The same error with another hint (one in the caller's terms).
  DbError with_hint(const std::string& hint) const { return DbError(what(), sqlstate_, detail_, hint); }

 private:
  std::string sqlstate_, detail_, hint_;
};

// A query result (owned).
class Result {
 public:
  explicit Result(PGresult* r) : r_(r, &PQclear) {}
  int rows() const { return PQntuples(r_.get()); }
  bool null(int row, int col) const { return PQgetisnull(r_.get(), row, col); }
  std::string get(int row, int col) const { return PQgetvalue(r_.get(), row, col); }
  long long num(int row, int col) const { return null(row, col) ? 0 : std::stoll(get(row, col)); }
  double dbl(int row, int col) const { return null(row, col) ? 0.0 : std::stod(get(row, col)); }

 private:
  std::unique_ptr<PGresult, decltype(&PQclear)> r_;
};

class Conn {
 public:
  explicit Conn(const std::string& dsn);
  // The worker's connections search only pg_catalog (and their own
  // temporary schema, last): no name in its SQL or in the functions it
  // calls can resolve to an object a role put in "$user" or public.
  void pin_search_path() { exec("SET search_path = pg_catalog, pg_temp"); }
  // The server ends a transaction of this connection left idle `seconds`
  // (WorkerOptions::idle_transaction_seconds says why).
  void limit_idle_transactions(int seconds) {
    exec("SET idle_in_transaction_session_timeout = " + std::to_string(int64_t{seconds} * 1000));
  }
  ~Conn();
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  // Runs a statement with text parameters; throws DbError on failure.
  Result exec(const std::string& sql, const std::vector<std::string>& params = {});
  // Like exec, but a NULL parameter is passed where `nulls[i]` is true.
  Result exec_n(const std::string& sql, const std::vector<std::string>& params, const std::vector<bool>& nulls);
  // Like exec, but a parameter whose `binary[i]` is true is sent as its raw
  // bytes in binary format (a bytea: no hex text to build and parse; the
  // query must fix its type, e.g. $3::bytea).
  Result exec_b(const std::string& sql, const std::vector<std::string>& params, const std::vector<bool>& binary);
  // COPY ... TO STDOUT: calls sink(data, len) for each row's bytes.
  template <typename Sink>
  void copy_out(const std::string& sql, Sink&& sink);
  // COPY ... FROM STDIN with the given payload (sent in pieces by `source`,
  // which returns false when done).
  template <typename Source>
  void copy_in(const std::string& sql, Source&& source);
  // Waits up to `timeout_ms` for a NOTIFY; returns true if one arrived.
  bool wait_notify(int timeout_ms);
  PGconn* raw() { return c_; }
  // Bytes of COPY data this connection has received and sent (the
  // benchmarks' "bytes moved").
  int64_t copied_out() const { return copied_out_; }
  int64_t copied_in() const { return copied_in_; }
  std::string quote_ident(const std::string& s);
  std::string quote_literal(const std::string& s);
  // Receives the server's NOTICE/WARNING messages (without the trailing
  // newline); they are dropped while no handler is set.
  void on_notice(std::function<void(const std::string&)> f) { notice_ = std::move(f); }

 private:
  void check_copy_end();
  Result exec_params(const std::string& sql, const std::vector<std::string>& params, const std::vector<bool>* nulls,
                     const std::vector<bool>* binary);
  PGconn* c_ = nullptr;
  std::function<void(const std::string&)> notice_;
  int64_t copied_out_ = 0, copied_in_ = 0;
};

template <typename Sink>
void Conn::copy_out(const std::string& sql, Sink&& sink) {
  PGresult* r = PQexec(c_, sql.c_str());
  if (PQresultStatus(r) != PGRES_COPY_OUT) {
    std::string msg = PQerrorMessage(c_);
    PQclear(r);
    throw DbError("COPY failed: " + msg);
  }
  PQclear(r);
  char* buf = nullptr;
  int n;
  while ((n = PQgetCopyData(c_, &buf, 0)) > 0) {
    copied_out_ += n;
    sink(buf, static_cast<size_t>(n));
    PQfreemem(buf);
  }
  if (n == -2) throw DbError(std::string("COPY failed: ") + PQerrorMessage(c_));
  check_copy_end();
}

template <typename Source>
void Conn::copy_in(const std::string& sql, Source&& source) {
  PGresult* r = PQexec(c_, sql.c_str());
  if (PQresultStatus(r) != PGRES_COPY_IN) {
    std::string msg = PQerrorMessage(c_);
    PQclear(r);
    throw DbError("COPY failed: " + msg);
  }
  PQclear(r);
  std::string chunk;
  while (source(chunk)) {
    if (!chunk.empty() && PQputCopyData(c_, chunk.data(), static_cast<int>(chunk.size())) != 1)
      throw DbError(std::string("COPY failed: ") + PQerrorMessage(c_));
    copied_in_ += static_cast<int64_t>(chunk.size());
    chunk.clear();
  }
  if (!chunk.empty() && PQputCopyData(c_, chunk.data(), static_cast<int>(chunk.size())) != 1)
    throw DbError(std::string("COPY failed: ") + PQerrorMessage(c_));
  copied_in_ += static_cast<int64_t>(chunk.size());
  if (PQputCopyEnd(c_, nullptr) != 1) throw DbError(std::string("COPY failed: ") + PQerrorMessage(c_));
  check_copy_end();
}

// Decoders for PostgreSQL's binary COPY format.
namespace binary {
// Parses one binary COPY row (the header is skipped on the first row);
// returns false at the trailer.  fields[i] = {pointer, length or -1}.
bool parse_row(const char* data, size_t len, bool first,
               std::vector<std::pair<const char*, int32_t>>& fields);
int32_t int4(const char* p);
// A bytea from mln._array_le(): raw little-endian int4 / float8 elements,
// appended to `out`.  Throws DbError if the length is not a whole number
// of elements.
void le_int4s(const char* p, int32_t len, std::vector<int32_t>& out);
void le_float8s(const char* p, int32_t len, std::vector<double>& out);
void le_int4s(const char* p, int32_t len, HostArray<int32_t>& out);
void le_float8s(const char* p, int32_t len, HostArray<double>& out);
}  // namespace binary

// A job's bytes from one of pg_mln's tables of (job, piece, data) rows
// (mln.problog_ground, mln.rules_input): its pieces in order, joined into
// `bytes`.  False when the job has none; DbError when they are out of order.
bool read_job_bytes(Conn& c, const char* table, int64_t job, std::string& bytes);

}  // namespace mln::worker
