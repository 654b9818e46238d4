// Printing of terms, literals, conditions and clauses (normalised clause
// text and Tuffy's weighted clause listing), and small expression helpers.
#include <charconv>
#include <cstdio>

#include "lang/formula.hpp"
#include "lang/lexer.hpp"

namespace mln::lang {

namespace detail {

std::string quoted_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

namespace {

// Looks `name` up in a rename list; returns the name itself when absent.
const std::string& renamed(const std::string& name, const RenameMap* rename) {
  if (rename) {
    auto it = rename->find(name);
    if (it != rename->end()) return it->second;
  }
  return name;
}


// A constant written bare when it reads back as the same constant.
std::string constant_text(const std::string& s) {
  if (is_constant_name(s) && scan_identifier(s) == s.size() && !is_reserved_word(s)) return s;
  return quoted_string(s);
}

// Shortest text that reads back as `v`.
std::string number_text(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

bool is_comparison(const std::string& op) {
  return op == "=" || op == "!=" || op == "<" || op == "<=" || op == ">" || op == ">=";
}

}  // namespace

std::string term_text(const Term& t) {
  if (t.is_var() || t.is_number) return t.text;
  return constant_text(t.text);
}

std::string literal_text(const Program& prog, const Literal& l,
                         const RenameMap* rename) {
  std::string s = l.positive ? "" : "!";
  s += l.pred >= 0 && l.pred < static_cast<int>(prog.preds.size()) ? prog.preds[l.pred].name : "?";
  s += '(';
  for (size_t i = 0; i < l.args.size(); ++i) {
    if (i) s += ',';
    const Term& t = l.args[i];
    s += t.is_var() ? renamed(t.text, rename) : term_text(t);
  }
  return s + ')';
}

std::string expr_text(const Expr& e, const RenameMap* rename) {
  auto sub = [&](const Expr& a) {
    std::string t = expr_text(a, rename);
    return a.kind == Expr::Kind::Binary ? "(" + t + ")" : t;
  };
  switch (e.kind) {
    case Expr::Kind::Var: return renamed(e.text, rename);
    case Expr::Kind::Num: return number_text(e.num);
    case Expr::Kind::Str: return constant_text(e.text);
    case Expr::Kind::Unary:
      if (e.args.empty()) return e.text;
      if (e.text == "fact") return sub(e.args[0]) + "!";
      if (e.text == "!") return "!(" + expr_text(e.args[0], rename) + ")";
      return e.text + sub(e.args[0]);
    case Expr::Kind::Binary:
      if (e.args.size() != 2) return e.text;
      return sub(e.args[0]) + " " + e.text + " " + sub(e.args[1]);
    case Expr::Kind::Call: {
      std::string s = e.text + "(";
      for (size_t i = 0; i < e.args.size(); ++i) s += (i ? ", " : "") + expr_text(e.args[i], rename);
      return s + ")";
    }
  }
  return "";
}

void collect_expr_vars(const Expr& e, std::vector<std::string>& out) {
  if (e.kind == Expr::Kind::Var) out.push_back(e.text);
  for (const Expr& a : e.args) collect_expr_vars(a, out);
}

Expr negate_condition(const Expr& e) {
  if (e.kind == Expr::Kind::Unary && e.text == "!" && e.args.size() == 1) return e.args[0];
  if (e.kind == Expr::Kind::Binary && is_comparison(e.text)) {
    static const char* const pairs[][2] = {{"=", "!="}, {"!=", "="}, {"<", ">="},
                                           {">=", "<"}, {">", "<="}, {"<=", ">"}};
    Expr n = e;
    for (const auto& p : pairs)
      if (e.text == p[0]) n.text = p[1];
    return n;
  }
  Expr n;
  n.kind = Expr::Kind::Unary;
  n.text = "!";
  n.args.push_back(e);
  return n;
}

// Text of a clause body (EXIST prefix, literals, negated conditions).
std::string clause_body_text(const Program& prog, const Clause& c,
                             const RenameMap* rename) {
  std::string s;
  if (!c.exist_vars.empty()) {
    s = "EXIST ";
    for (size_t i = 0; i < c.exist_vars.size(); ++i) s += (i ? ", " : "") + renamed(c.exist_vars[i], rename);
    s += ' ';
  }
  for (size_t i = 0; i < c.lits.size(); ++i) s += (i ? " v " : "") + literal_text(prog, c.lits[i], rename);
  if (!c.conditions.empty()) {
    // The clause holds the disjunct "not condition" (Tuffy §2.5).
    s += " v [";
    for (size_t i = 0; i < c.conditions.size(); ++i) {
      Expr n = negate_condition(c.conditions[i]);
      std::string t = expr_text(n, rename);
      if (c.conditions.size() > 1 && n.kind == Expr::Kind::Binary) t = "(" + t + ")";
      s += (i ? " || " : "") + t;
    }
    s += ']';
  }
  return s;
}

}  // namespace detail

std::string format_expr(const Expr& e) { return detail::expr_text(e); }

std::string format_clause(const Clause& c) {
  if (!c.weight_var.empty()) return c.weight_var + ": " + c.text;
  if (c.hard) return c.text + ".";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f ", c.weight);
  return buf + c.text;
}

}  // namespace mln::lang
