// Recursive-descent parser for one program file (Tuffy §2.2 plus Alchemy
// formulas).  Internal to extension/lang; the public entry points are in
// program.hpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lang/formula.hpp"
#include "lang/lexer.hpp"

namespace mln::lang::detail {

class Parser {
 public:
  Parser(Program& prog, std::string_view text, const ParseOptions& opts);
  // Parses the whole file into the program.  Throws LangError.
  void parse_file();
  // Number of rule statements seen (clauses, Datalog and scoping rules).
  int rules_seen() const { return rules_seen_; }

 private:
  // ---- tokens (parser.cpp)
  const Token& peek(size_t k = 0) const {
    size_t i = pos_ + k;
    return i < toks_.size() ? toks_[i] : toks_.back();
  }
  const Token& advance() { return toks_[pos_ < toks_.size() - 1 ? pos_++ : pos_]; }
  bool at(Tok k, size_t ahead = 0) const { return peek(ahead).kind == k; }
  bool at_word(std::string_view w, size_t ahead = 0) const {
    return peek(ahead).kind == Tok::Id && peek(ahead).raw == w;
  }
  const Token& expect(Tok k, const char* what);
  std::string expect_name(const char* what);
  size_t matching_paren(size_t open) const;
  static SourcePos pos_of(const Token& t) { return SourcePos{t.line, t.col}; }

  // ---- declarations (parser_decl.cpp)
  bool looks_like_declaration() const;
  void parse_declaration();
  void parse_functional_dependency();

  // ---- rules and formulas (parser_rule.cpp)
  void parse_rule();
  void parse_clause_rule(bool has_weight, double weight, const std::string& weight_var, SourcePos pos,
                         bool fixed = false);
  void parse_datalog(char prefix, bool scoping, double prior, SourcePos pos);
  Formula parse_formula();
  Formula parse_iff();
  Formula parse_implication();
  Formula parse_or();
  Formula parse_and();
  Formula parse_unary();
  Formula parse_primary();
  Formula parse_quantifier();
  Formula parse_atom(bool positive);
  Formula parse_bare_condition();
  Formula parse_bracket_condition();
  Term parse_term(SourcePos& where);
  bool paren_holds_formula(size_t open) const;
  bool starts_formula_operand(size_t ahead) const;
  bool is_pred_call(size_t ahead) const;

  // ---- expressions (parser_expr.cpp)
  Expr parse_expr_or();
  Expr parse_expr_and();
  Expr parse_expr_not();
  Expr parse_expr_cmp();
  Expr parse_expr_add();
  Expr parse_expr_mul();
  Expr parse_expr_unary();
  Expr parse_expr_postfix();
  Expr parse_expr_primary();
  static bool is_boolean(const Expr& e);
  Expr make_node(Expr::Kind kind, std::string text);

  // Counts nesting; throws when too deep.
  struct Nest {
    explicit Nest(Parser& p);
    ~Nest() { --p.depth_; }
    Parser& p;
  };

  Program& prog_;
  ParseOptions opts_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;
  int expr_nodes_ = 0;      // nodes of the condition being parsed (bounded)
  int paren_expr_ = 0;       // >0 inside brackets / parentheses of an expression
  bool bare_mode_ = false;   // parsing a bare condition at formula level
  bool seen_rule_ = false;
  int rules_seen_ = 0;
  bool rule_start_ = false;  // the formula being parsed is at the start of a rule
  std::string label_;
  bool label_sticky_ = false;
  ClauseMerger merger_;
};

}  // namespace mln::lang::detail
