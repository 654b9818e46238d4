// Thin C++ wrappers over SPI for the glue code.  Every PostgreSQL call goes
// through pg_call(), so errors surface as PgError exceptions and C++
// destructors run.  Arrays are built directly in PostgreSQL's flat format so
// that millions of values move in one parameter.
#pragma once

#include "pg/guard.hpp"

#include <cstdint>
#include <string>
#include <vector>

extern "C" {
#include "executor/spi.h"
}

namespace mln::pg {

// One statement parameter.
struct Param {
  Oid type;
  Datum value;
  bool isnull = false;
};

Param text_param(const std::string& s);
Param int4_param(int32_t v);
Param int8_param(int64_t v);
Param float8_param(double v);
Param bool_param(bool v);
Param jsonb_param(const std::string& json);
Param int4_array_param(const std::vector<int32_t>& v);
Param int4_array_param(const int32_t* v, size_t n);
Param float8_array_param(const std::vector<double>& v);
Param bool_array_param(const std::vector<uint8_t>& v);
Param text_array_param(const std::vector<std::string>& v);

// The result of a query, read column by column.
class Rows {
 public:
  size_t size() const { return n_; }
  bool isnull(size_t row, int col) const;
  int32_t int4(size_t row, int col) const;
  int64_t int8(size_t row, int col) const;
  double float8(size_t row, int col) const;
  bool boolean(size_t row, int col) const;
  std::string text(size_t row, int col) const;  // any type, via its output function
  std::vector<std::string> text_array(size_t row, int col) const;
  std::vector<int32_t> int4_array(size_t row, int col) const;
  std::vector<double> float8_array(size_t row, int col) const;
  std::string bytes(size_t row, int col) const;  // a bytea's bytes

 private:
  friend class Spi;
  SPITupleTable* tt_ = nullptr;
  size_t n_ = 0;
};

// An SPI connection for the duration of a scope.
class Spi {
 public:
  Spi();
  ~Spi();
  Spi(const Spi&) = delete;
  Spi& operator=(const Spi&) = delete;
  // Runs a statement; returns the number of rows processed.
  uint64_t exec(const std::string& sql, const std::vector<Param>& params = {});
  // Runs a query and returns its rows (valid until the next call).
  Rows query(const std::string& sql, const std::vector<Param>& params = {});

 private:
  bool connected_ = false;
};

// Stores `bytes` as a job's rows (job, piece, data) of `table`, one of
// pg_mln's (mln.problog_ground, mln.rules_input), in pieces of 64 MiB in
// order (a bytea holds at most 1 GB), each piece's bytea freed once written.
void store_job_bytes(Spi& spi, const char* table, int64_t job, const std::string& bytes);

// Identifier quoting (quote_identifier), for names that reach SQL.
std::string qi(const std::string& ident);
// "schema"."name"
std::string qualified(const std::string& schema, const std::string& name);

}  // namespace mln::pg
