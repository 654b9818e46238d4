// The SQL functions' options jsonb (json_options.hpp): the entries from
// jsonb_each, the rules from mln/option_entries.hpp.
#include "pg/json_options.hpp"

#include <utility>

extern "C" {
#include "catalog/pg_type.h"
#include "utils/errcodes.h"
}

namespace mln::pg {

UserError option_error(const OptionEntryError& e) {
  return UserError{ERRCODE_INVALID_PARAMETER_VALUE, e.what(), "", e.hint};
}

std::vector<OptionEntry> option_entries(Spi& spi, Datum options, bool isnull) {
  std::vector<OptionEntry> entries;
  if (isnull) return entries;
  Rows r = spi.query("SELECT key, jsonb_typeof(value), value #>> '{}' FROM jsonb_each($1)", {{JSONBOID, options}});
  for (size_t i = 0; i < r.size(); ++i) entries.push_back({r.text(i, 0), r.text(i, 1), r.text(i, 2)});
  return entries;
}

JsonOptions::JsonOptions(Spi& spi, Datum options, bool isnull, std::string fn, std::string known)
    : reader_(option_entries(spi, options, isnull), std::move(fn), std::move(known)) {}

namespace {
// Runs a typed read, its refusal raised as the SQL functions' error.
template <typename F>
auto checked(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const OptionEntryError& e) {
    throw option_error(e);
  }
}
}  // namespace

bool JsonOptions::boolean(const Entry& e) const {
  return checked([&] { return reader_.boolean(e); });
}

int64_t JsonOptions::whole(const Entry& e, int64_t lo, int64_t hi, const std::string& what) const {
  return checked([&] { return reader_.whole(e, lo, hi, what); });
}

double JsonOptions::number(const Entry& e, double lo, const std::string& what) const {
  return checked([&] { return reader_.number(e, lo, what); });
}

std::string JsonOptions::choice(const Entry& e, const std::vector<std::string>& allowed) const {
  return checked([&] { return reader_.choice(e, allowed); });
}

UserError JsonOptions::unknown(const Entry& e) const { return option_error(reader_.unknown(e)); }

}  // namespace mln::pg
