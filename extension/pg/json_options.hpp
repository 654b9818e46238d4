// The options jsonb of the SQL functions that run in the backend
// (mln.datalog*, mln.learn_rules*, mln.problog): read through
// mln/option_entries.hpp, the rules and messages the worker reads a rule
// learning job's options by as well ("option "K" of mln.f must be ..."),
// with each refusal raised as a UserError before any work.  A key whose
// value is JSON null takes its default.  (Job options of inference and
// weight learning have their own table: mln/options.hpp.)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mln/option_entries.hpp"
#include "pg/guard.hpp"
#include "pg/spi.hpp"

namespace mln::pg {

// A refusal of the key-by-key reader as the error the SQL functions raise
// (invalid_parameter_value, with its hint).
UserError option_error(const OptionEntryError& e);

// The entries of an options jsonb (none when isnull), as jsonb_each gives them.
std::vector<OptionEntry> option_entries(Spi& spi, Datum options, bool isnull);

class JsonOptions {
 public:
  using Entry = OptionEntry;

  // Reads `options` (isnull: none) for function `fn` (e.g. "mln.datalog");
  // `known` lists the option names, shown when a key is not one of them.
  JsonOptions(Spi& spi, Datum options, bool isnull, std::string fn, std::string known);

  const std::vector<Entry>& entries() const { return reader_.entries(); }
  // The reader itself, for readers shared with the worker (rules/options.hpp).
  const OptionEntries& reader() const { return reader_; }

  // Typed values of an entry; each throws UserError naming the option.
  bool boolean(const Entry& e) const;
  int64_t whole(const Entry& e, int64_t lo, int64_t hi, const std::string& what = "") const;
  double number(const Entry& e, double lo, const std::string& what = "") const;
  std::string choice(const Entry& e, const std::vector<std::string>& allowed) const;
  // The error for a key no option has.
  UserError unknown(const Entry& e) const;

 private:
  OptionEntries reader_;
};

}  // namespace mln::pg
