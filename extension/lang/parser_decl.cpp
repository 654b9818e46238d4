// Predicate declarations and functional-dependency lines (Tuffy §2.3).
#include <algorithm>
#include <cctype>

#include "lang/parser.hpp"

namespace mln::lang::detail {

namespace {

// Lower-cased copy, for the SQL case-folding collision checks.
std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Kind of values a type holds: int..._ / float..._ / double..._ are numeric.
TypeKind type_kind(std::string_view type) {
  if (type.size() < 2 || type.back() != '_') return TypeKind::Symbol;
  if (type.substr(0, 3) == "int") return TypeKind::Int;
  if (type.substr(0, 5) == "float" || type.substr(0, 6) == "double") return TypeKind::Float;
  return TypeKind::Symbol;
}

}  // namespace

// Decides whether the statement at the cursor is a declaration rather than a
// rule: `[+] [*|**] [@] Name [*] ( ... )` not followed by anything that
// continues a clause, with only names inside the parentheses.
bool Parser::looks_like_declaration() const {
  size_t k = 0;
  bool marked = false;
  if (at(Tok::Plus, k)) ++k;
  if (at(Tok::Star, k) || at(Tok::StarStar, k)) {
    marked = true;
    ++k;
  }
  if (at(Tok::At, k)) ++k;
  if (!at(Tok::Id, k)) return marked;
  ++k;
  if (at(Tok::Star, k)) {
    marked = true;
    ++k;
  }
  if (!at(Tok::LParen, k)) return marked;
  if (marked) return true;
  size_t open = pos_ + k;
  size_t close = matching_paren(open);
  if (close == std::string::npos) return true;  // let the declaration parser report it
  for (size_t i = open + 1; i < close; ++i) {
    Tok kind = toks_[i].kind;
    if (kind != Tok::Id && kind != Tok::Comma && kind != Tok::Bang) return false;
  }
  switch (toks_[close + 1 < toks_.size() ? close + 1 : close].kind) {
    case Tok::Dot: case Tok::V: case Tok::Implies: case Tok::Iff: case Tok::ColonDash:
    case Tok::ColonEq: case Tok::Comma: case Tok::Caret:
      return false;
    default:
      return true;
  }
}

void Parser::parse_declaration() {
  PredicateDecl d;
  d.pos = pos_of(peek());
  if (at(Tok::Plus)) advance();
  if (at(Tok::StarStar)) {
    advance();
    d.completely_specified = true;
  } else if (at(Tok::Star)) {
    advance();
    d.closed_world = true;
  }
  if (at(Tok::At)) advance();
  const Token& name_tok = peek();
  d.name = expect_name("a predicate name");
  if (at(Tok::Star)) advance();
  expect(Tok::LParen, "\"(\" after the predicate name");

  std::vector<const Token*> name_toks;  // where each column name came from
  for (;;) {
    const Token& type_tok = peek();
    std::string type = expect_name("an argument type");
    std::string arg_name;
    const Token* where = &type_tok;
    if (at(Tok::Id)) {
      where = &peek();
      arg_name = expect_name("an argument name");
    }
    bool dependent = false;
    if (at(Tok::Bang)) {
      advance();
      dependent = true;
    }
    // Types whose names differ only in case collide in SQL.
    for (const PredicateDecl& p : prog_.preds)
      for (const std::string& t : p.arg_types)
        if (t != type && lower(t) == lower(type))
          throw LangError(LangError::Kind::DuplicateDeclaration, type_tok.line, type_tok.col, type,
                          "type \"" + type + "\" collides with type \"" + t +
                              "\" (names differing only in case are the same in SQL)");
    for (const std::string& t : d.arg_types)
      if (t != type && lower(t) == lower(type))
        throw LangError(LangError::Kind::DuplicateDeclaration, type_tok.line, type_tok.col, type,
                        "type \"" + type + "\" collides with type \"" + t +
                            "\" (names differing only in case are the same in SQL)");
    d.arg_types.push_back(type);
    d.arg_kinds.push_back(type_kind(type));
    d.arg_names.push_back(arg_name.empty() ? type + std::to_string(d.arg_types.size()) : arg_name);
    d.dependent.push_back(dependent);
    name_toks.push_back(arg_name.empty() ? nullptr : where);
    if (at(Tok::Comma)) {
      advance();
      continue;
    }
    expect(Tok::RParen, "\",\" or \")\" in the argument list");
    break;
  }

  for (size_t i = 0; i < d.arg_names.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (lower(d.arg_names[i]) == lower(d.arg_names[j])) {
        const Token* t = name_toks[i] ? name_toks[i] : name_toks[j];
        int line = t ? t->line : d.pos.line, col = t ? t->col : d.pos.col;
        throw LangError(LangError::Kind::DuplicateDeclaration, line, col, d.arg_names[i],
                        "duplicate argument name \"" + d.arg_names[i] + "\" in predicate " + d.name);
      }
  for (const PredicateDecl& p : prog_.preds)
    if (lower(p.name) == lower(d.name))
      throw LangError(LangError::Kind::DuplicateDeclaration, name_tok.line, name_tok.col, d.name,
                      p.name == d.name ? "predicate " + d.name + " is already declared (line " +
                                             std::to_string(p.pos.line) +
                                             "; a hard rule needs a final \".\")"
                                       : "predicate " + d.name + " collides with " + p.name +
                                             " (names differing only in case are the same in SQL)");
  prog_.preds.push_back(std::move(d));
}

// FD: a, b -> c; d -> e   (parsed, warned about, ignored: Tuffy §2.3)
void Parser::parse_functional_dependency() {
  const Token& start = peek();
  if (at_word("FUNCTIONAL")) advance();
  advance();  // FD or DEPENDENCY
  expect(Tok::Colon, "\":\" after FD");
  for (;;) {
    expect(Tok::Id, "an argument name");
    while (at(Tok::Comma)) {
      advance();
      expect(Tok::Id, "an argument name");
    }
    expect(Tok::Arrow, "\"->\" in a functional dependency");
    expect(Tok::Id, "an argument name");
    if (!at(Tok::Semicolon)) break;
    advance();
  }
  std::string on = prog_.preds.empty() ? std::string("no predicate") : prog_.preds.back().name;
  prog_.warnings.push_back("line " + std::to_string(start.line) +
                           ": FD is still in development; the functional dependency on " + on +
                           " is ignored");
}

}  // namespace mln::lang::detail
