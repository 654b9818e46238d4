// The queue protocol: a job is claimed with FOR UPDATE SKIP LOCKED under a
// lease (renewed by the supervisor while it runs, or by a LeaseKeeper while
// the worker is busy on its own connection); a job abandoned kMaxAttempts
// times is failed instead of claimed again.
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "worker/job.hpp"
#include "worker/pq.hpp"
#include "worker/worker.hpp"

namespace mln::worker {
namespace {

// The columns job_from_row reads, of mln.jobs j.
std::string job_columns() {
  return "j.id, j.program, (SELECT schema_name FROM mln.programs p WHERE p.name = j.program), j.task, j.options::text";
}

// The job of a row of job_columns().
void job_from_row(const Result& r, const WorkerOptions& wo, Job& job) {
  job = Job();
  job.id = r.num(0, 0);
  job.program = r.get(0, 1);
  job.schema = r.get(0, 2);
  job.task = r.get(0, 3);
  read_job_options(r.null(0, 4) ? std::string() : r.get(0, 4), wo, job);
}

}  // namespace

// Claims under a lease of wo.lease_seconds; the job's options are decoded
// here, once (read_job_options).
bool claim(Conn& c, const WorkerOptions& wo, const std::string& me, Job& job) {
  fail_abandoned(c);
  std::string where = wo.only_job ? "id = " + std::to_string(wo.only_job) + " AND " : "";
  Result r = c.exec(
      "UPDATE mln.jobs j SET status = 'running', worker = $1, attempts = attempts + 1, "
      "  started_at = clock_timestamp(), lease_until = clock_timestamp() + make_interval(secs => $2::int), "
      "  error = NULL, samples = NULL, samples_per_s = NULL "
      "WHERE j.id = (SELECT id FROM mln.jobs WHERE " + where +
          "(status = 'queued' OR (status = 'running' AND lease_until < clock_timestamp() AND attempts < " +
          std::to_string(kMaxAttempts) + ")) "
      "  ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1) "
      "RETURNING " + job_columns(),
      {me, std::to_string(wo.lease_seconds)});
  if (r.rows() == 0) return false;
  job_from_row(r, wo, job);
  return true;
}

void fail(Conn& c, const Job& job, const std::string& me, const std::string& why) {
  c.exec("UPDATE mln.jobs SET status = 'failed', error = $3, finished_at = clock_timestamp() "
         "WHERE id = $1 AND worker = $2 AND status = 'running'",
         {std::to_string(job.id), me, why});
}

LeaseKeeper::LeaseKeeper(const WorkerOptions& wo, std::string sql, std::vector<std::string> params) {
  params.push_back(std::to_string(wo.lease_seconds));
  thread_ = std::thread([this, dsn = wo.dsn, sql = std::move(sql), params = std::move(params), log = wo.log] {
    std::unique_ptr<Conn> c;
    for (;;) {
      {
        std::unique_lock<std::mutex> g(mu_);
        if (cv_.wait_for(g, std::chrono::seconds(1), [this] { return done_.load(); })) return;
      }
      try {
        if (!c) {
          c = std::make_unique<Conn>(dsn);
          c->pin_search_path();
        }
        c->exec(sql, params);
      } catch (const std::exception& e) {
        if (log) log(std::string("lease renewal failed: ") + e.what());
      }
    }
  });
}

LeaseKeeper::~LeaseKeeper() {
  {
    std::lock_guard<std::mutex> g(mu_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

JobLease::JobLease(const WorkerOptions& wo, const Job& job, const std::string& me)
    : LeaseKeeper(wo, "UPDATE mln.jobs SET lease_until = clock_timestamp() + make_interval(secs => $3::int) "
                      "WHERE id = $1 AND worker = $2 AND status = 'running'",
                  {std::to_string(job.id), me}) {}

int fail_abandoned(Conn& c) {
  const std::string n = std::to_string(kMaxAttempts);
  const std::string why = "died or lost its lease (see the worker logs)";
  Result jobs = c.exec(
      "UPDATE mln.jobs SET status = 'failed', finished_at = clock_timestamp(), "
      "  error = format('abandoned %s times: each worker that ran it " + why + "', attempts) "
      "WHERE status = 'running' AND attempts >= " + n + " AND lease_until < clock_timestamp() RETURNING id");
  // Parts exist from 0.4.0 on; a database at an older version has none.
  if (c.exec("SELECT to_regclass('mln.job_parts') IS NULL").get(0, 0) == "t") return jobs.rows();
  Result parts = c.exec(
      "UPDATE mln.jobs j SET status = 'failed', finished_at = clock_timestamp(), "
      "  error = format('part %s of round %s was abandoned %s times: each worker that ran it " + why + "', "
      "                 p.part, p.round, p.attempts) "
      "FROM (SELECT DISTINCT ON (job) job, round, part, attempts FROM mln.job_parts "
      "      WHERE status = 'running' AND attempts >= " + n + " AND lease_until < clock_timestamp() "
      "      ORDER BY job, round, part) p "
      "WHERE j.id = p.job AND j.status = 'running' RETURNING j.id");
  return jobs.rows() + parts.rows();
}

bool load_job(Conn& c, const WorkerOptions& wo, int64_t id, Job& job) {
  Result r = c.exec("SELECT " + job_columns() + " FROM mln.jobs j WHERE j.id = $1", {std::to_string(id)});
  if (r.rows() == 0) return false;
  job_from_row(r, wo, job);
  return true;
}

}  // namespace mln::worker
