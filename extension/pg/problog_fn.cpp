// mln.problog(program, options) (docs/problog.md): a ProbLog / CP-logic
// program over the caller's tables, answered by forward sampling.  The
// program's possible atoms and rule instances come from a Datalog program
// run as mln.datalog runs one (the caller's privileges on the input tables,
// the operator engine, max_rows); grounding and sampling are pure C++
// (extension/ground/problog_ground.*, gpu/forward_sampler*); cancel is
// checked between sample batches.
#include "pg/guard.hpp"
#include "pg/args.hpp"
#include "pg/datalog_run.hpp"
#include "pg/engine.hpp"
#include "pg/json_options.hpp"
#include "pg/spi.hpp"

#include <chrono>
#include <string>
#include <vector>

#include "ground/problog_ground.hpp"
#include "lang/problog.hpp"
#include "mln/forward_sampler.hpp"

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

struct ProblogOptions {
  std::string device;  // '' (the mln.device setting), auto, cpu or gpu
  gpu::SampleOptions sample;
  uint64_t max_rows = 100000000;
  bool verbose = false;
};

ProblogOptions problog_options(Spi& spi, Datum options, bool isnull) {
  ProblogOptions o;
  o.sample.seed = 42;
  const JsonOptions opts(spi, options, isnull, "mln.problog",
                         "device ('auto', 'cpu', 'gpu'), samples, delta, max_samples, seed, threads, max_rows and "
                         "verbose");
  const int64_t big = 1000000000000;  // 10^12 samples
  for (const JsonOptions::Entry& e : opts.entries()) {
    if (e.key == "device") {
      o.device = opts.choice(e, {"auto", "cpu", "gpu"});
    } else if (e.key == "samples") {
      o.sample.samples = static_cast<uint64_t>(opts.whole(e, 0, big, "a whole number >= 0 (0: the stopping rule)"));
    } else if (e.key == "max_samples") {
      o.sample.max_samples = static_cast<uint64_t>(opts.whole(e, 1, big));
    } else if (e.key == "seed") {
      o.sample.seed = static_cast<uint64_t>(opts.whole(e, 0, INT64_MAX));
    } else if (e.key == "threads") {
      o.sample.threads = static_cast<int>(opts.whole(e, 0, 4096, "a whole number in [0, 4096] (0: all cores)"));
    } else if (e.key == "max_rows") {
      o.max_rows = static_cast<uint64_t>(opts.whole(e, 0, INT64_MAX, "a whole number >= 0 (0: no limit)"));
    } else if (e.key == "delta") {
      const std::string want = "a number in (0, 1): the width of the 95% interval the stopping rule reaches";
      o.sample.delta = opts.number(e, 0, want);
      if (!(o.sample.delta > 0 && o.sample.delta < 1))  // number() checks the lower bound only
        throw UserError{ERRCODE_INVALID_PARAMETER_VALUE, "option \"delta\" of mln.problog must be " + want, "", ""};
    } else if (e.key == "verbose") {
      o.verbose = opts.boolean(e);
    } else {
      throw opts.unknown(e);
    }
  }
  return o;
}

struct Answer {
  std::string query;
  double p = 0, lo = 0, hi = 0;
  int64_t samples = 0;
};

std::vector<Answer> answers;  // the result rows, until they are returned

