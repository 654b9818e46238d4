// A program as the glue code sees it: its catalog row, parsed source,
// evidence bindings and symbol dictionary.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
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

// Name -> id over a list of names by id (SymbolTable::load): open
// addressing on 8-byte slots (a 32-bit hash tag and the id), the names
// themselves kept once, in the list.  std::unordered_map's node per name
// cost two to three cache misses a lookup, 35% of ingesting RC's 2.5M
// evidence rows at 10^8 clauses (751,000 names).
class NameIds {
 public:
  void clear(size_t expected);
  // The id of s; 0 if absent.
  int32_t find(std::string_view s, const std::vector<std::string>& names) const;
  // The id of s, or `id` (> 0) recorded for it when absent: {id, absent}.
  // names[id] must hold s before the next call.
  std::pair<int32_t, bool> find_or_add(std::string_view s, int32_t id, const std::vector<std::string>& names);
  // The same, s's hash (hash()) given.
  std::pair<int32_t, bool> find_or_add(std::string_view s, uint64_t h, int32_t id, const std::vector<std::string>& names);
  static uint64_t hash(std::string_view s);
  // Cache hints for a lookup of hash h to come: the slot it starts at, then
  // (once that is in) the name that slot holds where its tag matches.
  void prefetch_slot(uint64_t h) const;
  void prefetch_name(uint64_t h, const std::vector<std::string>& names) const;

 private:
  size_t probe(std::string_view s, uint64_t h, const std::vector<std::string>& names) const;
  void grow(const std::vector<std::string>& names);
  std::vector<uint64_t> slot_;  // tag << 32 | id; 0: empty
  size_t used_ = 0;
};

// The program's symbol dictionary, with new symbols given the next ids in
// first-seen order and written back by flush().  load() reads every symbol
// (evidence loading interns many names); open() reads none and looks names
// up one at a time through its index (grounding needs a few constants, and
// every name only when the host computes on symbol text: all_names()).
class SymbolTable {
 public:
  void load(Spi& spi, const std::string& schema);
  void open(Spi& spi, const std::string& schema);
  int32_t intern(const std::string& s);
  // intern() of s[0..n) in order, into ids: the same ids, with the lookups'
  // cache misses overlapped (load(): two a name, a slot and the name it
  // holds, were a third of ingesting RC's 24.9M evidence atoms at 10^9
  // clauses, issue #45).
  void intern_all(const std::string* s, size_t n, int32_t* ids);
  int32_t find(const std::string& s);  // 0 if absent
  std::vector<std::string> all_names();  // index = id
  void flush();  // the rows through table_multi_insert, in the caller's SPI transaction

 private:
  void lock(Spi& spi, const std::string& schema);
  int32_t intern_loaded(const std::string& s, uint64_t h);  // intern() after load(), s's hash given

  Spi* spi_ = nullptr;  // open(): lookups on demand
  std::string table_;
  std::unordered_map<std::string, int32_t> ids_;   // open(): looked up (0: absent) and new
  NameIds by_name_;                                // load(): every name, by names_
  std::vector<std::string> names_{std::string()};  // load(): every name by id
  int32_t next_ = 1;                               // the next new symbol's id
  // New symbols, not yet flushed: ids [flushed_, next_), given in turn.
  // load() keeps their names in names_ (at 10^9 clauses a copy here was
  // some 300 MB); open() in opened_new_.
  int32_t flushed_ = 1;
  std::vector<std::string> opened_new_;
};

// Parses an argument of an Int-typed predicate position; UserError if not an integer.
int32_t parse_int_arg(const std::string& s, const std::string& pred, int line);

}  // namespace mln::pg
