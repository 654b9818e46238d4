// The job loop: LISTEN, claim a job (queue.cpp) and run it (run_job.cpp);
// with no job to lead, serve a part of another worker's spread job; wait
// for a notification (or a second, for leases that ran out).
#include "worker/worker.hpp"

#include <unistd.h>

#include <string>

#include "worker/job.hpp"
#include "worker/pq.hpp"

namespace mln::worker {
namespace {

std::string default_name() {
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  return std::string(host) + ":" + std::to_string(getpid());
}

}  // namespace

int serve(const WorkerOptions& wo, std::atomic<bool>& stop) { return serve(wo, stop, std::make_unique<Conn>(wo.dsn)); }

int serve(const WorkerOptions& wo, std::atomic<bool>& stop, std::unique_ptr<Conn> conn) {
  std::string me = wo.name.empty() ? default_name() : wo.name;
  Conn& c = *conn;
  c.pin_search_path();
  c.limit_idle_transactions(wo.idle_transaction_seconds());
  // A worker for one job (a command line's own) is not one that serves the
  // database: other command lines must not count on it for their jobs.
  c.exec(wo.only_job ? "SET application_name = 'mln_worker_job'" : "SET application_name = 'mln_worker'");
  c.exec("LISTEN mln_jobs");
  int finished = 0;
  PartCache cache;
  while (!stop) {
    Job job;
    bool got = false;
    try {
      got = claim(c, wo, me, job);
    } catch (const DbError& e) {
      if (e.sqlstate() == "3F000" || e.sqlstate() == "42P01")
        throw DbError("the pg_mln extension is not installed in this database (CREATE EXTENSION pg_mln)");
      throw;
    }
    if (got) {
      try {
        run_job(c, wo, me, job, stop);
      } catch (const std::exception& e) {
        try {
          fail(c, job, me, e.what());
        } catch (...) {
        }
      }
      ++finished;
      if (wo.only_job) break;
      continue;
    }
    if (wo.only_job) break;
    // No job to lead: a part of another worker's spread job, if one waits.
    bool part = false;
    try {
      part = serve_part(c, wo, me, cache, stop);
    } catch (const std::exception& e) {
      if (wo.log) wo.log(std::string("part: ") + e.what());
    }
    if (part) continue;
    if (wo.once) break;
    c.wait_notify(1000);  // also re-polls for expired leases every second
  }
  return finished;
}

}  // namespace mln::worker
