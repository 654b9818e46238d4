// Host implementations of the built-in functions (builtins.hpp's `eval`
// column).  Each takes its arguments cast already (Num/Int as numbers, Text
// as text) and follows PostgreSQL's function of the row's `sql` spelling.
// Internal to extension/lang: only builtins.cpp's table names them.
#pragma once

#include <string>
#include <vector>

#include "lang/builtins.hpp"

namespace mln::lang::builtin_fn {

using Args = std::vector<Value>;

// PostgreSQL's error for a value outside a function's domain or range.
[[noreturn]] void fail(const std::string& message);

Value abs(const Args& a);
Value sign(const Args& a);
Value exp(const Args& a);
Value ceil(const Args& a);
Value floor(const Args& a);
Value trunc(const Args& a);
Value round(const Args& a);
Value ln(const Args& a);
Value log10(const Args& a);
Value log_base(const Args& a);
Value power(const Args& a);
Value sqrt(const Args& a);
Value sin(const Args& a);
Value cos(const Args& a);
Value tan(const Args& a);
Value factorial(const Args& a);
Value add(const Args& a);
Value subtract(const Args& a);
Value multiply(const Args& a);
Value divide(const Args& a);
Value mod(const Args& a);
Value bit_and(const Args& a);
Value bit_or(const Args& a);
Value bit_xor(const Args& a);
Value bit_not(const Args& a);
Value shift_left(const Args& a);
Value shift_right(const Args& a);

Value length(const Args& a);
Value upper(const Args& a);
Value lower(const Args& a);
Value trim(const Args& a);
Value initcap(const Args& a);
Value md5(const Args& a);
Value concat(const Args& a);
Value strpos(const Args& a);
Value repeat(const Args& a);
Value substr(const Args& a);
Value replace(const Args& a);
Value split_part(const Args& a);
Value regexp_replace(const Args& a);
Value contains(const Args& a);
Value starts_with(const Args& a);
Value ends_with(const Args& a);

// MD5 digest of `s` as 32 lower-case hex digits (RFC 1321).
std::string md5_hex(const std::string& s);

}  // namespace mln::lang::builtin_fn
