// Tokens of the MLN program and query language (Tuffy §2.1).  Internal to
// extension/lang: the parser, the query reader and the evidence reader use it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lang/program.hpp"

namespace mln::lang::detail {

enum class Tok {
  End, Id, Number, String, V,
  LParen, RParen, LBracket, RBracket, Comma, Dot, Semicolon,
  Bang, Plus, Minus, Star, StarStar, Slash, Percent, Amp, AmpAmp, Pipe, PipePipe,
  Caret, Tilde, Shl, Shr, Eq, Ne, Lt, Le, Gt, Ge,
  Implies, Iff, Arrow, Colon, ColonDash, ColonEq, At, Hash, Dollar,
};

struct Token {
  Tok kind = Tok::End;
  std::string_view raw;  // source text of the token ("" at end of input)
  std::string value;     // String: the decoded value; otherwise empty
  int line = 0, col = 0;
};

// Splits `text` into tokens; the last one is Tok::End.  Throws LangError(Syntax).
std::vector<Token> tokenize(std::string_view text);

// `s` as a string constant: in double quotes, with the Java escapes that
// decode_java_string reads back.  The one quoter of constants, for program text
// and the command line's output files alike.
std::string quoted_string(const std::string& s);

// Decodes the Java escapes of a string body (quotes excluded) into `out`.
// Returns the offset of the first bad escape, or npos when it decoded.
size_t decode_java_string(std::string_view body, std::string& out);
// The error for a string whose escapes decode to a NUL (Datalog's and MLN's).
extern const char* const kNulEscapeMessage;

// True for [A-Za-z0-9_].
inline bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
inline bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Length of the identifier starting at s[0] (a letter): [A-Za-z0-9_-]*, with
// trailing '-' characters given back ('-' only counts inside a name).
size_t scan_identifier(std::string_view s);

// Length of the number starting at s[0] (sign, digits, fraction, exponent), or 0.
size_t scan_number(std::string_view s);

// True when an identifier denotes a constant (upper-case initial letter).
inline bool is_constant_name(std::string_view s) { return !s.empty() && s[0] >= 'A' && s[0] <= 'Z'; }

// Words that cannot be names: v, EXIST, FORALL, AND, OR, NOT, FD, priorProb, ...
bool is_reserved_word(std::string_view s);
bool is_exist_word(std::string_view s);
bool is_forall_word(std::string_view s);

// Parses a number token's text into `out`; false if it is not a finite number.
bool parse_number(std::string_view s, double& out);

// Why a number text is not a finite double: not a number at all, beyond the
// largest double (overflow), or a nonzero number below the smallest one
// (underflow: 1e-400, which a double would hold as 0).
enum class NumberError { None, NotANumber, Overflow, Underflow };
// parse_number, saying why it failed (None: `out` holds the number).
NumberError parse_number_checked(std::string_view s, double& out);

// "syntax error at or near "tok"" (or "at end of input") plus an optional hint.
LangError syntax_error(const Token& t, const std::string& hint = "");

}  // namespace mln::lang::detail
