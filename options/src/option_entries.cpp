// The functions' options reader (options/option_entries.hpp).
#include "options/option_entries.hpp"

#include <cmath>
#include <cstring>
#include <utility>

namespace mln {

using options::Spec;

OptionEntries::OptionEntries(std::vector<OptionEntry> entries, std::string fn, OptionFn fn_bits)
    : fn_(std::move(fn)), bits_(fn_bits) {
  for (OptionEntry& e : entries)
    if (e.type != "null") entries_.push_back(std::move(e));
}

void OptionEntries::reject_unknown() const {
  for (const OptionEntry& e : entries_)
    if (!options::find(e.key, bits_))
      throw OptionEntryError("unknown option \"" + e.key + "\" of " + fn_,
                             "the options are " + options::option_names(bits_, true, true));
}

const Spec& OptionEntries::spec(options::Id id) const {
  if (const Spec* s = options::find(id, bits_)) return *s;
  throw std::logic_error("options table: option " + std::to_string(static_cast<int>(id)) + " has no row of " + fn_);
}

const OptionEntry* OptionEntries::entry(const Spec& s) const {
  for (const OptionEntry& e : entries_)
    if (e.key == s.name) return &e;
  return nullptr;
}

bool OptionEntries::given(options::Id id) const { return entry(spec(id)) != nullptr; }

OptionEntryError OptionEntries::bad(const Spec& s) const {
  return OptionEntryError("option \"" + std::string(s.name) + "\" of " + fn_ + " must be " +
                              options::allowed_text(s, true),
                          "");
}

bool OptionEntries::boolean(options::Id id) const {
  const Spec& s = spec(id);
  const OptionEntry* e = entry(s);
  if (!e) return std::strcmp(s.def, "true") == 0;
  if (e->type != "boolean") throw bad(s);
  return e->value == "true";
}

int64_t OptionEntries::whole(options::Id id) const {
  const Spec& s = spec(id);
  const OptionEntry* e = entry(s);
  if (!e) return std::stoll(s.def);
  if (e->type != "number" || e->value.empty() || e->value.find_first_not_of("0123456789") != std::string::npos ||
      e->value.size() > 18)
    throw bad(s);
  const int64_t v = std::stoll(e->value);
  if (!options::in_range(s, static_cast<double>(v))) throw bad(s);
  return v;
}

double OptionEntries::number(options::Id id) const {
  const Spec& s = spec(id);
  const OptionEntry* e = entry(s);
  if (!e) return std::stod(s.def);
  if (e->type != "number") throw bad(s);
  double v = NAN;
  try {
    v = std::stod(e->value);
  } catch (const std::exception&) {  // out of double's range
  }
  if (!std::isfinite(v) || !options::in_range(s, v)) throw bad(s);
  return v;
}

std::string OptionEntries::choice(options::Id id) const {
  const Spec& s = spec(id);
  const OptionEntry* e = entry(s);
  if (!e) return s.def;
  if (e->type == "string" && options::is_choice(s, e->value)) return e->value;
  throw bad(s);
}

}  // namespace mln
