// Conditions (lang::Expr) as SQL for the 'sql' grounding path, with the
// operator path's semantics (docs/grounding-sql.md, "Built-in conditions"):
// built-in functions and operators as lang/builtins.hpp spells them, typed
// comparisons, and id comparisons for the simple forms.  Also the small SQL
// text helpers the path's statements share.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ground/grounder.hpp"
#include "lang/program.hpp"
#include "pg/guard.hpp"

namespace mln::pg {

// Strings joined with a separator.
std::string sql_join(const std::vector<std::string>& v, const std::string& sep);
// A float8 literal.
std::string sql_float8(double d);
// A text literal (quote_literal; runs PostgreSQL code through pg_call).
std::string sql_literal(const std::string& s);
// The error raised for a feature the 'sql' path does not implement.
UserError sql_unsupported(const std::string& feature);
// The name of the symbol whose id is `id_sql`, read from `symbols_table`.
std::string sql_symbol_name(const std::string& symbols_table, const std::string& id_sql);

// Type name and kind of each clause variable.
using SqlVarTypes = std::map<std::string, std::pair<std::string, lang::TypeKind>>;

// What a condition is translated against: the bound variables' column
// expressions (a symbol id, or the raw value of an int_ argument), their
// types, and the program's symbols (in the database and in memory).
struct SqlScope {
  const std::map<std::string, std::string>& vars;
  const SqlVarTypes& types;
  const std::string& symbols_table;
  const ground::Symbols& symbols;
};

// The clause's conditions, plus w > 0 (pos) or w < 0 for an embedded weight
// w, each an SQL boolean.  Throws UserError (FEATURE_NOT_SUPPORTED) for
// what the path cannot translate and lang::LangError(UnsafeVariable) for a
// variable no literal binds.
std::vector<std::string> clause_conditions_sql(const lang::Clause& cl, const SqlScope& s, bool pos);
// One condition as an SQL boolean.
std::string condition_sql(const lang::Expr& e, const SqlScope& s);

}  // namespace mln::pg
