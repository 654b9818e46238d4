// Boolean and arithmetic conditions (Tuffy §2.2 bexpr/cmp/mexpr, §2.5).
// One precedence ladder serves bracketed conditions and bare comparisons:
//   || OR  <  && AND  <  ! NOT  <  comparison  <  + - %  <  * / & | ^ << >>
//   <  ~ (prefix)  <  ! (postfix factorial)  <  primary
#include "lang/builtins.hpp"
#include "lang/parser.hpp"

namespace mln::lang::detail {

namespace {

// Most nodes one condition may have: bounds the depth of every recursive
// walk over it (printing, copying, destruction) on hostile input.
constexpr int kMaxConditionNodes = 1000;

bool is_comparison(const std::string& op) {
  return op == "=" || op == "!=" || op == "<" || op == "<=" || op == ">" || op == ">=";
}

}  // namespace

// Lower-cased name if `name` is a built-in function, else "".
std::string builtin_function(std::string_view name) {
  std::string low(name);
  for (char& c : low) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return is_builtin_function(low) ? low : "";
}

bool Parser::is_pred_call(size_t ahead) const {
  return at(Tok::Id, ahead) && at(Tok::LParen, ahead + 1) && prog_.find_pred(peek(ahead).raw) >= 0;
}

// True when the tokens at `ahead` begin a formula operand that is not a
// condition: an atom, a negation, a bracket, a quantifier, a formula in parentheses.
bool Parser::starts_formula_operand(size_t ahead) const {
  const Token& t = peek(ahead);
  if (t.kind == Tok::Id && at(Tok::LParen, ahead + 1)) return builtin_function(t.raw).empty();
  if (t.kind == Tok::Id) return is_exist_word(t.raw) || is_forall_word(t.raw);
  if (t.kind == Tok::Bang || t.kind == Tok::LBracket) return true;
  if (t.kind == Tok::Plus) return is_pred_call(ahead + 1);
  if (t.kind == Tok::LParen) return paren_holds_formula(pos_ + ahead);
  return false;
}

// Whether the parenthesised group at token `open` is a formula (it holds an
// atom, a connective or a quantifier) rather than an arithmetic expression.
bool Parser::paren_holds_formula(size_t open) const {
  size_t close = matching_paren(open);
  if (close == std::string::npos) return true;
  for (size_t i = open + 1; i < close; ++i) {
    const Token& t = toks_[i];
    switch (t.kind) {
      case Tok::V: case Tok::Implies: case Tok::Iff: case Tok::LBracket:
        return true;
      case Tok::Id:
        if (is_exist_word(t.raw) || is_forall_word(t.raw)) return true;
        if (toks_[i + 1].kind == Tok::LParen && builtin_function(t.raw).empty()) return true;
        break;
      default:
        break;
    }
  }
  return false;
}

// Creates a node, counting it against the per-condition budget.
Expr Parser::make_node(Expr::Kind kind, std::string text) {
  if (++expr_nodes_ > kMaxConditionNodes)
    throw syntax_error(peek(), "condition has more than " + std::to_string(kMaxConditionNodes) + " parts");
  Expr e;
  e.kind = kind;
  e.text = std::move(text);
  return e;
}

bool Parser::is_boolean(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::Binary:
      return is_comparison(e.text) || e.text == "&&" || e.text == "||";
    case Expr::Kind::Unary:
      return e.text == "!";
    case Expr::Kind::Call: {
      const Builtin* b = find_builtin(e.text, e.args.size(), false);
      return b && b->result == BuiltinType::Bool;
    }
    default:
      return false;
  }
}

// Builds a binary node from two operands.
static Expr binary(Expr node, Expr l, Expr r) {
  node.args.reserve(2);
  node.args.push_back(std::move(l));
  node.args.push_back(std::move(r));
  return node;
}

Expr Parser::parse_expr_or() {
  Expr l = parse_expr_and();
  while (at(Tok::PipePipe) || at_word("OR")) {
    advance();
    Expr node = make_node(Expr::Kind::Binary, "||");
    l = binary(std::move(node), std::move(l), parse_expr_and());
  }
  return l;
}

Expr Parser::parse_expr_and() {
  Expr l = parse_expr_not();
  while (at(Tok::AmpAmp) || at_word("AND")) {
    advance();
    Expr node = make_node(Expr::Kind::Binary, "&&");
    l = binary(std::move(node), std::move(l), parse_expr_not());
  }
  return l;
}

Expr Parser::parse_expr_not() {
  if (at(Tok::Bang) || at_word("NOT")) {
    Nest nest(*this);
    advance();
    Expr node = make_node(Expr::Kind::Unary, "!");
    node.args.push_back(parse_expr_not());
    return node;
  }
  return parse_expr_cmp();
}

Expr Parser::parse_expr_cmp() {
  Expr l = parse_expr_add();
  const char* op = nullptr;
  switch (peek().kind) {
    case Tok::Eq: op = "="; break;
    case Tok::Ne: op = "!="; break;
    case Tok::Lt: op = "<"; break;
    case Tok::Le: op = "<="; break;
    case Tok::Gt: op = ">"; break;
    case Tok::Ge: op = ">="; break;
    default: return l;
  }
  advance();
  Expr node = make_node(Expr::Kind::Binary, op);
  return binary(std::move(node), std::move(l), parse_expr_add());
}

