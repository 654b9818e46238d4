// The job loop: LISTEN, claim with FOR UPDATE SKIP LOCKED under a lease,
// solve in a thread while the main thread renews the lease, reports
// progress and watches for cancellation, then write results and finish.
#include "worker/worker.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/maxwalksat.hpp"
#include "worker/pq.hpp"

namespace mln::worker {
namespace {

using Clock = std::chrono::steady_clock;

struct Job {
  int64_t id = 0;
  std::string program;
  std::string schema;
  solver::SolveOptions opts;
};

std::string default_name() {
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  return std::string(host) + ":" + std::to_string(getpid());
}

// Claims the next queued job (or one whose lease ran out).
bool claim(Conn& c, const WorkerOptions& wo, const std::string& me, Job& job) {
  std::string where = wo.only_job ? "id = " + std::to_string(wo.only_job) + " AND " : "";
  Result r = c.exec(
      "UPDATE mln.jobs j SET status = 'running', worker = $1, attempts = attempts + 1, "
      "  started_at = clock_timestamp(), lease_until = clock_timestamp() + make_interval(secs => $2::int), "
      "  error = NULL "
      "WHERE j.id = (SELECT id FROM mln.jobs WHERE " + where +
          "(status = 'queued' OR (status = 'running' AND lease_until < clock_timestamp())) "
      "  ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1) "
      "RETURNING j.id, j.program, "
      "  (SELECT schema_name FROM mln.programs p WHERE p.name = j.program), "
      "  j.options->>'max_flips', j.options->>'max_tries', j.options->>'timeout', j.options->>'seed', "
      "  j.options->>'threads', j.options->>'dont_break', j.options->>'device', j.options->>'random_step', "
      "  j.options->>'skip_components_without_query', j.options->>'exact_max_atoms'",
      {me, std::to_string(wo.lease_seconds)});
  if (r.rows() == 0) return false;
  job = Job();
  job.id = r.num(0, 0);
  job.program = r.get(0, 1);
  job.schema = r.get(0, 2);
  auto& o = job.opts;
  if (!r.null(0, 3)) o.max_flips = r.num(0, 3);
  if (!r.null(0, 4)) o.max_tries = static_cast<int>(r.num(0, 4));
  if (!r.null(0, 5)) o.timeout_s = r.dbl(0, 5);
  if (!r.null(0, 6)) o.seed = static_cast<uint64_t>(r.num(0, 6));
  o.threads = r.null(0, 7) ? wo.threads : static_cast<int>(r.num(0, 7));
  if (!r.null(0, 8)) o.dont_break = r.get(0, 8) == "true";
  if (!r.null(0, 9)) o.device = r.get(0, 9);
  if (!r.null(0, 10)) o.random_step = r.dbl(0, 10);
  o.adaptive_noise = r.null(0, 10);  // -randomStep not pinned: lower the noise per try
  if (!r.null(0, 11)) o.skip_components_without_query = r.get(0, 11) == "true";
  if (!r.null(0, 12)) o.exact_max_atoms = static_cast<int>(r.num(0, 12));
  return true;
}

void fail(Conn& c, const Job& job, const std::string& me, const std::string& why) {
  c.exec("UPDATE mln.jobs SET status = 'failed', error = $3, finished_at = clock_timestamp() "
         "WHERE id = $1 AND worker = $2 AND status = 'running'",
         {std::to_string(job.id), me, why});
}

std::string pg_array(const std::vector<std::string>& v) {
  std::string o = "{";
  for (size_t i = 0; i < v.size(); ++i) {
    o += i ? ",\"" : "\"";
    for (char ch : v[i]) {
      if (ch == '"' || ch == '\\') o += '\\';
      o += ch;
    }
    o += "\"";
  }
  return o + "}";
}

// Shared between the solver thread and the supervising loop.
struct Progress {
  std::mutex mu;
  double best = NAN;
  int64_t flips = 0;
};

// Watches the job while it runs: renews the lease, publishes progress, and
// sets `cancel` when the job was cancelled or its waiter gave up.
class Supervisor {
 public:
  Supervisor(Conn& c, const Job& job, const std::string& me, int lease) : c_(c), job_(job), me_(me), lease_(lease) {}

