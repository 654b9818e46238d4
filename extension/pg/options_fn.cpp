// The job options table in SQL: mln._check_infer_options and
// mln._check_learn_options (what mln.infer, mln.learn_weights and the jobs
// trigger run) validate through options/options.hpp, and mln.options() lists it.
#include "pg/guard.hpp"

#include <array>
#include <string>
#include <vector>

#include "options/options.hpp"

extern "C" {
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/errcodes.h"
#include "utils/jsonb.h"

PG_FUNCTION_INFO_V1(mln_check_infer_options);
PG_FUNCTION_INFO_V1(mln_check_learn_options);
PG_FUNCTION_INFO_V1(mln_options);
}

namespace {

// Argument `i` (a jsonb) as JSON text, "null" for SQL NULL (which the
// validator refuses as not an object).  In a plain PostgreSQL frame.
char* jsonb_text_arg(FunctionCallInfo fcinfo, int i) {
  if (PG_ARGISNULL(i)) return pstrdup("null");
  Jsonb* jb = PG_GETARG_JSONB_P(i);
  return JsonbToCString(nullptr, &jb->root, VARSIZE(jb));
}

// Validates `json` for tasks `bits` (0: the inference task `task` names),
// raising an option's error as invalid_parameter_value with its hint.
void check_options(const char* task, unsigned bits, const char* json) {
  MLN_GUARDED({
    try {
      mln::options::decode(bits ? bits : mln::options::infer_task_bits(task), json);
    } catch (const mln::options::OptionError& e) {
      throw mln::pg::UserError{ERRCODE_INVALID_PARAMETER_VALUE, e.what(), "", e.hint};
    }
  });
}

}  // namespace

// mln._check_infer_options(task text, options jsonb) returns void
Datum mln_check_infer_options(PG_FUNCTION_ARGS) {
  char* task = PG_ARGISNULL(0) ? nullptr : text_to_cstring(PG_GETARG_TEXT_PP(0));
  char* json = jsonb_text_arg(fcinfo, 1);
  check_options(task, 0, json);
  PG_RETURN_VOID();
}

// mln._check_learn_options(options jsonb) returns void
Datum mln_check_learn_options(PG_FUNCTION_ARGS) {
  char* json = jsonb_text_arg(fcinfo, 0);
  check_options(nullptr, mln::options::kLearn, json);
  PG_RETURN_VOID();
}

// mln.options() returns table(name, task, type, "default", allowed, doc):
// the job options (task map, marginal, infer, learn, all), then the
// functions' (task datalog, problog, rules or several).  An empty default
// (the caller's setting, said in doc) is NULL.
Datum mln_options(PG_FUNCTION_ARGS) {
  // The rows as text, built once in C++ and kept (static: nothing to
  // destroy when a PostgreSQL error leaves the loop below).
  static std::vector<std::array<std::string, 6>> rows;
  MLN_GUARDED({
    if (!rows.empty()) return;
    std::vector<std::array<std::string, 6>> built;
    for (const mln::options::Spec& s : mln::options::kSpecs) {
      // The functions' messages quote choices ('auto', 'cpu' or 'gpu'); the jobs' do not.
      const bool function_row = (s.tasks & mln::options::kAnyTask) == 0;
      built.push_back({s.name, mln::options::task_name(s.tasks), mln::options::type_name(s.type), s.def,
                       mln::options::allowed_text(s, function_row), s.doc});
    }
    rows.swap(built);
  });
  InitMaterializedSRF(fcinfo, 0);
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  for (const auto& r : rows) {
    Datum values[6];
    bool nulls[6] = {false, false, false, r[3].empty(), false, false};
    for (int i = 0; i < 6; ++i) values[i] = CStringGetTextDatum(r[i].c_str());
    tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
  }
  return (Datum)0;
}
