// libpq wrapper and binary COPY decoding.
#include "worker/pq.hpp"

#include <algorithm>

#include <arpa/inet.h>
#include <poll.h>

#include <cstring>

namespace mln::worker {

Conn::Conn(const std::string& dsn) {
  c_ = PQconnectdb(dsn.c_str());
  if (PQstatus(c_) != CONNECTION_OK) {
    std::string msg = PQerrorMessage(c_);
    PQfinish(c_);
    c_ = nullptr;
    throw DbError("could not connect to the database: " + msg);
  }
  PQsetNoticeProcessor(
      c_,
      [](void* self, const char* msg) {
        auto* conn = static_cast<Conn*>(self);
        if (!conn->notice_) return;
        std::string m(msg);
        while (!m.empty() && m.back() == '\n') m.pop_back();
        conn->notice_(m);
      },
      this);
}

Conn::~Conn() {
  if (c_) PQfinish(c_);
}

Result Conn::exec(const std::string& sql, const std::vector<std::string>& params) {
  return exec_n(sql, params, std::vector<bool>(params.size(), false));
}

Result Conn::exec_n(const std::string& sql, const std::vector<std::string>& params, const std::vector<bool>& nulls) {
  return exec_params(sql, params, &nulls, nullptr);
}

Result Conn::exec_b(const std::string& sql, const std::vector<std::string>& params, const std::vector<bool>& binary) {
  return exec_params(sql, params, nullptr, &binary);
}

Result Conn::exec_params(const std::string& sql, const std::vector<std::string>& params, const std::vector<bool>* nulls,
                         const std::vector<bool>* binary) {
  const size_t n = params.size();
  std::vector<const char*> vals(n);
  std::vector<int> lens(n, 0), fmts(n, 0);
  for (size_t i = 0; i < n; ++i) {
    vals[i] = nulls && (*nulls)[i] ? nullptr : params[i].data();
    if (binary && (*binary)[i]) {
      lens[i] = static_cast<int>(params[i].size());
      fmts[i] = 1;
    }
  }
  PGresult* r = PQexecParams(c_, sql.c_str(), static_cast<int>(n), nullptr, vals.data(), lens.data(), fmts.data(), 0);
  ExecStatusType st = PQresultStatus(r);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    auto field = [r](int code) {
      const char* v = r ? PQresultErrorField(r, code) : nullptr;
      return std::string(v ? v : "");
    };
    std::string msg = field(PG_DIAG_MESSAGE_PRIMARY);
    if (msg.empty()) msg = PQerrorMessage(c_);  // no result: the connection failed
    while (!msg.empty() && msg.back() == '\n') msg.pop_back();
    DbError e(msg, field(PG_DIAG_SQLSTATE), field(PG_DIAG_MESSAGE_DETAIL), field(PG_DIAG_MESSAGE_HINT));
    PQclear(r);
    throw e;
  }
  return Result(r);
}

void Conn::check_copy_end() {
  PGresult* r;
  std::string err;
  while ((r = PQgetResult(c_)) != nullptr) {
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
      const char* prim = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
      err = prim ? prim : PQerrorMessage(c_);
    }
    PQclear(r);
  }
  if (!err.empty()) throw DbError("COPY failed: " + err);
}

bool Conn::wait_notify(int timeout_ms) {
  PQconsumeInput(c_);
  PGnotify* n = PQnotifies(c_);
  if (!n) {
    pollfd pfd{PQsocket(c_), POLLIN, 0};
    if (poll(&pfd, 1, timeout_ms) > 0) PQconsumeInput(c_);
    n = PQnotifies(c_);
  }
  bool got = false;
  while (n) {
    got = true;
    PQfreemem(n);
    n = PQnotifies(c_);
  }
  return got;
}

namespace {
// libpq's quoting (PQescapeIdentifier or PQescapeLiteral) as a string.
std::string escaped(PGconn* c, const std::string& s, char* (*quote)(PGconn*, const char*, size_t)) {
  char* q = quote(c, s.c_str(), s.size());
  if (!q) throw DbError(PQerrorMessage(c));
  std::string out(q);
  PQfreemem(q);
  return out;
}
}  // namespace

