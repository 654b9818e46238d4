// Built-in conditions (lang::Expr) over clause bindings: Tuffy's SQL
// semantics evaluated on the host, plus recognition of the simple
// comparisons that an engine selection can do on symbol ids.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ground/internal.hpp"
#include "lang/builtins.hpp"

namespace mln::ground::detail {

using lang::Value;

// Resolves a variable of the expression to its value for one binding row.
using VarLookup = std::function<Value(const std::string& name)>;

// Evaluates `e` (Tuffy semantics; built-ins from lang/builtins.hpp; throws
// lang::LangError where PostgreSQL raises an error).
Value eval_expr(const lang::Expr& e, const VarLookup& var);
// True when the value counts as true in a condition.
bool truthy(const Value& v);
// Names of the variables used by `e`.
void expr_vars(const lang::Expr& e, std::vector<std::string>& out);

// Outcome of trying to turn a condition into engine selection predicates.
enum class Simple { No, Preds, Empty, All };
// Tries to express `e` as conjunct predicates over binding columns.
Simple simple_condition(const Ctx& c, const lang::Expr& e, const Bindings& b, const VarTypes& types,
                        std::vector<gpu::Predicate>& preds);

// Filters `b` by every condition whose variables are all bound and that is
// not yet applied (`done` marks applied ones).
void apply_ready_conditions(Ctx& c, Bindings& b, const std::vector<lang::Expr>& conds,
                            std::vector<uint8_t>& done, const VarTypes& types);

}  // namespace mln::ground::detail
