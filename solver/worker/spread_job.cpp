// MAP jobs spread over several workers (issue #23).  The worker that claims
// the job leads it: it plans the parts (core/spread.hpp), keeps the plan in
// mln.job_plans, and queues each round's parts in mln.job_parts.  Every
// worker, the leader included, claims parts there as it claims jobs (FOR
// UPDATE SKIP LOCKED under a lease), reads the states the round starts from
// (the parts' rows of the rounds before), solves its part and writes the
// part's state back.  A part's seed, flips and seconds are in its row, so
// its answer does not depend on which worker ran it; a worker that dies
// loses nothing (its part's lease runs out and another worker runs it
// again; a new leader resumes from the plan and the rows).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <cmath>
#include <cstring>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <type_traits>

#include "core/base/le_bytes.hpp"
#include "core/spread/part_walk.hpp"
#include "core/base/run_control.hpp"
#include "core/spread/spread.hpp"
#include "core/spread/whole_bound.hpp"
#include "core/spread/spread_marginal.hpp"
#include "worker/job.hpp"
#include "worker/pq.hpp"
#include "worker/spread_parts.hpp"
#include "worker/worker.hpp"

namespace mln::worker {

using namespace spread;
using Clock = std::chrono::steady_clock;

namespace {

// Makes (or, after a leader that left, resumes) the job's plan and index.
template <class Log>
void lead_plan(Conn& c, const Job& job, const Network& net, PlanIndex& pi, Log&& log) {
  const auto t0 = Clock::now();
  const std::string id = std::to_string(job.id);
  if (load_plan(c, job.id, net, pi.plan)) {
    log("resuming the plan of " + std::to_string(pi.plan.parts) + " parts");
  } else {
    // A marginal (or dual) job's parts are whole components: MC-SAT
    // samples a component whole.  Components are cut only where the job
    // asks for partitions: with auto (0), spreading stays plain
    // parallelism: cutting one component over two GPUs searched longer than
    // one GPU on it whole (docs/performance.md, "Measured choices").
    const bool split = job.partitions > 1 && !job.wants_marginal();
    pi.plan = solver::plan_spread(net, job.spread, job.map, solver::kSpreadMetisMaxAtoms, split);
    // A marginal job asked for more partitions than it has parts samples
    // each part in slices, one worker each (a giant component on N GPUs).
    if (job.wants_marginal() && job.partitions > 1 && plans_have_slices(c))
      pi.plan.slices = solver::marginal_slices(pi.plan, job.partitions, job.marginal.samples);
    c.exec("BEGIN");
    c.exec("DELETE FROM mln.job_parts WHERE job = $1", {id});
    const auto ts = Clock::now();
    save_plan(c, job.id, pi.plan);
    if (debug_timing()) log("plan saved in " + std::to_string(std::chrono::duration<double>(Clock::now() - ts).count()) + " s");
    c.exec("COMMIT");
    c.exec("SELECT pg_notify('mln_jobs', $1)", {id});  // helpers waiting for the plan load it now
  }
  const auto ti = Clock::now();
  pi.idx = solver::index_parts(net, pi.plan);
  if (debug_timing()) log("parts indexed in " + std::to_string(std::chrono::duration<double>(Clock::now() - ti).count()) + " s");
  int cut = 0;
  for (uint8_t x : pi.plan.cut) cut += x;
  // (a marginal plan's slices are parts of the work too: helpers take them)
  c.exec("UPDATE mln.jobs SET parts = $2, rounds = coalesce(rounds, 0) WHERE id = $1",
         {id, std::to_string(pi.plan.parts * pi.plan.slices)});
  log("plan: " + std::to_string(pi.plan.parts) + " parts" +
      (pi.plan.slices > 1 ? " (sampled in " + std::to_string(pi.plan.slices) + " slices each)" : std::string()) + ", " +
      std::to_string(cut) + " of them cut" +
      (pi.plan.cut_clauses ? " (" + std::to_string(pi.plan.cut_clauses) + " of " + std::to_string(net.clauses.size()) +
                                 " clauses across parts)" : "") + ", in " +
      std::to_string(std::chrono::duration<double>(Clock::now() - t0).count()) + " s");
}

// What the leader of a spread job holds while it runs it: a connection of
// its own (the caller's stays with the supervising loop), the job's cancel
// flag, and the plan.
struct Lead {
  const WorkerOptions& wo;
  const std::string id;
  Conn c;
  std::atomic<bool>& cancel;
  PlanIndex pi;
  Lead(const WorkerOptions& w, const Job& job, const Network& net, std::atomic<bool>* flag)
      : wo(w), id(std::to_string(job.id)), c(w.dsn), cancel(flag ? *flag : never()) {
    c.pin_search_path();
    c.limit_idle_transactions(w.idle_transaction_seconds());
    c.exec("SET application_name = 'mln_worker_leader'");
    c.exec("LISTEN mln_parts");
    lead_plan(c, job, net, pi, [this](const std::string& s) { log(s); });
  }
  void log(const std::string& s) const {
    if (wo.log) wo.log("job " + id + ": " + s);
  }
  // With partitions auto (0), a plan that would not pay (spread_pays) is
  // dropped and the job runs unspread here: true then.
  bool unspread(const Job& job, const Network& net) {
    if (job.partitions != 0 || solver::spread_pays(net, pi.plan, pi.idx)) return false;
    log("auto: " + std::to_string(pi.plan.parts) + " part(s) would not share the work; solving it here");
    c.exec("DELETE FROM mln.job_plans WHERE job = $1", {id});
    c.exec("DELETE FROM mln.job_parts WHERE job = $1", {id});
    c.exec("UPDATE mln.jobs SET parts = NULL, rounds = NULL WHERE id = $1", {id});
    return true;
  }
  static std::atomic<bool>& never() {
    static std::atomic<bool> n{false};
    return n;
  }
};

struct QueuedPart {
  int part;  // round 0: the marginal unit, part * slices + slice
  int64_t atoms;
  uint64_t seed;
  int64_t max_flips;
  double time_limit;
  bool kept = false;  // goes to the worker that ran it the round before (its kept walk)
};

// Queues round r's parts (those a leader before this one queued stay as
// they are) and solves parts of the round here while other workers solve
// the rest; returns when every part of the round is done (true), or false
// when the job was cancelled or taken over.  `done_parts` (may be empty)
// hears how many parts of the round are done.
bool run_round(Conn& c, const WorkerOptions& wo, const std::string& me, const Job& job, const Network& net,
               const PlanIndex& pi, int r, const std::vector<QueuedPart>& q, std::atomic<bool>& cancel,
               const std::function<void(int64_t, int64_t)>& done_parts) {
  const std::string id = std::to_string(job.id);
  std::string parts, seeds, flips, limits, atoms, kept;
  auto add = [](std::string& s, const std::string& v) { s += (s.empty() ? "{" : ",") + v; };
  for (const QueuedPart& x : q) {
    add(parts, std::to_string(x.part));
    add(seeds, std::to_string(static_cast<int64_t>(x.seed)));
    add(flips, std::to_string(x.max_flips));
    add(limits, float8_text(x.time_limit));
    add(atoms, std::to_string(x.atoms));
    add(kept, x.kept ? "true" : "false");
  }
  for (std::string* s : {&parts, &seeds, &flips, &limits, &atoms, &kept}) *s += "}";
  // A kept part is queued as running for the worker that ran it the round
  // before, under a lease: claim_next gives it to that worker, and if it
  // is gone, to another once the lease runs out.  A part's
  // clauses are counted by the worker that solves it (part_extract.hpp):
  // the round before's count, where there is one.
  c.exec("INSERT INTO mln.job_parts (job, round, part, seed, max_flips, time_limit, atoms, clauses, status, worker, "
         "  lease_until) "
         "SELECT $1, $2, x.part, x.seed, x.flips, x.lim, x.atoms, last.clauses, "
         "  CASE WHEN h.worker IS NULL THEN 'queued' ELSE 'running' END, h.worker, "
         "  CASE WHEN h.worker IS NULL THEN NULL ELSE clock_timestamp() + make_interval(secs => $9::int) END "
         "FROM unnest($3::int[], $4::bigint[], $5::bigint[], $6::float8[], $7::bigint[], $8::bool[]) "
         "  AS x(part, seed, flips, lim, atoms, kept) "
         "LEFT JOIN mln.job_parts last ON last.job = $1 AND last.round = $2 - 1 AND last.part = x.part "
         "CROSS JOIN LATERAL (SELECT CASE WHEN x.kept AND last.status = 'done' THEN last.worker END AS worker) h "
         "ON CONFLICT DO NOTHING",
         {id, std::to_string(r), parts, seeds, flips, limits, atoms, kept, std::to_string(wo.lease_seconds)});
  c.exec("SELECT pg_notify('mln_jobs', $1)", {id});
  std::atomic<bool> stop{false};
  for (;;) {
    if (cancel) return false;
    ClaimedPart cp;
    if (claim_next(c, wo, me, job.id, cp)) {
      run_part(c, wo, me, job, net, pi, cp, stop, &cancel);
      continue;
    }
    Result w = c.exec("SELECT count(*) FILTER (WHERE status <> 'done'), count(*), "
                      "  (SELECT status FROM mln.jobs WHERE id = $1) FROM mln.job_parts WHERE job = $1 AND round = $2",
                      {id, std::to_string(r)});
    if (done_parts) done_parts(w.num(0, 1) - w.num(0, 0), w.num(0, 1));
    if (w.num(0, 0) == 0) return !cancel;
    fail_abandoned(c);  // a part abandoned kMaxAttempts times fails the job (seen as not running next)
    if (w.get(0, 2) != "running") {
      cancel = true;
      return false;
    }
    c.wait_notify(250);
  }
}

// Drops what the job's parts keep once its answer is kept; a job that
// stops for a shutdown keeps them (the next leader resumes from them).
// A leader that lost its lease while it ran (another worker took the job
// over and leads it now) drops nothing: the new leader reads those rows.
void clean_up(Conn& c, const std::string& me, const Job& job, bool stopped) {
  const std::string id = std::to_string(job.id);
  drop_kept_walks(job.id);
  Result s = c.exec("SELECT status = 'running', worker IS DISTINCT FROM $2 FROM mln.jobs WHERE id = $1", {id, me});
  if (s.rows() == 1 && s.get(0, 0) == "t" && (stopped || s.get(0, 1) == "t")) return;
  c.exec("DELETE FROM mln.job_plans WHERE job = $1", {id});
  c.exec("UPDATE mln.job_parts SET state = NULL, probabilities = NULL WHERE job = $1", {id});
}

}  // namespace

int spread_parts(Conn& c, const Job& job, const Network& net) {
  if (job.partitions > 0) return job.partitions;
  if (static_cast<int64_t>(net.clauses.size()) < kSpreadMinClauses) return 1;
  Result r = c.exec("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'mln_worker' "
                    "AND datname = current_database()");
  return static_cast<int>(std::clamp<long long>(r.num(0, 0), 1, 4096));
}

// The job's answer from its parts' reports: their devices, and the bounds
// of the parts that share no clause (a cut part's bound holds only with its
// neighbours held, so it counts 0 for the job; the whole network's LP bound
// covers it).
static void finish_spread(Conn& c, const std::string& id, int cut, solver::WholeBound& whole,
                          std::vector<uint8_t>&& best, double best_cost, solver::SolveResult& res) {
  Result s = c.exec("SELECT coalesce(sum(bound) FILTER (WHERE round = 1), 0), "
                    "  coalesce(bool_and(optimal) FILTER (WHERE round = 1), false), "
                    "  string_agg(DISTINCT device, ',') FROM mln.job_parts WHERE job = $1 AND round >= 1 "
                    "  AND status = 'done'",
                    {id});
  res.device_used = solver::device_used_of(s.get(0, 2));
  res.truth = std::move(best);
  res.cost = best_cost;
  res.bound = whole.finish(s.dbl(0, 0), best_cost);
  res.optimal = !res.cancelled && cut == 0 && s.get(0, 1) == "t";
  // No state costs less than 0: a cost of 0 with every hard clause held is
  // optimal whatever the parts proved.
  if (!res.cancelled && best_cost == 0 && res.hard_violated == 0) res.optimal = true, res.bound = 0;
  res.stop_reason = res.optimal ? "proven optimal" : res.cancelled ? "stopped before its rounds ended" : "search finished";
}

solver::SolveResult solve_spread(const WorkerOptions& wo, const std::string& me, const Job& job, const Network& net) {
  const auto t0 = Clock::now();
  const solver::SolveOptions& o = job.map;
  Lead lead(wo, job, net, o.cancel);
  if (lead.unspread(job, net)) return solver::solve_map(net, o);
  const std::string& id = lead.id;
  auto log = [&lead](const std::string& s) { lead.log(s); };
  Conn& c = lead.c;
  std::atomic<bool>& cancel = lead.cancel;
  const PlanIndex& pi = lead.pi;
  int cut = 0;
  for (uint8_t x : pi.plan.cut) cut += x;

  std::vector<uint8_t> truth = solver::spread_initial_truth(net, pi.plan, o.seed), best;
  double best_cost = 0;
  solver::SolveResult res;
  const int rounds = std::max(1, job.spread_rounds());
  // A round's whole state is scored (a pass over every clause) while the
  // next round runs; settle() takes the score and keeps the best state.
  std::vector<uint8_t> scored;               // (before scoring: a pending score is joined first)
  std::future<solver::SpreadTotals> scoring;
  int scored_round = 0;
  auto settle = [&] {
    if (!scoring.valid()) return;
    const solver::SpreadTotals t = scoring.get();
    if (best.empty() || t.cost < best_cost) best.swap(scored), best_cost = t.cost, res.hard_violated = t.hard_violated;
    if (o.progress) o.progress(best_cost, res.flips);
    log("round " + std::to_string(scored_round) + ": cost " + std::to_string(t.cost));
  };
  auto score = [&](int r) {
    settle();
    scored = truth;
    scored_round = r;
    scoring = std::async(std::launch::async, [&net, &pi, &scored] { return solver::spread_totals(net, pi.plan, scored); });
  };
  solver::WholeBound whole(net, pi.plan, o);  // the LP bound of the whole network, beside the rounds
  solver::RoundStop ending(pi.plan, rounds, o);
  // A leader that takes over a job goes on after the rounds its leaders
  // ended, from each part's latest state: the states of the rounds before a
  // part's latest are dropped as the rounds end (below), so they cannot be
  // read again.
  const int resumed = static_cast<int>(c.exec("SELECT coalesce(rounds, 0) FROM mln.jobs WHERE id = $1", {id}).num(0, 0));
  if (resumed > 0) {
    truth = state_before(c, job.id, resumed + 1, net, pi, o.seed);
    log("resuming after round " + std::to_string(resumed));
    score(resumed);
  }
  for (int r = resumed + 1; r <= rounds && !cancel; ++r) {
    const std::vector<int> ps = solver::round_parts(pi.plan, r);
    if (ps.empty()) break;
    double left = 0;
    if (o.timeout_s > 0) {
      left = o.timeout_s - std::chrono::duration<double>(Clock::now() - t0).count();
      if (left <= 0 && r > 1) break;
      left = std::max(left, 1e-3);
    }
    std::vector<QueuedPart> q;
    for (int p : ps) {
      const solver::SolveOptions po = solver::part_options(o, pi.plan, pi.idx, p, r, rounds, left);
      q.push_back({p, static_cast<int64_t>(pi.idx.members[p].size()), po.seed, po.max_flips, po.timeout_s,
                   r > 1 && solver::walk_kept(pi.plan, p, rounds, o)});
    }
    const auto tr = Clock::now();
    if (!run_round(c, wo, me, job, net, pi, r, q, cancel, nullptr)) break;
    const auto tw = Clock::now();
    const bool changed = apply_states(
        c, "SELECT part, state FROM mln.job_parts WHERE job = " + id + " AND round = " + std::to_string(r), pi, truth);
    // (only while this worker leads the job: one that lost its lease stops)
    Result f = c.exec("UPDATE mln.jobs SET rounds = $2 WHERE id = $1 AND worker = $3 "
                      "RETURNING (SELECT coalesce(sum(flips), 0) FROM mln.job_parts WHERE job = $1)",
                      {id, std::to_string(r), me});
    if (f.rows() == 0) {
      log("round " + std::to_string(r) + ": the job is led by another worker now");
      cancel = true;
      break;
    }
    // A part's states of the rounds before its latest are read no more.
    c.exec("UPDATE mln.job_parts p SET state = NULL WHERE p.job = $1 AND p.round >= 1 AND p.round < $2 "
           "  AND p.state IS NOT NULL AND EXISTS (SELECT 1 FROM mln.job_parts q WHERE q.job = p.job "
           "  AND q.part = p.part AND q.round > p.round AND q.round <= $2 AND q.status = 'done')",
           {id, std::to_string(r)});
    res.flips = f.num(0, 0);
    score(r);
    if (debug_timing())
      log("round " + std::to_string(r) + ": queued and run in " +
          std::to_string(std::chrono::duration<double>(tw - tr).count()) + " s, then states read in " +
          std::to_string(std::chrono::duration<double>(Clock::now() - tw).count()) + " s");
    if (!changed && r > 1) log("round " + std::to_string(r) + ": no atom changed");
    if (ending.ends_after(r, changed)) break;
  }
  settle();
  res.cancelled = cancel.load();
  res.walk_cut = res.cancelled;  // the rounds are the walk: a stop cuts them
  if (best.empty()) {  // stopped before a round ended: the starting state
    best = truth;
    const solver::SpreadTotals t = solver::spread_totals(net, pi.plan, truth);
    best_cost = t.cost;
    res.hard_violated = t.hard_violated;
  }
  finish_spread(c, id, cut, whole, std::move(best), best_cost, res);
  res.components = pi.plan.components;
  res.solved_components = pi.plan.solved_components;
  res.partitions = pi.plan.parts;
  res.solver_used = "walksat";
  res.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!job.wants_marginal() || res.cancelled) clean_up(c, me, job, res.cancelled);  // a dual job's marginal half needs the plan
  return res;
}

