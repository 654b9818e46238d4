// Query files and -q lists (Tuffy §3.2): atoms with variables/constants or
// bare predicate names, separated by commas or whitespace.
#include <map>

#include "lang/lexer.hpp"

namespace mln::lang {

std::vector<Query> parse_queries(const Program& prog, std::string_view text) {
  using detail::Tok;
  std::vector<detail::Token> toks = detail::tokenize(text);
  std::vector<Query> out;
  size_t i = 0;
  bool after_comma = false;
  while (toks[i].kind != Tok::End) {
    const detail::Token& t = toks[i];
    if (t.kind == Tok::Comma) {
      if (out.empty() || after_comma) throw detail::syntax_error(t, "expected a query atom");
      after_comma = true;
      ++i;
      continue;
    }
    after_comma = false;
    if (t.kind != Tok::Id || detail::is_reserved_word(t.raw))
      throw detail::syntax_error(t, "expected a query atom or a predicate name");
    Query q;
    q.pred = prog.find_pred(t.raw);
    if (q.pred < 0)
      throw LangError(LangError::Kind::UnknownPredicate, t.line, t.col, std::string(t.raw),
                      "query on undeclared predicate " + std::string(t.raw));
    const PredicateDecl& d = prog.preds[q.pred];
    ++i;
    if (toks[i].kind == Tok::LParen) {
      ++i;
      std::map<std::string, std::string> var_types;
      for (;;) {
        const detail::Token& a = toks[i];
        Term term;
        if (a.kind == Tok::Id && !detail::is_reserved_word(a.raw)) {
          term.kind = detail::is_constant_name(a.raw) ? Term::Kind::Constant : Term::Kind::Variable;
          term.text = std::string(a.raw);
        } else if (a.kind == Tok::Number) {
          term.is_number = true;
          term.text = std::string(a.raw[0] == '+' ? a.raw.substr(1) : a.raw);
        } else if (a.kind == Tok::String) {
          term.text = a.value;
        } else {
          throw detail::syntax_error(a, "expected a variable or a constant");
        }
        size_t k = q.args.size();
        if (k < d.arg_types.size()) {
          double v;
          if (d.arg_kinds[k] != TypeKind::Symbol && !term.is_var() && !term.is_number &&
              !detail::parse_number(term.text, v))
            throw LangError(LangError::Kind::TypeClash, a.line, a.col, term.text,
                            "argument " + std::to_string(k + 1) + " of " + d.name + " has numeric type " +
                                d.arg_types[k] + ", but \"" + term.text + "\" is not a number");
          if (term.is_var()) {
            auto it = var_types.emplace(term.text, d.arg_types[k]).first;
            if (it->second != d.arg_types[k])
              throw LangError(LangError::Kind::TypeClash, a.line, a.col, term.text,
                              "variable " + term.text + " is used as type " + it->second + " and as type " +
                                  d.arg_types[k]);
          }
        }
        q.args.push_back(std::move(term));
        ++i;
        if (toks[i].kind == Tok::Comma) {
          ++i;
          continue;
        }
        if (toks[i].kind != Tok::RParen) throw detail::syntax_error(toks[i], "expected \",\" or \")\"");
        ++i;
        break;
      }
      if (q.args.size() != d.arg_types.size())
        throw LangError(LangError::Kind::ArityMismatch, t.line, t.col, std::string(t.raw),
                        "predicate " + d.name + " takes " + std::to_string(d.arity()) + " argument" +
                            (d.arity() == 1 ? "" : "s") + ", query has " + std::to_string(q.args.size()));
    }
    out.push_back(std::move(q));
  }
  if (after_comma) throw detail::syntax_error(toks[i], "expected a query atom after \",\"");
  if (out.empty()) throw detail::syntax_error(toks[i], "a query file must hold at least one query");
  return out;
}

}  // namespace mln::lang
