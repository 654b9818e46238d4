// A program as the glue code sees it: its catalog row, parsed source,
// evidence bindings and symbol dictionary.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "lang/program.hpp"
#include "pg/spi.hpp"

namespace mln::pg {

struct Binding {
  bool bound = false;
  std::string relation;               // regclass text, already quoted by regclass output
  std::vector<std::string> columns;   // one per argument
  std::string truth_column;           // empty: every row is true evidence
};

struct ProgramCtx {
  std::string name;
  std::string schema;
  std::string query;                  // query text, may be empty
  lang::Program prog;
  std::vector<Binding> bindings;      // by predicate index
};

// Loads the program visible to the caller; UserError if it does not exist.
ProgramCtx load_program(Spi& spi, const std::string& name);

// The program's symbol dictionary, loaded in full, with new symbols
// appended in first-seen order and written back by flush().
class SymbolTable {
 public:
  void load(Spi& spi, const std::string& schema);
  int32_t intern(const std::string& s);
  int32_t find(const std::string& s) const;  // 0 if absent
  const std::vector<std::string>& names() const { return names_; }  // index = id
  void flush(Spi& spi, const std::string& schema);

 private:
  std::unordered_map<std::string, int32_t> ids_;
  std::vector<std::string> names_{std::string()};
  size_t flushed_ = 1;
};

// Parses an argument of an Int-typed predicate position; UserError if not an integer.
int32_t parse_int_arg(const std::string& s, const std::string& pred, int line);

}  // namespace mln::pg
