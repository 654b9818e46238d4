// Lexer for MLN programs and queries (Tuffy §2.1): comments, identifiers
// with inner '-', signed numbers, Java-escaped strings, operators.
#include "lang/lexer.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace mln::lang::detail {

size_t scan_identifier(std::string_view s) {
  size_t i = 1;
  while (i < s.size() && (is_ident_char(s[i]) || s[i] == '-')) ++i;
  while (i > 1 && s[i - 1] == '-') --i;
  return i;
}

size_t scan_number(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  size_t int_start = i;
  while (i < s.size() && is_digit(s[i])) ++i;
  bool int_digits = i > int_start;
  if (i + 1 < s.size() && s[i] == '.' && is_digit(s[i + 1])) {
    i += 2;
    while (i < s.size() && is_digit(s[i])) ++i;
  } else if (!int_digits) {
    return 0;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    if (j < s.size() && is_digit(s[j])) {
      while (j < s.size() && is_digit(s[j])) ++j;
      i = j;
    }
  }
  return i;
}

// The decimal exponent of the leading nonzero digit of a number text
// (sign, digits, fraction, exponent): 2 for 123, -2 for 0.05, -398 for
// 1e-400; the exponent part saturates at +-10^9.  Only its sign is used:
// it tells an overflow from an underflow.
static long decimal_magnitude(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  long lead = 0;  // exponent of the leading nonzero digit in the mantissa
  bool nonzero = false, point = false;
  for (; i < s.size() && (is_digit(s[i]) || s[i] == '.'); ++i) {
    if (s[i] == '.') {
      point = true;
    } else if (!nonzero) {
      if (s[i] != '0') nonzero = true;
      if (point) --lead;
    } else if (!point) {
      ++lead;
    }
  }
  long e = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    const bool neg = i < s.size() && s[i] == '-';
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    for (; i < s.size() && is_digit(s[i]); ++i) e = std::min(e * 10 + (s[i] - '0'), 1000000000L);
    if (neg) e = -e;
  }
  return lead + e;
}

NumberError parse_number_checked(std::string_view s, double& out) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  double v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ptr != s.data() + s.size() || (r.ec != std::errc() && r.ec != std::errc::result_out_of_range))
    return NumberError::NotANumber;
  if (r.ec == std::errc::result_out_of_range)  // from_chars leaves v alone
    return decimal_magnitude(s) < 0 ? NumberError::Underflow : NumberError::Overflow;
  if (std::isnan(v)) return NumberError::NotANumber;
  if (std::isinf(v)) return NumberError::Overflow;
  out = v;
  return NumberError::None;
}

bool parse_number(std::string_view s, double& out) { return parse_number_checked(s, out) == NumberError::None; }

bool is_exist_word(std::string_view s) { return s == "EXIST" || s == "Exist" || s == "exist"; }
bool is_forall_word(std::string_view s) { return s == "FORALL" || s == "Forall" || s == "forall"; }

bool is_reserved_word(std::string_view s) {
  return s == "v" || is_exist_word(s) || is_forall_word(s) || s == "AND" || s == "OR" ||
         s == "NOT" || s == "FD" || s == "priorProb";
}

