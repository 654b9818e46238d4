// Built-in condition evaluation (Tuffy §2.5): host evaluator and the
// recognition of simple comparisons that run as engine selections.
#include "ground/expr.hpp"

#include <algorithm>
#include <cmath>

namespace mln::ground::detail {
namespace {

using lang::Expr;
using lang::num_value;
using lang::text_value;
using lang::value_num;
using lang::value_text;

// Compares two values with a comparison operator: as text when either side
// is text (a symbol's name), as Tuffy's SQL does, else as numbers.
bool compare(const std::string& op, const Value& a, const Value& b) {
  if (op == "=" || op == "!=" || op == "<>") {
    bool eq = (a.is_str || b.is_str) ? value_text(a) == value_text(b) : a.num == b.num;
    return op == "=" ? eq : !eq;
  }
  double x = value_num(a), y = value_num(b);
  if (op == "<") return x < y;
  if (op == "<=") return x <= y;
  if (op == ">") return x > y;
  return x >= y;  // ">="
}

// Evaluates a built-in call or operator with its evaluated arguments.
Value call(const std::string& name, std::vector<Value> args, bool is_operator) {
  const lang::Builtin* b = lang::find_builtin(name, args.size(), is_operator);
  if (!b)
    throw lang::LangError(lang::LangError::Kind::BadValue, 0, 0, name,
                          std::string("unsupported ") + (is_operator ? "operator" : "function") + " in condition: " + name);
  return lang::eval_builtin(*b, std::move(args));
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

bool truthy(const Value& v) { return lang::value_truthy(v); }

Value eval_expr(const Expr& e, const VarLookup& var) {
  switch (e.kind) {
    case Expr::Kind::Var: return var(e.text);
    case Expr::Kind::Num: return num_value(e.num);
    case Expr::Kind::Str: return text_value(e.text);
    case Expr::Kind::Unary:
      if (e.text == "!") return num_value(!truthy(eval_expr(e.args.at(0), var)));
      return call(e.text, {eval_expr(e.args.at(0), var)}, true);
    case Expr::Kind::Binary: {
      const std::string& op = e.text;
      if (op == "&&") return num_value(truthy(eval_expr(e.args.at(0), var)) && truthy(eval_expr(e.args.at(1), var)));
      if (op == "||") return num_value(truthy(eval_expr(e.args.at(0), var)) || truthy(eval_expr(e.args.at(1), var)));
      Value a = eval_expr(e.args.at(0), var), b = eval_expr(e.args.at(1), var);
      if (!negate_cmp(op).empty()) return num_value(compare(op, a, b));
      return call(op, {std::move(a), std::move(b)}, true);
    }
    case Expr::Kind::Call: {
      std::vector<Value> a;
      for (const auto& x : e.args) a.push_back(eval_expr(x, var));
      return call(e.text, std::move(a), false);
    }
  }
  return num_value(0);
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
    Value v = r->kind == Expr::Kind::Num ? num_value(r->num) : text_value(r->text);
    const int32_t id = c.in.symbols.id_of(value_text(v));
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
    if (vt.kind == lang::TypeKind::Int) return num_value(v);
    std::string s = c.symbol_text(v, vt.kind);
    if (vt.kind == lang::TypeKind::Float) return num_value(value_num(text_value(s)));
    return text_value(s);
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
