// The functions' options table and its reader (options/option_entries.hpp).
#include "options/option_entries.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>

namespace mln {

namespace {

std::string number_text(double v) {
  char t[32];
  std::snprintf(t, sizeof t, "%.15g", v);
  return t;
}

std::vector<std::string> split_choices(const char* c) {
  std::vector<std::string> out;
  std::string s = c ? c : "";
  for (size_t b = 0;;) {
    const size_t e = s.find('|', b);
    out.push_back(s.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) return out;
    b = e + 1;
  }
}

// "a, b or c"
std::string listed(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return out;
}

}  // namespace

std::string entry_fn_names(unsigned fns) {
  std::string out;
  const std::pair<unsigned, const char*> names[] = {
      {kDatalogOptions, "datalog"}, {kProblogOptions, "problog"}, {kRulesOptions, "rules"}};
  for (const auto& n : names)
    if (fns & n.first) out += (out.empty() ? "" : ", ") + std::string(n.second);
  return out;
}

std::string entry_allowed(const EntrySpec& s) {
  if (s.allowed) return s.allowed;
  switch (s.type) {
    case options::Type::kBoolean: return "true or false";
    case options::Type::kChoice: {
      std::vector<std::string> q;
      for (const std::string& c : split_choices(s.choices)) q.push_back("'" + c + "'");
      std::string out;
      for (size_t i = 0; i < q.size(); ++i) out += (i == 0 ? "" : i + 1 == q.size() ? " or " : ", ") + q[i];
      return out;
    }
    case options::Type::kInteger: return "a whole number >= " + number_text(s.lo);
    case options::Type::kNumber: return "a number >= " + number_text(s.lo);
  }
  return "?";
}

std::string entry_option_list(unsigned fn) {
  std::vector<std::string> names;
  for (const EntrySpec& s : kEntrySpecs) {
    if (!(s.fns & fn)) continue;
    std::string n = s.name;
    if (s.type == options::Type::kChoice) n += " (" + entry_allowed(s) + ")";
    names.push_back(n);
  }
  return listed(names);
}

OptionEntries::OptionEntries(std::vector<OptionEntry> entries, std::string fn, OptionFn fn_bits)
    : fn_(std::move(fn)), bits_(fn_bits) {
  for (OptionEntry& e : entries)
    if (e.type != "null") entries_.push_back(std::move(e));
}

void OptionEntries::reject_unknown() const {
  for (const OptionEntry& e : entries_) {
    bool known = false;
    for (const EntrySpec& s : kEntrySpecs) known |= (s.fns & bits_) && e.key == s.name;
    if (!known) throw OptionEntryError("unknown option \"" + e.key + "\" of " + fn_, "the options are " + entry_option_list(bits_));
  }
}

const EntrySpec& OptionEntries::spec(const char* name) const {
  for (const EntrySpec& s : kEntrySpecs)
    if ((s.fns & bits_) && std::strcmp(s.name, name) == 0) return s;
  throw std::logic_error(std::string("option table: no option \"") + name + "\" of " + fn_);
}

const OptionEntry* OptionEntries::entry(const char* name) const {
  for (const OptionEntry& e : entries_)
    if (e.key == name) return &e;
  return nullptr;
}

bool OptionEntries::given(const char* name) const {
  spec(name);
  return entry(name) != nullptr;
}

OptionEntryError OptionEntries::bad(const EntrySpec& s) const {
  return OptionEntryError("option \"" + std::string(s.name) + "\" of " + fn_ + " must be " + entry_allowed(s), "");
}

bool OptionEntries::boolean(const char* name) const {
  const EntrySpec& s = spec(name);
  const OptionEntry* e = entry(name);
  if (!e) return std::strcmp(s.def, "true") == 0;
  if (e->type != "boolean") throw bad(s);
  return e->value == "true";
}

int64_t OptionEntries::whole(const char* name) const {
  const EntrySpec& s = spec(name);
  const OptionEntry* e = entry(name);
  if (!e) return std::stoll(s.def);
  if (e->type != "number" || e->value.empty() || e->value.find_first_not_of("0123456789") != std::string::npos ||
      e->value.size() > 18)
    throw bad(s);
  const int64_t v = std::stoll(e->value);
  if (static_cast<double>(v) < s.lo || static_cast<double>(v) > s.hi) throw bad(s);
  return v;
}

double OptionEntries::number(const char* name) const {
  const EntrySpec& s = spec(name);
  const OptionEntry* e = entry(name);
  if (!e) return std::stod(s.def);
  if (e->type != "number") throw bad(s);
  double v = NAN;
  try {
    v = std::stod(e->value);
  } catch (const std::exception&) {  // out of double's range
  }
  const bool above = s.lo_open ? v > s.lo : v >= s.lo;
  const bool below = s.hi <= s.lo ? true : s.hi_open ? v < s.hi : v <= s.hi;  // hi <= lo: no upper bound
  if (!std::isfinite(v) || !above || !below) throw bad(s);
  return v;
}

std::string OptionEntries::choice(const char* name) const {
  const EntrySpec& s = spec(name);
  const OptionEntry* e = entry(name);
  if (!e) return s.def;
  if (e->type == "string")
    for (const std::string& c : split_choices(s.choices))
      if (e->value == c) return c;
  throw bad(s);
}

}  // namespace mln
