// The SQL functions' options jsonb (json_options.hpp).
#include "pg/json_options.hpp"

#include <cmath>
#include <cstdio>
#include <utility>

extern "C" {
#include "catalog/pg_type.h"
#include "utils/errcodes.h"
}

namespace mln::pg {

JsonOptions::JsonOptions(Spi& spi, Datum options, bool isnull, std::string fn, std::string known)
    : fn_(std::move(fn)), known_(std::move(known)) {
  if (isnull) return;
  Rows r = spi.query("SELECT key, jsonb_typeof(value), value #>> '{}' FROM jsonb_each($1)", {{JSONBOID, options}});
  for (size_t i = 0; i < r.size(); ++i)
    if (r.text(i, 1) != "null") entries_.push_back({r.text(i, 0), r.text(i, 1), r.text(i, 2)});
}

UserError JsonOptions::bad(const Entry& e, const std::string& want) const {
  return UserError{ERRCODE_INVALID_PARAMETER_VALUE, "option \"" + e.key + "\" of " + fn_ + " must be " + want, "", ""};
}

UserError JsonOptions::unknown(const Entry& e) const {
  return UserError{ERRCODE_INVALID_PARAMETER_VALUE, "unknown option \"" + e.key + "\" of " + fn_, "",
                   "the options are " + known_};
}

bool JsonOptions::boolean(const Entry& e) const {
  if (e.type != "boolean") throw bad(e, "true or false");
  return e.value == "true";
}

int64_t JsonOptions::whole(const Entry& e, int64_t lo, int64_t hi, const std::string& what) const {
  const std::string want = what.empty() ? "a whole number >= " + std::to_string(lo) : what;
  if (e.type != "number" || e.value.empty() || e.value.find_first_not_of("0123456789") != std::string::npos ||
      e.value.size() > 18)
    throw bad(e, want);
  const int64_t v = std::stoll(e.value);
  if (v < lo || v > hi) throw bad(e, want);
  return v;
}

double JsonOptions::number(const Entry& e, double lo, const std::string& what) const {
  char lo_text[32];
  snprintf(lo_text, sizeof lo_text, "%g", lo);
  const std::string want = what.empty() ? std::string("a number >= ") + lo_text : what;
  if (e.type != "number") throw bad(e, want);
  const double v = std::stod(e.value);
  if (!std::isfinite(v) || !(v >= lo)) throw bad(e, want);
  return v;
}

std::string JsonOptions::choice(const Entry& e, const std::vector<std::string>& allowed) const {
  std::string want;
  for (size_t i = 0; i < allowed.size(); ++i)
    want += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + ("'" + allowed[i] + "'");
  if (e.type == "string")
    for (const std::string& a : allowed)
      if (e.value == a) return a;
  throw bad(e, want);
}

}  // namespace mln::pg
