// The SQL functions' options jsonb (json_options.hpp): the entries from
// jsonb_each, the rows from options/options.hpp.
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

JsonOptions::JsonOptions(Spi& spi, Datum options, bool isnull, std::string fn, OptionFn fn_bits)
    : reader_(option_entries(spi, options, isnull), std::move(fn), fn_bits) {}

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

void JsonOptions::reject_unknown() const {
  checked([&] { reader_.reject_unknown(); });
}

bool JsonOptions::boolean(options::Id id) const {
  return checked([&] { return reader_.boolean(id); });
}

int64_t JsonOptions::whole(options::Id id) const {
  return checked([&] { return reader_.whole(id); });
}

std::string JsonOptions::choice(options::Id id) const {
  return checked([&] { return reader_.choice(id); });
}

}  // namespace mln::pg
