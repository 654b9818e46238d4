// Streaming evidence reader (Tuffy §3.1): `[p] [!] P(A, B)` atoms with
// comments and free layout.  Hand-written string_view scanning rather than
// the token lexer, because it must run at millions of atoms per second and
// allocate nothing per atom beyond the argument strings.
#include <algorithm>
#include <cmath>

#include "lang/lexer.hpp"

namespace mln::lang {

namespace {

// Column (1-based) of byte `pos` in `text`.
int column_of(std::string_view text, size_t pos) {
  pos = std::min(pos, text.size());
  size_t start = pos;
  while (start > 0 && text[start - 1] != '\n') --start;
  return static_cast<int>(pos - start) + 1;
}

// The token starting at `pos`, for error messages.
std::string token_at(std::string_view text, size_t pos) {
  if (pos >= text.size()) return "";
  std::string_view rest = text.substr(pos);
  size_t n = detail::is_alpha(rest[0]) ? detail::scan_identifier(rest) : detail::scan_number(rest);
  if (n == 0) n = 1;
  return std::string(rest.substr(0, std::min<size_t>(n, 60)));
}

}  // namespace

EvidenceReader::EvidenceReader(const Program& prog, std::string_view text) : prog_(prog), text_(text) {}

// long function: one evidence atom in one pass; `skip` and `fail` share the
// cursor (i, line) with every step, which a split would pass around by
// reference for each argument of files with millions of lines.
bool EvidenceReader::next(EvidenceAtom& out) {
  const char* s = text_.data();
  const size_t n = text_.size();
  size_t i = pos_;
  int line = line_;

  // Throws a LangError of `kind` at byte `at`.
  auto fail = [&](LangError::Kind kind, size_t at, const std::string& msg) {
    pos_ = at;
    line_ = line;
    std::string tok = token_at(text_, at);
    std::string full = kind == LangError::Kind::Syntax
                           ? (at >= n ? "syntax error at end of input" : "syntax error at or near \"" + tok + "\"") +
                                 (msg.empty() ? "" : ": " + msg)
                           : msg;
    throw LangError(kind, line, column_of(text_, at), tok, full);
  };
  // Skips blanks and comments, counting lines.
  auto skip = [&]() {
    for (;;) {
      while (i < n) {
        char c = s[i];
        if (c == '\n') {
          ++line;
        } else if (c != ' ' && c != '\t' && c != '\r' && c != '\f' && c != '\v') {
          break;
        }
        ++i;
      }
      if (i + 1 < n && s[i] == '/' && s[i + 1] == '/') {
        while (i < n && s[i] != '\n') ++i;
      } else if (i + 1 < n && s[i] == '/' && s[i + 1] == '*') {
        size_t start = i;
        i += 2;
        while (i + 1 < n && !(s[i] == '*' && s[i + 1] == '/')) {
          if (s[i] == '\n') ++line;
          ++i;
        }
        if (i + 1 >= n) fail(LangError::Kind::Syntax, start, "unterminated comment");
        i += 2;
      } else {
        return;
      }
    }
  };

  skip();
  if (i >= n) {
    pos_ = i;
    line_ = line;
    return false;
  }
  out.line = line;
  out.truth = true;
  out.prior = std::nan("");
  double prior = std::nan("");
  char c = s[i];
  if (detail::is_digit(c) || c == '.' || c == '-' || c == '+') {
    size_t len = detail::scan_number(text_.substr(i));
    if (len == 0) fail(LangError::Kind::Syntax, i, "expected a prior or an atom");
    if (!detail::parse_number(text_.substr(i, len), prior) || prior < 0 || prior > 1)
      fail(LangError::Kind::BadValue, i, "prior " + std::string(text_.substr(i, len)) + " is outside [0, 1]");
    i += len;
    skip();
  }
  if (i < n && s[i] == '!') {
    out.truth = false;
    ++i;
    skip();
  }
  if (i >= n || !detail::is_alpha(s[i])) fail(LangError::Kind::Syntax, i, "expected a predicate name");
  size_t name_at = i;
  size_t len = detail::scan_identifier(text_.substr(i));
  std::string_view name = text_.substr(i, len);
  int pred = last_pred_;
  if (pred < 0 || prog_.preds[pred].name != name) {
    pred = prog_.find_pred(name);
    if (pred < 0)
      fail(LangError::Kind::UnknownPredicate, name_at,
           "evidence for undeclared predicate " + std::string(name));
    last_pred_ = pred;
  }
  out.pred = pred;
  const PredicateDecl& decl = prog_.preds[pred];
  const size_t arity = decl.arg_types.size();
  i += len;
  skip();
  if (i >= n || s[i] != '(') fail(LangError::Kind::Syntax, i, "expected \"(\" after the predicate name");
  ++i;
  if (out.args.size() != arity) out.args.resize(arity);
  size_t count = 0;
  for (;;) {
    skip();
    if (i >= n) fail(LangError::Kind::Syntax, i, "expected an argument");
    size_t arg_at = i;
    c = s[i];
    std::string_view value;
    bool quoted = false, number = false;
    if (detail::is_alpha(c)) {
      size_t l = detail::scan_identifier(text_.substr(i));
      value = text_.substr(i, l);
      i += l;
    } else if (c == '"') {
      size_t j = i + 1;
      bool escaped = false;
      while (j < n && s[j] != '"' && s[j] != '\n') {
        if (s[j] == '\\' && j + 1 < n) {
          escaped = true;
          ++j;
        }
        ++j;
      }
      if (j >= n || s[j] != '"') fail(LangError::Kind::Syntax, i, "unterminated string");
      value = text_.substr(i + 1, j - i - 1);
      i = j + 1;
      quoted = escaped;
    } else {
      size_t l = detail::scan_number(text_.substr(i));
      if (l == 0) fail(LangError::Kind::Syntax, i, "expected a constant");
      value = text_.substr(i, l);
      if (value[0] == '+') value.remove_prefix(1);
      i += l;
      number = true;
    }
    if (count < arity) {
      std::string& dst = out.args[count];
      if (quoted) {
        if (detail::decode_java_string(value, dst) != std::string::npos)
          fail(LangError::Kind::Syntax, arg_at, "invalid escape in string");
      } else {
        dst.assign(value.data(), value.size());
      }
      if (decl.arg_kinds[count] != TypeKind::Symbol) {
        double v;
        if (!number && !detail::parse_number(dst, v))
          fail(LangError::Kind::TypeClash, arg_at,
               "argument " + std::to_string(count + 1) + " of " + decl.name + " has numeric type " +
                   decl.arg_types[count] + ", but \"" + dst + "\" is not a number");
      }
    }
    ++count;
    skip();
    if (i < n && s[i] == ',') {
      ++i;
      continue;
    }
    if (i < n && s[i] == ')') {
      ++i;
      break;
    }
    fail(LangError::Kind::Syntax, i, "expected \",\" or \")\"");
  }
  if (count != arity)
    fail(LangError::Kind::ArityMismatch, name_at,
         "predicate " + decl.name + " takes " + std::to_string(arity) + " argument" + (arity == 1 ? "" : "s") +
             ", evidence has " + std::to_string(count));
  if (!std::isnan(prior)) {
    // Soft evidence: `prior` is the probability that the atom is true.
    double p = out.truth ? prior : 1 - prior;
    out.truth = p != 0;
    if (p != 0 && p != 1) out.prior = p;
  }
  pos_ = i;
  line_ = line;
  return true;
}

}  // namespace mln::lang
