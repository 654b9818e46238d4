// The options jsonb of the SQL functions that run in the backend
// (mln.datalog*, mln.learn_rules*, mln.problog): read through
// options/option_entries.hpp's table and reader, the ones the worker reads a
// job's options by as well ("option "K" of mln.f must be ..."),
// with each refusal raised as a UserError before any work.  A key whose
// value is JSON null takes its default.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "options/option_entries.hpp"
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
  // Reads `options` (isnull: none) for function `fn` (e.g. "mln.datalog")
  // over the table's rows `fn_bits` (options/option_entries.hpp).
  JsonOptions(Spi& spi, Datum options, bool isnull, std::string fn, OptionFn fn_bits);

  // The reader itself, for readers shared with the worker (rules/options.hpp).
  const OptionEntries& reader() const { return reader_; }

  // As OptionEntries's, each refusal a UserError naming the option.
  void reject_unknown() const;
  bool boolean(options::Id id) const;
  int64_t whole(options::Id id) const;
  std::string choice(options::Id id) const;

 private:
  OptionEntries reader_;
};

}  // namespace mln::pg
