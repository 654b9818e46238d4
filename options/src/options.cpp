// The validator over the options table (options/options.hpp).
#include "options/options.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <tuple>
#include <utility>
#include <vector>

namespace mln::options {

namespace {

// The word messages use for the kind of job: a learning job's options are
// "learning options", every other job's "inference options".
const char* kind_word(unsigned bits) { return (bits & kLearn) ? "learning" : "inference"; }

// The job task `bits` stand for, as mln.infer and mln.learn_weights name it.
const char* job_task(unsigned bits) {
  switch (bits) {
    case kMap: return "map";
    case kMarginal: return "marginal";
    case kInfer: return "dual";
    case kLearn: return "learn";
  }
  return "?";
}

// ---- JSON ------------------------------------------------------------------

// A reader of one JSON text; a syntax error throws OptionError.
class JsonReader {
 public:
  explicit JsonReader(std::string_view s) : s_(s) {}

  void ws() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t' || s_[p_] == '\n' || s_[p_] == '\r')) ++p_;
  }
  bool eat(char c) {
    ws();
    if (p_ < s_.size() && s_[p_] == c) return ++p_, true;
    return false;
  }
  bool at_end() { return ws(), p_ == s_.size(); }
  [[noreturn]] void fail() const {
    throw OptionError("options are not valid JSON", "for example '{\"seed\": 7}'");
  }
  void expect(char c) {
    if (!eat(c)) fail();
  }

  // A string's contents (after its opening quote), escapes decoded.
  std::string string_body() {
    std::string out;
    while (p_ < s_.size() && s_[p_] != '"') {
      char c = s_[p_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (p_ >= s_.size()) fail();
      c = s_[p_++];
      switch (c) {
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': append_utf8(out, hex4()); break;
        default: out += c;  // \" \\ \/
      }
    }
    if (p_ >= s_.size()) fail();
    ++p_;  // the closing quote
    return out;
  }

  // One value; its JSON text as written, its kind and a string's contents.
  JsonValue value() {
    ws();
    if (p_ >= s_.size()) fail();
    JsonValue v;
    const size_t b = p_;
    const char c = s_[p_];
    if (c == '"') {
      ++p_;
      v.kind = JsonValue::kString;
      v.str = string_body();
    } else if (c == '{' || c == '[') {
      v.kind = c == '{' ? JsonValue::kObject : JsonValue::kArray;
      skip_container();
    } else if (word("true") || word("false")) {
      v.kind = JsonValue::kBool;
    } else if (word("null")) {
      v.kind = JsonValue::kNull;
    } else {
      while (p_ < s_.size() && std::strchr("+-.0123456789eE", s_[p_])) ++p_;
      if (p_ == b) fail();
      v.kind = JsonValue::kNumber;
    }
    v.json = std::string(s_.substr(b, p_ - b));
    return v;
  }

 private:
  bool word(const char* w) {
    const size_t n = std::strlen(w);
    if (s_.compare(p_, n, w) != 0) return false;
    p_ += n;
    return true;
  }
  unsigned hex4() {
    if (p_ + 4 > s_.size()) fail();
    unsigned x = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = s_[p_++];
      x = x * 16 + (h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                                    : h >= 'A' && h <= 'F' ? h - 'A' + 10 : (fail(), 0));
    }
    return x;
  }
  static void append_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {  // surrogates stay as they are: option values are plain words
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  // Past a nested object or array (strings inside may hold brackets).
  void skip_container() {
    int depth = 0;
    do {
      if (p_ >= s_.size()) fail();
      const char c = s_[p_++];
      if (c == '"') string_body();
      else if (c == '{' || c == '[') ++depth;
      else if (c == '}' || c == ']') --depth;
    } while (depth > 0);
  }

  std::string_view s_;
  size_t p_ = 0;
};

// ---- numbers ---------------------------------------------------------------

// A decimal number as text: [-+]digits[.digits][e[-+]digits], with spaces
// around it (as mln.infer has always read numeric strings).
struct Decimal {
  bool negative = false;
  std::string digits;   // significant digits, no leading or trailing zeros ("" for 0)
  int64_t exponent = 0;  // value = digits x 10^exponent
  std::string text;     // the number without spaces or a leading '+', for from_chars
};

bool parse_decimal(std::string_view s, Decimal& d) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  size_t p = 0;
  if (p < s.size() && (s[p] == '-' || s[p] == '+')) d.negative = s[p++] == '-';
  d.text = std::string(s.substr(p));
  if (d.negative) d.text.insert(0, "-");
  std::string intd, fracd;
  while (p < s.size() && s[p] >= '0' && s[p] <= '9') intd += s[p++];
  if (p < s.size() && s[p] == '.') {
    ++p;
    while (p < s.size() && s[p] >= '0' && s[p] <= '9') fracd += s[p++];
  }
  if (intd.empty() && fracd.empty()) return false;
  int64_t exp = 0;
  if (p < s.size() && (s[p] == 'e' || s[p] == 'E')) {
    ++p;
    bool eneg = false;
    if (p < s.size() && (s[p] == '-' || s[p] == '+')) eneg = s[p++] == '-';
    if (p >= s.size()) return false;
    while (p < s.size() && s[p] >= '0' && s[p] <= '9') exp = std::min<int64_t>(exp * 10 + (s[p++] - '0'), 1 << 30);
    if (eneg) exp = -exp;
  }
  if (p != s.size()) return false;
  std::string all = intd + fracd;
  exp -= static_cast<int64_t>(fracd.size());
  size_t lead = all.find_first_not_of('0');
  all = lead == std::string::npos ? "" : all.substr(lead);
  while (!all.empty() && all.back() == '0') all.pop_back(), ++exp;
  d.digits = all;
  d.exponent = all.empty() ? 0 : exp;
  return true;
}

// The value of an integral Decimal; false beyond int64.
bool to_int64(const Decimal& d, int64_t& out) {
  if (d.digits.empty()) return out = 0, true;
  if (static_cast<int64_t>(d.digits.size()) + d.exponent > 19) return false;
  unsigned __int128 v = 0;
  for (char c : d.digits) v = v * 10 + static_cast<unsigned>(c - '0');
  for (int64_t i = 0; i < d.exponent; ++i) v *= 10;
  const unsigned __int128 limit = static_cast<unsigned __int128>(INT64_MAX) + (d.negative ? 1 : 0);
  if (v > limit) return false;
  out = d.negative ? static_cast<int64_t>(-static_cast<__int128>(v)) : static_cast<int64_t>(v);
  return true;
}

double to_double(const Decimal& d) {
  double x = 0;
  auto r = std::from_chars(d.text.data(), d.text.data() + d.text.size(), x);
  if (r.ec == std::errc::result_out_of_range)  // beyond a double: as large or as small as one gets
    x = (d.exponent > 0 ? kNoMax : 0.0) * (d.negative ? -1 : 1);
  return x;
}


std::string number_text(double v) {
  char t[32];
  std::snprintf(t, sizeof t, "%.15g", v);
  return t;
}

[[noreturn]] void out_of_range(const Spec& s, const std::string& json, unsigned bits) {
  throw OptionError("invalid value " + json + " for " + kind_word(bits) + " option \"" + s.name + "\"",
                    std::string(s.name) + " must be " + allowed_text(s));
}

// A number option's value: a JSON number or a string holding one.
Value check_numeric(const Spec& s, const JsonValue& v, unsigned bits) {
  Decimal d;
  if (!((v.kind == JsonValue::kNumber && parse_decimal(v.json, d)) ||
        (v.kind == JsonValue::kString && parse_decimal(v.str, d))))
    throw OptionError(std::string(kind_word(bits)) + " option \"" + s.name + "\" must be a number, not " + v.json,
                      "for example {\"" + std::string(s.name) + "\": 10}");
  Value out;
  out.set = true;
  if (s.type == Type::kInteger) {
    if (d.exponent < 0 || !to_int64(d, out.integer)) out_of_range(s, v.json, bits);
    out.number = static_cast<double>(out.integer);
  } else {
    out.number = to_double(d);
  }
  if (!in_range(s, out.number)) out_of_range(s, v.json, bits);
  return out;
}

}  // namespace