std::string Conn::quote_ident(const std::string& s) { return escaped(c_, s, PQescapeIdentifier); }

std::string Conn::quote_literal(const std::string& s) { return escaped(c_, s, PQescapeLiteral); }

namespace binary {

namespace {
uint32_t be32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return ntohl(v);
}
}  // namespace

int32_t int4(const char* p) { return static_cast<int32_t>(be32(p)); }

bool parse_row(const char* data, size_t len, bool first, std::vector<std::pair<const char*, int32_t>>& fields) {
  const char* p = data;
  const char* end = data + len;
  if (first) {
    static const char sig[] = "PGCOPY\n\377\r\n";
    if (len < 19 || std::memcmp(p, sig, 11) != 0) throw DbError("bad binary COPY header");
    p += 11 + 4;
    uint32_t ext = be32(p);
    p += 4 + ext;
  }
  if (p + 2 > end) throw DbError("truncated binary COPY row");
  int16_t nf = static_cast<int16_t>((static_cast<uint8_t>(p[0]) << 8) | static_cast<uint8_t>(p[1]));
  p += 2;
  if (nf == -1) return false;
  fields.clear();
  for (int i = 0; i < nf; ++i) {
    int32_t flen = static_cast<int32_t>(be32(p));
    p += 4;
    fields.emplace_back(p, flen);
    if (flen > 0) p += flen;
  }
  return true;
}

// Room for `n` more elements, growing geometrically: the chunk arrays are
// read a chunk at a time into one vector, and an exact reserve per chunk
// made every chunk copy everything read before it (quadratic: 25 s for the
// 17.8M clauses of RC at 10^5 papers, minutes at 10^8).
template <typename V>
void grow(V& v, size_t n) {
  if (v.size() + n > v.capacity()) v.reserve(std::max(v.size() + n, 2 * v.capacity()));
}

// The host must be little-endian to take mln._array_le()'s bytes as they are
// (x86-64 and aarch64 Linux both are).
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the worker reads little-endian chunk arrays");

template <typename V>
void le_values(const char* p, int32_t len, V& out) {
  using T = typename V::value_type;
  if (len < 0 || len % static_cast<int32_t>(sizeof(T)) != 0)
    throw DbError("corrupt ground network: a chunk array of " + std::to_string(len) + " bytes");
  const size_t n = static_cast<size_t>(len) / sizeof(T);
  grow(out, n);
  const size_t at = out.size();
  out.resize(at + n);
  if (n) std::memcpy(out.data() + at, p, static_cast<size_t>(len));
}

void le_int4s(const char* p, int32_t len, std::vector<int32_t>& out) { le_values(p, len, out); }
void le_float8s(const char* p, int32_t len, std::vector<double>& out) { le_values(p, len, out); }
void le_int4s(const char* p, int32_t len, HostArray<int32_t>& out) { le_values(p, len, out); }
void le_float8s(const char* p, int32_t len, HostArray<double>& out) { le_values(p, len, out); }

}  // namespace binary
bool read_job_bytes(Conn& c, const char* table, int64_t job, std::string& bytes) {
  std::vector<std::pair<const char*, int32_t>> f;
  bool first = true;
  int64_t pieces = 0;
  bool in_order = true;  // (said after the COPY: throwing inside it would leave the connection in it)
  c.copy_out("COPY (SELECT piece, data FROM " + std::string(table) + " WHERE job = " + std::to_string(job) +
                 " ORDER BY piece) TO STDOUT (FORMAT binary)",
             [&](const char* data, size_t len) {
               if (binary::parse_row(data, len, first, f) && in_order) {
                 in_order = f.size() == 2 && f[0].second == 4 && f[1].second >= 0 && binary::int4(f[0].first) == pieces;
                 if (in_order) bytes.append(f[1].first, static_cast<size_t>(f[1].second));
                 ++pieces;
               }
               first = false;
             });
  if (!in_order) throw DbError(std::string("corrupt ") + table + " rows: their pieces are not 0, 1, 2, ...");
  return pieces > 0;
}

}  // namespace mln::worker
