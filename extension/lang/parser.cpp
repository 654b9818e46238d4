// Parser driver: token helpers, the file loop (declarations first, then
// rules) and the public parse_program entry points.
#include "lang/parser.hpp"

namespace mln::lang {

std::string LangError::where_what() const {
  return "line " + std::to_string(line_) + ", column " + std::to_string(col_) + ": " + what();
}

int Program::find_pred(std::string_view name) const {
  for (size_t i = 0; i < preds.size(); ++i)
    if (preds[i].name == name) return static_cast<int>(i);
  return -1;
}

namespace detail {

Parser::Nest::Nest(Parser& parser) : p(parser) {
  if (++p.depth_ > kMaxNesting) {
    --p.depth_;
    throw syntax_error(p.peek(), "nesting deeper than " + std::to_string(kMaxNesting) + " levels");
  }
}

Parser::Parser(Program& prog, std::string_view text, const ParseOptions& opts)
    : prog_(prog), opts_(opts), toks_(tokenize(text)), merger_(prog) {}

const Token& Parser::expect(Tok k, const char* what) {
  if (!at(k)) throw syntax_error(peek(), std::string("expected ") + what);
  return advance();
}

// Reads an identifier usable as a name (not a reserved word).
std::string Parser::expect_name(const char* what) {
  const Token& t = peek();
  if (t.kind != Tok::Id || is_reserved_word(t.raw))
    throw syntax_error(t, std::string("expected ") + what);
  advance();
  return std::string(t.raw);
}

// Index of the ')' matching the '(' at token index `open`, or npos.
size_t Parser::matching_paren(size_t open) const {
  int depth = 0;
  for (size_t i = open; i < toks_.size(); ++i) {
    if (toks_[i].kind == Tok::LParen) ++depth;
    else if (toks_[i].kind == Tok::RParen && --depth == 0) return i;
    else if (toks_[i].kind == Tok::End) break;
  }
  return std::string::npos;
}

void Parser::parse_file() {
  while (!at(Tok::End)) {
    if (!seen_rule_) {
      if ((at_word("FD") && at(Tok::Colon, 1)) ||
          (at_word("FUNCTIONAL") && at_word("DEPENDENCY", 1) && at(Tok::Colon, 2))) {
        parse_functional_dependency();
        continue;
      }
      if (looks_like_declaration()) {
        parse_declaration();
        continue;
      }
    }
    parse_rule();
    seen_rule_ = true;
    ++rules_seen_;
  }
}

}  // namespace detail

void parse_program_into(Program& prog, std::string_view text, const ParseOptions& opts) {
  detail::Parser p(prog, text, opts);
  p.parse_file();
}

Program parse_program(std::string_view text, const ParseOptions& opts) {
  Program prog;
  detail::Parser p(prog, text, opts);
  p.parse_file();
  if (prog.preds.empty()) {
    // Position: the end of the text.
    int line = 1, col = 1;
    for (char c : text) {
      if (c == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw LangError(LangError::Kind::EmptyProgram, line, col, "",
                    "empty program: no predicate is declared");
  }
  if (p.rules_seen() == 0) prog.warnings.push_back("the program has no rules");
  return prog;
}

}  // namespace mln::lang
