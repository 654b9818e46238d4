// mln.problog(program, options) (docs/problog.md): a ProbLog / CP-logic
// program over the caller's tables, answered by forward sampling.  The
// program's possible atoms and rule instances come from a Datalog program
// run as mln.datalog runs one (the caller's privileges on the input tables,
// the operator engine, max_rows); grounding and sampling are pure C++
// (extension/ground/problog_ground.*, gpu/forward_sampler*); cancel is
// checked between sample batches.  The parse, options and grounding are
// mln.problog_job's too (problog_run.hpp).
#include "pg/guard.hpp"
#include "pg/args.hpp"
#include "pg/datalog_run.hpp"
#include "pg/engine.hpp"
#include "pg/json_options.hpp"
#include "pg/problog_run.hpp"
#include "pg/spi.hpp"

#include <chrono>
#include <string>
#include <vector>

#include "ground/problog_ground.hpp"
#include "lang/problog.hpp"
#include "core/problog/forward_sampler.hpp"
#include "core/problog/problog_options.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/errcodes.h"
#include "utils/tuplestore.h"
PG_FUNCTION_INFO_V1(mln_problog);
}

namespace mln::pg {
namespace {

namespace pl = lang::problog;
namespace pg_ground = ground::problog;

struct Answer {
  std::string query;
  double p = 0, lo = 0, hi = 0;
  int64_t samples = 0;
};

std::vector<Answer> answers;  // the result rows, until they are returned

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

mln::problog::ProblogOptions problog_options(Spi& spi, Datum options, bool isnull, const std::string& fn) {
  try {
    return mln::problog::read_problog_options(OptionEntries(option_entries(spi, options, isnull), fn, kProblogOptions));
  } catch (const OptionEntryError& e) {
    throw option_error(e);
  }
}

pg_ground::GroundProgram ground_problog(Spi& spi, const std::string& text, const mln::problog::ProblogOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const pl::Program p = pl::parse(text);  // the program's own errors before any table is read
  DatalogOptions dopt;
  dopt.device = o.device;
  dopt.max_rows = o.max_rows;
  dopt.verbose = false;
  DatalogResult dres;
  run_datalog(spi, pg_ground::datalog_program(p), dopt, dres);
  check_interrupts();
  pg_ground::GroundProgram g = pg_ground::build_ground(p, dres.prog, dres.rows, dres.syms);
  const double ground_s = since(t0);
  pg_call([&] {
    elog(o.verbose ? NOTICE : DEBUG1,
         "pg_mln: problog grounded in %.3f s: %llu possible atoms, %llu rule instances, %zu relevant rules over "
         "%d atoms in %d strata, %zu queries, %zu evidence atoms",
         ground_s, static_cast<unsigned long long>(g.possible_atoms), static_cast<unsigned long long>(g.instances),
         g.cp.num_rules(), g.cp.num_atoms, g.cp.num_strata(), g.cp.queries.size(), g.cp.evidence.size());
  });
  return g;
}

namespace {

void run_problog(Spi& spi, const std::string& text, mln::problog::ProblogOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  pg_ground::GroundProgram g = ground_problog(spi, text, o);
  // The sampler runs where the engine runs ('auto': on the GPU when one is usable).
  const bool gpu_engine = engine_for(o.device).backend() == gpu::Backend::CUDA;
  o.sample.device = gpu_engine && mln::problog::cuda_sampler_available() ? "gpu" : "cpu";
  const int level = o.verbose ? NOTICE : DEBUG1;
  o.sample.progress = [&](const mln::problog::SampleProgress& pr) {
    check_interrupts();  // a cancel between batches
    pg_call([&] {
      elog(level, "pg_mln: problog %llu samples drawn, %llu accepted, widest interval %.4f",
           static_cast<unsigned long long>(pr.drawn), static_cast<unsigned long long>(pr.accepted), pr.max_width);
    });
  };
  const mln::problog::SampleResult r = mln::problog::forward_sample(g.cp, o.sample);
  const std::string dev = guc_regress ? "<hidden>" : r.device;
  pg_call([&] {
    elog(level, "pg_mln: problog sampled on %s: %llu samples in %.3f s (%.0f samples/s), total %.3f s", dev.c_str(),
         static_cast<unsigned long long>(r.drawn), r.seconds, r.seconds > 0 ? r.drawn / r.seconds : 0.0, since(t0));
  });
  if (r.accepted == 0 && !g.cp.evidence.empty())
    throw UserError{ERRCODE_DATA_EXCEPTION, mln::problog::no_accepted_sample_message("mln.problog", r.drawn), "",
                    mln::problog::kNoAcceptedSampleHint};
  if (!r.converged) {
    const std::string msg = mln::problog::not_converged_message("mln.problog", o.sample.max_samples);
    pg_call([&] { ereport(WARNING, (errmsg("%s", msg.c_str()), errhint("%s", mln::problog::kNotConvergedHint))); });
  }
  for (const pg_ground::GroundQuery& q : g.queries) {
    const mln::problog::QueryAnswer qa = mln::problog::query_answer(r, q.index);
    answers.push_back({q.text, qa.p, qa.lo, qa.hi, qa.samples});
  }
}

}  // namespace
}  // namespace mln::pg

using namespace mln::pg;

// mln.problog(program text, options jsonb default '{}')
//   returns table(query text, probability float8, ci_low float8, ci_high float8, samples bigint)
Datum mln_problog(PG_FUNCTION_ARGS) {
  answers.clear();
  MLN_GUARDED({
    if (PG_ARGISNULL(0))
      throw UserError{ERRCODE_NULL_VALUE_NOT_ALLOWED, "mln.problog: program must not be null", "", ""};
    const std::string text = text_arg(fcinfo, 0);
    Spi spi;
    mln::problog::ProblogOptions opts =
        problog_options(spi, PG_ARGISNULL(1) ? 0 : PG_GETARG_DATUM(1), PG_ARGISNULL(1), "mln.problog");
    run_problog(spi, text, opts);
  });
  InitMaterializedSRF(fcinfo, 0);
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  // From here PostgreSQL may raise: nothing below owns C++ resources but
  // `answers`, which the next call clears.
  for (const Answer& a : answers) {
    Datum values[5] = {CStringGetTextDatum(a.query.c_str()), Float8GetDatum(a.p), Float8GetDatum(a.lo),
                       Float8GetDatum(a.hi), Int64GetDatum(a.samples)};
    bool nulls[5] = {false, false, false, false, false};
    tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
  }
  answers.clear();
  return (Datum)0;
}