// Appends code point `cp` to `out` as UTF-8.
static void append_utf8(unsigned cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Reads 4 hex digits at s[i..]; -1 if they are not hex.
static int read_hex4(std::string_view s, size_t i) {
  if (i + 4 > s.size()) return -1;
  int v = 0;
  for (size_t k = i; k < i + 4; ++k) {
    char c = s[k];
    int d = is_digit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

size_t decode_java_string(std::string_view body, std::string& out) {
  out.clear();
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\') {
      out += c;
      continue;
    }
    if (i + 1 >= body.size()) return i;
    char e = body[++i];
    switch (e) {
      case 'b': out += '\b'; break;
      case 't': out += '\t'; break;
      case 'n': out += '\n'; break;
      case 'f': out += '\f'; break;
      case 'r': out += '\r'; break;
      case '"': out += '"'; break;
      case '\'': out += '\''; break;
      case '\\': out += '\\'; break;
      case 'u': {
        size_t j = i + 1;
        while (j < body.size() && body[j] == 'u') ++j;  // Java allows \uuuu0041
        int cp = read_hex4(body, j);
        if (cp < 0) return i - 1;
        unsigned code = static_cast<unsigned>(cp);
        i = j + 3;
        // Combine a surrogate pair written as two \u escapes.
        if (code >= 0xD800 && code < 0xDC00 && i + 2 < body.size() && body[i + 1] == '\\' &&
            body[i + 2] == 'u') {
          int lo = read_hex4(body, i + 3);
          if (lo >= 0xDC00 && lo < 0xE000) {
            code = 0x10000 + ((code - 0xD800) << 10) + (static_cast<unsigned>(lo) - 0xDC00);
            i += 6;
          }
        }
        append_utf8(code, out);
        break;
      }
      default:
        if (e >= '0' && e <= '7') {  // octal escape, up to \377
          int v = e - '0';
          int max_digits = e <= '3' ? 3 : 2;
          for (int k = 1; k < max_digits && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7'; ++k)
            v = v * 8 + (body[++i] - '0');
          append_utf8(static_cast<unsigned>(v), out);
          break;
        }
        return i - 1;
    }
  }
  return std::string::npos;
}

LangError syntax_error(const Token& t, const std::string& hint) {
  std::string msg = t.kind == Tok::End ? std::string("syntax error at end of input")
                                       : "syntax error at or near \"" + std::string(t.raw) + "\"";
  if (!hint.empty()) msg += ": " + hint;
  return LangError(LangError::Kind::Syntax, t.line, t.col, std::string(t.raw), msg);
}

const char* const kNulEscapeMessage = "a string cannot hold NUL (\\u0000): PostgreSQL's text cannot store it";

namespace {

// The error for a NUL byte; where_what() adds its line and column.
const char* const kNulMessage = "unexpected NUL byte (\\0): a program text cannot hold NUL bytes";

// Tokenizer state over one text.
class Lexer {
 public:
  explicit Lexer(std::string_view text) : s_(text) {}

  // Produces all tokens, ending with Tok::End.
  std::vector<Token> run() {
    std::vector<Token> out;
    for (;;) {
      skip_space();
      Token t;
      t.line = line_;
      t.col = static_cast<int>(i_ - line_start_) + 1;
      if (i_ >= s_.size()) {
        out.push_back(std::move(t));
        return out;
      }
      size_t start = i_;
      t.kind = scan(t);
      t.raw = s_.substr(start, i_ - start);
      out.push_back(std::move(t));
    }
  }

 private:
  // Skips whitespace and comments, tracking lines.
  void skip_space() {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '\n') {
        ++i_;
        ++line_;
        line_start_ = i_;
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        ++i_;
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '/') {
        // Runs to the end of the line; at end of file without a newline
        // Tuffy complains on stderr and goes on, so we accept it silently.
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '*') {
        int line = line_, col = static_cast<int>(i_ - line_start_) + 1;
        size_t end = s_.find("*/", i_ + 2);
        if (end == std::string_view::npos)
          throw LangError(LangError::Kind::Syntax, line, col, "/*", "unterminated comment");
        for (size_t k = i_; k < end; ++k)
          if (s_[k] == '\n') {
            ++line_;
            line_start_ = k + 1;
          }
        i_ = end + 2;
      } else {
        return;
      }
    }
  }

  // True when the next characters are `p`.
  bool ahead(std::string_view p) const { return s_.substr(i_, p.size()) == p; }

  // Scans one token starting at i_ (not whitespace); returns its kind.
  Tok scan(Token& t) {
    char c = s_[i_];
    std::string_view rest = s_.substr(i_);
    if (is_alpha(c)) {
      size_t n = scan_identifier(rest);
      i_ += n;
      return rest.substr(0, n) == "v" ? Tok::V : Tok::Id;
    }
    if (is_digit(c) || ((c == '+' || c == '-' || c == '.') && scan_number(rest) > 0)) {
      i_ += scan_number(rest);
      return Tok::Number;
    }
    if (c == '"') return scan_string(t);
    struct Op { const char* text; Tok kind; };
    static const Op ops[] = {
        {"<=>", Tok::Iff}, {"=>", Tok::Implies}, {"->", Tok::Arrow}, {":-", Tok::ColonDash},
        {":=", Tok::ColonEq}, {"**", Tok::StarStar}, {"&&", Tok::AmpAmp}, {"||", Tok::PipePipe},
        {"<<", Tok::Shl}, {">>", Tok::Shr}, {"!=", Tok::Ne}, {"<>", Tok::Ne}, {"<=", Tok::Le},
        {">=", Tok::Ge}, {"(", Tok::LParen}, {")", Tok::RParen}, {"[", Tok::LBracket},
        {"]", Tok::RBracket}, {",", Tok::Comma}, {".", Tok::Dot}, {";", Tok::Semicolon},
        {"!", Tok::Bang}, {"+", Tok::Plus}, {"-", Tok::Minus}, {"*", Tok::Star}, {"/", Tok::Slash},
        {"%", Tok::Percent}, {"&", Tok::Amp}, {"|", Tok::Pipe}, {"^", Tok::Caret}, {"~", Tok::Tilde},
        {"=", Tok::Eq}, {"<", Tok::Lt}, {">", Tok::Gt}, {":", Tok::Colon}, {"@", Tok::At},
        {"#", Tok::Hash}, {"$", Tok::Dollar},
    };
    for (const Op& op : ops) {
      if (ahead(op.text)) {
        i_ += std::char_traits<char>::length(op.text);
        return op.kind;
      }
    }
    // A NUL byte: named, since a message quoting it as a character would
    // end there (what() is a C string).
    if (c == '\0') throw LangError(LangError::Kind::Syntax, t.line, t.col, "\\0", kNulMessage);
    // Unknown character: report it (a whole UTF-8 sequence when non-ASCII).
    size_t n = 1;
    if (static_cast<unsigned char>(c) >= 0xC0)
      while (i_ + n < s_.size() && (static_cast<unsigned char>(s_[i_ + n]) & 0xC0) == 0x80 && n < 4) ++n;
    Token bad = t;
    bad.raw = s_.substr(i_, n);
    bad.kind = Tok::Id;
    throw syntax_error(bad, "unexpected character");
  }

  // Scans a double-quoted Java string; the decoded value goes to t.value.
  Tok scan_string(Token& t) {
    size_t j = i_ + 1;
    while (j < s_.size() && s_[j] != '"' && s_[j] != '\n') j += (s_[j] == '\\' && j + 1 < s_.size() && s_[j + 1] != '\n') ? 2 : 1;
    if (j >= s_.size() || s_[j] != '"') {
      std::string tok(s_.substr(i_, std::min<size_t>(j - i_, 40)));
      throw LangError(LangError::Kind::Syntax, t.line, t.col, tok, "unterminated string");
    }
    std::string_view body = s_.substr(i_ + 1, j - i_ - 1);
    if (size_t z = body.find('\0'); z != std::string_view::npos) {
      const int col = t.col + 1 + static_cast<int>(z);
      throw LangError(LangError::Kind::Syntax, t.line, col, "\\0", std::string(kNulMessage) + " (in a string)");
    }
    size_t bad = decode_java_string(body, t.value);
    if (bad != std::string::npos) {
      std::string tok(body.substr(bad, 2));
      throw LangError(LangError::Kind::Syntax, t.line, t.col + 1 + static_cast<int>(bad), tok,
                      "invalid escape \"" + tok + "\" in string");
    }
    if (t.value.find('\0') != std::string::npos)  // PostgreSQL's text would end the constant there
      throw LangError(LangError::Kind::Syntax, t.line, t.col, std::string(body.substr(0, 40)), kNulEscapeMessage);
    i_ = j + 1;
    return Tok::String;
  }

  std::string_view s_;
  size_t i_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
};

}  // namespace

std::vector<Token> tokenize(std::string_view text) { return Lexer(text).run(); }

}  // namespace mln::lang::detail
