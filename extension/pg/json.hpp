// Minimal JSON text builder for function results (converted to jsonb by
// jsonb_in).  Pure C++: safe to use inside guarded C++ frames.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace mln::pg {

// Quotes and escapes a string as a JSON literal.
inline std::string json_quote(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') { o += '\\'; o += static_cast<char>(c); }
    else if (c < 0x20) { char b[8]; std::snprintf(b, sizeof b, "\\u%04x", c); o += b; }
    else o += static_cast<char>(c);
  }
  return o + "\"";
}

// A number as JSON (non-finite values become null).
inline std::string json_num(double v) {
  if (!std::isfinite(v)) return "null";
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

// ["a","b"]
inline std::string json_str_array(const std::vector<std::string>& v) {
  std::string o = "[";
  for (size_t i = 0; i < v.size(); ++i) o += (i ? "," : "") + json_quote(v[i]);
  return o + "]";
}

}  // namespace mln::pg
