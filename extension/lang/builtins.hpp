// The built-in functions and operators of conditions (Tuffy §2.5): one
// table, one row per name and arity, that every consumer reads.  The parser
// accepts a call only if a row has its name and argument count; the host
// evaluator (ground/expr.cpp) runs the row's `eval`; the 'sql' grounding path
// (pg/sql_translate.cpp) writes the row's `sql`.  Both evaluators cast the
// arguments to the row's argument types the same way first, so a function
// cannot exist in one place and not another, nor take other arguments.
//
// The semantics are PostgreSQL's (Tuffy grounds with SQL): numbers are
// float8, integers int8 (a float8 cast to int8 rounds half to even), text
// functions count characters (UTF-8) and change case in ASCII only (the SQL
// spells COLLATE "C"), and an error PostgreSQL raises (division by zero, a
// result out of range, ln of 0) is an error on the host too.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace mln::lang {

// A value of a condition expression: a number (float8) or a text.
struct Value {
  bool is_str = false;
  double num = 0;
  std::string str;
};
Value num_value(double d);
Value text_value(std::string s);
// The value as float8, as PostgreSQL casts text to float8 (throws
// LangError(BadValue) on text that is not a number).
double value_num(const Value& v);
// The value as text: integral numbers below 1e15 as integers, others as
// PostgreSQL prints float8 (shortest exact digits, exponent outside 1e-4..1e15).
std::string value_text(const Value& v);
// Whether the value counts as true in a condition.
bool value_truthy(const Value& v);

// What an argument is cast to, and what a result is.  'i' is int8 (the
// float8 rounded half to even); a Bool result is 1 or 0.
enum class BuiltinType : char { Num = 'n', Int = 'i', Text = 't', Bool = 'b' };

struct Builtin {
  const char* name;        // function name in lower case, or the operator as Expr::text holds it
  bool is_operator;        // written as an operator, never called by name
  int min_args, max_args;  // max_args < 0: no upper bound
  const char* arg_types;   // one BuiltinType letter per argument; the last one repeats
  BuiltinType result;      // Int and Bool results are float8 0/1 or whole numbers to the caller
  const char* sql;         // PostgreSQL spelling: $1..$9 the cast arguments, $* all of them
  Value (*eval)(const std::vector<Value>& args);  // host spelling, arguments already cast
  const char* sample;      // arguments as written in a rule, and what they give:
  const char* expect;      //   the tests check both evaluators against this
};

// Every row.
const std::vector<Builtin>& builtins();
// The row for a call or an operator with `nargs` arguments, or null.
const Builtin* find_builtin(std::string_view name, size_t nargs, bool is_operator);
// Whether `lower_name` is a built-in function (of any arity).
bool is_builtin_function(std::string_view lower_name);
// "takes 2 arguments", "takes 1 or 2 arguments", "takes 1 or more arguments".
std::string builtin_arity_text(std::string_view lower_name);
BuiltinType builtin_arg_type(const Builtin& b, size_t i);

// Host evaluation: casts `args` to the argument types and runs the row.
// Throws LangError(BadValue) where PostgreSQL raises an error.
Value eval_builtin(const Builtin& b, std::vector<Value> args);

// A value as SQL text: a float8 or a text expression.
struct SqlValue {
  bool is_str = false;
  std::string sql;
};
std::string sql_num(const SqlValue& v);     // as float8
std::string sql_text(const SqlValue& v);    // as text, printed as value_text() prints
std::string sql_truthy(const SqlValue& v);  // as a boolean, as value_truthy() decides
SqlValue sql_bool(const std::string& cond);  // a boolean as float8 1/0
// SQL of the row applied to `args`: cast as for eval_builtin(), spelled by `sql`.
SqlValue builtin_sql(const Builtin& b, const std::vector<SqlValue>& args);

}  // namespace mln::lang