bool in_range(const Spec& s, double v) {
  return (s.lo_open ? v > s.lo : v >= s.lo) && (s.hi_open ? v < s.hi : v <= s.hi);
}

unsigned task_bits(std::string_view task) {
  for (unsigned bits : {kMap, kMarginal, kInfer, kLearn})
    if (task == job_task(bits)) return bits;
  return 0;
}

unsigned infer_task_bits(const char* task) {
  const unsigned bits = task ? task_bits(task) : 0;
  if (bits == 0 || bits == kLearn)
    throw OptionError("unknown inference task \"" + std::string(task ? task : "<NULL>") + "\"",
                      "tasks are map (the most likely world), marginal (MC-SAT probabilities) and dual (both, from "
                      "one job)");
  return bits;
}

const Spec* find(std::string_view name, unsigned bits) {
  for (const Spec& s : kSpecs)
    if ((s.tasks & bits) && name == s.name) return &s;
  return nullptr;
}

const Spec* find(Id id, unsigned bits) {
  for (const Spec& s : kSpecs)
    if ((s.tasks & bits) && s.id == id) return &s;
  return nullptr;
}

std::string task_name(unsigned tasks) {
  switch (tasks) {
    case kMap: return "map";
    case kMarginal: return "marginal";
    case kInfer: return "infer";
    case kLearn: return "learn";
    case kAnyTask: return "all";
  }
  if (tasks & kAnyTask) return "?";
  std::string out;
  for (const auto& [bit, name] : {std::pair{kDatalog, "datalog"}, {kProblog, "problog"}, {kRules, "rules"}})
    if (tasks & bit) out += (out.empty() ? "" : ", ") + std::string(name);
  return out.empty() ? "?" : out;
}

const char* type_name(Type t) {
  switch (t) {
    case Type::kInteger: return "integer";
    case Type::kNumber: return "number";
    case Type::kBoolean: return "boolean";
    case Type::kChoice: return "text";
  }
  return "?";
}