Expr Parser::parse_expr_add() {
  Expr l = parse_expr_mul();
  for (;;) {
    const Token& t = peek();
    if (t.kind == Tok::Plus || t.kind == Tok::Minus || t.kind == Tok::Percent) {
      advance();
      Expr node = make_node(Expr::Kind::Binary, std::string(t.raw));
      l = binary(std::move(node), std::move(l), parse_expr_mul());
    } else if (paren_expr_ > 0 && t.kind == Tok::Number && (t.raw[0] == '-' || t.raw[0] == '+')) {
      // `x -1` inside brackets or parentheses: the sign is the operator.
      // (Not in bare conditions, where "-1" may start the next rule.)
      Expr node = make_node(Expr::Kind::Binary, std::string(1, t.raw[0]));
      Expr num = make_node(Expr::Kind::Num, "");
      if (!parse_number(t.raw.substr(1), num.num))
        throw LangError(LangError::Kind::BadValue, t.line, t.col, std::string(t.raw), "bad number");
      advance();
      l = binary(std::move(node), std::move(l), std::move(num));
    } else {
      return l;
    }
  }
}

Expr Parser::parse_expr_mul() {
  Expr l = parse_expr_unary();
  for (;;) {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::Star: case Tok::Slash: case Tok::Amp: case Tok::Pipe: case Tok::Shl: case Tok::Shr:
        break;
      case Tok::Caret:
        // In a bare condition, "^" before an atom is Alchemy's conjunction.
        if (bare_mode_ && paren_expr_ == 0 && starts_formula_operand(1)) return l;
        break;
      default:
        return l;
    }
    advance();
    Expr node = make_node(Expr::Kind::Binary, std::string(t.raw));
    l = binary(std::move(node), std::move(l), parse_expr_unary());
  }
}

Expr Parser::parse_expr_unary() {
  if (at(Tok::Tilde)) {
    Nest nest(*this);
    advance();
    Expr node = make_node(Expr::Kind::Unary, "~");
    node.args.push_back(parse_expr_unary());
    return node;
  }
  return parse_expr_postfix();
}

Expr Parser::parse_expr_postfix() {
  Expr e = parse_expr_primary();
  while (at(Tok::Bang)) {
    // In a bare condition, "!" before an atom starts the next rule's literal.
    if (bare_mode_ && paren_expr_ == 0 && starts_formula_operand(1)) break;
    advance();
    Expr node = make_node(Expr::Kind::Unary, "fact");
    node.args.push_back(std::move(e));
    e = std::move(node);
  }
  return e;
}

Expr Parser::parse_expr_primary() {
  const Token& t = peek();
  switch (t.kind) {
    case Tok::Number: {
      Expr e = make_node(Expr::Kind::Num, "");
      if (!parse_number(t.raw, e.num))
        throw LangError(LangError::Kind::BadValue, t.line, t.col, std::string(t.raw), "bad number");
      advance();
      return e;
    }
    case Tok::String: {
      Expr e = make_node(Expr::Kind::Str, t.value);
      advance();
      return e;
    }
    case Tok::LParen: {
      Nest nest(*this);
      advance();
      bool saved = bare_mode_;
      bare_mode_ = false;
      ++paren_expr_;
      Expr e = parse_expr_or();
      --paren_expr_;
      bare_mode_ = saved;
      expect(Tok::RParen, "\")\"");
      return e;
    }
    case Tok::Id: {
      if (is_reserved_word(t.raw)) throw syntax_error(t, "reserved word");
      if (!at(Tok::LParen, 1)) {
        Expr e = make_node(is_constant_name(t.raw) ? Expr::Kind::Str : Expr::Kind::Var, std::string(t.raw));
        advance();
        return e;
      }
      std::string fn = builtin_function(t.raw);
      if (fn.empty())
        throw LangError(LangError::Kind::Syntax, t.line, t.col, std::string(t.raw),
                        prog_.find_pred(t.raw) >= 0
                            ? "predicate " + std::string(t.raw) + " cannot be used inside a condition"
                            : "unknown function " + std::string(t.raw));
      Nest nest(*this);
      advance();
      advance();  // '('
      Expr call = make_node(Expr::Kind::Call, fn);
      bool saved = bare_mode_;
      bare_mode_ = false;
      ++paren_expr_;
      for (;;) {
        call.args.push_back(parse_expr_or());
        if (at(Tok::Comma)) {
          advance();
          continue;
        }
        break;
      }
      --paren_expr_;
      bare_mode_ = saved;
      expect(Tok::RParen, "\",\" or \")\" in the function arguments");
      if (!find_builtin(fn, call.args.size(), false))
        throw LangError(LangError::Kind::ArityMismatch, t.line, t.col, fn,
                        fn + " " + builtin_arity_text(fn) + ", not " + std::to_string(call.args.size()));
      return call;
    }
    default:
      throw syntax_error(t, "expected a value or a variable");
  }
}

}  // namespace mln::lang::detail
