// The ProbLog parser (docs/problog.md): its own small tokenizer, since
// ProbLog's `%` comments, `\+`, `::` and quoted atoms are not the MLN
// language's tokens.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <deque>

#include "lang/problog.hpp"
#include "lang/problog_internal.hpp"

namespace mln::lang::problog {

int Program::find(std::string_view name) const {
  if (pred_index.size() == preds.size()) {
    const auto it = pred_index.find(std::string(name));
    return it == pred_index.end() ? -1 : it->second;
  }
  for (size_t i = 0; i < preds.size(); ++i)
    if (preds[i].name == name) return static_cast<int>(i);
  return -1;
}

namespace detail {
namespace {

bool lower(char c) { return c >= 'a' && c <= 'z'; }
bool upper(char c) { return c >= 'A' && c <= 'Z'; }
bool digit(char c) { return c >= '0' && c <= '9'; }
bool ident(char c) { return lower(c) || upper(c) || digit(c) || c == '_'; }

// Tokens one at a time, as the parser asks for them: a program's tokens all
// at once took 48 bytes each, 1.5 GB for GROWINGBODY 400's 85 MB of text.
class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}
  Tok next() {
    skip_space();
    Tok t;
    t.line = line_, t.col = col_;
    if (i_ >= s_.size()) {
      t.kind = T::End;
      return t;
    }
    scan(t);
    return t;
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
  int line_ = 1, col_ = 1;

  char at(size_t k) const { return i_ + k < s_.size() ? s_[i_ + k] : '\0'; }
  void adv(size_t n = 1) {
    for (size_t k = 0; k < n && i_ < s_.size(); ++k, ++i_) {
      if (s_[i_] == '\n') ++line_, col_ = 1;
      else ++col_;
    }
  }
  [[noreturn]] void fail(const std::string& msg) const {
    throw LangError(LangError::Kind::Syntax, line_, col_, std::string(1, at(0)), msg);
  }
  void skip_space() {
    for (;;) {
      const char c = at(0);
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        adv();
      } else if (c == '%' || (c == '/' && at(1) == '/')) {
        while (i_ < s_.size() && at(0) != '\n') adv();
      } else if (c == '/' && at(1) == '*') {
        const int l = line_, cl = col_;
        adv(2);
        while (i_ < s_.size() && !(at(0) == '*' && at(1) == '/')) adv();
        if (i_ >= s_.size()) throw LangError(LangError::Kind::Syntax, l, cl, "/*", "unterminated comment");
        adv(2);
      } else {
        return;
      }
    }
  }
  void scan(Tok& t) {
    const size_t b = i_;
    const char c = at(0);
    if (c == '\0') fail("unexpected NUL byte (\\0): a program text cannot hold NUL bytes");
    if (lower(c) || upper(c) || c == '_') {
      while (ident(at(0))) adv();
      t.kind = upper(c) || c == '_' ? T::Var : T::Name;
    } else if (digit(c)) {
      while (digit(at(0))) adv();
      t.kind = T::Int;
      if (at(0) == '.' && digit(at(1))) {
        adv();
        while (digit(at(0))) adv();
        t.kind = T::Float;
      }
      if ((at(0) == 'e' || at(0) == 'E') && (digit(at(1)) || ((at(1) == '-' || at(1) == '+') && digit(at(2))))) {
        adv(2);
        while (digit(at(0))) adv();
        t.kind = T::Float;
      }
    } else if (c == '"' || c == '\'') {
      scan_string(t, c);
      return;
    } else if (c == '.' && lower(at(1)) && (t.col == 1 || prev_is_end())) {
      while (i_ < s_.size() && at(0) != '\n') adv();  // a directive runs to the end of its line
      t.kind = T::Directive;
    } else {
      // The longest operator first; (), ',', ';' and the like at once.
      static const char* const ops[] = {"\\==", "\\=", "\\+", "::", ":-", "==", "=<", ">=", "<", ">", "=", ":", "/", "-"};
      if (c == '(' || c == ')' || c == ',' || c == ';' || c == '.') {
        adv();
        t.kind = T::Punct;
        t.text = std::string(1, c);
        return;
      }
      for (const char* op : ops) {
        const std::string_view o(op);
        if (o[0] == c && s_.substr(i_, o.size()) == o) {
          adv(o.size());
          t.kind = T::Punct;
          t.text = std::string(o);
          return;
        }
      }
      fail("unexpected character '" + std::string(1, c) + "'");
    }
    t.text = std::string(s_.substr(b, i_ - b));
  }
  // Whether only blanks stand between the previous '.' and here.
  bool prev_is_end() const {
    for (size_t k = i_; k-- > 0;) {
      const char c = s_[k];
      if (c == '.') return true;
      if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return false;
    }
    return true;
  }
  void scan_string(Tok& t, char q) {
    adv();
    std::string v;
    while (at(0) != q) {
      if (i_ >= s_.size() || at(0) == '\n')
        throw LangError(LangError::Kind::Syntax, t.line, t.col, std::string(1, q), "unterminated string");
      if (at(0) == '\\' && (at(1) == q || at(1) == '\\')) adv();
      v += at(0);
      adv();
    }
    adv();
    t.kind = T::Str;
    t.text = std::move(v);
  }
};

}  // namespace
}  // namespace detail

