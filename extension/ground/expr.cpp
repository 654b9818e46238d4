// Built-in condition evaluation (Tuffy §2.5): host evaluator and the
// recognition of simple comparisons that run as engine selections.
#include "ground/expr.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <regex>

namespace mln::ground::detail {
namespace {

using lang::Expr;

// Casts a value to a number the way PostgreSQL casts text to float8.
double to_num(const Value& v) {
  if (!v.is_str) return v.num;
  const char* s = v.str.c_str();
  char* end = nullptr;
  double d = std::strtod(s, &end);
  while (end && *end && std::isspace(static_cast<unsigned char>(*end))) ++end;
  if (v.str.empty() || end == s || (end && *end)) {
    throw lang::LangError(lang::LangError::Kind::BadValue, 0, 0, v.str,
                          "invalid input syntax for type double precision: \"" + v.str + "\"");
  }
  return d;
}

// Text of a value (numbers print like PostgreSQL prints float8).
std::string to_str(const Value& v) {
  if (v.is_str) return v.str;
  if (std::floor(v.num) == v.num && std::fabs(v.num) < 1e15) {
    return std::to_string(static_cast<long long>(v.num));
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v.num);
  return buf;
}

Value num(double d) { Value v; v.num = d; return v; }
Value str(std::string s) { Value v; v.is_str = true; v.str = std::move(s); return v; }

// Compares two values with a comparison operator.
bool compare(const std::string& op, const Value& a, const Value& b) {
  if (op == "=" || op == "!=" || op == "<>") {
    // Text comparison when either side is text (a symbol's name), as Tuffy's SQL does.
    bool eq = (a.is_str || b.is_str) ? to_str(a) == to_str(b) : a.num == b.num;
    return op == "=" ? eq : !eq;
  }
  double x = to_num(a), y = to_num(b);
  if (op == "<") return x < y;
  if (op == "<=") return x <= y;
  if (op == ">") return x > y;
  return x >= y;  // ">="
}

double factorial(double n) {
  double r = 1;
  for (long long i = 2; i <= static_cast<long long>(n); ++i) r *= static_cast<double>(i);
  return r;
}

// Evaluates a built-in function call.
Value call(const std::string& f, const std::vector<Value>& a) {
  auto n = [&](size_t i) { return to_num(a.at(i)); };
  auto s = [&](size_t i) { return to_str(a.at(i)); };
  auto i64 = [&](size_t i) { return static_cast<long long>(std::llround(n(i))); };
  if (f == "abs") return num(std::fabs(n(0)));
  if (f == "sign") return num(n(0) > 0 ? 1 : n(0) < 0 ? -1 : 0);
  if (f == "exp") return num(std::exp(n(0)));
  if (f == "ceil" || f == "ceiling") return num(std::ceil(n(0)));
  if (f == "floor") return num(std::floor(n(0)));
  if (f == "trunc") return num(std::trunc(n(0)));
  if (f == "round") return num(std::round(n(0)));
  if (f == "ln") return num(std::log(n(0)));
  if (f == "lg") return num(std::log10(n(0)));
  if (f == "log") return num(a.size() == 2 ? std::log(n(1)) / std::log(n(0)) : std::log10(n(0)));
  if (f == "pow" || f == "power") return num(std::pow(n(0), n(1)));
  if (f == "sqrt") return num(std::sqrt(n(0)));
  if (f == "sin") return num(std::sin(n(0)));
  if (f == "cos") return num(std::cos(n(0)));
  if (f == "tan") return num(std::tan(n(0)));
  if (f == "factorial") return num(factorial(n(0)));
  if (f == "add") return num(n(0) + n(1));
  if (f == "subtract") return num(n(0) - n(1));
  if (f == "multiply") return num(n(0) * n(1));
  if (f == "divide") return num(n(0) / n(1));
  if (f == "mod") return num(std::fmod(n(0), n(1)));
  if (f == "bitand") return num(static_cast<double>(i64(0) & i64(1)));
  if (f == "bitor") return num(static_cast<double>(i64(0) | i64(1)));
  if (f == "bitxor") return num(static_cast<double>(i64(0) ^ i64(1)));
  if (f == "bitshiftleft") return num(static_cast<double>(i64(0) << i64(1)));
  if (f == "bitshiftright") return num(static_cast<double>(i64(0) >> i64(1)));
  if (f == "length" || f == "len" || f == "strlen") return num(static_cast<double>(s(0).size()));
  if (f == "upper" || f == "lower") {
    std::string r = s(0);
    for (auto& ch : r) ch = static_cast<char>(f == "upper" ? std::toupper(ch) : std::tolower(ch));
    return str(r);
  }
  if (f == "trim") {
    std::string r = s(0);
    size_t b = r.find_first_not_of(' '), e = r.find_last_not_of(' ');
    return str(b == std::string::npos ? "" : r.substr(b, e - b + 1));
  }
  if (f == "initcap") {
    std::string r = s(0);
    bool start = true;
    for (auto& ch : r) {
      ch = static_cast<char>(start ? std::toupper(ch) : std::tolower(ch));
      start = !std::isalnum(static_cast<unsigned char>(ch));
    }
    return str(r);
  }
  if (f == "concat") {
    std::string r;
    for (size_t i = 0; i < a.size(); ++i) r += s(i);
    return str(r);
  }
  if (f == "strpos") {
    size_t p = s(0).find(s(1));
    return num(p == std::string::npos ? 0 : static_cast<double>(p + 1));
  }
  if (f == "repeat") {
    std::string r;
    for (long long i = 0; i < i64(1); ++i) r += s(0);
    return str(r);
  }
  if (f == "substr") {
    std::string x = s(0);
    long long from = i64(1) - 1, len = a.size() > 2 ? i64(2) : static_cast<long long>(x.size());
    if (from < 0) { len += from; from = 0; }
    if (from >= static_cast<long long>(x.size()) || len <= 0) return str("");
    return str(x.substr(static_cast<size_t>(from), static_cast<size_t>(len)));
  }
  if (f == "replace") {
    std::string x = s(0), from = s(1), to = s(2), r;
    if (from.empty()) return str(x);
    size_t pos = 0, q;
    while ((q = x.find(from, pos)) != std::string::npos) { r += x.substr(pos, q - pos) + to; pos = q + from.size(); }
    return str(r + x.substr(pos));
  }
  if (f == "split_part") {
    std::string x = s(0), d = s(1);
    long long k = i64(2);
    size_t pos = 0;
    for (long long i = 1;; ++i) {
      size_t q = d.empty() ? std::string::npos : x.find(d, pos);
      if (i == k) return str(x.substr(pos, q == std::string::npos ? std::string::npos : q - pos));
      if (q == std::string::npos) return str("");
      pos = q + d.size();
    }
  }
  if (f == "regex_replace" || f == "regexp_replace") {
    return str(std::regex_replace(s(0), std::regex(s(1)), s(2), std::regex_constants::format_first_only));
  }
  if (f == "contains") return num(s(0).find(s(1)) != std::string::npos);
  if (f == "startswith") return num(s(0).rfind(s(1), 0) == 0);
  if (f == "endswith") {
    std::string x = s(0), y = s(1);
    return num(x.size() >= y.size() && x.compare(x.size() - y.size(), y.size(), y) == 0);
  }
  throw lang::LangError(lang::LangError::Kind::BadValue, 0, 0, f, "unsupported function in condition: " + f);
}

// Negation of a comparison operator, or "" when `op` is not one.
std::string negate_cmp(const std::string& op) {
  if (op == "=") return "!=";
  if (op == "!=" || op == "<>") return "=";
  if (op == "<") return ">=";
  if (op == "<=") return ">";
  if (op == ">") return "<=";
  if (op == ">=") return "<";
  return "";
}

// Mirrors a comparison for swapped operands.
std::string mirror_cmp(const std::string& op) {
  if (op == "<") return ">";
  if (op == "<=") return ">=";
  if (op == ">") return "<";
  if (op == ">=") return "<=";
  return op;
}

gpu::CmpOp to_cmp(const std::string& op) {
  if (op == "=") return gpu::CmpOp::EQ;
  if (op == "!=" || op == "<>") return gpu::CmpOp::NE;
  if (op == "<") return gpu::CmpOp::LT;
  if (op == "<=") return gpu::CmpOp::LE;
  if (op == ">") return gpu::CmpOp::GT;
  return gpu::CmpOp::GE;
}

}  // namespace

bool truthy(const Value& v) { return v.is_str ? !v.str.empty() && v.str != "f" && v.str != "false" : v.num != 0; }

Value eval_expr(const Expr& e, const VarLookup& var) {
  switch (e.kind) {
    case Expr::Kind::Var: return var(e.text);
    case Expr::Kind::Num: return num(e.num);
    case Expr::Kind::Str: return str(e.text);
    case Expr::Kind::Unary: {
      Value a = eval_expr(e.args.at(0), var);
      if (e.text == "!") return num(!truthy(a));
      if (e.text == "-") return num(-to_num(a));
      if (e.text == "~") return num(static_cast<double>(~static_cast<long long>(std::llround(to_num(a)))));
      if (e.text == "fact") return num(factorial(to_num(a)));
      return a;
    }
    case Expr::Kind::Binary: {
      const std::string& op = e.text;
      if (op == "&&") return num(truthy(eval_expr(e.args.at(0), var)) && truthy(eval_expr(e.args.at(1), var)));
      if (op == "||") return num(truthy(eval_expr(e.args.at(0), var)) || truthy(eval_expr(e.args.at(1), var)));
      Value a = eval_expr(e.args.at(0), var), b = eval_expr(e.args.at(1), var);
      if (!negate_cmp(op).empty()) return num(compare(op, a, b));
      double x = to_num(a), y = to_num(b);
      long long p = std::llround(x), q = std::llround(y);
      if (op == "+") return num(x + y);
      if (op == "-") return num(x - y);
      if (op == "*") return num(x * y);
      if (op == "/") return num(x / y);
      if (op == "%") return num(std::fmod(x, y));
      if (op == "&") return num(static_cast<double>(p & q));
      if (op == "|") return num(static_cast<double>(p | q));
      if (op == "^") return num(static_cast<double>(p ^ q));
      if (op == "<<") return num(static_cast<double>(p << q));
      if (op == ">>") return num(static_cast<double>(p >> q));
      throw lang::LangError(lang::LangError::Kind::BadValue, 0, 0, op, "unsupported operator in condition: " + op);
    }
    case Expr::Kind::Call: {
      std::vector<Value> a;
      for (const auto& x : e.args) a.push_back(eval_expr(x, var));
      return call(e.text, a);
    }
  }
  return num(0);
}

void expr_vars(const Expr& e, std::vector<std::string>& out) {
  if (e.kind == Expr::Kind::Var) out.push_back(e.text);
  for (const auto& a : e.args) expr_vars(a, out);
}

Simple simple_condition(const Ctx& c, const Expr& e0, const Bindings& b, const VarTypes& types,
                        std::vector<gpu::Predicate>& preds) {
  const Expr* e = &e0;
  bool negated = false;
  while (e->kind == Expr::Kind::Unary && e->text == "!") { negated = !negated; e = &e->args.at(0); }
  if (e->kind != Expr::Kind::Binary || negate_cmp(e->text).empty()) return Simple::No;
  std::string op = negated ? negate_cmp(e->text) : e->text;
  const Expr* l = &e->args.at(0);
  const Expr* r = &e->args.at(1);
  if (l->kind != Expr::Kind::Var) { std::swap(l, r); op = mirror_cmp(op); }
  if (l->kind != Expr::Kind::Var) return Simple::No;
  auto kind_of = [&](const std::string& v) { return types.at(v).kind; };
  lang::TypeKind lk = kind_of(l->text);
  if (lk == lang::TypeKind::Float) return Simple::No;
  bool eq_only = op == "=" || op == "!=" || op == "<>";
  gpu::Predicate p;
  p.col = b.col(l->text);
  p.op = to_cmp(op);
  if (r->kind == Expr::Kind::Var) {
    if (kind_of(r->text) != lk) return Simple::No;
    if (lk == lang::TypeKind::Symbol && !eq_only) return Simple::No;
    p.rhs_is_col = true;
    p.rhs_col = b.col(r->text);
  } else if (lk == lang::TypeKind::Int) {
    if (r->kind != Expr::Kind::Num || std::floor(r->num) != r->num || std::fabs(r->num) > 2e9) return Simple::No;
    p.rhs_const = static_cast<int32_t>(r->num);
  } else {
    if (!eq_only) return Simple::No;
    if (r->kind != Expr::Kind::Num && r->kind != Expr::Kind::Str) return Simple::No;
    Value v = r->kind == Expr::Kind::Num ? num(r->num) : str(r->text);
    const int32_t id = c.in.symbols.id_of(to_str(v));
    if (id == 0) return p.op == gpu::CmpOp::EQ ? Simple::Empty : Simple::All;
    p.rhs_const = id;
  }
  preds.push_back(p);
  return Simple::Preds;
}

void apply_ready_conditions(Ctx& c, Bindings& b, const std::vector<Expr>& conds, std::vector<uint8_t>& done,
                            const VarTypes& types) {
  std::vector<size_t> host;
  std::vector<gpu::Predicate> preds;
  bool empty = false;
  for (size_t i = 0; i < conds.size(); ++i) {
    if (done[i]) continue;
    std::vector<std::string> vs;
    expr_vars(conds[i], vs);
    bool ready = std::all_of(vs.begin(), vs.end(), [&](const std::string& v) { return b.col(v) >= 0; });
    if (!ready) continue;
    done[i] = 1;
    switch (simple_condition(c, conds[i], b, types, preds)) {
      case Simple::Empty: empty = true; break;
      case Simple::No: host.push_back(i); break;
      default: break;
    }
  }
  if (empty) {
    preds.clear();
    preds.push_back(gpu::Predicate{0, gpu::CmpOp::NE, true, 0, 0});  // zero != zero: no rows
  }
  if (!preds.empty()) b.rel = c.eng.select(b.rel, preds);
  if (host.empty() || b.rel.rows() == 0) return;
  // General conditions: evaluate row by row on the host over the binding table.
  gpu::HostTable t = c.eng.download(b.rel);
  size_t n = t.rows();
  std::vector<uint8_t> keep(n, 1);
  size_t row = 0;
  VarLookup look = [&](const std::string& name) -> Value {
    int col = b.col(name);
    int32_t v = t.cols[col][row];
    const VarType& vt = types.at(name);
    if (vt.kind == lang::TypeKind::Int) return num(v);
    std::string s = c.symbol_text(v, vt.kind);
    if (vt.kind == lang::TypeKind::Float) return num(to_num(str(s)));
    return str(s);
  };
  for (row = 0; row < n; ++row)
    for (size_t i : host)
      if (keep[row] && !truthy(eval_expr(conds[i], look))) keep[row] = 0;
  gpu::HostTable f;
  f.cols.resize(t.cols.size());
  for (size_t k = 0; k < t.cols.size(); ++k)
    for (size_t r = 0; r < n; ++r)
      if (keep[r]) f.cols[k].push_back(t.cols[k][r]);
  b.rel = c.eng.upload(f);
}

}  // namespace mln::ground::detail
