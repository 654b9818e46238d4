// The Datalog parser (docs/datalog.md): directives (.input, .decl), facts
// and rules with positive and negated atoms, comparisons and integer
// arithmetic; aggregates (count, sum, min, max) in heads.  Tokens are
// lang's Token/Tok (from datalog_scan.cpp) and errors its LangError.  Also
// ProgramBuilder, which assembles a program from objects with the parser's
// relation and directive rules.
#include "lang/datalog.hpp"

#include <climits>
#include <memory>

#include "lang/formula.hpp"
#include "lang/datalog_scan.hpp"
#include "lang/lexer.hpp"

namespace mln::lang::datalog {

using lang::detail::Tok;
using lang::detail::Token;
using lang::detail::syntax_error;
using lang::detail::kMaxNesting;

namespace {

// SQL's folding of an unquoted name.
std::string fold(std::string_view s) {
  std::string o(s);
  for (char& ch : o)
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  return o;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : toks_(detail::scan(text)) {}

  // ProgramBuilder's: directives written at `at`, relations by name, rules
  // as objects.
  void directives(std::string_view text, SourcePos at) {
    toks_ = detail::scan(text, at);
    i_ = 0;
    while (!this->at(Tok::End)) {
      if (!(this->at(Tok::Dot) && peek(1).kind == Tok::Id && is_directive(peek(1).raw)))
        throw syntax_error(peek(), "expected a .input or .decl directive");
      directive();
    }
  }
  int relation(const std::string& name, int arity, SourcePos where) {
    Token t;
    t.kind = Tok::Id;
    t.raw = name;
    t.line = where.line;
    t.col = where.col;
    return relation(t, arity);
  }
  void add_rule(Rule r) {
    p_.rels[static_cast<size_t>(r.head.rel)].derived = true;
    p_.rules.push_back(std::move(r));
  }
  Program take() { return std::move(p_); }
  Program& peek_program() { return p_; }

  Program run() {
    while (!at(Tok::End)) {
      if (at(Tok::Dot) && peek(1).kind == Tok::Id && is_directive(peek(1).raw)) {
        directive();
      } else {
        rule();
      }
    }
    return std::move(p_);
  }

 private:
  std::vector<Token> toks_;
  size_t i_ = 0;
  Program p_;
  Rule* rule_ = nullptr;  // the rule being read (variables)
  // Brackets and unary minus open in the expression being read, and its
  // nodes: both bound the depth of every recursive walk over it on hostile
  // input, as the MLN parser bounds its formulas (kMaxNesting, shared).
  int depth_ = 0, nodes_ = 0;
  static constexpr int kMaxExprNodes = 1000;
  // Relation by name (Program::find scans: 10^5 relations took minutes).
  std::unordered_map<std::string, int> index_;
  int find(std::string_view name) const {
    const auto it = index_.find(std::string(name));  // (string_view keys need C++20)
    return it == index_.end() ? -1 : it->second;
  }
  int add(Relation rel) {
    index_.emplace(rel.name, static_cast<int>(p_.rels.size()));
    p_.rels.push_back(std::move(rel));
    return static_cast<int>(p_.rels.size()) - 1;
  }
  static bool is_directive(std::string_view w) { return w == "input" || w == "decl"; }
  const Token& peek(size_t k = 0) const { return toks_[std::min(i_ + k, toks_.size() - 1)]; }
  bool at(Tok k, size_t ahead = 0) const { return peek(ahead).kind == k; }
  const Token& advance() { return toks_[i_ < toks_.size() - 1 ? i_++ : i_]; }
  const Token& expect(Tok k, const char* what) {
    if (!at(k)) throw syntax_error(peek(), std::string("expected ") + what);
    return advance();
  }
  static SourcePos pos(const Token& t) { return {t.line, t.col}; }

  // The relation `name` with `arity` arguments, created on first mention.
  int relation(const Token& name, int arity) {
    const std::string n(name.raw);
    if (arity == 0)
      throw LangError(LangError::Kind::ArityMismatch, name.line, name.col, n,
                      "relation \"" + n + "\" has no arguments: every relation needs at least one column");
    int r = find(n);
    if (r < 0) {
      Relation rel;
      rel.name = n;
      rel.first = pos(name);
      r = add(std::move(rel));
    }
    Relation& rel = p_.rels[r];
    if (rel.arity < 0) {  // new, or named by `.input e from t` without columns
      rel.arity = arity;
      rel.types.assign(arity, ColType::Unknown);
      for (int c = 0; c < arity; ++c) rel.cols.push_back("c" + std::to_string(c + 1));
      return r;
    }
    if (p_.rels[r].arity != arity)
      throw LangError(LangError::Kind::ArityMismatch, name.line, name.col, n,
                      "relation \"" + n + "\" has " + std::to_string(p_.rels[r].arity) + " argument(s) (line " +
                          std::to_string(p_.rels[r].first.line) + "), not " + std::to_string(arity));
    return r;
  }

  // A SQL name: an identifier (folded to lower case) or a quoted one (as is).
  std::string sql_name(const char* what) {
    if (at(Tok::String)) return advance().value;
    return fold(expect(Tok::Id, what).raw);
  }

  // .input name(col type, ...) [from [schema.]table[(col, ...)]]
  // .decl  name(col type, ...)
  void directive() {
    advance();
    const bool input = advance().raw == "input";
    const Token& name = expect(Tok::Id, "a relation name");
    std::vector<std::string> cols;
    std::vector<ColType> types;
    if (at(Tok::LParen)) {
      advance();
      do {
        cols.push_back(sql_name("a column name"));
        const Token& ty = expect(Tok::Id, "a column type (int or text)");
        const std::string tn = fold(ty.raw);
        if (tn == "int" || tn == "integer" || tn == "int4" || tn == "int2" || tn == "smallint" || tn == "bigint" ||
            tn == "int8" || tn == "number")
          types.push_back(ColType::Int);
        else if (tn == "text" || tn == "varchar" || tn == "symbol" || tn == "name")
          types.push_back(ColType::Text);
        else
          throw syntax_error(ty, "column types are int (integer, number) or text (symbol)");
      } while (at(Tok::Comma) && advance().kind == Tok::Comma);
      expect(Tok::RParen, "\",\" or \")\"");
    } else if (!input) {
      throw syntax_error(peek(), "expected \"(\": .decl names the relation's columns and types");
    }
    InputSource src;
    if (input && at(Tok::Id) && peek().raw == "from") {
      advance();
      src.table = sql_name("a table name");
      const Token& dot = peek();
      const Token& prev = toks_[i_ - 1];
      if (dot.kind == Tok::Dot && dot.line == prev.line && dot.raw.data() == prev.raw.data() + prev.raw.size()) {
        advance();
        src.schema = src.table;
        src.table = sql_name("a table name after the schema");
      }
      if (at(Tok::LParen)) {
        advance();
        do src.columns.push_back(sql_name("a column name"));
        while (at(Tok::Comma) && advance().kind == Tok::Comma);
        expect(Tok::RParen, "\",\" or \")\"");
      }
    }
    if (!types.empty() && !src.columns.empty() && src.columns.size() != types.size())
      throw LangError(LangError::Kind::ArityMismatch, name.line, name.col, std::string(name.raw),
                      "relation \"" + std::string(name.raw) + "\" declares " + std::to_string(types.size()) +
                          " column(s) but reads " + std::to_string(src.columns.size()));
    const int arity = !types.empty() ? static_cast<int>(types.size()) : !src.columns.empty() ? static_cast<int>(src.columns.size()) : -1;
    declare(name, arity, input, cols, types, src);
    // An optional '.' ends a directive (one followed by a name that is not a directive).
    if (at(Tok::Dot) && !(peek(1).kind == Tok::Id && is_directive(peek(1).raw))) advance();
  }

  void declare(const Token& name, int arity, bool input, const std::vector<std::string>& cols,
               const std::vector<ColType>& types, const InputSource& src) {
    int r = find(name.raw);
    if (r >= 0 && (p_.rels[r].declared || p_.rels[r].declared_input))
      throw LangError(LangError::Kind::DuplicateDeclaration, name.line, name.col, std::string(name.raw),
                      "relation \"" + std::string(name.raw) + "\" is declared twice");
    if (arity >= 0) {
      r = relation(name, arity);
    } else if (r < 0) {  // `.input e from t`: the arity comes from use or from the table
      Relation rel;
      rel.name = std::string(name.raw);
      rel.first = pos(name);
      r = add(std::move(rel));
    }
    Relation& rel = p_.rels[r];
    if (!types.empty()) {
      rel.types = types;
      rel.cols = cols;
      rel.declared = true;
    }
    if (input) {
      rel.declared_input = true;
      rel.source = src;
    }
  }

  int var(const Token& t) {
    auto& vs = rule_->vars;
    for (size_t k = 0; k < vs.size(); ++k)
      if (vs[k] == t.raw) return static_cast<int>(k);
    vs.emplace_back(t.raw);
    return static_cast<int>(vs.size()) - 1;
  }

  // An integer literal (after an optional '-') as int32.
  int64_t integer(const Token& t, bool negative) {
    int64_t v = 0;
    for (char ch : t.raw) {
      v = v * 10 + (ch - '0');
      if (v > static_cast<int64_t>(INT_MAX) + 1) break;
    }
    if (negative) v = -v;
    if (v > INT_MAX || v < INT_MIN)
      throw LangError(LangError::Kind::BadValue, t.line, t.col, std::string(t.raw),
                      "integer " + std::string(negative ? "-" : "") + std::string(t.raw) + " is out of range (32-bit integers)");
    return v;
  }

  // A term of an atom (in_atom: no arithmetic may follow it) or a leaf of an
  // expression: a variable, _, an integer or a string.
  Term term(bool in_atom) {
    Term t;
    const Token& tok = peek();
    t.pos = pos(tok);
    if (at(Tok::Id)) {
      advance();
      if (tok.raw == "_") t.kind = Term::Kind::Anon;
      else t.var = var(tok);
    } else if (at(Tok::String)) {
      t.kind = Term::Kind::Str;
      t.sval = advance().value;
    } else if (at(Tok::Number) || (at(Tok::Minus) && at(Tok::Number, 1))) {
      const bool neg = at(Tok::Minus);
      if (neg) advance();
      t.kind = Term::Kind::Int;
      t.ival = integer(advance(), neg);
    } else {
      throw syntax_error(tok, "expected a variable, _, an integer or a string");
    }
    if (in_atom && (at(Tok::Plus) || at(Tok::Minus) || at(Tok::Star) || at(Tok::Slash) || at(Tok::Percent)))
      throw syntax_error(peek(), "arithmetic is not allowed inside an atom: bind it in the body (Y = X + 1)");
    return t;
  }

  static Agg agg_of(std::string_view w) {
    for (Agg a : {Agg::Count, Agg::Sum, Agg::Min, Agg::Max})
      if (w == agg_name(a)) return a;
    return Agg::None;
  }

  // An argument of an atom; in a head, also `count(V)`, `sum(V)`, `min(V)`
  // or `max(V)`.
  Term arg(bool head) {
    const Agg agg = at(Tok::Id) && at(Tok::LParen, 1) ? agg_of(peek().raw) : Agg::None;
    if (agg == Agg::None) return term(true);
    if (!head)
      throw syntax_error(peek(), std::string("aggregates appear only in a rule's head: ") + agg_name(agg) +
                                     "(...) in a body atom (derive it in a rule of its own and read that)");
    const SourcePos at_name = pos(advance());
    advance();
    if (!at(Tok::Id) || peek().raw == "_")
      throw syntax_error(peek(), std::string("expected a variable: ") + agg_name(agg) + "(V) aggregates a variable of the body");
    Term t = term(false);
    t.agg = agg;
    t.pos = at_name;
    expect(Tok::RParen, "\")\" after the aggregated variable");
    return t;
  }

  Atom atom(bool head = false) {
    const Token& name = expect(Tok::Id, "a relation name");
    Atom a;
    a.pos = pos(name);
    expect(Tok::LParen, "\"(\"");
    if (!at(Tok::RParen)) {
      do a.args.push_back(arg(head));
      while (at(Tok::Comma) && advance().kind == Tok::Comma);
    }
    expect(Tok::RParen, "\",\" or \")\"");
    a.rel = relation(name, static_cast<int>(a.args.size()));
    return a;
  }

  Expr primary() {  // (a throw leaves depth_ as it is: the parse is over)
    if (++depth_ > kMaxNesting) throw syntax_error(peek(), "nesting deeper than " + std::to_string(kMaxNesting) + " levels");
    if (++nodes_ > kMaxExprNodes)
      throw syntax_error(peek(), "expression with more than " + std::to_string(kMaxExprNodes) +
                                     " terms and operators: split it over several comparisons");
    Expr e = primary_at();
    --depth_;
    return e;
  }

  Expr primary_at() {
    Expr e;
    e.pos = pos(peek());
    if (at(Tok::LParen)) {
      advance();
      e = sum();
      expect(Tok::RParen, "\")\"");
      return e;
    }
    if (at(Tok::Minus)) {
      advance();
      if (at(Tok::Number)) {  // a literal: -2147483648 fits
        e.leaf.kind = Term::Kind::Int;
        e.leaf.pos = e.pos;
        e.leaf.ival = integer(advance(), true);
        return e;
      }
      e.op = 'n';
      e.kids.push_back(primary());
      return e;
    }
    const Token& tok = peek();
    if (tok.kind == Tok::Id && tok.raw == "_")
      throw syntax_error(tok, "_ cannot be used in a comparison");
    if (tok.kind == Tok::Id && at(Tok::LParen, 1) && agg_of(tok.raw) != Agg::None)
      throw syntax_error(tok, std::string("aggregates appear only in a rule's head: ") + std::string(tok.raw) +
                                  "(...) in a comparison (write the head p(X, " + std::string(tok.raw) + "(Y)))");
    if (tok.kind != Tok::Id && tok.kind != Tok::Number && tok.kind != Tok::String)
      throw syntax_error(tok, "expected a variable, an integer, a string or \"(\"");
    e.leaf = term(false);
    return e;
  }

  Expr binary(Expr l, char op, Expr r) {
    Expr e;
    e.op = op;
    e.pos = l.pos;
    e.kids.push_back(std::move(l));
    e.kids.push_back(std::move(r));
    return e;
  }

  Expr product() {
    Expr e = primary();
    while (at(Tok::Star) || at(Tok::Slash) || at(Tok::Percent)) {
      const char op = advance().raw[0];
      e = binary(std::move(e), op, primary());
    }
    return e;
  }

  Expr sum() {
    Expr e = product();
    while (at(Tok::Plus) || at(Tok::Minus)) {
      const char op = advance().raw[0];
      e = binary(std::move(e), op, product());
    }
    return e;
  }

  void literal(Rule& r) {
    const bool bang = at(Tok::Bang);
    const bool word = at(Tok::Id) && peek().raw == "not" && at(Tok::Id, 1) && at(Tok::LParen, 2);
    if (bang || word) {
      advance();
      r.neg.push_back(atom());
      return;
    }
    if (at(Tok::Id) && at(Tok::LParen, 1)) {
      r.pos.push_back(atom());
      return;
    }
    Compare c;
    c.pos = pos(peek());
    nodes_ = 0;
    c.lhs = sum();
    static const std::pair<Tok, Cmp> ops[] = {{Tok::Eq, Cmp::Eq}, {Tok::Ne, Cmp::Ne}, {Tok::Lt, Cmp::Lt},
                                              {Tok::Le, Cmp::Le}, {Tok::Gt, Cmp::Gt}, {Tok::Ge, Cmp::Ge}};
    bool found = false;
    for (const auto& [tk, op] : ops)
      if (at(tk)) {
        c.op = op;
        found = true;
      }
    if (!found) throw syntax_error(peek(), "expected an atom or a comparison (=, !=, <, <=, >, >=)");
    advance();
    nodes_ = 0;
    c.rhs = sum();
    r.cmps.push_back(std::move(c));
  }

  // head [:- literal, ...] .
  void rule() {
    Rule r;
    rule_ = &r;
    r.at = pos(peek());
    r.head = atom(true);
    if (at(Tok::ColonDash)) {
      advance();
      do literal(r);
      while (at(Tok::Comma) && advance().kind == Tok::Comma);
    }
    expect(Tok::Dot, "\".\" at the end of the rule");
    p_.rels[r.head.rel].derived = true;
    rule_ = nullptr;
    p_.rules.push_back(std::move(r));
  }
};

}  // namespace

namespace {

// parse()'s checks of a whole program, also ProgramBuilder::finish()'s.
Program checked(Program p) {
  if (p.rules.empty()) throw LangError(LangError::Kind::EmptyProgram, 1, 1, "", "the program has no rules or facts");
  for (Relation& rel : p.rels) {
    if (rel.derived && rel.declared_input)
      throw LangError(LangError::Kind::DuplicateDeclaration, rel.first.line, rel.first.col, rel.name,
                      "relation \"" + rel.name + "\" is declared .input and also derived by rules");
    rel.input = !rel.derived;
  }
  detail::check_safety(p);
  detail::stratify(p);
  return p;
}

}  // namespace

Program parse(std::string_view text) { return checked(Parser(text).run()); }

class ProgramBuilder::Impl : public Parser {
 public:
  Impl() : Parser("") {}
};

ProgramBuilder::ProgramBuilder() : impl_(std::make_unique<Impl>()) {}
ProgramBuilder::~ProgramBuilder() = default;
void ProgramBuilder::directives(std::string_view text, SourcePos at) { impl_->directives(text, at); }
int ProgramBuilder::relation(const std::string& name, int arity, SourcePos at) {
  return impl_->relation(name, arity, at);
}
void ProgramBuilder::add_rule(Rule r) { impl_->add_rule(std::move(r)); }
const Program& ProgramBuilder::program() const { return impl_->peek_program(); }
Program& ProgramBuilder::program() { return impl_->peek_program(); }
Program ProgramBuilder::finish() { return checked(impl_->take()); }

}  // namespace mln::lang::datalog