namespace {

using detail::T;
using detail::Tok;

class Parser {
 public:
  Parser(std::string_view text, Program& p) : lex_(text), p_(p) {}

  void run() {
    while (cur().kind != T::End) {
      if (cur().kind == T::Directive) {
        directive();
      } else {
        statement();
      }
      // The statement's tokens are done with (no reference outlives it).
      for (; base_ < k_ && toks_.size() > 1; ++base_) toks_.pop_front();
    }
  }

 private:
  // Token k_ is toks_[k_ - base_]: the current statement's tokens, lexed as
  // needed (a deque: references to them stay valid as more are read).
  mutable detail::Lexer lex_;
  mutable std::deque<Tok> toks_;
  size_t base_ = 0, k_ = 0;
  Program& p_;

  const Tok& at(size_t k) const {
    while (base_ + toks_.size() <= k) {
      if (!toks_.empty() && toks_.back().kind == T::End) return toks_.back();
      toks_.push_back(lex_.next());
    }
    return toks_[k - base_];
  }
  const Tok& cur() const { return at(k_); }
  const Tok& peek() const { return at(k_ + 1); }
  // Whether the current token is `punct`, compared in place (std::string's
  // == with a C string measured and compared through the C library: a fifth
  // of the parse of GROWINGBODY's 32 million tokens).
  bool is(const char* punct) const {
    const Tok& t = cur();
    if (t.kind != T::Punct) return false;
    size_t i = 0;
    for (; punct[i]; ++i)
      if (i >= t.text.size() || t.text[i] != punct[i]) return false;
    return i == t.text.size();
  }
  [[noreturn]] void syntax(const std::string& hint) const {
    const Tok& t = cur();
    const std::string near = t.kind == T::End ? "at end of input" : "at or near \"" + t.text + "\"";
    throw LangError(LangError::Kind::Syntax, t.line, t.col, t.text, "syntax error " + near + (hint.empty() ? "" : ": " + hint));
  }
  void expect(const char* punct, const char* what) {
    if (!is(punct)) syntax(std::string("expected ") + what);
    ++k_;
  }
  static SourcePos pos(const Tok& t) { return SourcePos{t.line, t.col}; }

  // `.input name ...`: the rest of the line goes to Datalog as written.
  void directive() {
    const Tok& t = cur();
    InputDirective d;
    d.text = t.text;
    d.pos = pos(t);
    size_t b = 1;
    while (b < t.text.size() && detail::is_word_char(t.text[b])) ++b;
    if (t.text.substr(0, b) != ".input")
      throw LangError(LangError::Kind::Syntax, t.line, t.col, t.text.substr(0, b),
                      "unknown directive \"" + t.text.substr(0, b) + "\": the only directive is .input");
    while (b < t.text.size() && (t.text[b] == ' ' || t.text[b] == '\t')) ++b;
    size_t e = b;
    while (e < t.text.size() && detail::is_word_char(t.text[e])) ++e;
    if (e == b) throw LangError(LangError::Kind::Syntax, t.line, t.col + static_cast<int>(b), "", ".input needs a relation name");
    d.pred = detail::declare(p_, t.text.substr(b, e - b), -1, SourcePos{t.line, t.col + static_cast<int>(b)});
    p_.inputs.push_back(std::move(d));
    ++k_;
  }

  double probability() {
    const Tok& t = cur();
    if (t.kind != T::Int && t.kind != T::Float) syntax("expected a probability");
    double v = std::strtod(t.text.c_str(), nullptr);
    ++k_;
    if (is("/")) {
      ++k_;
      if (cur().kind != T::Int && cur().kind != T::Float) syntax("expected a number after '/'");
      const double d = std::strtod(cur().text.c_str(), nullptr);
      if (d == 0) throw LangError(LangError::Kind::BadValue, cur().line, cur().col, cur().text, "division by zero in a probability");
      v /= d;
      ++k_;
    }
    if (!(v >= 0 && v <= 1))
      throw LangError(LangError::Kind::BadValue, t.line, t.col, t.text, "probability " + t.text + " is outside [0, 1]");
    return v;
  }

