// Options read key by key (mln/option_entries.hpp).
#include "mln/option_entries.hpp"

#include <cmath>
#include <cstdio>
#include <utility>

namespace mln {

OptionEntries::OptionEntries(std::vector<OptionEntry> entries, std::string fn, std::string known)
    : fn_(std::move(fn)), known_(std::move(known)) {
  for (OptionEntry& e : entries)
    if (e.type != "null") entries_.push_back(std::move(e));
}

OptionEntryError OptionEntries::bad(const OptionEntry& e, const std::string& want) const {
  return OptionEntryError("option \"" + e.key + "\" of " + fn_ + " must be " + want, "");
}

OptionEntryError OptionEntries::unknown(const OptionEntry& e) const {
  return OptionEntryError("unknown option \"" + e.key + "\" of " + fn_, "the options are " + known_);
}

bool OptionEntries::boolean(const OptionEntry& e) const {
  if (e.type != "boolean") throw bad(e, "true or false");
  return e.value == "true";
}

int64_t OptionEntries::whole(const OptionEntry& e, int64_t lo, int64_t hi, const std::string& what) const {
  const std::string want = what.empty() ? "a whole number >= " + std::to_string(lo) : what;
  if (e.type != "number" || e.value.empty() || e.value.find_first_not_of("0123456789") != std::string::npos ||
      e.value.size() > 18)
    throw bad(e, want);
  const int64_t v = std::stoll(e.value);
  if (v < lo || v > hi) throw bad(e, want);
  return v;
}

double OptionEntries::number(const OptionEntry& e, double lo, const std::string& what) const {
  char lo_text[32];
  snprintf(lo_text, sizeof lo_text, "%g", lo);
  const std::string want = what.empty() ? std::string("a number >= ") + lo_text : what;
  if (e.type != "number") throw bad(e, want);
  double v = NAN;
  try {
    v = std::stod(e.value);
  } catch (const std::exception&) {  // out of double's range
  }
  if (!std::isfinite(v) || !(v >= lo)) throw bad(e, want);
  return v;
}

std::string OptionEntries::choice(const OptionEntry& e, const std::vector<std::string>& allowed) const {
  std::string want;
  for (size_t i = 0; i < allowed.size(); ++i)
    want += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + ("'" + allowed[i] + "'");
  if (e.type == "string")
    for (const std::string& a : allowed)
      if (e.value == a) return a;
  throw bad(e, want);
}

}  // namespace mln
