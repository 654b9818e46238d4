// mln._parse_program(text): parse and describe a program as JSON, for the
// plpgsql catalog code in the install script.
#include "pg/guard.hpp"
#include "pg/json.hpp"

#include <set>
#include <string>

#include "lang/program.hpp"

extern "C" {
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
PG_FUNCTION_INFO_V1(mln_parse_program);
}

namespace {

// Program constants in first-seen order (Tuffy interns them before queries
// and evidence).
std::vector<std::string> program_constants(const mln::lang::Program& p) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add_lit = [&](const mln::lang::Literal& l) {
    const auto& d = p.preds[l.pred];
    for (size_t k = 0; k < l.args.size(); ++k) {
      const auto& t = l.args[k];
      if (t.is_var() || d.arg_kinds[k] == mln::lang::TypeKind::Int) continue;
      if (seen.insert(t.text).second) out.push_back(t.text);
    }
  };
  for (const auto& c : p.clauses)
    for (const auto& l : c.lits) add_lit(l);
  for (const auto& r : p.rules) {
    add_lit(r.head);
    for (const auto& l : r.body) add_lit(l);
  }
  return out;
}

const char* kind_name(mln::lang::TypeKind k) {
  return k == mln::lang::TypeKind::Int ? "int" : k == mln::lang::TypeKind::Float ? "float" : "symbol";
}

// The JSON description of a parsed program.
std::string describe(const mln::lang::Program& p) {
  using mln::pg::json_quote;
  std::string o = "{\"predicates\":[";
  for (size_t i = 0; i < p.preds.size(); ++i) {
    const auto& d = p.preds[i];
    std::vector<std::string> kinds, labels;
    for (auto k : d.arg_kinds) kinds.push_back(kind_name(k));
    o += (i ? "," : "");
    o += "{\"name\":" + json_quote(d.name) + ",\"arg_types\":" + mln::pg::json_str_array(d.arg_types) +
         ",\"arg_names\":" + mln::pg::json_str_array(d.arg_names) +
         ",\"arg_kinds\":" + mln::pg::json_str_array(kinds) + ",\"key_labels\":[";
    for (size_t k = 0; k < d.dependent.size(); ++k) o += std::string(k ? "," : "") + (d.dependent[k] ? "true" : "false");
    o += "],\"closed_world\":" + std::string(d.closed_world ? "true" : "false") +
         ",\"completely_specified\":" + (d.completely_specified ? "true" : "false") + "}";
  }
  o += "],\"clauses\":[";
  for (size_t i = 0; i < p.clauses.size(); ++i) {
    const auto& c = p.clauses[i];
    o += (i ? "," : "");
    o += "{\"weight\":" + mln::pg::json_num(c.weight) + ",\"hard\":" + (c.hard ? "true" : "false") +
         ",\"text\":" + json_quote(c.text) + ",\"exist_vars\":" + mln::pg::json_str_array(c.exist_vars) +
         ",\"line\":" + std::to_string(c.pos.line) + "}";
  }
  o += "],\"rules\":" + std::to_string(p.rules.size());
  o += ",\"constants\":" + mln::pg::json_str_array(program_constants(p));
  o += ",\"warnings\":" + mln::pg::json_str_array(p.warnings) + "}";
  return o;
}

}  // namespace

// mln._parse_program(program text) returns jsonb
Datum mln_parse_program(PG_FUNCTION_ARGS) {
  text* src = PG_GETARG_TEXT_PP(0);
  const char* data = VARDATA_ANY(src);
  size_t len = VARSIZE_ANY_EXHDR(src);
  char* json = nullptr;
  MLN_GUARDED({
    mln::lang::Program p = mln::lang::parse_program(std::string_view(data, len));
    std::string s = describe(p);
    json = mln::pg::pg_call([&] { return pstrdup(s.c_str()); });
  });
  PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
}
