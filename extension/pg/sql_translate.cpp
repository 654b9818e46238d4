// Conditions as SQL (see sql_translate.hpp).  Built-in functions and
// operators come from lang/builtins.hpp, the table the host evaluator
// (ground/expr.cpp) reads too; comparisons and the connectives are here.
#include "pg/sql_translate.hpp"

#include <cmath>
#include <cstdio>
#include <set>

#include "lang/builtins.hpp"

extern "C" {
#include "utils/builtins.h"
}

namespace mln::pg {

namespace {

using lang::Expr;
using lang::SqlValue;
using lang::TypeKind;

bool is_comparison(const std::string& op) {
  return op == "=" || op == "!=" || op == "<>" || op == "<" || op == "<=" || op == ">" || op == ">=";
}

// Id comparisons for the simple forms (symbolic var op var / const, int var
// op int const), as the operator path's engine selections do them.
bool simple_cmp(const Expr& e, const SqlScope& s, std::string& out) {
  static const std::set<std::string> eq{"=", "!=", "<>"};
  const Expr* l = &e.args.at(0);
  const Expr* r = &e.args.at(1);
  std::string op = e.text == "!=" ? "<>" : e.text;
  if (l->kind != Expr::Kind::Var) {
    std::swap(l, r);
    if (op == "<") op = ">"; else if (op == ">") op = "<"; else if (op == "<=") op = ">="; else if (op == ">=") op = "<=";
  }
  if (l->kind != Expr::Kind::Var || !s.vars.count(l->text)) return false;
  if (r->kind == Expr::Kind::Var && !s.vars.count(r->text)) return false;
  TypeKind lk = s.types.at(l->text).second;
  if (lk == TypeKind::Float) return false;
  const std::string& lc = s.vars.at(l->text);
  if (r->kind == Expr::Kind::Var) {
    if (s.types.at(r->text).second != lk || (lk == TypeKind::Symbol && !eq.count(op))) return false;
    out = "(" + lc + " " + op + " " + s.vars.at(r->text) + ")";
    return true;
  }
  if (lk == TypeKind::Int) {
    if (r->kind != Expr::Kind::Num || std::floor(r->num) != r->num || std::fabs(r->num) > 2e9) return false;
    out = "(" + lc + " " + op + " " + std::to_string(static_cast<long long>(r->num)) + ")";
    return true;
  }
  if (!eq.count(op) || (r->kind != Expr::Kind::Num && r->kind != Expr::Kind::Str)) return false;
  const std::string text = r->kind == Expr::Kind::Num ? lang::value_text(lang::num_value(r->num)) : r->text;
  const int32_t id = s.symbols.id_of(text);
  if (id == 0) out = op == "=" ? "false" : "true";
  else out = "(" + lc + " " + op + " " + std::to_string(id) + ")";
  return true;
}

SqlValue value(const Expr& e, const SqlScope& s);

// A built-in function or operator applied to its translated arguments.
SqlValue builtin(const Expr& e, const SqlScope& s, bool is_operator) {
  std::vector<SqlValue> a;
  for (const auto& x : e.args) a.push_back(value(x, s));
  const lang::Builtin* b = lang::find_builtin(e.text, a.size(), is_operator);
  if (!b) throw sql_unsupported(std::string(is_operator ? "the operator '" : "the function '") + e.text + "' in conditions");
  return lang::builtin_sql(*b, a);
}

// A comparison: ids for the simple forms, else text when either side is
// text and numbers otherwise (as ground/expr.cpp compares).
SqlValue comparison(const Expr& e, const SqlScope& s) {
  std::string simple;
  if (simple_cmp(e, s, simple)) return lang::sql_bool(simple);
  SqlValue a = value(e.args.at(0), s), b = value(e.args.at(1), s);
  const std::string op = e.text == "!=" ? "<>" : e.text;
  if (op == "=" || op == "<>") {
    if (a.is_str || b.is_str) return lang::sql_bool(lang::sql_text(a) + " " + op + " " + lang::sql_text(b));
    return lang::sql_bool(a.sql + " " + op + " " + b.sql);
  }
  return lang::sql_bool(lang::sql_num(a) + " " + op + " " + lang::sql_num(b));
}

// An expression as a typed SQL value.
SqlValue value(const Expr& e, const SqlScope& s) {
  switch (e.kind) {
    case Expr::Kind::Var: {
      auto it = s.vars.find(e.text);
      if (it == s.vars.end())
        throw lang::LangError(lang::LangError::Kind::UnsafeVariable, 0, 0, e.text,
                              "unsafe constraints: a condition uses a variable that no literal binds");
      TypeKind k = s.types.at(e.text).second;
      if (k == TypeKind::Int) return {false, "(" + it->second + ")::float8"};
      if (k == TypeKind::Float) return {false, sql_symbol_name(s.symbols_table, it->second) + "::float8"};
      return {true, sql_symbol_name(s.symbols_table, it->second)};
    }
    case Expr::Kind::Num: return {false, sql_float8(e.num)};
    case Expr::Kind::Str: return {true, sql_literal(e.text)};
    case Expr::Kind::Unary:
      if (e.text == "!") return lang::sql_bool("NOT " + lang::sql_truthy(value(e.args.at(0), s)));
      return builtin(e, s, true);
    case Expr::Kind::Binary:
      if (e.text == "&&" || e.text == "||") {
        const char* op = e.text == "&&" ? " AND " : " OR ";
        return lang::sql_bool(lang::sql_truthy(value(e.args.at(0), s)) + op + lang::sql_truthy(value(e.args.at(1), s)));
      }
      if (is_comparison(e.text)) return comparison(e, s);
      return builtin(e, s, true);
    case Expr::Kind::Call: return builtin(e, s, false);
  }
  return {false, "0"};
}

}  // namespace

std::string sql_join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

std::string sql_float8(double d) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.17g", d);
  return std::string("(") + buf + ")::float8";
}

std::string sql_literal(const std::string& s) {
  return pg_call([&] { return std::string(quote_literal_cstr(s.c_str())); });
}

UserError sql_unsupported(const std::string& feature) {
  return UserError{ERRCODE_FEATURE_NOT_SUPPORTED, "the 'sql' grounding path does not support " + feature, "",
                   "use device => 'cpu' (or 'auto')"};
}

std::string sql_symbol_name(const std::string& symbols_table, const std::string& id_sql) {
  return "(SELECT s.name FROM " + symbols_table + " AS s WHERE s.id = " + id_sql + ")";
}

std::string condition_sql(const Expr& e, const SqlScope& s) { return lang::sql_truthy(value(e, s)); }

std::vector<std::string> clause_conditions_sql(const lang::Clause& cl, const SqlScope& s, bool pos) {
  std::vector<std::string> out;
  for (const auto& e : cl.conditions) out.push_back(condition_sql(e, s));
  if (!cl.weight_var.empty()) {
    Expr v, zero, c;
    v.kind = Expr::Kind::Var;
    v.text = cl.weight_var;
    zero.kind = Expr::Kind::Num;
    c.kind = Expr::Kind::Binary;
    c.text = pos ? ">" : "<";
    c.args = {v, zero};
    out.push_back(condition_sql(c, s));
  }
  return out;
}

}  // namespace mln::pg