  // One tick; returns false when the job must stop.
  bool tick(Progress& pr, double elapsed) {
    double best;
    int64_t flips;
    {
      std::lock_guard<std::mutex> g(pr.mu);
      best = pr.best;
      flips = pr.flips;
    }
    std::vector<std::string> p{std::to_string(job_.id), me_, std::to_string(lease_)};
    std::vector<bool> nulls{false, false, false, std::isnan(best), false, false};
    p.push_back(std::isnan(best) ? "" : std::to_string(best));
    p.push_back(std::to_string(flips));
    p.push_back(std::to_string(elapsed > 0 ? flips / elapsed : 0.0));
    Result r = c_.exec_n(
        "UPDATE mln.jobs SET lease_until = clock_timestamp() + make_interval(secs => $3::int), "
        "  best_cost = $4::float8, flips = $5::bigint, flips_per_s = $6::float8 "
        "WHERE id = $1 AND worker = $2 RETURNING status, "
        "  pg_try_advisory_xact_lock(20260522, id::int4), wait_ok_at, clock_timestamp()",
        p, nulls);
    if (r.rows() == 0 || r.get(0, 0) != "running") return false;  // cancelled, or taken over
    bool free = r.get(0, 1) == "t";
    if (!free && waiter_seen_.empty()) waiter_seen_ = r.get(0, 3);
    if (free && !waiter_seen_.empty()) {
      // A waiter was there and is gone: it returned normally only if it
      // stamped wait_ok_at after we first saw it.
      Result ok = c_.exec("SELECT coalesce(wait_ok_at >= $2::timestamptz, false) FROM mln.jobs WHERE id = $1",
                          {std::to_string(job_.id), waiter_seen_});
      if (ok.rows() == 1 && ok.get(0, 0) == "f") {
        c_.exec("UPDATE mln.jobs SET status = 'cancelled', error = 'the waiting mln.wait() was cancelled', "
                "finished_at = clock_timestamp() WHERE id = $1 AND status = 'running'",
                {std::to_string(job_.id)});
        return false;
      }
      waiter_seen_.clear();
    }
    return true;
  }

