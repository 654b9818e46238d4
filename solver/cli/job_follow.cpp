// The command line's side of a job: see it served (by a worker connected to
// the database, or by one in this process), show its progress, and report
// its answer (job_follow.hpp).
#include "cli/job_follow.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "cli/output.hpp"
#include "cli/progress.hpp"
#include "worker/worker.hpp"

namespace mln::cli {

namespace {

using Clock = std::chrono::steady_clock;

// A worker in this process for one job (WorkerOptions::only_job): it serves
// the job if it can claim it, and returns at once if another worker has.
class JobWorker {
 public:
  JobWorker(std::string dsn, long long job, const Options& o) : dsn_(std::move(dsn)), job_(job), o_(o) {}
  ~JobWorker() {
    stop_ = true;
    if (th_.joinable()) th_.join();
  }
  JobWorker(const JobWorker&) = delete;
  JobWorker& operator=(const JobWorker&) = delete;

  // Starts the worker, unless it is running.
  void start() {
    if (running_) return;
    if (th_.joinable()) th_.join();
    running_ = true;
    th_ = std::thread([this] {
      try {
        worker::WorkerOptions wo;
        wo.dsn = dsn_;
        wo.only_job = job_;
        wo.threads = o_.threads;
        if (o_.verbose > 1) wo.log = [](const std::string& s) { std::cerr << "worker: " << s << std::endl; };
        worker::serve(wo, stop_);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> g(mu_);
        error_ = e.what();
      }
      running_ = false;
    });
  }
  bool running() const { return running_; }
  // What ended it in error ("" if nothing did).
  std::string error() const {
    std::lock_guard<std::mutex> g(mu_);
    return error_;
  }

