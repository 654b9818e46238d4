// Running one claimed job: check that its owner may act on the program,
// read the network (a LeaseKeeper holds the lease meanwhile), solve in a
// thread (MAP, MC-SAT marginals, or both for a dual job; learning) while
// this thread supervises it, then write the results (results.cpp,
// learn_job.cpp).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/marginal/marginal_touched.hpp"
#include "core/marginal/solve_marginal.hpp"
#include "core/map/map_touched.hpp"
#include "core/map/solve_map.hpp"
#include "worker/job.hpp"
#include "worker/pq.hpp"
#include "worker/supervise.hpp"
#include "worker/worker.hpp"

namespace mln::worker {
namespace {

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
                 std::atomic<bool>& cancel, const solver::LearnNetwork* ln, const LiveChange& change) {
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
    out.map_touched = change.map_same && change.touched_known;
    if (out.map_touched) {  // after a change: the touched components (core/map/map_touched.hpp)
      solver::TouchedResult t = solver::solve_map_touched(
          net, {change.truth, change.have_bound, change.cost, change.bound, change.optimal}, change.touched, job.map);
      out.map = std::move(t.whole);
      out.touched_components = t.touched_components;
    } else {
      out.map = job.spread > 1 ? solve_spread(wo, me, job, net) : solver::solve_map(net, job.map);
    }
    out.have_map = true;
    if (cancel) return out;
    // A time limit that ended the search before it had really begun (RC at
    // 10^6 papers on 2 cores: the set-up before the first flip takes ~45 s):
    // say so, instead of a near-random answer without a word.
    // Only where a walk was cut: a walk from a start near the answer (all
    // false, solve_map's rule) may end on its own within so few flips.
    if (out.map.cancelled && out.map.walk_cut && job.map.timeout_s > 0 && !out.map.optimal &&
        out.map.flips < net.num_atoms) {
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
    if (change.have_marginals && change.touched_known) {  // core/marginal/marginal_touched.hpp
      solver::TouchedMarginals t = solver::solve_marginal_touched(net, change.prob, change.touched, m);
      out.marginal = std::move(t.searched);
      out.marginal.prob = std::move(t.prob);
      out.marginal.components = static_cast<int>(t.components);
      out.marginal.warnings.push_back(
          "the marginals of the " + std::to_string(t.components - t.touched_components) +
          " components the change did not touch are the previous answer's; samples and average cost are those of the " +
          std::to_string(t.touched_components) + " touched components");
      out.marginal_touched = true;
      out.touched_components = t.touched_components;
    } else {
      out.marginal = job.spread > 1 ? solve_spread_marginal(wo, me, job, net) : solver::solve_marginal(net, m);
    }
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

// Why `job` may not run ("" when it may): its program, options and task,
// and whether its owner may act on the program (a member of its owner's
// role), checked before anything is read or written: a worker reads and
// writes every program, so it does not take the queue's word for it.
std::string refusal(Conn& c, const Job& job) {
  const std::string missing = "program \"" + job.program + "\" does not exist";
  if (job.schema.empty()) return missing;
  if (!job.bad_options.empty()) return job.bad_options;
  if (!job.wants_map() && !job.wants_marginal() && !job.wants_learn())
    return "unknown task \"" + job.task + "\" (this worker serves map, marginal, dual, learn, rules, problog)";
  Result g = c.exec(
      "SELECT to_regclass($1) IS NOT NULL, p.grounded_at IS NOT NULL, pg_has_role(j.owner, p.owner, 'MEMBER'), "
      "  coalesce((p.ground_stats->>'learning')::boolean, false) "
      "FROM mln.programs p JOIN mln.jobs j ON j.program = p.name WHERE p.name = $2 AND j.id = $3",
      {c.quote_ident(job.schema) + "._clauses", job.program, std::to_string(job.id)});
  if (g.rows() == 0) return missing;
  if (g.get(0, 2) != "t") return "the job's owner may not act on program \"" + job.program + "\" (not a member of its owner)";
  if (g.get(0, 0) != "t" || g.get(0, 1) != "t")
    return "program \"" + job.program + "\" is not grounded; run mln.ground('" + job.program + "')";
  if (!job.wants_learn() && g.get(0, 3) == "t")
    return "program \"" + job.program + "\" is grounded for weight learning, not for inference; run mln.ground('" +
           job.program + "')";
  return "";
}

}  // namespace

bool run_supervised(Conn& c, const WorkerOptions& wo, const std::string& me, const Job& job, std::atomic<bool>& stop,
                    const std::function<void(Progress&, std::atomic<bool>&)>& body, std::string& error) {
  std::atomic<bool> cancel{false};
  Progress pr;
  std::atomic<bool> done{false};
  std::mutex done_mu;
  std::condition_variable done_cv;  // wakes the supervising loop as soon as the search ends
  std::thread t([&] {
    try {
      body(pr, cancel);
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
      if (wo.log) wo.log("job " + std::to_string(job.id) + ": lease renewal failed: " + e.what());
    }
    if (!keep || stop) cancel = true;
  }
  t.join();
  return keep;
}

namespace {

// Solves `job` in a thread while this one supervises it: returns false
// when the job was cancelled or taken over; `out` is what the solvers
// produced, `error` why they failed.
bool solve_supervised(Conn& c, const WorkerOptions& wo, const std::string& me, const Network& net, Job& job,
                      const solver::LearnNetwork* ln, const LiveChange& change, std::atomic<bool>& stop, JobOutcome& out,
                      std::string& error) {
  return run_supervised(
      c, wo, me, job, stop,
      [&](Progress& pr, std::atomic<bool>& cancel) { out = solve(wo, me, net, job, pr, cancel, ln, change); }, error);
}

// What a finished job produced, for the log.
std::string outcome_summary(const JobOutcome& out) {
  std::string what;
  if (out.have_learn) {
    const auto& l = out.learn;
    what = std::to_string(l.iterations) + " iterations" + (l.converged ? " (converged)" : "") + ", objective " +
           std::to_string(l.trace.empty() ? 0.0 : l.trace.back().objective) + ", learning " + std::to_string(l.seconds) + " s";
  }
  if (out.have_map)
    what += "cost " + std::to_string(out.map.cost) + ", " + std::to_string(out.map.flips) + " flips, " +
            std::to_string(out.map.components) + " components" +
            (out.map_touched || out.marginal_touched ? " (" + std::to_string(out.touched_components) + " touched, searched)" : "") +
            ", search " + std::to_string(out.map.seconds) + " s";
  if (out.have_marginal) {
    const auto& m = out.marginal;
    what += std::string(what.empty() ? "" : "; ") + std::to_string(m.samples) + " samples per component, " +
            "average cost " + std::to_string(m.average_cost) + ", " + std::to_string(m.solved_components) + " of " +
            std::to_string(m.components) + " components solved (" + std::to_string(m.exact_components) +
            " exactly), sampling " + std::to_string(m.seconds) + " s";
  }
  return what;
}

}  // namespace

// Runs one claimed job to its end.
void run_job(Conn& c, const WorkerOptions& wo, const std::string& me, Job& job, std::atomic<bool>& stop) {
  auto log = [&](const std::string& s) {
    if (wo.log) wo.log("job " + std::to_string(job.id) + ": " + s);
  };
  if (job.wants_rules()) return run_rules_job(c, wo, me, job, stop);
  if (job.wants_problog()) return run_problog_job(c, wo, me, job, stop);
  if (const std::string why = refusal(c, job); !why.empty()) return fail(c, job, me, why);
  const auto t_read = Clock::now();
  // The lease, while the network is read and the job planned (the
  // supervising loop below renews it after).
  auto keep_lease = std::make_unique<JobLease>(wo, job, me);
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
  Network net = read_network(c, job.program, job.schema, &wo.dsn, read_streams_default(), &rs);
  if (!rs.fallback.empty()) log("reading over several connections failed, read over one instead: " + rs.fallback);
  std::unique_ptr<solver::LearnNetwork> ln;
  if (job.wants_learn()) {
    if (c.exec("SELECT to_regclass($1) IS NULL", {c.quote_ident(job.schema) + "._learn_clauses"}).get(0, 0) == "t")
      return fail(c, job, me, "program \"" + job.program + "\" was grounded for inference since the learning job was "
                              "queued; queue it again with mln.learn_weights");
    job.learn_atoms = net.num_atoms;
    job.learn_ground_clauses = static_cast<int64_t>(net.clauses.size());
    ln = std::make_unique<solver::LearnNetwork>(read_learn_network(c, job.schema, std::move(net), job));
    net = Network();
  }
  log(job.task + ": read " + std::to_string(ln ? ln->net.num_atoms : net.num_atoms) + " atoms, " +
      std::to_string(ln ? ln->net.clauses.size() : net.clauses.size()) + " clauses (" + megabytes(rs.bytes) +
      ") in " + seconds_since(t_read) + " s" + (rs.connections > 1 ? " over " + std::to_string(rs.connections) + " connections" : ""));
  // MAP starts from the answer the grounding carried; where it knows the
  // atoms the change touched, MAP and MC-SAT search their components and
  // keep the carried answers elsewhere, unless the job asks for parts on
  // several workers.
  LiveChange change;
  if (job.wants_map() || job.wants_marginal())
    change = read_live_change(c, job.program, job.schema, net_oid, net.num_atoms, job.id);
  if (job.partitions > 1) change.touched_known = false;  // its parts were announced: the whole is searched
  if (change.have_map) net.init_truth = change.truth;
  else if (job.wants_map() || job.wants_marginal())  // SQL 0.16.0's warm start
    net.init_truth = read_warm_start(c, job.program, job.schema, net_oid, net.num_atoms);
  const bool touched_only = change.touched_known && ((job.wants_map() && change.map_same) ||
                                                     (job.wants_marginal() && change.have_marginals));
  if (touched_only)
    log(job.task + ": the network was grounded again after a change: searches the components of its " +
        std::to_string(change.touched.size()) + " touched atoms and keeps the previous answer on the others");
  else if (!net.init_truth.empty())
    log(job.task + ": starts from the previous answer (the network was grounded again after a change)");
  if ((job.wants_map() || job.wants_marginal()) && !touched_only) {
    job.spread = spread_parts(c, job, net);
    if (job.spread > 1) {
      log(job.task + ": spread over workers, up to " + std::to_string(job.spread) + " parts");
      announce_parts(job.spread);
    }
  }

  keep_lease.reset();
  JobOutcome out;
  std::string error;
  const bool keep = solve_supervised(c, wo, me, net, job, ln.get(), change, stop, out, error);
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
  log("done: " + outcome_summary(out) + "; write " + seconds_since(t_write) + " s (" + megabytes(c.copied_in() - sent0) + ")");
}

}  // namespace mln::worker