std::string allowed_text(const Spec& s, bool quoted) {
  if (s.allowed) return s.allowed;
  switch (s.type) {
    case Type::kBoolean: return "true or false";
    case Type::kChoice: {
      std::string out;
      for (size_t i = 0; s.choices[i]; ++i) {
        const std::string c = quoted ? "'" + std::string(s.choices[i]) + "'" : s.choices[i];
        out += (i == 0 ? "" : s.choices[i + 1] ? ", " : " or ") + c;
      }
      return out;
    }
    case Type::kInteger: return "a whole number >= " + number_text(s.lo);
    case Type::kNumber: return "a number >= " + number_text(s.lo);
  }
  return "?";
}

int choice_index(const Spec& s, std::string_view v) {
  if (s.type != Type::kChoice) return -1;
  for (int i = 0; s.choices[i]; ++i)
    if (v == s.choices[i]) return i;
  return -1;
}

std::string option_names(unsigned bits, bool listed, bool with_choices) {
  std::vector<std::string> names;
  for (const Spec& s : kSpecs) {
    if (!(s.tasks & bits)) continue;
    std::string n = s.name;
    if (with_choices && s.type == Type::kChoice) n += " (" + allowed_text(s, true) + ")";
    names.push_back(n);
  }
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : listed && i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

void check_range(const Spec& s, double v) {
  if (!in_range(s, v) || (s.type == Type::kInteger && v != std::floor(v))) {
    char got[32];
    std::snprintf(got, sizeof got, "%.17g", v);
    throw OptionError(std::string(s.name) + " must be " + allowed_text(s) + " (got " + got + ")", s.doc);
  }
}

std::vector<std::pair<std::string, JsonValue>> parse_object(std::string_view json) {
  JsonReader r(json);
  std::vector<std::pair<std::string, JsonValue>> out;
  JsonValue top = JsonReader(json).value();
  if (top.kind != JsonValue::kObject)
    throw OptionError("options must be a JSON object", "for example '{\"samples\": 1000, \"seed\": 7}'");
  r.expect('{');
  if (!r.eat('}')) {
    do {
      r.expect('"');
      std::string key = r.string_body();
      r.expect(':');
      JsonValue v = r.value();
      bool seen = false;
      for (auto& kv : out)
        if (kv.first == key) kv.second = v, seen = true;
      if (!seen) out.emplace_back(std::move(key), std::move(v));
    } while (r.eat(','));
    r.expect('}');
  }
  if (!r.at_end()) r.fail();
  return out;
}

Value check(const Spec& s, const JsonValue& v, unsigned bits) {
  if (v.kind == JsonValue::kNull) return {};
  Value out;
  out.set = true;
  switch (s.type) {
    case Type::kInteger:
    case Type::kNumber:
      return check_numeric(s, v, bits);
    case Type::kBoolean:
      if (v.kind == JsonValue::kBool || (v.kind == JsonValue::kString && (v.str == "true" || v.str == "false"))) {
        out.boolean = v.json == "true" || v.str == "true";
        return out;
      }
      throw OptionError(std::string(kind_word(bits)) + " option \"" + s.name + "\" must be true or false, not " + v.json,
                        "for example {\"" + std::string(s.name) + "\": true}");
    case Type::kChoice:
      if (v.kind == JsonValue::kString && is_choice(s, v.str)) {
        out.integer = choice_index(s, v.str);
        out.text = v.str;
        return out;
      }
      throw OptionError(std::string("invalid ") + ((bits & kLearn) ? "learning " : "") + s.name + " " + v.json,
                        std::string(s.name) + " must be " + allowed_text(s) + ": " + s.doc);
  }
  return out;
}

Values decode(unsigned bits, std::string_view options_json) {
  std::vector<std::pair<std::string, JsonValue>> members;
  try {
    members = parse_object(options_json);
  } catch (const OptionError& e) {
    if (bits != kLearn) throw;
    throw OptionError(e.what(), "for example '{\"iterations\": 50, \"samples\": 200}'");
  }
  // Every name first, then every value: a misspelt option is named before
  // another option's value.
  for (const auto& [key, v] : members) {
    if (find(key, bits)) continue;
    const std::string task = job_task(bits), list = option_names(bits);
    if (bits & kLearn)
      throw OptionError("unknown learning option \"" + key + "\"", "learning options: " + list);
    for (auto [side, what, tasks] : {std::tuple{kMap, "MAP", "'map' or 'dual'"},
                                     std::tuple{kMarginal, "marginal", "'marginal' or 'dual'"}})
      if (find(key, side))
        throw OptionError("inference option \"" + key + "\" applies to " + what + " inference, not to task \"" + task +
                              "\"",
                          std::string("use task => ") + tasks + "; options of task " + task + ": " + list);
    throw OptionError("unknown inference option \"" + key + "\"", "options of task " + task + ": " + list);
  }
  Values out;
  for (const auto& [key, v] : members) {
    const Spec& s = *find(key, bits);
    out.put(s.id, check(s, v, bits));
  }
  return out;
}

}  // namespace mln::options
