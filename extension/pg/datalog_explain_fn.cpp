// mln.datalog_explain(program) (docs/datalog.md, "Explain"): the strata and
// each rule's plan as mln.datalog would run it, from the input relations'
// estimated sizes.  The program is parsed and checked as mln.datalog does
// (the same errors); no row is read and nothing is evaluated or written.
#include "ground/datalog_eval.hpp"
#include "pg/args.hpp"
#include "pg/datalog_run.hpp"
#include "pg/guard.hpp"
#include "pg/spi.hpp"

#include <cmath>
#include <string>
#include <vector>

extern "C" {
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"
PG_FUNCTION_INFO_V1(mln_datalog_explain);
}

namespace mln::pg {
namespace {

struct ExplainRow {
  int stratum, rule, line;
  std::string relation, plan;
  bool recursive;
  int64_t est_rows;
};

std::vector<ExplainRow> explained;  // the result rows, until they are returned

}  // namespace
}  // namespace mln::pg

using namespace mln::pg;

// mln.datalog_explain(program text) returns table(stratum int, relation text,
//   recursive bool, rule int, line int, est_rows bigint, plan text)
Datum mln_datalog_explain(PG_FUNCTION_ARGS) {
  explained.clear();
  MLN_GUARDED({
    if (PG_ARGISNULL(0))
      throw UserError{ERRCODE_NULL_VALUE_NOT_ALLOWED, "mln.datalog_explain: program must not be null", "", ""};
    const std::string text = text_arg(fcinfo, 0);
    Spi spi;
    mln::lang::datalog::Program p = mln::lang::datalog::parse(text);
    prepare_datalog(spi, p);
    std::vector<double> est(p.rels.size(), 0);
    std::vector<std::string> how(p.rels.size());
    for (size_t r = 0; r < p.rels.size(); ++r)
      if (p.rels[r].input) est[r] = estimate_input(spi, p.rels[r], how[r]);
    for (const auto& e : mln::ground::datalog::explain_program(p, est, how)) {
      const auto& rule = p.rules[static_cast<size_t>(e.rule)];
      explained.push_back({e.stratum + 1, e.rule + 1, rule.at.line, p.rels[rule.head.rel].name, e.plan, e.recursive,
                           static_cast<int64_t>(std::llround(e.est_rows))});
    }
  });
  InitMaterializedSRF(fcinfo, 0);
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  for (const ExplainRow& r : explained) {
    Datum values[7] = {Int32GetDatum(r.stratum),         CStringGetTextDatum(r.relation.c_str()),
                       BoolGetDatum(r.recursive),        Int32GetDatum(r.rule),
                       Int32GetDatum(r.line),            Int64GetDatum(r.est_rows),
                       CStringGetTextDatum(r.plan.c_str())};
    bool nulls[7] = {false, false, false, false, false, false, false};
    tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
  }
  explained.clear();
  return (Datum)0;
}
