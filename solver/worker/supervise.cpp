// The Supervisor's tick (supervise.hpp): lease, progress, cancellation.
#include "worker/supervise.hpp"

#include <algorithm>
#include <vector>

#include "worker/pq.hpp"

namespace mln::worker {

bool Supervisor::tick(Progress& pr, double elapsed) {
  double best;
  int64_t flips, done, total;
  bool sampling;
  Clock::time_point since;
  int iterations, rule, depth;
  double objective;
  int64_t candidates;
  uint64_t drawn, accepted;
  double widest;
  {
    std::lock_guard<std::mutex> g(pr.mu);
    rule = pr.rule;
    depth = pr.depth;
    candidates = pr.candidates;
    drawn = pr.drawn;
    accepted = pr.accepted;
    widest = pr.widest;
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
  // Rule learning: the rule searched in iterations (of max_rules in
  // iterations_total), its depth and the candidates scored (columns of
  // 0.10.0, written only for its jobs).  ProbLog: the samples drawn and
  // their rate, those accepted and the widest interval (columns of 0.11.0).
  const size_t np = job_.wants_rules() || job_.wants_problog() ? 13 : 11;
  std::vector<std::string> p(np);
  std::vector<bool> nulls(np, true);
  auto set = [&](size_t i, const std::string& v) { p[i] = v, nulls[i] = false; };
  set(0, std::to_string(job_.id));
  set(1, me_);
  set(2, std::to_string(lease_));
  if (job_.wants_rules()) {
    set(9, std::to_string(rule));
    set(11, std::to_string(depth));
    set(12, std::to_string(candidates));
  } else if (job_.wants_problog()) {
    set(6, std::to_string(drawn));
    set(7, std::to_string(elapsed > 0 ? static_cast<double>(drawn) / elapsed : 0.0));
    set(11, std::to_string(accepted));
    if (!std::isnan(widest)) set(12, float8_text(widest));
  } else if (job_.wants_learn()) {
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
      "  iterations = coalesce($10::int, iterations), objective = coalesce($11::float8, objective) " +
          std::string(job_.wants_rules()     ? ", rule_depth = $12::int, candidates = $13::bigint "
                      : job_.wants_problog() ? ", accepted = $12::bigint, widest_interval = $13::float8 "
                                             : "") +
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

}  // namespace mln::worker
