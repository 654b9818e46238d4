// Host implementations of the built-in functions, each PostgreSQL 15's
// function of the same row (see builtins_fn.hpp): the same results, and an
// error where PostgreSQL raises one.
#include "lang/builtins_fn.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <regex>

#include "lang/program.hpp"

namespace mln::lang::builtin_fn {

namespace {

double n(const Args& a, size_t i) { return a.at(i).num; }
const std::string& s(const Args& a, size_t i) { return a.at(i).str; }
int64_t i64(const Args& a, size_t i) { return static_cast<int64_t>(a.at(i).num); }
Value num(double d) { return num_value(d); }
Value txt(std::string t) { return text_value(std::move(t)); }
Value flag(bool b) { return num_value(b ? 1 : 0); }

// An int8 argument the SQL casts to int4 (repeat, substr, split_part, shifts).
int32_t i32(const Args& a, size_t i) {
  int64_t v = i64(a, i);
  if (v < INT32_MIN || v > INT32_MAX) fail("integer out of range");
  return static_cast<int32_t>(v);
}

// Characters of UTF-8 text (continuation bytes are 10xxxxxx).
size_t utf8_length(const std::string& t) {
  size_t c = 0;
  for (unsigned char ch : t) c += (ch & 0xC0) != 0x80;
  return c;
}

// Byte offset of character `k` (0-based), or the text's size past its end.
size_t utf8_offset(const std::string& t, size_t k) {
  size_t i = 0;
  for (; i < t.size(); ++i)
    if ((static_cast<unsigned char>(t[i]) & 0xC0) != 0x80 && k-- == 0) return i;
  return t.size();
}

char ascii_upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }
char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
bool ascii_alnum(char c) { return (c >= '0' && c <= '9') || ascii_upper(c) != ascii_lower(c); }

// ln and log10 refuse what PostgreSQL's dlog1/dlog10 refuse.
double log_arg(double x) {
  if (x == 0) fail("cannot take logarithm of zero");
  if (x < 0) fail("cannot take logarithm of a negative number");
  return x;
}

double divisor(double y) {
  if (y == 0) fail("division by zero");
  return y;
}

}  // namespace

void fail(const std::string& message) {
  throw LangError(LangError::Kind::BadValue, 0, 0, "", message);
}

Value abs(const Args& a) { return num(std::fabs(n(a, 0))); }
Value sign(const Args& a) { return num(n(a, 0) > 0 ? 1 : n(a, 0) < 0 ? -1 : 0); }
Value exp(const Args& a) { return num(std::exp(n(a, 0))); }
Value ceil(const Args& a) { return num(std::ceil(n(a, 0))); }
Value floor(const Args& a) { return num(std::floor(n(a, 0))); }
Value trunc(const Args& a) { return num(std::trunc(n(a, 0))); }
// PostgreSQL's round(float8) is rint(): halves go to the even neighbour.
Value round(const Args& a) { return num(std::nearbyint(n(a, 0))); }
Value ln(const Args& a) { return num(std::log(log_arg(n(a, 0)))); }
Value log10(const Args& a) { return num(std::log10(log_arg(n(a, 0)))); }
// log(b, x), spelled ln(x) / ln(b) in SQL (PostgreSQL has no float8 log(b, x)).
Value log_base(const Args& a) {
  double lx = std::log(log_arg(n(a, 1)));
  return num(lx / divisor(std::log(log_arg(n(a, 0)))));
}
Value power(const Args& a) {
  double x = n(a, 0), y = n(a, 1);
  if (x == 0 && y < 0) fail("zero raised to a negative power is undefined");
  if (x < 0 && std::floor(y) != y) fail("a negative number raised to a non-integer power yields a complex result");
  return num(std::pow(x, y));
}
Value sqrt(const Args& a) {
  if (n(a, 0) < 0) fail("cannot take square root of a negative number");
  return num(std::sqrt(n(a, 0)));
}
Value sin(const Args& a) { return num(std::sin(n(a, 0))); }
Value cos(const Args& a) { return num(std::cos(n(a, 0))); }
Value tan(const Args& a) { return num(std::tan(n(a, 0))); }
Value factorial(const Args& a) {
  int64_t k = i64(a, 0);
  if (k < 0) fail("factorial of a negative number is undefined");
  if (k > 170) fail("value out of range: overflow");  // numeric -> float8
  double r = 1;
  for (int64_t i = 2; i <= k; ++i) r *= static_cast<double>(i);
  return num(r);
}
Value add(const Args& a) { return num(n(a, 0) + n(a, 1)); }
Value subtract(const Args& a) { return num(n(a, 0) - n(a, 1)); }
Value multiply(const Args& a) { return num(n(a, 0) * n(a, 1)); }
Value divide(const Args& a) { return num(n(a, 0) / divisor(n(a, 1))); }
Value mod(const Args& a) { return num(std::fmod(n(a, 0), divisor(n(a, 1)))); }
Value bit_and(const Args& a) { return num(static_cast<double>(i64(a, 0) & i64(a, 1))); }
Value bit_or(const Args& a) { return num(static_cast<double>(i64(a, 0) | i64(a, 1))); }
Value bit_xor(const Args& a) { return num(static_cast<double>(i64(a, 0) ^ i64(a, 1))); }
Value bit_not(const Args& a) { return num(static_cast<double>(~i64(a, 0))); }
// int8 << int4 as PostgreSQL's int8shl runs on x86-64: the count taken mod 64.
Value shift_left(const Args& a) {
  uint64_t x = static_cast<uint64_t>(i64(a, 0)) << (i32(a, 1) & 63);
  return num(static_cast<double>(static_cast<int64_t>(x)));
}
Value shift_right(const Args& a) { return num(static_cast<double>(i64(a, 0) >> (i32(a, 1) & 63))); }

