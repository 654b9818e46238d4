// The built-in table (see builtins.hpp), the value casts both evaluators
// share, and the expansion of a row's SQL spelling.
#include "lang/builtins.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <unordered_map>

#include "lang/builtins_fn.hpp"
#include "lang/program.hpp"

namespace mln::lang {

namespace {

namespace fn = builtin_fn;
using T = BuiltinType;
constexpr bool F = false;  // called by name
constexpr bool O = true;   // an operator

// Aliases are rows of their own with the same spelling.  Operators' samples
// are whole expressions; functions' samples are their argument lists.
const std::vector<Builtin> kTable = {
    {"abs", F, 1, 1, "n", T::Num, "abs($1)", fn::abs, "-2.5", "2.5"},
    {"sign", F, 1, 1, "n", T::Num, "sign($1)", fn::sign, "-3", "-1"},
    {"exp", F, 1, 1, "n", T::Num, "exp($1)", fn::exp, "1", "2.718281828459045"},
    {"ceil", F, 1, 1, "n", T::Num, "ceil($1)", fn::ceil, "2.1", "3"},
    {"ceiling", F, 1, 1, "n", T::Num, "ceil($1)", fn::ceil, "-2.1", "-2"},
    {"floor", F, 1, 1, "n", T::Num, "floor($1)", fn::floor, "-2.1", "-3"},
    {"trunc", F, 1, 1, "n", T::Num, "trunc($1)", fn::trunc, "-2.7", "-2"},
    {"round", F, 1, 1, "n", T::Num, "round($1)", fn::round, "2.5", "2"},
    {"ln", F, 1, 1, "n", T::Num, "ln($1)", fn::ln, "10", "2.302585092994046"},
    {"lg", F, 1, 1, "n", T::Num, "log($1)", fn::log10, "1000", "3"},
    {"log", F, 1, 1, "n", T::Num, "log($1)", fn::log10, "0.01", "-2"},
    {"log", F, 2, 2, "nn", T::Num, "(ln($2) / ln($1))", fn::log_base, "2, 1024", "10"},
    {"pow", F, 2, 2, "nn", T::Num, "power($1, $2)", fn::power, "2, 10", "1024"},
    {"power", F, 2, 2, "nn", T::Num, "power($1, $2)", fn::power, "2, 0.5", "1.4142135623730951"},
    {"sqrt", F, 1, 1, "n", T::Num, "sqrt($1)", fn::sqrt, "2.25", "1.5"},
    {"sin", F, 1, 1, "n", T::Num, "sin($1)", fn::sin, "1", "0.8414709848078965"},
    {"cos", F, 1, 1, "n", T::Num, "cos($1)", fn::cos, "1", "0.5403023058681398"},
    {"tan", F, 1, 1, "n", T::Num, "tan($1)", fn::tan, "1", "1.5574077246549023"},
    {"factorial", F, 1, 1, "i", T::Num, "factorial($1)::float8", fn::factorial, "5", "120"},
    {"add", F, 2, 2, "nn", T::Num, "($1 + $2)", fn::add, "2, 0.5", "2.5"},
    {"subtract", F, 2, 2, "nn", T::Num, "($1 - $2)", fn::subtract, "2, 0.5", "1.5"},
    {"multiply", F, 2, 2, "nn", T::Num, "($1 * $2)", fn::multiply, "3, 0.5", "1.5"},
    {"divide", F, 2, 2, "nn", T::Num, "($1 / $2)", fn::divide, "7, 2", "3.5"},
    {"mod", F, 2, 2, "nn", T::Num, "($1 - $2 * trunc($1 / $2))", fn::mod, "-7, 3", "-1"},
    {"bitand", F, 2, 2, "ii", T::Int, "($1 & $2)", fn::bit_and, "12, 10", "8"},
    {"bitor", F, 2, 2, "ii", T::Int, "($1 | $2)", fn::bit_or, "12, 10", "14"},
    {"bitxor", F, 2, 2, "ii", T::Int, "($1 # $2)", fn::bit_xor, "12, 10", "6"},
    {"bitshiftleft", F, 2, 2, "ii", T::Int, "($1 << ($2)::int4)", fn::shift_left, "1, 4", "16"},
    {"bitshiftright", F, 2, 2, "ii", T::Int, "($1 >> ($2)::int4)", fn::shift_right, "-16, 2", "-4"},
    {"length", F, 1, 1, "t", T::Int, "length($1)", fn::length, "\"h\xC3\xA9llo\"", "5"},
    {"len", F, 1, 1, "t", T::Int, "length($1)", fn::length, "\"abc\"", "3"},
    {"strlen", F, 1, 1, "t", T::Int, "length($1)", fn::length, "12.5", "4"},
    {"upper", F, 1, 1, "t", T::Text, "upper($1 COLLATE \"C\")", fn::upper, "\"ab1c\"", "\"AB1C\""},
    {"lower", F, 1, 1, "t", T::Text, "lower($1 COLLATE \"C\")", fn::lower, "\"AB1C\"", "\"ab1c\""},
    {"trim", F, 1, 1, "t", T::Text, "btrim($1)", fn::trim, "\"  a b  \"", "\"a b\""},
    {"initcap", F, 1, 1, "t", T::Text, "initcap($1 COLLATE \"C\")", fn::initcap, "\"hello wORLD x2y\"",
     "\"Hello World X2y\""},
    {"md5", F, 1, 1, "t", T::Text, "md5($1)", fn::md5, "\"abc\"", "\"900150983cd24fb0d6963f7d28e17f72\""},
    {"concat", F, 1, -1, "t", T::Text, "concat($*)", fn::concat, "\"a\", 1.5, 2", "\"a1.52\""},
    {"strpos", F, 2, 2, "tt", T::Int, "strpos($1, $2)", fn::strpos, "\"h\xC3\xA9llo\", \"l\"", "3"},
    {"repeat", F, 2, 2, "ti", T::Text, "repeat($1, ($2)::int4)", fn::repeat, "\"ab\", 3", "\"ababab\""},
    {"substr", F, 2, 2, "ti", T::Text, "substr($1, ($2)::int4)", fn::substr, "\"h\xC3\xA9llo\", 2",
     "\"\xC3\xA9llo\""},
    {"substr", F, 3, 3, "tii", T::Text, "substr($1, ($2)::int4, ($3)::int4)", fn::substr, "\"hello\", 0, 3",
     "\"he\""},
    {"replace", F, 3, 3, "ttt", T::Text, "replace($1, $2, $3)", fn::replace, "\"banana\", \"an\", \"AN\"",
     "\"bANANa\""},
    {"split_part", F, 3, 3, "tti", T::Text, "split_part($1, $2, ($3)::int4)", fn::split_part,
     "\"a,b,c\", \",\", -1", "\"c\""},
    {"regex_replace", F, 3, 3, "ttt", T::Text, "regexp_replace($1, $2, $3)", fn::regexp_replace,
     "\"ab12cd34\", \"[0-9]+\", \"<\\\\&>\"", "\"ab<12>cd34\""},
    {"regexp_replace", F, 3, 3, "ttt", T::Text, "regexp_replace($1, $2, $3)", fn::regexp_replace,
     "\"abc-def\", \"([a-z]+)-([a-z]+)\", \"\\\\2 \\\\1\"", "\"def abc\""},
    {"contains", F, 2, 2, "tt", T::Bool, "(strpos($1, $2) > 0)", fn::contains, "\"hello\", \"ell\"", "1"},
    {"startswith", F, 2, 2, "tt", T::Bool, "starts_with($1, $2)", fn::starts_with, "\"hello\", \"hex\"", "0"},
    {"endswith", F, 2, 2, "tt", T::Bool, "(right($1, length($2)) = $2)", fn::ends_with, "\"hello\", \"lo\"",
     "1"},

    {"+", O, 2, 2, "nn", T::Num, "($1 + $2)", fn::add, "1.5 + 2", "3.5"},
    {"-", O, 2, 2, "nn", T::Num, "($1 - $2)", fn::subtract, "1.5 - 2", "-0.5"},
    {"*", O, 2, 2, "nn", T::Num, "($1 * $2)", fn::multiply, "1.5 * 3", "4.5"},
    {"/", O, 2, 2, "nn", T::Num, "($1 / $2)", fn::divide, "1 / 4", "0.25"},
    {"%", O, 2, 2, "nn", T::Num, "($1 - $2 * trunc($1 / $2))", fn::mod, "7.5 % 2", "1.5"},
    {"&", O, 2, 2, "ii", T::Int, "($1 & $2)", fn::bit_and, "12 & 10", "8"},
    {"|", O, 2, 2, "ii", T::Int, "($1 | $2)", fn::bit_or, "12 | 10", "14"},
    {"^", O, 2, 2, "ii", T::Int, "($1 # $2)", fn::bit_xor, "12 ^ 10", "6"},
    {"<<", O, 2, 2, "ii", T::Int, "($1 << ($2)::int4)", fn::shift_left, "3 << 2", "12"},
    {">>", O, 2, 2, "ii", T::Int, "($1 >> ($2)::int4)", fn::shift_right, "2.5 >> 1", "1"},
    {"~", O, 1, 1, "i", T::Int, "(~$1)", fn::bit_not, "~5", "-6"},
    {"fact", O, 1, 1, "i", T::Num, "factorial($1)::float8", fn::factorial, "4!", "24"},
};

std::string key(std::string_view name, bool is_operator) {
  return std::string(is_operator ? "o:" : "f:") + std::string(name);
}

// Rows by key, in table order (arities ascending).
const std::unordered_map<std::string, std::vector<const Builtin*>>& index() {
  static const auto* idx = [] {
    auto* m = new std::unordered_map<std::string, std::vector<const Builtin*>>();
    for (const Builtin& b : kTable) (*m)[key(b.name, b.is_operator)].push_back(&b);
    return m;
  }();
  return *idx;
}

// The float8 cast to int8 (PostgreSQL's dtoi8: rint, then a range check).
double to_int8(double d) {
  if (std::isnan(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0)
    builtin_fn::fail("bigint out of range");
  return std::nearbyint(d);
}

}  // namespace

Value num_value(double d) {
  Value v;
  v.num = d;
  return v;
}

Value text_value(std::string s) {
  Value v;
  v.is_str = true;
  v.str = std::move(s);
  return v;
}

double value_num(const Value& v) {
  if (!v.is_str) return v.num;
  const char* s = v.str.c_str();
  char* end = nullptr;
  double d = std::strtod(s, &end);
  while (end && *end && std::isspace(static_cast<unsigned char>(*end))) ++end;
  if (v.str.empty() || end == s || (end && *end))
    throw LangError(LangError::Kind::BadValue, 0, 0, v.str,
                    "invalid input syntax for type double precision: \"" + v.str + "\"");
  return d;
}

// PostgreSQL's float8out (extra_float_digits > 0): the shortest digits that
// read back exactly, fixed-point for exponents -4..14, else d.ddde+XX.
static std::string number_text_pg(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  if (d == 0) return std::signbit(d) ? "-0" : "0";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, r.ptr), sign;
  if (sci[0] == '-') { sign = "-"; sci.erase(0, 1); }
  const size_t e = sci.find('e');
  const int exp = std::atoi(sci.c_str() + e + 1);
  std::string digits = sci.substr(0, e);
  if (digits.size() > 1) digits.erase(1, 1);  // the point
  if (exp < -4 || exp >= 15) {
    std::string x = std::to_string(exp < 0 ? -exp : exp);
    return sign + digits.substr(0, 1) + (digits.size() > 1 ? "." + digits.substr(1) : "") + "e" +
           (exp < 0 ? "-" : "+") + (x.size() < 2 ? "0" : "") + x;
  }
  if (exp < 0) return sign + "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
  const size_t whole = static_cast<size_t>(exp) + 1;
  if (digits.size() <= whole) return sign + digits + std::string(whole - digits.size(), '0');
  return sign + digits.substr(0, whole) + "." + digits.substr(whole);
}

std::string value_text(const Value& v) {
  if (v.is_str) return v.str;
  if (std::floor(v.num) == v.num && std::fabs(v.num) < 1e15) return std::to_string(static_cast<long long>(v.num));
  return number_text_pg(v.num);
}

bool value_truthy(const Value& v) {
  return v.is_str ? !v.str.empty() && v.str != "f" && v.str != "false" : v.num != 0;
}

const std::vector<Builtin>& builtins() { return kTable; }

const Builtin* find_builtin(std::string_view name, size_t nargs, bool is_operator) {
  auto it = index().find(key(name, is_operator));
  if (it == index().end()) return nullptr;
  for (const Builtin* b : it->second)
    if (nargs >= static_cast<size_t>(b->min_args) && (b->max_args < 0 || nargs <= static_cast<size_t>(b->max_args)))
      return b;
  return nullptr;
}

bool is_builtin_function(std::string_view lower_name) { return index().count(key(lower_name, false)) > 0; }

std::string builtin_arity_text(std::string_view lower_name) {
  auto it = index().find(key(lower_name, false));
  if (it == index().end()) return "";
  int lo = it->second.front()->min_args, hi = it->second.back()->max_args;
  auto args = [](int k) { return std::to_string(k) + (k == 1 ? " argument" : " arguments"); };
  if (hi < 0) return "takes " + std::to_string(lo) + " or more arguments";
  if (lo == hi) return "takes " + args(lo);
  return "takes " + std::to_string(lo) + (hi == lo + 1 ? " or " : " to ") + args(hi);
}

BuiltinType builtin_arg_type(const Builtin& b, size_t i) {
  const std::string_view t(b.arg_types);
  return static_cast<BuiltinType>(t[std::min(i, t.size() - 1)]);
}

Value eval_builtin(const Builtin& b, std::vector<Value> args) {
  bool finite = true;
  for (size_t i = 0; i < args.size(); ++i) {
    switch (builtin_arg_type(b, i)) {
      case BuiltinType::Text: args[i] = text_value(value_text(args[i])); break;
      case BuiltinType::Int: args[i] = num_value(to_int8(value_num(args[i]))); break;
      default: args[i] = num_value(value_num(args[i])); finite = finite && std::isfinite(args[i].num);
    }
  }
  Value r = b.eval(args);
  // PostgreSQL's float8 functions and operators refuse a result that
  // overflows from finite arguments.
  if (b.result == BuiltinType::Num && finite && !std::isfinite(r.num)) builtin_fn::fail("value out of range: overflow");
  return r;
}

std::string sql_num(const SqlValue& v) { return v.is_str ? "(" + v.sql + ")::float8" : v.sql; }

std::string sql_text(const SqlValue& v) {
  if (v.is_str) return v.sql;
  return "(CASE WHEN " + v.sql + " = trunc(" + v.sql + ") AND abs(" + v.sql + ") < 1e15 THEN trunc(" + v.sql +
         ")::int8::text ELSE (" + v.sql + ")::text END)";
}

std::string sql_truthy(const SqlValue& v) {
  return v.is_str ? "(" + v.sql + " NOT IN ('', 'f', 'false'))" : "(" + v.sql + " <> 0)";
}

SqlValue sql_bool(const std::string& cond) { return {false, "(CASE WHEN " + cond + " THEN 1 ELSE 0 END)::float8"}; }

SqlValue builtin_sql(const Builtin& b, const std::vector<SqlValue>& args) {
  std::vector<std::string> a;
  for (size_t i = 0; i < args.size(); ++i) {
    switch (builtin_arg_type(b, i)) {
      case BuiltinType::Text: a.push_back(sql_text(args[i])); break;
      case BuiltinType::Int: a.push_back("(" + sql_num(args[i]) + ")::int8"); break;
      default: a.push_back(sql_num(args[i]));
    }
  }
  std::string s;
  for (const char* p = b.sql; *p; ++p) {
    if (p[0] == '$' && p[1] == '*') {
      for (size_t i = 0; i < a.size(); ++i) s += (i ? ", " : "") + a[i];
      ++p;
    } else if (p[0] == '$' && p[1] >= '1' && p[1] <= '9') {
      s += a.at(static_cast<size_t>(p[1] - '1'));
      ++p;
    } else {
      s += *p;
    }
  }
  switch (b.result) {
    case BuiltinType::Text: return {true, s};
    case BuiltinType::Bool: return sql_bool(s);
    case BuiltinType::Int: return {false, "(" + s + ")::float8"};
    default: return {false, s};
  }
}

}  // namespace mln::lang