  Term term() {
    const Tok& t = cur();
    Term x;
    x.pos = pos(t);
    bool minus = false;
    if (is("-")) minus = true, ++k_;
    const Tok& v = cur();
    if (v.kind == T::Var) {
      x.kind = v.text == "_" ? Term::Kind::Anon : Term::Kind::Var;
      x.name = v.text;
    } else if (v.kind == T::Name || v.kind == T::Str) {
      x.kind = Term::Kind::Str;
      x.name = v.text;
    } else if (v.kind == T::Int) {
      x.kind = Term::Kind::Int;
      x.ival = std::strtoll(v.text.c_str(), nullptr, 10);
      if (minus) x.ival = -x.ival;
      if (v.text.size() > 10 || x.ival > INT32_MAX || x.ival < INT32_MIN)
        throw LangError(LangError::Kind::BadValue, t.line, t.col, v.text, "integer " + v.text + " is beyond 32 bits");
    } else {
      syntax("expected a variable or a constant");
    }
    if (minus && x.kind != Term::Kind::Int) syntax("'-' only precedes integers");
    ++k_;
    return x;
  }

  Atom atom() {
    const Tok& t = cur();
    if (t.kind != T::Name) syntax("expected an atom (a lower-case name)");
    Atom a;
    a.pos = pos(t);
    const std::string name = t.text;
    ++k_;
    if (is("(")) {
      ++k_;
      a.args.push_back(term());
      while (is(",")) ++k_, a.args.push_back(term());
      expect(")", "',' or ')'");
    }
    a.pred = detail::declare(p_, name, static_cast<int>(a.args.size()), a.pos);
    return a;
  }

  // A body literal: atom, \+ atom, or a comparison.
  void literal(Rule& r) {
    if (is("\\+")) {
      ++k_;
      const bool paren = is("(");
      if (paren) ++k_;
      r.neg.push_back(atom());
      if (paren) expect(")", "')'");
      return;
    }
    const Tok& next = peek();
    if (cur().kind == T::Name && !(next.kind == T::Punct && is_cmp(next.text))) {
      r.pos.push_back(atom());
      return;
    }
    Compare c;
    c.pos = pos(cur());
    c.lhs = term();
    if (cur().kind != T::Punct || !is_cmp(cur().text)) syntax("expected a comparison (==, \\==, <, =<, >, >=)");
    const std::string op = cur().text;
    c.op = op == "==" || op == "=" ? "=" : op == "\\==" || op == "\\=" ? "!=" : op == "=<" ? "<=" : op;
    ++k_;
    c.rhs = term();
    r.cmps.push_back(std::move(c));
  }
  static bool is_cmp(const std::string& s) {
    return s == "==" || s == "=" || s == "\\==" || s == "\\=" || s == "<" || s == "=<" || s == ">" || s == ">=";
  }

  // evidence(atom[, true|false]) / evidence(\+atom) / query(atom)
  bool special() {
    const Tok& t = cur();
    if (t.kind != T::Name || (t.text != "evidence" && t.text != "query") || peek().text != "(") return false;
    const bool ev = t.text == "evidence";
    k_ += 2;
    bool neg = false;
    if (ev && is("\\+")) neg = true, ++k_;
    Atom a = atom();
    if (ev) {
      bool value = !neg;
      if (is(",")) {
        ++k_;
        if (cur().kind != T::Name || (cur().text != "true" && cur().text != "false")) syntax("expected true or false");
        value = (cur().text == "true") != neg;
        ++k_;
      }
      for (const Term& x : a.args)
        if (!x.is_const())
          throw LangError(LangError::Kind::VariableInEvidence, x.pos.line, x.pos.col, x.name,
                          "evidence must be ground: \"" + x.name + "\" is a variable");
      p_.evidence.push_back({std::move(a), value});
    } else {
      p_.queries.push_back(std::move(a));
    }
    expect(")", "')'");
    expect(".", "'.' at the end of the statement");
    return true;
  }

  void statement() {
    if (special()) return;
    Rule r;
    r.at = pos(cur());
    for (;;) {
      HeadAlt h;
      const bool prob = cur().kind == T::Int || cur().kind == T::Float;
      if (prob) {
        h.prob = probability();
        expect("::", "'::' after a probability");
      }
      h.atom = atom();
      r.head.push_back(std::move(h));
      if (!is(";")) break;
      if (!prob) syntax("an annotated disjunction gives each head a probability: 0.3::a; 0.7::b");
      ++k_;
      if (cur().kind != T::Int && cur().kind != T::Float) syntax("an annotated disjunction gives each head a probability");
    }
    if (is(":-")) {
      ++k_;
      literal(r);
      while (is(",")) ++k_, literal(r);
    }
    expect(".", "'.' at the end of the statement");
    p_.rules.push_back(std::move(r));
  }
};

}  // namespace

Program parse(std::string_view text) {
  Program p;
  Parser(text, p).run();
  detail::check(p);
  return p;
}

}  // namespace mln::lang::problog