namespace {

// Makes `cache` hold the network, plan and part index of the oldest
// running spread job that another worker leads (or nothing, when none
// runs), before any of its parts is claimed: reading a network of 10^8
// clauses takes longer than a part's lease.  Idle workers so read the
// network while the leader plans.  False when no such job has a plan yet.
bool prepare(Conn& c, const WorkerOptions& wo, const std::string& me, PartCache& cache) {
  // Parts exist from 0.4.0 on; a database at an older version has none.
  if (c.exec("SELECT to_regclass('mln.job_parts') IS NULL").get(0, 0) == "t") return false;
  Result r = c.exec("SELECT j.id, p.schema_name, p.name FROM mln.jobs j JOIN mln.programs p ON p.name = j.program "
                    "WHERE j.status = 'running' AND j.parts > 1 AND j.worker <> $1 ORDER BY j.id LIMIT 1",
                    {me});
  if (r.rows() == 0) {
    if (cache.job) cache = PartCache();
    drop_kept_walks(0);  // no spread job runs: the kept walks' memory goes
    return false;
  }
  const int64_t job = r.num(0, 0);
  const std::string oid = network_oid(c, r.get(0, 1));
  if (cache.job != job || cache.net_oid != oid) {
    const auto t = Clock::now();
    cache = PartCache();
    drop_kept_walks(0);
    cache.net = read_network(c, r.get(0, 2), r.get(0, 1), &wo.dsn, read_streams_default());
    cache.job = job;
    cache.net_oid = oid;
    if (wo.log)
      wo.log("job " + std::to_string(job) + ": read ahead " + std::to_string(cache.net.num_atoms) + " atoms, " +
             std::to_string(cache.net.clauses.size()) + " clauses in " +
             std::to_string(std::chrono::duration<double>(Clock::now() - t).count()) + " s");
  }
  if (!cache.plan) {
    auto pi = std::make_shared<PlanIndex>();
    const auto tl = Clock::now();
    if (!load_plan(c, job, cache.net, pi->plan)) return false;  // the leader still plans
    const auto ti = Clock::now();
    pi->idx = solver::index_parts(cache.net, pi->plan);
    cache.plan = pi;
    if (debug_timing() && wo.log)
      wo.log("job " + std::to_string(job) + ": plan loaded in " +
             std::to_string(std::chrono::duration<double>(ti - tl).count()) + " s, parts indexed in " +
             std::to_string(std::chrono::duration<double>(Clock::now() - ti).count()) + " s");
  }
  return true;
}

}  // namespace

