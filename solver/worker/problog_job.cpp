// ProbLog jobs (task 'problog', queued by mln.problog_job): the ground
// program the queueing backend stored in mln.problog_ground (it grounded
// the program over the caller's tables, with the caller's privileges; the
// bytes are core/problog/cp_payload.hpp's), read with one binary COPY, and the
// options read by the reader mln.problog and mln.problog_job read them
// with (core/problog/problog_options.hpp).  The forward sampler runs where the
// job's device says while this thread supervises it: the samples drawn and
// accepted and the widest interval go to the job's row, and a cancel stops
// it between batches.  The answers, mln.problog's rows from the same
// counts, go to mln.problog_results in the transaction that marks the job
// done; a failed or cancelled job writes none.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/problog/cp_payload.hpp"
#include "core/problog/forward_sampler.hpp"
#include "core/problog/problog_options.hpp"
#include "worker/job.hpp"
#include "worker/pq.hpp"
#include "worker/supervise.hpp"
#include "worker/worker.hpp"

namespace mln::worker {
namespace {

constexpr const char* kFn = "mln.problog_job";

// The job's options, read as mln.problog_job checked them; a job queued
// without a device (a direct insert) samples where 'auto' says, and one
// without threads on the worker's --threads.
problog::ProblogOptions job_options(Conn& c, const WorkerOptions& wo, const Job& job) {
  problog::ProblogOptions o =
      problog::read_problog_options(OptionEntries(job_option_entries(c, job.id), kFn, kProblogOptions));
  if (!o.threads_given) o.sample.threads = wo.threads;
  return o;
}

// The job's ground program: its pieces in order, joined and decoded.
problog::CpPayload read_ground(Conn& c, const Job& job) {
  std::string bytes;
  if (!read_job_bytes(c, "mln.problog_ground", job.id, bytes))
    throw std::invalid_argument("the job has no ground program (queue ProbLog programs with mln.problog_job)");
  return problog::decode_cp_payload(bytes);
}

// The sampling, in the supervised thread: progress into `pr`, a cancel (or
// a shutdown) thrown from the callback between batches.
problog::SampleResult sample(const WorkerOptions& wo, const Job& job, const problog::CpPayload& g, problog::ProblogOptions& o,
                         Progress& pr, std::atomic<bool>& cancel) {
  o.sample.device = problog::sampler_device(o.device.empty() ? "auto" : o.device);
  o.sample.progress = [&](const problog::SampleProgress& s) {
    {
      std::lock_guard<std::mutex> lk(pr.mu);
      pr.drawn = s.drawn;
      pr.accepted = s.accepted;
      pr.widest = s.max_width;
    }
    if (o.verbose && wo.log)
      wo.log("job " + std::to_string(job.id) + ": " + std::to_string(s.drawn) + " samples drawn, " +
             std::to_string(s.accepted) + " accepted, widest interval " + std::to_string(s.max_width));
    if (cancel) throw std::runtime_error("cancelled");
  };
  return problog::forward_sample(g.cp, o.sample);
}

// Rows of mln.problog_results per INSERT (each one statement of arrays:
// COPY FROM is refused on a table with row-level security, and a worker
// that is a member of mln_worker is under it).
constexpr size_t kRowsPerInsert = 100000;

// Answer rows [begin, end) of `g` from `r`, inserted as arrays.
void insert_answers(Conn& c, const std::string& id, const problog::CpPayload& g, const problog::SampleResult& r, size_t begin,
                    size_t end) {
  std::vector<std::string> texts(g.query_text.begin() + begin, g.query_text.begin() + end);
  std::string p = "{", lo = "{", hi = "{";
  for (size_t i = begin; i < end; ++i) {
    const problog::QueryAnswer a = problog::query_answer(r, g.query_index[i]);
    const char* sep = i > begin ? "," : "";
    p += sep + float8_text(a.p), lo += sep + float8_text(a.lo), hi += sep + float8_text(a.hi);
  }
  c.exec("INSERT INTO mln.problog_results(job, query_no, query, probability, ci_low, ci_high, samples) "
         "SELECT $1, $2::int + u.n, u.q, u.p, u.lo, u.hi, $7 "
         "FROM unnest($3::text[], $4::float8[], $5::float8[], $6::float8[]) WITH ORDINALITY u(q, p, lo, hi, n)",
         {id, std::to_string(begin), pg_array(texts), p + "}", lo + "}", hi + "}",
          std::to_string(r.accepted)});  // every row rests on the accepted samples
}

// The answers and the job's final row, in one transaction.
std::string finish(Conn& c, const Job& job, const std::string& me, const problog::CpPayload& g,
                   const problog::ProblogOptions& o, const problog::SampleResult& r, const std::vector<std::string>& warnings) {
  const std::string id = std::to_string(job.id);
  double widest = 0;  // the final one, which a short run's supervisor may not have seen
  problog::stopping_rule_holds(r.true_counts, r.accepted, o.sample.delta, &widest);
  return finish_owned(c, job, me, "", [&] {
    c.exec("DELETE FROM mln.problog_results WHERE job = $1", {id});  // an earlier attempt's
    for (size_t b = 0; b < g.query_text.size(); b += kRowsPerInsert)
      insert_answers(c, id, g, r, b, std::min(g.query_text.size(), b + kRowsPerInsert));
    c.exec("UPDATE mln.jobs SET status = 'done', finished_at = clock_timestamp(), seconds = $2::float8, device = $3, "
           "samples = $4::bigint, accepted = $5::bigint, samples_per_s = $6::float8, warnings = $7::text[], "
           "widest_interval = $8::float8, lease_until = NULL WHERE id = $1",
           {id, float8_text(r.seconds), r.device, std::to_string(r.drawn), std::to_string(r.accepted),
            float8_text(r.seconds > 0 ? static_cast<double>(r.drawn) / r.seconds : 0.0), pg_array(warnings),
            float8_text(widest)});
  });
}

}  // namespace

void run_problog_job(Conn& c, const WorkerOptions& wo, const std::string& me, Job& job, std::atomic<bool>& stop) {
  auto log = [&](const std::string& s) {
    if (wo.log) wo.log("job " + std::to_string(job.id) + ": " + s);
  };
  problog::ProblogOptions opts;
  problog::CpPayload g;
  try {
    opts = job_options(c, wo, job);
    // The lease, while the ground program is read (the supervisor renews it after).
    JobLease keep_lease(wo, job, me);
    g = read_ground(c, job);
  } catch (const OptionEntryError& e) {  // a row written around mln.problog_job's check
    return fail(c, job, me, std::string("invalid options for this job: ") + e.what());
  } catch (const std::invalid_argument& e) {  // no ground program, or bytes that are not one
    return fail(c, job, me, e.what());
  }
  log("problog: " + std::to_string(g.cp.num_rules()) + " ground rules over " + std::to_string(g.cp.num_atoms) +
      " atoms in " + std::to_string(g.cp.num_strata()) + " strata, " + std::to_string(g.query_text.size()) +
      " query rows, " + std::to_string(g.cp.evidence.size()) + " evidence atoms");
  problog::SampleResult res;
  std::string error;
  const bool keep = run_supervised(
      c, wo, me, job, stop, [&](Progress& pr, std::atomic<bool>& cancel) { res = sample(wo, job, g, opts, pr, cancel); },
      error);
  if (!keep) return log("cancelled");  // the job's row says so; nothing is written
  if (stop) return;                    // shutting down: the lease runs out and another worker re-runs it
  if (error.empty() && res.accepted == 0 && !g.cp.evidence.empty())
    error = problog::no_accepted_sample_message(kFn, res.drawn) + "; " + problog::kNoAcceptedSampleHint;
  if (!error.empty()) {
    log("failed: " + error);
    return fail(c, job, me, error);
  }
  std::vector<std::string> warnings;
  if (!res.converged) warnings.push_back(problog::not_converged_message(kFn, opts.sample.max_samples) + "; " +
                                         problog::kNotConvergedHint);
  const std::string why = finish(c, job, me, g, opts, res, warnings);
  if (!why.empty()) return log("results not written: " + why);
  log("done: " + std::to_string(res.drawn) + " samples drawn, " + std::to_string(res.accepted) + " accepted, " +
      std::to_string(res.seconds) + " s on " + res.device);
}

}  // namespace mln::worker