// Datalog's error about `column N of "rel"` where rel is a random relation
// counts its hidden leading column: say argument N - 1, as written.
lang::LangError renumbered(const pl::Program& p, const lang::LangError& e) {
  std::string msg = e.what(), token = e.token();
  const size_t at = msg.find("column ");
  const size_t of = at == std::string::npos ? at : msg.find(" of \"", at);
  const size_t close = of == std::string::npos ? of : msg.find('"', of + 5);
  if (close == std::string::npos) return e;
  const std::string num = msg.substr(at + 7, of - at - 7), rel = msg.substr(of + 5, close - of - 5);
  const int pred = p.find(rel);
  if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos || pred < 0 ||
      !p.preds[static_cast<size_t>(pred)].derived)
    return e;
  const std::string was = msg.substr(at, close + 1 - at);
  const std::string fixed = "argument " + std::to_string(std::stoi(num) - 1) + " of \"" + rel + "\"";
  if (token == was) token = fixed;
  msg = msg.substr(0, at) + fixed + msg.substr(close + 1);
  return lang::LangError(e.kind(), e.line(), e.col(), token, msg);
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void run_problog(Spi& spi, const std::string& text, ProblogOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const pl::Program p = pl::parse(text);  // the program's own errors before any table is read
  DatalogOptions dopt;
  dopt.device = o.device;
  dopt.max_rows = o.max_rows;
  dopt.verbose = false;
  DatalogResult dres;
  try {
    run_datalog(spi, pg_ground::datalog_text(p), dopt, dres);
  } catch (const lang::LangError& e) {
    throw renumbered(p, e);
  }
  check_interrupts();
  pg_ground::GroundProgram g = pg_ground::build_ground(p, dres.prog, dres.rows, dres.syms);
  const double ground_s = since(t0);
  // The sampler runs where the engine runs ('auto': on the GPU when one is usable).
  const bool gpu_engine = engine_for(o.device).backend() == gpu::Backend::CUDA;
  o.sample.device = gpu_engine && gpu::cuda_sampler_available() ? "gpu" : "cpu";
  const int level = o.verbose ? NOTICE : DEBUG1;
  pg_call([&] {
    elog(level, "pg_mln: problog grounded in %.3f s: %llu possible atoms, %llu rule instances, %zu relevant rules over "
         "%d atoms in %d strata, %zu queries, %zu evidence atoms",
         ground_s, static_cast<unsigned long long>(g.possible_atoms), static_cast<unsigned long long>(g.instances),
         g.cp.num_rules(), g.cp.num_atoms, g.cp.num_strata(), g.cp.queries.size(), g.cp.evidence.size());
  });
  o.sample.progress = [&](const gpu::SampleProgress& pr) {
    check_interrupts();  // a cancel between batches
    pg_call([&] {
      elog(level, "pg_mln: problog %llu samples drawn, %llu accepted, widest interval %.4f",
           static_cast<unsigned long long>(pr.drawn), static_cast<unsigned long long>(pr.accepted), pr.max_width);
    });
  };
  const gpu::SampleResult r = gpu::forward_sample(g.cp, o.sample);
  const std::string dev = guc_regress ? "<hidden>" : r.device;
  pg_call([&] {
    elog(level, "pg_mln: problog sampled on %s: %llu samples in %.3f s (%.0f samples/s), total %.3f s", dev.c_str(),
         static_cast<unsigned long long>(r.drawn), r.seconds, r.seconds > 0 ? r.drawn / r.seconds : 0.0, since(t0));
  });
  if (r.accepted == 0 && !g.cp.evidence.empty())
    throw UserError{ERRCODE_DATA_EXCEPTION,
                    "mln.problog: no sample satisfied the evidence (" + std::to_string(r.drawn) + " drawn)", "",
                    "the evidence is very unlikely or impossible: check it, or raise max_samples"};
  if (!r.converged)
    pg_call([&] {
      ereport(WARNING, (errmsg("mln.problog: the stopping rule did not hold after max_samples = %llu samples",
                               static_cast<unsigned long long>(o.sample.max_samples)),
                        errhint("the intervals are wider than delta; raise max_samples")));
    });
  for (const pg_ground::GroundQuery& q : g.queries) {
    Answer a;
    a.query = q.text;
    a.samples = static_cast<int64_t>(r.accepted);
    if (q.index >= 0 && r.accepted > 0) {
      const uint64_t k = r.true_counts[static_cast<size_t>(q.index)];
      a.p = static_cast<double>(k) / static_cast<double>(r.accepted);
      gpu::wilson_interval(k, r.accepted, &a.lo, &a.hi);
    }
    answers.push_back(std::move(a));
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
    ProblogOptions opts = problog_options(spi, PG_ARGISNULL(1) ? 0 : PG_GETARG_DATUM(1), PG_ARGISNULL(1));
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
