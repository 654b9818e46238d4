// The Datalog scanner (datalog_parse.cpp reads its tokens): names
// [A-Za-z_][A-Za-z0-9_]*, unsigned integers, strings, operators, comments.
// Datalog's own because MLN's lexer reads `X-1` as one name and has no `_`
// (the anonymous variable).
#include "lang/datalog_scan.hpp"

namespace mln::lang::datalog::detail {

using lang::detail::Tok;
using lang::detail::Token;
using lang::detail::syntax_error;

namespace {
bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
}  // namespace

// Tokens of a Datalog text: names [A-Za-z_][A-Za-z0-9_]*, unsigned integers
// (a sign is the parser's unary minus), strings in double or single quotes
// (Java escapes, as MLN strings), operators; // and /* */ comments.
std::vector<Token> scan(std::string_view s, SourcePos start) {
  std::vector<Token> out;
  size_t i = 0, line_start = 0;
  int line = start.line;
  // Columns of the first line count from start.col.
  auto col_of = [&](size_t k) {
    return static_cast<int>(k - line_start) + 1 + (line == start.line ? start.col - 1 : 0);
  };
  for (;;) {
    while (i < s.size()) {
      if (s[i] == '\n') {
        ++line;
        line_start = ++i;
      } else if (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\f' || s[i] == '\v') {
        ++i;
      } else if (s.substr(i, 2) == "//") {
        while (i < s.size() && s[i] != '\n') ++i;
      } else if (s.substr(i, 2) == "/*") {
        size_t end = s.find("*/", i + 2);
        if (end == std::string_view::npos) throw LangError(LangError::Kind::Syntax, line, col_of(i), "/*", "unterminated comment");
        for (size_t k = i; k < end; ++k)
          if (s[k] == '\n') ++line, line_start = k + 1;
        i = end + 2;
      } else {
        break;
      }
    }
    Token t;
    t.line = line;
    t.col = col_of(i);
    if (i >= s.size()) {
      out.push_back(t);
      return out;
    }
    const size_t start = i;
    const char c = s[i];
    if (ident_start(c)) {
      while (i < s.size() && (lang::detail::is_ident_char(s[i]))) ++i;
      t.kind = Tok::Id;
    } else if (lang::detail::is_digit(c)) {
      while (i < s.size() && lang::detail::is_digit(s[i])) ++i;
      t.kind = Tok::Number;
    } else if (c == '"' || c == '\'') {
      size_t j = i + 1;
      while (j < s.size() && s[j] != c && s[j] != '\n') j += (s[j] == '\\' && j + 1 < s.size()) ? 2 : 1;
      if (j >= s.size() || s[j] != c)
        throw LangError(LangError::Kind::Syntax, line, t.col, std::string(s.substr(i, std::min<size_t>(j - i, 40))),
                        "unterminated string");
      if (lang::detail::decode_java_string(s.substr(i + 1, j - i - 1), t.value) != std::string::npos)
        throw LangError(LangError::Kind::Syntax, line, t.col, std::string(s.substr(i, j + 1 - i)), "bad escape in string");
      if (t.value.find('\0') != std::string::npos)  // PostgreSQL's text ends it there: "a\u0000b" was "a"
        throw LangError(LangError::Kind::Syntax, line, t.col, std::string(s.substr(i, j + 1 - i)),
                        lang::detail::kNulEscapeMessage);
      i = j + 1;
      t.kind = Tok::String;
    } else {
      struct Op { const char* text; Tok kind; };
      static const Op ops[] = {{":-", Tok::ColonDash}, {"!=", Tok::Ne}, {"<>", Tok::Ne}, {"<=", Tok::Le},
                               {">=", Tok::Ge}, {"(", Tok::LParen}, {")", Tok::RParen}, {",", Tok::Comma},
                               {".", Tok::Dot}, {"!", Tok::Bang}, {"+", Tok::Plus}, {"-", Tok::Minus},
                               {"*", Tok::Star}, {"/", Tok::Slash}, {"%", Tok::Percent}, {"=", Tok::Eq},
                               {"<", Tok::Lt}, {">", Tok::Gt}};
      for (const Op& op : ops) {
        const size_t n = std::char_traits<char>::length(op.text);
        if (s.substr(i, n) == op.text) {
          t.kind = op.kind;
          i += n;
          break;
        }
      }
      if (i == start) {
        size_t n = 1;
        if (static_cast<unsigned char>(c) >= 0xC0)
          while (i + n < s.size() && (static_cast<unsigned char>(s[i + n]) & 0xC0) == 0x80 && n < 4) ++n;
        t.kind = Tok::Id;
        t.raw = s.substr(i, n);
        throw syntax_error(t, c == '\0' ? "a program text cannot hold NUL bytes" : "unexpected character");
      }
    }
    t.raw = s.substr(start, i - start);
    out.push_back(std::move(t));
  }
}


}  // namespace mln::lang::datalog::detail
