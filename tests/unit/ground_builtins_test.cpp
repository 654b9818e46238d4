// The built-in table (lang/builtins.hpp) walked row by row: every row
// parses, evaluates on the host to its sample's result, and spells SQL; the
// 'sql' path's half of the agreement is tests/sql/14_builtins.sql, which
// must hold every row's sample (checked here).
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "ground/expr.hpp"
#include "lang/builtins.hpp"
#include "lang/program.hpp"

namespace mln::ground::test {
namespace {

using lang::Builtin;
using lang::Expr;
using lang::Value;

// The expression a row's sample is written as in a rule.
std::string sample_expr(const Builtin& b) {
  return b.is_operator ? "(" + std::string(b.sample) + ")" : std::string(b.name) + "(" + b.sample + ")";
}

// The single condition of `1 P(x), [cond] => Q(x)`.
Expr parse_condition(const std::string& cond) {
  lang::Program p = lang::parse_program("P(t)\nQ(t)\n1 P(x), [" + cond + "] => Q(x)\n");
  EXPECT_EQ(p.clauses.size(), 1u);
  EXPECT_EQ(p.clauses.at(0).conditions.size(), 1u);
  return p.clauses.at(0).conditions.at(0);
}

Value eval(const Expr& e) {
  return detail::eval_expr(e, [](const std::string& v) -> Value {
    ADD_FAILURE() << "no variables expected, got " << v;
    return {};
  });
}

Value eval_text(const std::string& expr) { return eval(parse_condition(expr)); }

TEST(GroundBuiltins, EveryRowParsesEvaluatesAndSpellsSql) {
  for (const Builtin& b : lang::builtins()) {
    const std::string expr = sample_expr(b);
    SCOPED_TRACE(expr + " = " + b.expect);
    Expr cond = parse_condition(expr + " = " + b.expect);
    ASSERT_EQ(cond.text, "=");
    const Expr& call = cond.args.at(0);
    EXPECT_EQ(call.text, b.name);
    EXPECT_EQ(lang::find_builtin(call.text, call.args.size(), b.is_operator), &b) << "the sample reaches its row";
    EXPECT_TRUE(detail::truthy(eval(cond))) << "host value " << lang::value_text(eval(call));
    EXPECT_EQ(lang::value_text(eval(call)), lang::value_text(eval(cond.args.at(1))));

    std::vector<lang::SqlValue> args;
    for (size_t i = 0; i < call.args.size(); ++i) args.push_back({false, "x" + std::to_string(i)});
    lang::SqlValue sql = lang::builtin_sql(b, args);
    EXPECT_EQ(sql.sql.find('$'), std::string::npos) << sql.sql;
    for (size_t i = 0; i < args.size(); ++i) EXPECT_NE(sql.sql.find("x" + std::to_string(i)), std::string::npos);
    EXPECT_EQ(sql.is_str, b.result == lang::BuiltinType::Text);
  }
}

TEST(GroundBuiltins, PowerIsAFunctionEverywhere) {
  EXPECT_DOUBLE_EQ(eval(parse_condition("power(3, 2) > 0").args.at(0)).num, 9);
  EXPECT_DOUBLE_EQ(eval(parse_condition("POW(2, -1) > 0").args.at(0)).num, 0.5);
  EXPECT_EQ(lang::builtin_sql(*lang::find_builtin("power", 2, false), {{false, "a"}, {false, "b"}}).sql, "power(a, b)");
}

TEST(GroundBuiltins, ArityIsCheckedWhenParsing) {
  auto error_of = [](const std::string& cond) -> std::string {
    try {
      parse_condition(cond);
    } catch (const lang::LangError& e) {
      EXPECT_EQ(e.kind(), lang::LangError::Kind::ArityMismatch);
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of("power(2) > 1").find("power takes 2 arguments, not 1"), std::string::npos);
  EXPECT_NE(error_of("log(1, 2, 3) > 1").find("log takes 1 or 2 arguments, not 3"), std::string::npos);
  EXPECT_NE(error_of("substr(\"a\") = \"a\"").find("substr takes 2 or 3 arguments"), std::string::npos);
  EXPECT_THROW(parse_condition("nosuch(1) > 1"), lang::LangError);
}

TEST(GroundBuiltins, PostgresErrorsAreErrorsOnTheHost) {
  for (const char* e : {"divide(1, 0) > 0", "1 % 0 > 0", "ln(0) > 0", "log(-1) > 0", "sqrt(-1) > 0",
                        "power(0, -1) > 0", "power(-8, 0.5) > 0", "exp(1000) > 0", "factorial(-1) > 0",
                        "split_part(\"a\", \",\", 0) = \"\"", "substr(\"abc\", 1, -1) = \"\"", "\"x\" + 1 > 0",
                        "bitand(1e300, 1) > 0"}) {
    SCOPED_TRACE(e);
    EXPECT_THROW(eval_text(e), lang::LangError);
  }
}

TEST(GroundBuiltins, NumbersPrintAsPostgresPrintsFloat8) {
  auto text = [](double d) { return lang::value_text(lang::num_value(d)); };
  EXPECT_EQ(text(3), "3");
  EXPECT_EQ(text(-2.5), "-2.5");
  EXPECT_EQ(text(0.1), "0.1");
  EXPECT_EQ(text(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(text(1e15), "1e+15");
  EXPECT_EQ(text(123456789012345.5), "123456789012345.5");
  EXPECT_EQ(text(0.0001), "0.0001");
  EXPECT_EQ(text(0.00001234), "1.234e-05");
  EXPECT_EQ(text(-1.5e300), "-1.5e+300");
}

// tests/sql/14_builtins.sql grounds every row's sample through 'cpu' and
// 'sql': a row without one there would be checked on the host only.
TEST(GroundBuiltins, TheSqlTestHoldsEverySample) {
  std::ifstream f(std::string(MLN_EXAMPLES_DIR) + "/../tests/sql/14_builtins.sql");
  ASSERT_TRUE(f.good());
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  for (const Builtin& b : lang::builtins()) {
    const std::string want = sample_expr(b) + " = " + b.expect;
    EXPECT_NE(text.find(want), std::string::npos) << want;
  }
}

}  // namespace
}  // namespace mln::ground::test