Value length(const Args& a) { return num(static_cast<double>(utf8_length(s(a, 0)))); }
Value upper(const Args& a) {
  std::string r = s(a, 0);
  for (char& c : r) c = ascii_upper(c);
  return txt(std::move(r));
}
Value lower(const Args& a) {
  std::string r = s(a, 0);
  for (char& c : r) c = ascii_lower(c);
  return txt(std::move(r));
}
Value trim(const Args& a) {
  const std::string& r = s(a, 0);
  size_t b = r.find_first_not_of(' '), e = r.find_last_not_of(' ');
  return txt(b == std::string::npos ? "" : r.substr(b, e - b + 1));
}
// Words are runs of letters and digits: each starts upper case, goes on lower.
Value initcap(const Args& a) {
  std::string r = s(a, 0);
  bool in_word = false;
  for (char& c : r) {
    c = in_word ? ascii_lower(c) : ascii_upper(c);
    in_word = ascii_alnum(c);
  }
  return txt(std::move(r));
}
Value md5(const Args& a) { return txt(md5_hex(s(a, 0))); }
Value concat(const Args& a) {
  std::string r;
  for (const Value& v : a) r += v.str;
  return txt(std::move(r));
}
Value strpos(const Args& a) {
  size_t p = s(a, 0).find(s(a, 1));
  return num(p == std::string::npos ? 0 : static_cast<double>(utf8_length(s(a, 0).substr(0, p)) + 1));
}
Value repeat(const Args& a) {
  std::string r;
  for (int32_t i = 0; i < i32(a, 1); ++i) r += s(a, 0);
  return txt(std::move(r));
}
// PostgreSQL's text_substr: characters from max(start, 1) up to start + len.
Value substr(const Args& a) {
  const std::string& t = s(a, 0);
  int64_t start = i32(a, 1), end = INT64_MAX;
  if (a.size() > 2) {
    int64_t len = i32(a, 2);
    if (len < 0) fail("negative substring length not allowed");
    end = start + len;
  }
  int64_t from = std::max<int64_t>(start, 1);
  if (end <= from) return txt("");
  size_t b = utf8_offset(t, static_cast<size_t>(from - 1));
  size_t e = end == INT64_MAX ? t.size() : utf8_offset(t, static_cast<size_t>(end - 1));
  return txt(t.substr(b, e - b));
}
Value replace(const Args& a) {
  const std::string &x = s(a, 0), &from = s(a, 1), &to = s(a, 2);
  if (from.empty()) return txt(x);
  std::string r;
  size_t pos = 0, q;
  while ((q = x.find(from, pos)) != std::string::npos) {
    r += x.substr(pos, q - pos) + to;
    pos = q + from.size();
  }
  return txt(r + x.substr(pos));
}
// PostgreSQL 15's split_part: field k from the start, or -k from the end.
Value split_part(const Args& a) {
  const std::string &x = s(a, 0), &d = s(a, 1);
  int32_t k = i32(a, 2);
  if (k == 0) fail("field position must not be zero");
  if (x.empty()) return txt("");
  if (d.empty()) return txt(k == 1 || k == -1 ? x : "");
  std::vector<std::string> parts;
  size_t pos = 0, q;
  while ((q = x.find(d, pos)) != std::string::npos) {
    parts.push_back(x.substr(pos, q - pos));
    pos = q + d.size();
  }
  parts.push_back(x.substr(pos));
  const int64_t m = static_cast<int64_t>(parts.size());
  int64_t i = k > 0 ? k - 1 : m + k;
  return txt(i >= 0 && i < m ? parts[static_cast<size_t>(i)] : "");
}
// The first match replaced; in the replacement \1..\9 are groups, \& the
// match, \\ a backslash (PostgreSQL's rules).  The pattern is read as an
// ECMAScript regular expression, which PostgreSQL's ARE reads alike for
// the common forms (classes, groups, repetition, anchors).
Value regexp_replace(const Args& a) {
  const std::string &x = s(a, 0), &rep = s(a, 2);
  std::smatch m;
  try {
    if (!std::regex_search(x, m, std::regex(s(a, 1)))) return txt(x);
  } catch (const std::regex_error& e) {
    fail(std::string("invalid regular expression: ") + e.what());
  }
  std::string r = m.prefix().str();
  for (size_t i = 0; i < rep.size(); ++i) {
    char c = rep[i], d = i + 1 < rep.size() ? rep[i + 1] : '\0';
    if (c == '\\' && d >= '1' && d <= '9') { r += m[d - '0'].str(); ++i; }
    else if (c == '\\' && d == '&') { r += m[0].str(); ++i; }
    else if (c == '\\' && d == '\\') { r += '\\'; ++i; }
    else r += c;
  }
  return txt(r + m.suffix().str());
}
Value contains(const Args& a) { return flag(s(a, 0).find(s(a, 1)) != std::string::npos); }
Value starts_with(const Args& a) { return flag(s(a, 0).rfind(s(a, 1), 0) == 0); }
Value ends_with(const Args& a) {
  const std::string &x = s(a, 0), &y = s(a, 1);
  return flag(x.size() >= y.size() && x.compare(x.size() - y.size(), y.size(), y) == 0);
}