solver::MarginalResult solve_spread_marginal(const WorkerOptions& wo, const std::string& me, const Job& job,
                                             const Network& net) {
  const auto t0 = Clock::now();
  const solver::MarginalOptions& o = job.marginal;
  Lead lead(wo, job, net, o.cancel);
  if (lead.unspread(job, net)) return solver::solve_marginal(net, o);
  const int slices = lead.pi.plan.slices, units = lead.pi.plan.parts * slices;
  std::vector<QueuedPart> q;
  for (int u = 0; u < units; ++u) {
    const solver::MarginalOptions po = solver::part_marginal_options(o, u / slices, o.timeout_s, u % slices, slices);
    q.push_back({u, static_cast<int64_t>(lead.pi.idx.members[u / slices].size()), po.seed, o.max_flips, po.timeout_s});
  }
  const bool all = run_round(lead.c, wo, me, job, net, lead.pi, 0, q, lead.cancel, o.progress);
  std::vector<solver::PartMarginal> parts(static_cast<size_t>(units));
  solver::MarginalResult res;
  if (all) {
    each_int_bytea(lead.c, "SELECT part, probabilities FROM mln.job_parts WHERE job = " + lead.id + " AND round = 0",
                   [&](int32_t u, const char* d, size_t n) {
                     if (u < 0 || u >= units || n != 8 * lead.pi.idx.members[u / slices].size())
                       throw DbError("a part's probabilities do not fit its part (" + std::to_string(u) + ")");
                     binary::le_float8s(d, static_cast<int32_t>(n), parts[u].prob);
                   });
    Result r = lead.c.exec("SELECT part, samples, average_cost, components, exact_components, flips, device, "
                           "  cancelled FROM mln.job_parts WHERE job = $1 AND round = 0",
                           {lead.id});
    for (int i = 0; i < r.rows(); ++i) {
      const int64_t u = r.num(i, 0);
      if (u < 0 || u >= units) throw DbError("job " + lead.id + " has a marginal part " + std::to_string(u) + " of " + std::to_string(units));
      auto& pm = parts[static_cast<size_t>(u)];
      pm.samples = r.num(i, 1);
      pm.average_cost = r.dbl(i, 2);
      pm.solved_components = static_cast<int>(r.num(i, 3));
      pm.exact_components = static_cast<int>(r.num(i, 4));
      pm.flips = r.num(i, 5);
      pm.device = r.get(i, 6);
      pm.cancelled = r.get(i, 7) == "t";
    }
    res = solver::merge_marginals(net, lead.pi.plan, lead.pi.idx, parts);
    lead.log("marginal: " + std::to_string(lead.pi.plan.parts) + " parts sampled" +
             (slices > 1 ? " in " + std::to_string(slices) + " slices each" : std::string()) + ", " +
             std::to_string(res.samples) + " samples per component");
  } else {
    res.prob.assign(static_cast<size_t>(net.num_atoms) + 1, std::nan(""));
    res.components = lead.pi.plan.components;
  }
  res.cancelled = res.cancelled || !all;
  res.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  clean_up(lead.c, me, job, !all);
  return res;
}

bool serve_part(Conn& c, const WorkerOptions& wo, const std::string& me, PartCache& cache, std::atomic<bool>& stop) {
  if (!prepare(c, wo, me, cache)) return false;
  ClaimedPart cp;
  if (!claim_next(c, wo, me, cache.job, cp)) return false;
  Job job;
  if (!load_job(c, wo, cp.job, job) || job.schema.empty()) return true;  // gone: its lease runs out
  const auto& pi = *static_cast<const PlanIndex*>(cache.plan.get());
  const bool ok = run_part(c, wo, me, job, cache.net, pi, cp, stop, nullptr);
  if (wo.log)
    wo.log("job " + std::to_string(cp.job) + " part " + std::to_string(cp.part) + " round " +
           std::to_string(cp.round) + ": " + (ok ? "done" : "given up"));
  return true;
}

}  // namespace mln::worker
