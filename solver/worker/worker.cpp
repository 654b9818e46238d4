// The job loop: LISTEN, claim with FOR UPDATE SKIP LOCKED under a lease,
// solve in a thread (MAP, MC-SAT marginals, or both for a dual job) while the
// main thread renews the lease, reports progress and watches for
// cancellation, then write results and finish (results.cpp).
#include "worker/worker.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/marginal/solve_marginal.hpp"
#include "core/map/solve_map.hpp"
#include "worker/job.hpp"
#include "worker/pq.hpp"

namespace mln::worker {
namespace {

using Clock = std::chrono::steady_clock;

std::string default_name() {
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  return std::string(host) + ":" + std::to_string(getpid());
}

// The options a job may carry (mln._check_infer_options has checked them),
// in the order claim() reads them.
const char* const kOptionKeys[] = {"max_flips", "max_tries", "timeout", "seed", "threads", "dont_break", "device",
                                   "random_step", "skip_components_without_query", "exact_max_atoms", "samples",
                                   "burn_in", "mcsat_param", "sa_temperature", "solver", "ilp_seconds", "cpu_walk",
                                   "partitions", "rounds", "gap_tolerance"};
enum OptionCol { kMaxFlips, kMaxTries, kTimeout, kSeed, kThreads, kDontBreak, kDevice, kRandomStep, kSkip, kExact,
                 kSamples, kBurnIn, kMcsatParam, kSaTemperature, kSolver, kIlpSeconds, kCpuWalk, kPartitions,
                 kRounds, kGapTolerance };

void read_options(const Result& r, const WorkerOptions& wo, Job& job);

// The columns job_from_row reads, of mln.jobs j.
std::string job_columns() {
  std::string cols = "j.id, j.program, (SELECT schema_name FROM mln.programs p WHERE p.name = j.program), j.task";
  for (const char* k : kOptionKeys) cols += std::string(", j.options->>'") + k + "'";
  return cols;
}

// The job of a row of job_columns().
void job_from_row(const Result& r, const WorkerOptions& wo, Job& job) {
  job = Job();
  job.id = r.num(0, 0);
  job.program = r.get(0, 1);
  job.schema = r.get(0, 2);
  job.task = r.get(0, 3);
  try {
    read_options(r, wo, job);
  } catch (const std::exception&) {  // a row written around mln.infer's checks
    job.bad_options = "invalid options for this job (mln.infer checks them: queue jobs with it)";
  }
}

// Claims the next queued job (or one whose lease ran out, fewer than
// kMaxAttempts times).
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

// The job's options, from claim()'s columns 4...
void read_options(const Result& r, const WorkerOptions& wo, Job& job) {
  auto has = [&](int k) { return !r.null(0, 4 + k); };
  auto str = [&](int k) { return r.get(0, 4 + k); };
  auto i64 = [&](int k) { return r.num(0, 4 + k); };
  auto dbl = [&](int k) { return r.dbl(0, 4 + k); };
  auto& o = job.map;
  if (has(kMaxFlips)) o.max_flips = i64(kMaxFlips);
  if (has(kMaxTries)) o.max_tries = static_cast<int>(i64(kMaxTries));
  if (has(kTimeout)) o.timeout_s = dbl(kTimeout);
  if (has(kSeed)) o.seed = static_cast<uint64_t>(i64(kSeed));
  o.threads = has(kThreads) ? static_cast<int>(i64(kThreads)) : wo.threads;
  if (has(kDontBreak)) o.dont_break = str(kDontBreak) == "true";
  if (has(kDevice)) o.device = str(kDevice);
  if (has(kRandomStep)) o.random_step = dbl(kRandomStep);
  o.adaptive_noise = !has(kRandomStep);  // -randomStep not pinned: lower the noise per try
  if (has(kSkip)) o.skip_components_without_query = str(kSkip) == "true";
  if (has(kExact)) o.exact_max_atoms = static_cast<int>(i64(kExact));
  if (has(kSolver)) o.solver = str(kSolver);
  if (has(kIlpSeconds)) o.ilp_seconds = dbl(kIlpSeconds);
  if (has(kCpuWalk)) o.cpu_walk = str(kCpuWalk);
  if (has(kPartitions)) job.partitions = static_cast<int>(i64(kPartitions));
  if (has(kRounds)) job.rounds = static_cast<int>(i64(kRounds));
  if (has(kGapTolerance)) o.gap_tolerance = dbl(kGapTolerance);
  o.weighted.threads = o.threads;
  auto& m = job.marginal;
  if (has(kSamples)) m.samples = static_cast<int>(i64(kSamples));
  if (has(kBurnIn)) m.burn_in = static_cast<int>(i64(kBurnIn));
  if (has(kMcsatParam)) m.mcsat_param = dbl(kMcsatParam);
  if (has(kSaTemperature)) m.sa_temperature = dbl(kSaTemperature);
  if (has(kRandomStep)) m.random_step = o.random_step;
  if (has(kMaxFlips)) m.max_flips = o.max_flips;
  m.seed = o.seed;
  m.threads = o.threads;
  m.timeout_s = o.timeout_s;
  m.device = o.device;
  m.skip_components_without_query = o.skip_components_without_query;
  if (has(kExact)) m.exact_max_atoms = o.exact_max_atoms;
}

void fail(Conn& c, const Job& job, const std::string& me, const std::string& why) {
  c.exec("UPDATE mln.jobs SET status = 'failed', error = $3, finished_at = clock_timestamp() "
         "WHERE id = $1 AND worker = $2 AND status = 'running'",
         {std::to_string(job.id), me, why});
}

// Shared between the solver thread and the supervising loop.
struct Progress {
  std::mutex mu;
  double best = NAN;              // MAP: best cost so far
  int64_t flips = 0;              // MAP: flips so far
  bool sampling = false;          // the marginal phase has started
  Clock::time_point sampling_since;
  int64_t done = 0, total = 0;    // MC-SAT samples, all components together
  int iterations = 0;             // learning: iterations done
  double objective = NAN;         // learning: estimated gain so far
};

// Watches the job while it runs: renews the lease, publishes progress, and
// sets `cancel` when the job was cancelled or its waiter gave up.
class Supervisor {
 public:
  Supervisor(Conn& c, const Job& job, const std::string& me, int lease) : c_(c), job_(job), me_(me), lease_(lease) {}

