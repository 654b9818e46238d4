// The options jsonb of the SQL functions that run in the backend
// (mln.datalog*, mln.learn_rules*, mln.problog): one reader and one set of
// messages, so every function refuses a bad option the same way
// ("option "K" of mln.f must be ..."), before any work.  A key whose value
// is JSON null takes its default.  (Job options, which the worker reads,
// have their own table: mln/options.hpp.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pg/guard.hpp"
#include "pg/spi.hpp"

namespace mln::pg {

class JsonOptions {
 public:
  struct Entry {
    std::string key, type, value;  // jsonb_typeof and the value as text
  };

  // Reads `options` (isnull: none) for function `fn` (e.g. "mln.datalog");
  // `known` lists the option names, shown when a key is not one of them.
  JsonOptions(Spi& spi, Datum options, bool isnull, std::string fn, std::string known);

  const std::vector<Entry>& entries() const { return entries_; }

  // Typed values of an entry; each throws UserError naming the option.
  bool boolean(const Entry& e) const;
  int64_t whole(const Entry& e, int64_t lo, int64_t hi, const std::string& what = "") const;
  double number(const Entry& e, double lo, const std::string& what = "") const;
  std::string choice(const Entry& e, const std::vector<std::string>& allowed) const;
  // The error for a key no option has.
  UserError unknown(const Entry& e) const;

 private:
  UserError bad(const Entry& e, const std::string& want) const;
  std::vector<Entry> entries_;
  std::string fn_, known_;
};

}  // namespace mln::pg
