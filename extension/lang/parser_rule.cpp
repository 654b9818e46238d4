// Rules: labels, weights, hard rules, Datalog/scoping rules, and formulas
// (Tuffy clauses and Alchemy formulas alike; Tuffy §2.2, §2.5, §2.7).
#include <algorithm>
#include <cctype>
#include <cmath>

#include "lang/parser.hpp"
#include "format/network.hpp"

namespace mln::lang::detail {

void Parser::parse_rule() {
  SourcePos pos = pos_of(peek());
  // [Label] "name", [+Label] "name", [Label+] "name"
  if (at(Tok::LBracket) &&
      ((at_word("Label", 1) && at(Tok::RBracket, 2)) ||
       (at(Tok::Plus, 1) && at_word("Label", 2) && at(Tok::RBracket, 3)) ||
       (at_word("Label", 1) && at(Tok::Plus, 2) && at(Tok::RBracket, 3)))) {
    advance();
    label_sticky_ = at(Tok::Plus) || at(Tok::Plus, 1);
    while (!at(Tok::RBracket)) advance();
    advance();
    label_ = expect(Tok::String, "a quoted label name").value;
    if (at(Tok::End)) throw syntax_error(peek(), "a label must be followed by a rule");
    pos = pos_of(peek());
  }
  // [priorProb = p] head := body.
  if (at(Tok::LBracket) && at_word("priorProb", 1)) {
    advance();
    advance();
    expect(Tok::Eq, "\"=\" after priorProb");
    const Token& num = expect(Tok::Number, "a probability");
    double p = 0;
    if (!parse_number(num.raw, p) || p < 0 || p > 1)
      throw LangError(LangError::Kind::BadValue, num.line, num.col, std::string(num.raw),
                      "priorProb must lie in [0, 1], got " + std::string(num.raw));
    expect(Tok::RBracket, "\"]\"");
    parse_datalog(0, true, p, pos);
    return;
  }
  double w = 0;
  auto read_weight = [&]() {
    const Token& t = advance();
    const NumberError bad = parse_number_checked(t.raw, w);
    // A weight below the smallest double would be read as 0 and the rule
    // dropped without a word: refused, naming why.
    const std::string weight = "weight " + std::string(t.raw);
    if (bad == NumberError::Underflow)
      throw LangError(LangError::Kind::BadValue, t.line, t.col, std::string(t.raw),
                      weight +
                          " is too small: it underflows a double (the smallest is about 4.9e-324); "
                          "write 0 to drop the rule");
    if (bad != NumberError::None)
      throw LangError(
          LangError::Kind::BadValue, t.line, t.col, std::string(t.raw),
          weight + " is not a finite number" + (bad == NumberError::Overflow ? ": it overflows a double" : ""));
    // Beyond this a soft weight swamps the hard clauses' weight and the
    // solvers' fixed-point costs (a hard rule is written without a weight,
    // ending with ".").
    if (std::fabs(w) > kMaxSoftWeight)
      throw LangError(LangError::Kind::BadValue, t.line, t.col, std::string(t.raw),
                      "weight " + std::string(t.raw) + " is out of range: a weight must be within -1e15 and 1e15 "
                      "(for a hard rule, write it without a weight and end it with \".\")");
  };
  auto read_weight_var = [&]() {
    const Token& t = peek();
    if (is_constant_name(t.raw) || is_reserved_word(t.raw))
      throw syntax_error(t, "an embedded weight must be a variable (lower-case name)");
    advance();
    advance();  // ':'
    return std::string(t.raw);
  };
  if (at(Tok::At)) {
    if (at(Tok::Number, 1)) {
      advance();
      read_weight();
      parse_clause_rule(true, w, "", pos, true);
      return;
    }
    if (at(Tok::Id, 1) && at(Tok::Colon, 2)) {
      advance();
      std::string var = read_weight_var();
      parse_clause_rule(true, 0, var, pos);
      return;
    }
  }
  if (at(Tok::At) || at(Tok::Hash)) {
    char prefix = at(Tok::At) ? '@' : '#';
    advance();
    if (at(Tok::Dollar)) advance();
    parse_datalog(prefix, false, std::nan(""), pos);
    return;
  }
  if (at(Tok::Dollar)) {
    advance();
    parse_datalog(0, false, std::nan(""), pos);
    return;
  }
  if (at(Tok::Number)) {
    read_weight();
    parse_clause_rule(true, w, "", pos);
    return;
  }
  if (at(Tok::Id) && at(Tok::Colon, 1)) {
    std::string var = read_weight_var();
    parse_clause_rule(true, 0, var, pos);
    return;
  }
  // head :- body.  /  head := body.
  size_t k = (at(Tok::Plus) || at(Tok::Bang)) ? 1 : 0;
  if (at(Tok::Id, k) && at(Tok::LParen, k + 1)) {
    size_t close = matching_paren(pos_ + k + 1);
    if (close != std::string::npos && close + 1 < toks_.size() &&
        (toks_[close + 1].kind == Tok::ColonDash || toks_[close + 1].kind == Tok::ColonEq)) {
      parse_datalog(0, toks_[close + 1].kind == Tok::ColonEq, std::nan(""), pos);
      return;
    }
  }
  if (seen_rule_ && looks_like_declaration())
    throw syntax_error(peek(), "a declaration after the rules, or a hard rule without its final \".\"");
  parse_clause_rule(false, 0, "", pos);
}

void Parser::parse_clause_rule(bool has_weight, double weight, const std::string& weight_var,
                               SourcePos pos, bool fixed) {
  rule_start_ = true;
  Formula f = parse_formula();
  rule_start_ = false;
  if (has_weight) {
    if (at(Tok::Dot)) throw syntax_error(peek(), "a weighted rule must not end with \".\"");
  } else {
    if (!at(Tok::Dot))
      throw syntax_error(peek(), "expected \".\" at the end of a hard rule (or a weight before the rule)");
    advance();
  }
  std::vector<RawClause> clauses = formula_to_cnf(prog_, f, prog_.warnings);
  RuleInfo info;
  info.pos = pos;
  info.fixed = fixed;
  info.label = label_;
  if (!label_sticky_) label_.clear();
  if (!weight_var.empty()) {
    if (clauses.size() != 1)
      throw LangError(LangError::Kind::Syntax, pos.line, pos.col, weight_var,
                      "a rule with an embedded weight must be a single clause, this one gives " +
                          std::to_string(clauses.size()));
    info.weight_var = weight_var;
  } else if (!has_weight) {
    info.hard = true;
    info.weight = kHardWeight;
  } else {
    info.drop = weight == 0;  // Tuffy drops zero-weight rules
    info.weight = weight / static_cast<double>(clauses.size());
  }
  merger_.add(std::move(clauses), info);
  // Said, since the rule then has no effect at all (-0 included).
  if (info.drop)
    prog_.warnings.push_back("line " + std::to_string(pos.line) + ", column " + std::to_string(pos.col) +
                             ": zero weight: the rule is dropped, as in Tuffy");
}

void Parser::parse_datalog(char prefix, bool scoping, double prior, SourcePos pos) {
  Rule r;
  r.prefix = prefix;
  r.scoping = scoping;
  r.prior = prior;
  r.pos = pos;
  Formula all;  // head and body atoms and conditions, for the checks
  all.kind = Formula::Kind::And;
  bool positive = true;
  if (at(Tok::Plus)) {
    advance();
    r.head_plus = true;
  } else if (at(Tok::Bang)) {
    advance();
    positive = false;
  }
  if (!at(Tok::Id) || !at(Tok::LParen, 1)) throw syntax_error(peek(), "expected the head atom of a rule");
  all.kids.push_back(parse_atom(positive));
  r.head = all.kids.back().lit;
  const Token& op = peek();
  if (!at(scoping ? Tok::ColonEq : Tok::ColonDash))
    throw syntax_error(op, scoping ? "expected \":=\"" : "expected \":-\"");
  advance();
  for (;;) {
    bool neg = false;
    auto atom_ahead = [&](size_t k) {
      return at(Tok::Id, k) && at(Tok::LParen, k + 1) &&
             (prog_.find_pred(peek(k).raw) >= 0 || builtin_function(peek(k).raw).empty());
    };
    if ((at(Tok::Bang) || at(Tok::Plus)) && atom_ahead(1)) {
      neg = at(Tok::Bang);
      advance();
    }
    if (atom_ahead(0)) {
      all.kids.push_back(parse_atom(!neg));
      r.body.push_back(all.kids.back().lit);
    } else if (at(Tok::LBracket)) {
      all.kids.push_back(parse_bracket_condition());
      r.conditions.push_back(all.kids.back().cond);
    } else {
      all.kids.push_back(parse_bare_condition());
      r.conditions.push_back(all.kids.back().cond);
    }
    if (at(Tok::Comma)) {
      advance();
      continue;
    }
    expect(Tok::Dot, "\",\" or \".\" in the rule body");
    break;
  }
  check_variable_types(prog_, all);
  std::vector<std::string> bound;
  for (const Formula& k : all.kids)
    if (k.kind == Formula::Kind::Atom)
      for (const Term& t : k.lit.args)
        if (t.is_var()) bound.push_back(t.text);
  for (const Formula& k : all.kids) {
    if (k.kind != Formula::Kind::Cond) continue;
    std::vector<std::string> vars;
    collect_expr_vars(k.cond, vars);
    for (const std::string& v : vars)
      if (std::find(bound.begin(), bound.end(), v) == bound.end())
        throw LangError(LangError::Kind::UnsafeVariable, k.pos.line, k.pos.col, v,
                        "variable " + v + " in a condition does not occur in any literal of the rule");
  }
  prog_.rules.push_back(std::move(r));
}

Formula Parser::parse_formula() {
  Nest nest(*this);
  if (at(Tok::Id) && (is_exist_word(peek().raw) || is_forall_word(peek().raw))) return parse_quantifier();
  return parse_iff();
}

Formula Parser::parse_quantifier() {
  const Token& q = advance();
  bool exist = is_exist_word(q.raw);
  if (!opts_.alchemy && (!exist || !rule_start_))
    throw syntax_error(q, exist ? "EXIST must come first in the clause" : "FORALL is not supported");
  rule_start_ = false;
  Formula f;
  f.kind = exist ? Formula::Kind::Exist : Formula::Kind::Forall;
  f.pos = pos_of(q);
  for (;;) {
    const Token& v = peek();
    if (v.kind != Tok::Id || is_reserved_word(v.raw) || is_constant_name(v.raw))
      throw syntax_error(v, "expected a variable (lower-case name) after " + std::string(q.raw));
    advance();
    f.vars.push_back(std::string(v.raw));
    if (at(Tok::Comma) && at(Tok::Id, 1) && !at(Tok::LParen, 2)) {
      advance();
      continue;
    }
    break;
  }
  f.kids.push_back(parse_formula());
  return f;
}

Formula Parser::parse_iff() {
  Formula l = parse_implication();
  int chain = 0;
  while (at(Tok::Iff)) {
    if (!opts_.alchemy) throw syntax_error(peek(), "\"<=>\" is not supported");
    if (depth_ + ++chain > kMaxNesting) throw syntax_error(peek(), "too many \"<=>\" in a row");
    advance();
    Formula r = parse_implication();
    Formula f;
    f.kind = Formula::Kind::Iff;
    f.pos = l.pos;
    f.kids.push_back(std::move(l));
    f.kids.push_back(std::move(r));
    l = std::move(f);
  }
  return l;
}

Formula Parser::parse_implication() {
  Nest nest(*this);
  std::vector<Formula> items;
  items.push_back(parse_or());
  const Token* first_comma = nullptr;
  while (at(Tok::Comma)) {
    if (!first_comma) first_comma = &peek();
    advance();
    items.push_back(parse_or());
  }
  if (!at(Tok::Implies)) {
    if (first_comma) throw syntax_error(*first_comma, "a comma-separated body must be followed by \"=>\"");
    return std::move(items[0]);
  }
  const Token& arrow = advance();
  Formula f;
  f.kind = Formula::Kind::Implies;
  f.pos = items[0].pos;
  if (items.size() == 1) {
    f.kids.push_back(std::move(items[0]));
  } else {
    Formula body;
    body.kind = Formula::Kind::And;
    body.pos = items[0].pos;
    body.kids = std::move(items);
    f.kids.push_back(std::move(body));
  }
  Formula head = parse_implication();
  if (!opts_.alchemy && head.kind == Formula::Kind::Implies)
    throw syntax_error(arrow, "only one \"=>\" per clause");
  f.kids.push_back(std::move(head));
  return f;
}

Formula Parser::parse_or() {
  Formula first = parse_and();
  if (!at(Tok::V)) return first;
  Formula f;
  f.kind = Formula::Kind::Or;
  f.pos = first.pos;
  f.kids.push_back(std::move(first));
  while (at(Tok::V)) {
    advance();
    f.kids.push_back(parse_and());
  }
  return f;
}

Formula Parser::parse_and() {
  Formula first = parse_unary();
  if (!at(Tok::Caret)) return first;
  Formula f;
  f.kind = Formula::Kind::And;
  f.pos = first.pos;
  f.kids.push_back(std::move(first));
  while (at(Tok::Caret)) {
    if (!opts_.alchemy) throw syntax_error(peek(), "\"^\" is not supported");
    advance();
    f.kids.push_back(parse_unary());
  }
  return f;
}

Formula Parser::parse_unary() {
  Nest nest(*this);
  if (at(Tok::Bang)) {
    const Token& bang = advance();
    bool atom_next = at(Tok::Id) && at(Tok::LParen, 1);
    if (!opts_.alchemy && !atom_next) throw syntax_error(peek(), "\"!\" must be followed by an atom");
    Formula inner = parse_unary();
    if (inner.kind == Formula::Kind::Atom) {
      inner.lit.positive = !inner.lit.positive;
      inner.pos = pos_of(bang);
      inner.lit.pos = inner.pos;
      return inner;
    }
    Formula f;
    f.kind = Formula::Kind::Not;
    f.pos = pos_of(bang);
    f.kids.push_back(std::move(inner));
    return f;
  }
  if (at(Tok::Plus) && at(Tok::Id, 1) && at(Tok::LParen, 2)) {
    advance();  // '+' on a literal: accepted, no effect (Tuffy §2.5)
    return parse_atom(true);
  }
  return parse_primary();
}

Formula Parser::parse_primary() {
  const Token& t = peek();
  if (t.kind == Tok::Id && at(Tok::LParen, 1)) {
    if (prog_.find_pred(t.raw) >= 0 || builtin_function(t.raw).empty()) return parse_atom(true);
    return parse_bare_condition();
  }
  if (t.kind == Tok::Id && (is_exist_word(t.raw) || is_forall_word(t.raw))) return parse_quantifier();
  if (t.kind == Tok::LParen) {
    if (!paren_holds_formula(pos_)) return parse_bare_condition();
    if (!opts_.alchemy) throw syntax_error(t, "parenthesised formulas are not supported");
    advance();
    rule_start_ = false;
    Formula f = parse_formula();
    expect(Tok::RParen, "\")\"");
    return f;
  }
  if (t.kind == Tok::LBracket) return parse_bracket_condition();
  if (t.kind == Tok::Id || t.kind == Tok::Number || t.kind == Tok::String || t.kind == Tok::Tilde)
    return parse_bare_condition();
  throw syntax_error(t, "expected an atom");
}

Formula Parser::parse_atom(bool positive) {
  const Token& name = peek();
  if (name.kind != Tok::Id) throw syntax_error(name, "expected a predicate name");
  int pred = prog_.find_pred(name.raw);
  if (pred < 0) {
    std::string hint;
    for (const PredicateDecl& p : prog_.preds)
      if (p.name.size() == name.raw.size() &&
          std::equal(p.name.begin(), p.name.end(), name.raw.begin(),
                     [](char a, char b) { return std::tolower(a) == std::tolower(b); }))
        hint = " (did you mean " + p.name + "?)";
    throw LangError(LangError::Kind::UnknownPredicate, name.line, name.col, std::string(name.raw),
                    "unknown predicate " + std::string(name.raw) + hint);
  }
  rule_start_ = false;
  advance();
  expect(Tok::LParen, "\"(\"");
  Formula f;
  f.kind = Formula::Kind::Atom;
  f.pos = pos_of(name);
  f.lit.pred = pred;
  f.lit.positive = positive;
  f.lit.pos = f.pos;
  for (;;) {
    SourcePos where;
    f.lit.args.push_back(parse_term(where));
    f.arg_pos.push_back(where);
    if (at(Tok::Comma)) {
      advance();
      continue;
    }
    expect(Tok::RParen, "\",\" or \")\" in the argument list");
    break;
  }
  const PredicateDecl& d = prog_.preds[pred];
  if (static_cast<int>(f.lit.args.size()) != d.arity())
    throw LangError(LangError::Kind::ArityMismatch, name.line, name.col, std::string(name.raw),
                    "predicate " + d.name + " takes " + std::to_string(d.arity()) + " argument" +
                        (d.arity() == 1 ? "" : "s") + ", got " + std::to_string(f.lit.args.size()));
  for (size_t i = 0; i < f.lit.args.size(); ++i) {
    const Term& a = f.lit.args[i];
    double v;
    if (d.arg_kinds[i] != TypeKind::Symbol && !a.is_var() && !a.is_number && !parse_number(a.text, v))
      throw LangError(LangError::Kind::TypeClash, f.arg_pos[i].line, f.arg_pos[i].col, a.text,
                      "argument " + std::to_string(i + 1) + " of " + d.name + " has numeric type " +
                          d.arg_types[i] + ", but \"" + a.text + "\" is not a number");
  }
  return f;
}

Term Parser::parse_term(SourcePos& where) {
  const Token& t = peek();
  where = pos_of(t);
  Term term;
  if (t.kind == Tok::Id && !is_reserved_word(t.raw)) {
    term.kind = is_constant_name(t.raw) ? Term::Kind::Constant : Term::Kind::Variable;
    term.text = std::string(t.raw);
  } else if (t.kind == Tok::Number) {
    double v;
    if (!parse_number(t.raw, v))
      throw LangError(LangError::Kind::BadValue, t.line, t.col, std::string(t.raw), "bad number " + std::string(t.raw));
    term.is_number = true;
    term.text = std::string(t.raw[0] == '+' ? t.raw.substr(1) : t.raw);
  } else if (t.kind == Tok::String) {
    term.text = t.value;
  } else {
    throw syntax_error(t, "expected a variable or a constant");
  }
  advance();
  return term;
}

Formula Parser::parse_bare_condition() {
  const Token& start = peek();
  bool saved = bare_mode_;
  bare_mode_ = true;
  expr_nodes_ = 0;
  Expr e = parse_expr_cmp();
  bare_mode_ = saved;
  if (!is_boolean(e)) throw syntax_error(start, "expected an atom or a comparison");
  rule_start_ = false;
  Formula f;
  f.kind = Formula::Kind::Cond;
  f.pos = pos_of(start);
  f.cond = std::move(e);
  return f;
}

Formula Parser::parse_bracket_condition() {
  const Token& open = advance();
  bool saved = bare_mode_;
  bare_mode_ = false;
  ++paren_expr_;
  expr_nodes_ = 0;
  Expr e = parse_expr_or();
  --paren_expr_;
  bare_mode_ = saved;
  expect(Tok::RBracket, "\"]\"");
  if (!is_boolean(e)) throw syntax_error(open, "a bracketed condition must be a comparison or a test");
  rule_start_ = false;
  Formula f;
  f.kind = Formula::Kind::Cond;
  f.pos = pos_of(open);
  f.cond = std::move(e);
  return f;
}

}  // namespace mln::lang::detail