std::string md5_hex(const std::string& msg) {
  static const uint32_t K[64] = {
      0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
      0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
      0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
      0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
      0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
      0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
      0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
      0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};
  static const int R[16] = {7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21};
  std::string m = msg;
  const uint64_t bits = static_cast<uint64_t>(msg.size()) * 8;
  m += static_cast<char>(0x80);
  while (m.size() % 64 != 56) m += '\0';
  for (int i = 0; i < 8; ++i) m += static_cast<char>((bits >> (8 * i)) & 0xff);
  uint32_t h[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
  for (size_t off = 0; off < m.size(); off += 64) {
    uint32_t w[16];
    for (int i = 0; i < 16; ++i) {
      w[i] = 0;
      for (int b = 0; b < 4; ++b) w[i] |= static_cast<uint32_t>(static_cast<unsigned char>(m[off + 4 * i + b])) << (8 * b);
    }
    uint32_t A = h[0], B = h[1], C = h[2], D = h[3];
    for (int i = 0; i < 64; ++i) {
      uint32_t f;
      int g;
      if (i < 16) { f = (B & C) | (~B & D); g = i; }
      else if (i < 32) { f = (D & B) | (~D & C); g = (5 * i + 1) % 16; }
      else if (i < 48) { f = B ^ C ^ D; g = (3 * i + 5) % 16; }
      else { f = C ^ (B | ~D); g = (7 * i) % 16; }
      const int r = R[(i / 16) * 4 + i % 4];
      uint32_t t = A + f + K[i] + w[g];
      A = D; D = C; C = B;
      B += (t << r) | (t >> (32 - r));
    }
    h[0] += A; h[1] += B; h[2] += C; h[3] += D;
  }
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (uint32_t v : h)
    for (int b = 0; b < 4; ++b) {
      unsigned byte = (v >> (8 * b)) & 0xff;
      out += hex[byte >> 4];
      out += hex[byte & 15];
    }
  return out;
}

}  // namespace mln::lang::builtin_fn