 private:
  std::string dsn_;
  long long job_;
  const Options& o_;
  std::thread th_;
  std::atomic<bool> stop_{false}, running_{false};
  mutable std::mutex mu_;
  std::string error_;
};

// How long a job may wait, unclaimed, for the workers connected to the
// database before this process serves it: an idle worker claims a job
// within milliseconds of its NOTIFY (and polls every second), so a job still
// queued after 1 s has a busy worker, one that left, or a session that only
// has the worker's name; the run must not wait for any of them.
constexpr std::chrono::seconds kClaimWait{1};

JobState poll_job(worker::Conn& c, long long job) {
  // With whether the job's lease ran out (its worker stopped renewing it).
  const std::string sql =
      "SELECT s->>'status', s->>'best_cost', s->>'hard_violated', s->>'flips', s->>'error', "
      "  s->>'gpu_memory_bytes', s->>'samples', s->>'samples_total', s->>'average_cost', s->>'progress', "
      "  s->>'iterations', s->>'objective', s->>'device', s->>'bound', s->>'gap', s->>'optimal', s->>'solver', "
      "  coalesce((SELECT lease_until < clock_timestamp() FROM mln.jobs WHERE id = $1::bigint), false), "
      "  s->>'stop_reason', s->>'first_answer_seconds', s->>'bound_seconds' "
      "FROM mln.wait($1::bigint, interval '0.2 s') s";
  worker::Result r = c.exec(sql, {std::to_string(job)});
  JobState s;
  const std::pair<std::string*, int> fields[] = {
      {&s.status, 0},   {&s.best, 1},        {&s.hard, 2},       {&s.flips, 3},
      {&s.err, 4},      {&s.gpu_mem, 5},     {&s.samples, 6},    {&s.samples_total, 7},
      {&s.avg_cost, 8}, {&s.iterations, 10}, {&s.objective, 11}, {&s.device, 12},
      {&s.bound, 13},   {&s.gap, 14},        {&s.optimal, 15},   {&s.solver, 16},
      {&s.stop_reason, 18}, {&s.first_answer_s, 19}, {&s.bound_s, 20}};
  for (const auto& [field, col] : fields) *field = r.get(0, col);
  s.progress = r.dbl(0, 9);
  s.lease_expired = r.get(0, 17) == "t";
  return s;
}

bool g_say_on_stderr = false;  // say_on_stderr

}  // namespace

void say_on_stderr(bool on) { g_say_on_stderr = on; }
void say(const std::string& s) { (g_say_on_stderr ? std::cerr : std::cout) << s << std::endl; }

// Sees the job served and waits for its end, showing its progress; returns
// its last state.  An external worker (mln_worker) connected to the
// database may serve it; if none claims it within kClaimWait, or its worker
// stops renewing the lease, a worker in this process does.
JobState follow_job(worker::Conn& c, const Options& o, const std::string& task, long long job, const std::string& dsn,
                    bool embedded, const std::atomic<bool>& interrupted) {
  JobWorker worker(dsn, job, o);
  // A private server has no other worker, and with none connected there is
  // none to wait for: serve the job at once.
  const std::string connected =
      "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'mln_worker' AND datname = current_database()";
  if (embedded || c.exec(connected).num(0, 0) == 0) worker.start();
  const bool tty = isatty(STDOUT_FILENO);
  const auto t_search = Clock::now();
  Clock::time_point unclaimed_since = t_search;
  bool unclaimed = false;
  // Cost over time, for the benchmark report (MLN_TRACE_FILE).
  std::unique_ptr<std::ofstream> trace;
  if (const char* tf = std::getenv("MLN_TRACE_FILE")) trace = std::make_unique<std::ofstream>(tf, std::ios::app);
  // On a terminal, after 2 s: MAP shows its best cost so far on one line,
  // MC-SAT and learning a bar of their progress.
  ProgressBar bar(task == "learn" ? "learning" : "sampling");
  bool map_line = false;
  auto end_line = [&] {  // before a line of its own
    bar.clear();
    if (map_line) std::printf("\n");
    map_line = false;
  };
  std::string iterations_seen;
  JobState s;
  while (true) {
    if (interrupted) throw std::runtime_error("interrupted");
    s = poll_job(c, job);
    const auto now = Clock::now();
    const double el = std::chrono::duration<double>(now - t_search).count();
    if (trace && !s.best.empty()) *trace << el << " " << s.best << " " << s.flips << "\n";
    if (s.finished()) break;
    const bool waits = s.status == "queued" || (s.status == "running" && s.lease_expired);
    if (!waits || worker.running()) {
      unclaimed = false;
    } else if (!unclaimed) {
      unclaimed = true;
      unclaimed_since = now;
    } else if (now - unclaimed_since >= kClaimWait) {
      end_line();
      say(s.status == "queued" ? "### no worker claimed the job within " + std::to_string(kClaimWait.count()) +
                                     " s; serving it in this process"
                               : "### the job's worker stopped renewing its lease; serving the job in this process");
      worker.start();
      unclaimed = false;
    }
    if (task == "learn") {
      // A line per iteration, as Tuffy prints them (terminal or not; the
      // worker publishes its count twice a second, so a fast one may skip
      // some); the bar in between.
      if (!s.iterations.empty() && s.iterations != "0" && s.iterations != iterations_seen) {
        end_line();
        say("    iteration " + s.iterations + "/" + job_option(o, "iterations") + ", objective " +
            (s.objective.empty() ? "-" : s.objective));
        iterations_seen = s.iterations;
      }
      if (el > 2 && !s.iterations.empty())
        bar.update(static_cast<int>(100 * s.progress),
                   s.iterations + "/" + job_option(o, "iterations") + " iterations");
    } else if (tty && el > 2 && task != "map" && !s.samples.empty()) {
      if (map_line) {  // a dual job's MAP phase is over: its line gives way to the bar
        std::printf("\n");
        map_line = false;
      }
      bar.update(static_cast<int>(100 * s.progress), s.samples + "/" + s.samples_total + " samples");
    } else if (tty && el > 2 && task != "marginal" && s.samples.empty()) {
      std::printf("\r    searching... %.0f s, best cost %s, %s flips   ", el, s.best.empty() ? "-" : s.best.c_str(),
                  s.flips.empty() ? "0" : s.flips.c_str());
      std::fflush(stdout);
      map_line = true;
    }
    if (!worker.error().empty()) throw std::runtime_error("worker: " + worker.error());
  }
  end_line();
  if (s.status != "done")
    throw std::runtime_error(std::string(task == "learn" ? "learning " : "inference ") + s.status +
                             (s.err.empty() ? "" : ": " + s.err));
  return s;
}

// Prints what the job found: the cost and its bound, the learning summary,
// the job's warnings, the average cost of the samples.
void report_job(worker::Conn& c, const Options& o, const std::string& task, long long job,
                const JobState& s) {
  char buf[64];
  if (task == "learn") {
    say("### " + s.iterations + " learning iterations (sampling on " + (s.device.empty() ? "cpu" : s.device) +
        "); estimated gain in log-likelihood " + s.objective);
  } else if (task != "marginal") {
    std::snprintf(buf, sizeof buf, "%.2f", std::stod(s.best));
    say("### Best answer has cost " + std::string(buf));
    if (s.hard != "0") say("### " + s.hard + " hard clause(s) violated");
    // The answer's quality: a lower bound on the optimum and the gap to it.
    if (!s.bound.empty()) {
      if (s.optimal == "true") {
        say("### Proven optimal (" + s.solver + ")");
      } else {
        char g[128];
        std::snprintf(g, sizeof g, "### Lower bound %.2f, gap %.2f%% (%s)", std::stod(s.bound),
                      100 * (s.gap.empty() ? 0.0 : std::stod(s.gap)), s.solver.c_str());
        say(g);
      }
    }
    // How it was reached: why the search ended, and when the first whole
    // answer and the final bound came.
    if (!s.stop_reason.empty()) {
      char h[160];
      std::snprintf(h, sizeof h, "### Search ended: %s (first answer at %.2f s, bound at %.2f s)", s.stop_reason.c_str(),
                    s.first_answer_s.empty() ? 0.0 : std::stod(s.first_answer_s),
                    s.bound_s.empty() ? 0.0 : std::stod(s.bound_s));
      say(h);
    }
  }
  // The job's warnings (a GPU that fell back to the CPU, a time limit that
  // ended the search or the sampling early).
  worker::Result w = c.exec("SELECT unnest(warnings) FROM mln.jobs WHERE id = $1", {std::to_string(job)});
  for (int i = 0; i < w.rows(); ++i) say("### Warning: " + w.get(i, 0));
  if (task == "marginal" || task == "dual") {
    std::snprintf(buf, sizeof buf, "%.2f", s.avg_cost.empty() ? 0.0 : std::stod(s.avg_cost));
    say("### Average Cost " + std::string(buf));
    if (o.verbose > 0) say("    " + s.samples + " samples per component");
  }
  if (o.verbose > 0 && !s.gpu_mem.empty() && s.gpu_mem != "0")
    say("    search GPU memory peak: " + std::to_string(std::stoll(s.gpu_mem) / 1024) + " kB");
}

}  // namespace mln::cli