  // One tick; returns false when the job must stop.
  bool tick(Progress& pr, double elapsed) {
    double best;
    int64_t flips, done, total;
    bool sampling;
    Clock::time_point since;
    int iterations;
    double objective;
    {
      std::lock_guard<std::mutex> g(pr.mu);
      iterations = pr.iterations;
      objective = pr.objective;
      best = pr.best;
      flips = pr.flips;
      sampling = pr.sampling;
      since = pr.sampling_since;
      done = pr.done;
      total = pr.total;
    }
    // During MAP: best cost, flips, flips/s.  During MC-SAT: samples per
    // component (the unit of the job's `samples` option) and their rate;
    // the MAP figures of a dual job stay as they were.
    std::vector<std::string> p(11);
    std::vector<bool> nulls(11, true);
    auto set = [&](size_t i, const std::string& v) { p[i] = v, nulls[i] = false; };
    set(0, std::to_string(job_.id));
    set(1, me_);
    set(2, std::to_string(lease_));
    if (job_.wants_learn()) {
      set(9, std::to_string(iterations));
      if (!std::isnan(objective)) set(10, std::to_string(objective));
    } else if (!sampling) {
      if (!std::isnan(best)) set(3, std::to_string(best));
      set(4, std::to_string(flips));
      set(5, std::to_string(elapsed > 0 ? flips / elapsed : 0.0));
    } else {
      const int64_t per = job_.marginal.samples;
      const int64_t samples =
          total > 0 ? static_cast<int64_t>(static_cast<double>(done) / static_cast<double>(total) * per) : 0;
      const double el = std::chrono::duration<double>(Clock::now() - since).count();
      set(6, std::to_string(std::min(samples, per)));
      set(7, std::to_string(el > 0 ? static_cast<double>(samples) / el : 0.0));
      set(8, std::to_string(per));
    }
    Result r = c_.exec_n(
        "UPDATE mln.jobs SET lease_until = clock_timestamp() + make_interval(secs => $3::int), "
        "  best_cost = coalesce($4::float8, best_cost), flips = coalesce($5::bigint, flips), "
        "  flips_per_s = coalesce($6::float8, flips_per_s), samples = coalesce($7::bigint, samples), "
        "  samples_per_s = coalesce($8::float8, samples_per_s), samples_total = coalesce(samples_total, $9::bigint), "
        "  iterations = coalesce($10::int, iterations), objective = coalesce($11::float8, objective) "
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

// Seconds since `t`, formatted with millisecond precision.
std::string seconds_since(Clock::time_point t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", std::chrono::duration<double>(Clock::now() - t).count());
  return buf;
}

// Bytes as megabytes, for the log ("1234.56 MB").
std::string megabytes(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MB", static_cast<double>(bytes) / 1e6);
  return buf;
}

// Runs the job's solver(s) on `net`: MAP, MC-SAT, or MAP then MC-SAT (dual,
// within one timeout).  In the solver thread.
JobOutcome solve(const WorkerOptions& wo, const std::string& me, const Network& net, Job& job, Progress& pr,
                 std::atomic<bool>& cancel, const solver::LearnNetwork* ln) {
  JobOutcome out;
  const auto t0 = Clock::now();
  if (job.wants_learn()) {
    job.learn.cancel = &cancel;
    job.learn.on_iteration = [&pr](int it, const std::vector<double>&, double objective) {
      std::lock_guard<std::mutex> gl(pr.mu);
      pr.iterations = it;
      pr.objective = objective;
    };
    out.learn = solver::learn_weights(*ln, job.learn);
    out.have_learn = true;
    if (out.learn.cancelled && !cancel)
      out.learn.warnings.push_back("learning stopped by the timeout after " + std::to_string(out.learn.iterations) +
                                   " iterations");
    return out;
  }
  if (job.wants_map()) {
    job.map.cancel = &cancel;
    job.map.progress = [&pr](double best, int64_t flips) {
      std::lock_guard<std::mutex> gl(pr.mu);
      pr.best = best;
      pr.flips = flips;
    };
    out.map = job.spread > 1 ? solve_spread(wo, me, job, net) : solver::solve_map(net, job.map);
    out.have_map = true;
    if (cancel) return out;
    // A time limit that ended the search before it had really begun (RC at
    // 10^6 papers on 2 cores: the set-up before the first flip takes ~45 s):
    // say so, instead of a near-random answer without a word.
    if (out.map.cancelled && job.map.timeout_s > 0 && !out.map.optimal && out.map.flips < net.num_atoms) {
      char buf[240];
      std::snprintf(buf, sizeof buf,
                    "the time limit (%g s) ended the search after %lld flips, fewer than one per atom: the answer is "
                    "close to the search's start; allow more time (option timeout, -timeout)",
                    job.map.timeout_s, static_cast<long long>(out.map.flips));
      out.map.warnings.push_back(buf);
    }
  }
  if (job.wants_marginal()) {
    auto& m = job.marginal;
    if (out.have_map && m.timeout_s > 0) {  // the rest of the job's time
      const double left = m.timeout_s - std::chrono::duration<double>(Clock::now() - t0).count();
      m.timeout_s = std::max(left, 1e-3);
    }
    m.cancel = &cancel;
    m.progress = [&pr](int64_t done, int64_t total) {
      std::lock_guard<std::mutex> gl(pr.mu);
      pr.done = done;
      pr.total = total;
    };
    {
      std::lock_guard<std::mutex> gl(pr.mu);
      pr.sampling = true;
      pr.sampling_since = Clock::now();
    }
    out.marginal = job.spread > 1 ? solve_spread_marginal(wo, me, job, net) : solver::solve_marginal(net, m);
    out.have_marginal = true;
    if (out.marginal.cancelled && !cancel) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "marginal inference stopped by the timeout after %lld of %d samples per component",
                    static_cast<long long>(out.marginal.samples), m.samples);
      out.marginal.warnings.push_back(buf);
    }
  }
  return out;
}

// Runs one claimed job to its end.
void run_job(Conn& c, const WorkerOptions& wo, const std::string& me, Job& job, std::atomic<bool>& stop) {
  auto log = [&](const std::string& s) {
    if (wo.log) wo.log("job " + std::to_string(job.id) + ": " + s);
  };
  if (job.schema.empty()) return fail(c, job, me, "program \"" + job.program + "\" does not exist");
  if (!job.bad_options.empty()) return fail(c, job, me, job.bad_options);
  if (!job.wants_map() && !job.wants_marginal() && !job.wants_learn())
    return fail(c, job, me, "unknown task \"" + job.task + "\" (this worker serves map, marginal, dual, learn)");
  // The job's owner must be able to act on the program (a member of its
  // owner's role) before anything is read or written: a worker reads and
  // writes every program, so it does not take the queue's word for it.
  Result g = c.exec(
      "SELECT to_regclass($1) IS NOT NULL, p.grounded_at IS NOT NULL, pg_has_role(j.owner, p.owner, 'MEMBER'), "
      "  coalesce((p.ground_stats->>'learning')::boolean, false) "
      "FROM mln.programs p JOIN mln.jobs j ON j.program = p.name WHERE p.name = $2 AND j.id = $3",
      {c.quote_ident(job.schema) + "._clauses", job.program, std::to_string(job.id)});
  if (g.rows() == 0) return fail(c, job, me, "program \"" + job.program + "\" does not exist");
  if (g.get(0, 2) != "t")
    return fail(c, job, me, "the job's owner may not act on program \"" + job.program + "\" (not a member of its owner)");
  if (g.get(0, 0) != "t" || g.get(0, 1) != "t")
    return fail(c, job, me, "program \"" + job.program + "\" is not grounded; run mln.ground('" + job.program + "')");
  if (!job.wants_learn() && g.get(0, 3) == "t")
    return fail(c, job, me, "program \"" + job.program + "\" is grounded for weight learning, not for inference; run mln.ground('" +
                                job.program + "')");
  const auto t_read = Clock::now();
  // The lease, while the network is read and the job planned (the
  // supervising loop below renews it after).
  auto keep_lease = std::make_unique<LeaseKeeper>(
      wo, "UPDATE mln.jobs SET lease_until = clock_timestamp() + make_interval(secs => $3::int) "
          "WHERE id = $1 AND worker = $2 AND status = 'running'",
      std::vector<std::string>{std::to_string(job.id), me});
  const std::string net_oid = network_oid(c, job.schema);
  // A spread job's parts, told to the idle workers: they read the network
  // ahead while this one reads and plans.
  auto announce_parts = [&](int parts) {
    c.exec("UPDATE mln.jobs SET parts = $2 WHERE id = $1", {std::to_string(job.id), std::to_string(parts)});
    c.exec("SELECT pg_notify('mln_jobs', $1)", {std::to_string(job.id)});
  };
  // Parts asked for: at once, so that they read it at the same time as this
  // one (RC at 10^6 papers: 5-6 s), not after it.
  if ((job.wants_map() || job.wants_marginal()) && job.partitions > 1) announce_parts(job.partitions);
  ReadStats rs;
  Network net = read_network(c, job.schema, &wo.dsn, read_streams_default(), &rs);
  if (!rs.fallback.empty()) log("reading over several connections failed, read over one instead: " + rs.fallback);
  std::unique_ptr<solver::LearnNetwork> ln;
  if (job.wants_learn()) {
    if (c.exec("SELECT to_regclass($1) IS NULL", {c.quote_ident(job.schema) + "._learn_clauses"}).get(0, 0) == "t")
      return fail(c, job, me, "program \"" + job.program + "\" was grounded for inference since the learning job was "
                              "queued; queue it again with mln.learn_weights");
    read_learn_options(c, job);
    job.learn.threads = job.learn.threads > 0 ? job.learn.threads : wo.threads;
    job.learn_atoms = net.num_atoms;
    job.learn_ground_clauses = static_cast<int64_t>(net.clauses.size());
    ln = std::make_unique<solver::LearnNetwork>(read_learn_network(c, job.schema, std::move(net), job));
    net = Network();
  }
  log(job.task + ": read " + std::to_string(ln ? ln->net.num_atoms : net.num_atoms) + " atoms, " +
      std::to_string(ln ? ln->net.clauses.size() : net.clauses.size()) + " clauses (" + megabytes(rs.bytes) +
      ") in " + seconds_since(t_read) + " s" + (rs.connections > 1 ? " over " + std::to_string(rs.connections) + " connections" : ""));
  if (job.wants_map() || job.wants_marginal()) {
    job.spread = spread_parts(c, job, net);
    if (job.spread > 1) {
      log(job.task + ": spread over workers, up to " + std::to_string(job.spread) + " parts");
      announce_parts(job.spread);
    }
  }

  keep_lease.reset();
  std::atomic<bool> cancel{false};
  Progress pr;
  JobOutcome out;
  std::string error;
  std::atomic<bool> done{false};
  std::mutex done_mu;
  std::condition_variable done_cv;  // wakes the supervising loop as soon as the search ends
  std::thread t([&] {
    try {
      out = solve(wo, me, net, job, pr, cancel, ln.get());
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
  if (!error.empty()) {
    log("failed: " + error);
    return fail(c, job, me, error);
  }
  if (!keep) {
    log("cancelled");
    return;
  }
  if (stop) return;  // shutting down: the lease runs out and another worker re-runs it
  const auto t_write = Clock::now();
  const int64_t sent0 = c.copied_in();
  if (out.have_learn && out.learn.cancelled && !out.learn.converged && out.learn.iterations == 0)
    return fail(c, job, me, "learning stopped by the timeout before its first iteration; the weights are unchanged");
  const std::string why = out.have_learn ? finish_learn_job(c, job, me, net_oid, out.learn)
                                         : finish_job(c, job, me, net_oid, net, out);
  if (!why.empty()) {
    log("results not written: " + why);
    return;
  }
  std::string what;
  if (out.have_learn) {
    const auto& l = out.learn;
    what = std::to_string(l.iterations) + " iterations" + (l.converged ? " (converged)" : "") + ", objective " +
           std::to_string(l.trace.empty() ? 0.0 : l.trace.back().objective) + ", learning " + std::to_string(l.seconds) + " s";
  }
  if (out.have_map)
    what += "cost " + std::to_string(out.map.cost) + ", " + std::to_string(out.map.flips) + " flips, " +
            std::to_string(out.map.components) + " components, search " + std::to_string(out.map.seconds) + " s";
  if (out.have_marginal) {
    const auto& m = out.marginal;
    what += std::string(what.empty() ? "" : "; ") + std::to_string(m.samples) + " samples per component, " +
            "average cost " + std::to_string(m.average_cost) + ", " + std::to_string(m.solved_components) + " of " +
            std::to_string(m.components) + " components solved (" + std::to_string(m.exact_components) +
            " exactly), sampling " + std::to_string(m.seconds) + " s";
  }
  log("done: " + what + "; write " + seconds_since(t_write) + " s (" + megabytes(c.copied_in() - sent0) + ")");
}

}  // namespace

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
        if (!c) c = std::make_unique<Conn>(dsn);
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

int serve(const WorkerOptions& wo, std::atomic<bool>& stop) {
  std::string me = wo.name.empty() ? default_name() : wo.name;
  Conn c(wo.dsn);
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