 private:
  Conn& c_;
  const Job& job_;
  std::string me_;
  int lease_;
  std::string waiter_seen_;
};

// Writes the MAP state and marks the job done, in one transaction.
void finish(Conn& c, const Job& job, const std::string& me, const Network& net, const solver::SolveResult& res) {
  c.exec("BEGIN");
  try {
    const std::string s = c.quote_ident(job.schema);
    Result owner = c.exec("SELECT status FROM mln.jobs WHERE id = $1 AND worker = $2 FOR UPDATE",
                          {std::to_string(job.id), me});
    if (owner.rows() == 0 || owner.get(0, 0) != "running") {
      c.exec("ROLLBACK");
      return;
    }
    c.exec("TRUNCATE " + s + "._map");
    // The primary key is rebuilt after the rows: one sorted index build
    // instead of an insertion per row (RC 10^5: 0.73 s -> 0.39 s).
    c.exec("ALTER TABLE " + s + "._map DROP CONSTRAINT IF EXISTS _map_pkey");
    int32_t next = 1;
    c.copy_in("COPY " + s + "._map (atom, truth) FROM STDIN", [&](std::string& chunk) {
      for (; next <= net.num_atoms && chunk.size() < (1 << 20); ++next) {
        chunk += std::to_string(next);
        chunk += res.truth[next] ? "\tt\n" : "\tf\n";
      }
      return next <= net.num_atoms;
    });
    c.exec("ALTER TABLE " + s + "._map ADD PRIMARY KEY (atom)");
    c.exec("SELECT mln._materialize_map($1)", {job.program});
    c.exec(
        "UPDATE mln.jobs SET status = 'done', finished_at = clock_timestamp(), best_cost = $2::float8, "
        "hard_violated = $3::bigint, flips = $4::bigint, seconds = $5::float8, device = $6, atoms = $7::bigint, "
        "clauses = $8::bigint, components = $9::int, warnings = $10::text[], gpu_memory_bytes = $11::bigint, "
        "flips_per_s = CASE WHEN $5::float8 > 0 THEN $4::bigint / $5::float8 END WHERE id = $1",
        {std::to_string(job.id), std::to_string(res.cost), std::to_string(res.hard_violated),
         std::to_string(res.flips), std::to_string(res.seconds), res.device_used, std::to_string(net.num_atoms),
         std::to_string(net.clauses.size()), std::to_string(res.components), pg_array(res.warnings),
         std::to_string(res.gpu_memory_peak_bytes)});
    c.exec("COMMIT");
  } catch (...) {
    c.exec("ROLLBACK");
    throw;
  }
}

// Seconds since `t`, formatted with millisecond precision.
std::string seconds_since(Clock::time_point t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", std::chrono::duration<double>(Clock::now() - t).count());
  return buf;
}

// Runs one claimed job to its end.
void run_job(Conn& c, const WorkerOptions& wo, const std::string& me, Job& job, std::atomic<bool>& stop) {
  auto log = [&](const std::string& s) {
    if (wo.log) wo.log("job " + std::to_string(job.id) + ": " + s);
  };
  if (job.schema.empty()) return fail(c, job, me, "program \"" + job.program + "\" does not exist");
  Result g = c.exec("SELECT to_regclass($1) IS NOT NULL, grounded_at IS NOT NULL FROM mln.programs WHERE name = $2",
                    {c.quote_ident(job.schema) + "._clauses", job.program});
  if (g.rows() == 0 || g.get(0, 0) != "t" || g.get(0, 1) != "t")
    return fail(c, job, me, "program \"" + job.program + "\" is not grounded; run mln.ground('" + job.program + "')");
  const auto t_read = Clock::now();
  Network net = read_network(c, job.schema);
  log("read " + std::to_string(net.num_atoms) + " atoms, " + std::to_string(net.clauses.size()) + " clauses in " +
      seconds_since(t_read) + " s");

  std::atomic<bool> cancel{false};
  Progress pr;
  job.opts.cancel = &cancel;
  job.opts.progress = [&pr](double best, int64_t flips) {
    std::lock_guard<std::mutex> gl(pr.mu);
    pr.best = best;
    pr.flips = flips;
  };
  solver::SolveResult res;
  std::string error;
  std::atomic<bool> done{false};
  std::mutex done_mu;
  std::condition_variable done_cv;  // wakes the supervising loop as soon as the search ends
  std::thread t([&] {
    try {
      res = solver::solve_map(net, job.opts);
    } catch (const std::exception& e) {
      error = e.what();
    }
    std::lock_guard<std::mutex> g(done_mu);
    done = true;
    done_cv.notify_all();
  });
  Supervisor sup(c, job, me, wo.lease_seconds);
  auto t0 = Clock::now();
  bool keep = true;
  auto last = Clock::now() - std::chrono::seconds(1);
  while (!done) {
    {
      std::unique_lock<std::mutex> g(done_mu);
      done_cv.wait_for(g, std::chrono::milliseconds(50), [&] { return done.load(); });
    }
    if (done) break;
    if (Clock::now() - last < std::chrono::milliseconds(500) && !stop) continue;
    last = Clock::now();
    try {
      keep = keep && sup.tick(pr, std::chrono::duration<double>(Clock::now() - t0).count());
    } catch (const std::exception& e) {
      log(std::string("lease renewal failed: ") + e.what());
    }
    if (!keep || stop) cancel = true;
  }
  t.join();
  if (!error.empty()) return fail(c, job, me, error);
  if (!keep) {
    log("cancelled");
    return;
  }
  if (stop) return;  // shutting down: the lease runs out and another worker re-runs it
  const auto t_write = Clock::now();
  finish(c, job, me, net, res);
  log("done: cost " + std::to_string(res.cost) + ", " + std::to_string(res.flips) + " flips, " +
      std::to_string(res.components) + " components; search " + std::to_string(res.seconds) + " s, write " +
      seconds_since(t_write) + " s");
}

}  // namespace

int serve(const WorkerOptions& wo, std::atomic<bool>& stop) {
  std::string me = wo.name.empty() ? default_name() : wo.name;
  Conn c(wo.dsn);
  c.exec("SET application_name = 'mln_worker'");
  c.exec("LISTEN mln_jobs");
  int finished = 0;
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
    if (wo.once || wo.only_job) break;
    c.wait_notify(1000);  // also re-polls for expired leases every second
  }
  return finished;
}

}  // namespace mln::worker
