// mln.problog_job(program, options) (docs/problog.md, "Jobs"): a ProbLog
// program queued for the worker (task 'problog').  The program and its
// options are checked, and the program grounded, here, in the queueing
// backend, exactly as mln.problog does it (problog_run.hpp): the grounding
// reads the caller's tables with the caller's privileges, which a worker,
// reading every database as role mln_worker, must not stand in for.  The
// ground program goes to the worker as bytes (core/problog/cp_payload.hpp) in
// mln.problog_ground, in pieces of 64 MiB:
//  * one value per piece, not a row per ground rule: the worker reads it
//    with one binary COPY and one memcpy per array, the backend writes it
//    with no per-rule SQL (a large run has 10^6-10^7 ground rules);
//  * pieces, because a bytea holds at most 1 GB, and PostgreSQL allocates
//    no more than that at once;
//  * a table of its own, not a column of mln.jobs, so that the job rows the
//    supervisor updates twice a second stay small; the rows go when the
//    job ends (a trigger on mln.jobs).
// mln._check_problog_job(options) is the jobs trigger's check of a
// problog job's options, by the same reader.
#include "pg/guard.hpp"
#include "pg/args.hpp"
#include "pg/json_options.hpp"
#include "pg/problog_run.hpp"
#include "pg/spi.hpp"

#include <algorithm>
#include <string>

#include "core/problog/cp_payload.hpp"
#include "core/problog/problog_options.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/errcodes.h"
PG_FUNCTION_INFO_V1(mln_problog_job);
PG_FUNCTION_INFO_V1(mln_check_problog_job);
}

namespace mln::pg {
namespace {

constexpr const char* kFn = "mln.problog_job";
int64_t queue_problog_job(FunctionCallInfo fcinfo) {
  if (PG_ARGISNULL(0)) throw UserError{ERRCODE_NULL_VALUE_NOT_ALLOWED, std::string(kFn) + ": program must not be null", "", ""};
  const std::string text = text_arg(fcinfo, 0);
  Spi spi;
  const bool no_options = PG_ARGISNULL(1);
  const Datum options = no_options ? 0 : PG_GETARG_DATUM(1);
  const mln::problog::ProblogOptions o = problog_options(spi, options, no_options, kFn);
  ground::problog::GroundProgram g = ground_problog(spi, text, o);
  check_interrupts();
  std::vector<std::string> texts;
  std::vector<int32_t> index;
  for (const ground::problog::GroundQuery& q : g.queries) texts.push_back(q.text), index.push_back(q.index);
  const std::string bytes = mln::problog::encode_cp_payload(g.cp, texts, index);
  g = ground::problog::GroundProgram();  // the bytes are what is kept
  // The device is the job's: without one, this session's mln.device, as
  // mln.problog would use it.  The jobs trigger checks the options again.
  Rows r = spi.query(
      "INSERT INTO mln.jobs(task, options, samples_total) "
      "VALUES ('problog', $1 || jsonb_build_object('device', coalesce($1->>'device', current_setting('mln.device'))), "
      "        $2) RETURNING id",
      {{JSONBOID, options, no_options}, int8_param(static_cast<int64_t>(o.samples_total()))});
  const int64_t job = r.int8(0, 0);
  store_job_bytes(spi, "mln.problog_ground", job, bytes);
  spi.exec("SELECT pg_notify('mln_jobs', $1::text)", {int8_param(job)});
  return job;
}

}  // namespace
}  // namespace mln::pg

using namespace mln::pg;

// mln.problog_job(program text, options jsonb DEFAULT '{}') RETURNS bigint
Datum mln_problog_job(PG_FUNCTION_ARGS) {
  int64_t job = 0;
  MLN_GUARDED({ job = queue_problog_job(fcinfo); });
  PG_RETURN_INT64(job);
}

// mln._check_problog_job(options jsonb) RETURNS void
Datum mln_check_problog_job(PG_FUNCTION_ARGS) {
  MLN_GUARDED({
    Spi spi;
    problog_options(spi, PG_ARGISNULL(0) ? 0 : PG_GETARG_DATUM(0), PG_ARGISNULL(0), kFn);
  });
  PG_RETURN_VOID();
}
