// The part side of a spread job (spread_parts.hpp): the plan and the
// parts' states in the database, and claiming and solving a part.
#include "worker/spread_parts.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "core/base/le_bytes.hpp"
#include "core/spread/part_walk.hpp"
#include "core/base/run_control.hpp"
#include "worker/worker.hpp"

namespace mln::worker::spread {

using Clock = std::chrono::steady_clock;

bool debug_timing() {
  static const bool on = std::getenv("MLN_MAP_DEBUG") != nullptr;
  return on;
}

// The parts whose walks this worker keeps between rounds (core/part_walk.hpp),
// of one job at a time: a worker serves one job's parts at once, and a
// part's GPU state is freed when its job ends or another job's part comes.
namespace {
struct KeptWalks {
  int64_t job = 0;
  std::map<int, std::unique_ptr<solver::PartWalker>> parts;
};
KeptWalks& kept_walks() {
  static KeptWalks k;
  return k;
}
}  // namespace

void drop_kept_walks(int64_t job) {
  KeptWalks& k = kept_walks();
  if (job == 0 || k.job == job) k.parts.clear(), k.job = 0;
}

namespace {
// Raw bytes, sent as a binary bytea parameter (Conn::exec_b).
std::string raw_bytes(const void* data, size_t n) { return std::string(static_cast<const char*>(data), n); }
}  // namespace

void each_int_bytea(Conn& c, const std::string& query,
                    const std::function<void(int32_t, const char*, size_t)>& f) {
  std::vector<std::pair<const char*, int32_t>> fields;
  bool first = true;
  c.copy_out("COPY (" + query + ") TO STDOUT (FORMAT binary)", [&](const char* data, size_t len) {
    if (binary::parse_row(data, len, first, fields)) {
      if (fields.size() != 2 || fields[0].second != 4 || fields[1].second < 0)
        throw DbError("corrupt spread job rows (" + query + ")");
      f(binary::int4(fields[0].first), fields[1].first, static_cast<size_t>(fields[1].second));
    }
    first = false;
  });
}

bool plans_have_slices(Conn& c) { return catalog_has_column(c, "job_plans", "slices"); }

void save_plan(Conn& c, int64_t job, const solver::SpreadPlan& plan) {
  // One slice a part is the column's default, and the only plan a 0.4.0
  // database holds (it has no such column): slices are written only where
  // there are several (lead_plan makes them only where the column exists).
  const bool slices = plan.slices != 1;
  std::vector<std::string> params = {std::to_string(job), std::to_string(plan.parts),
                                     solver::pack_part_of(plan.part_of), raw_bytes(plan.cut.data(), plan.cut.size()),
                                     std::to_string(plan.components), std::to_string(plan.solved_components)};
  if (slices) params.push_back(std::to_string(plan.slices));
  std::vector<bool> bin(params.size(), false);
  bin[2] = bin[3] = true;
  c.exec_b(std::string("INSERT INTO mln.job_plans (job, parts, part_of, cut, components, solved_components") +
               (slices ? ", slices) VALUES ($1, $2, $3::bytea, $4::bytea, $5, $6, $7)"
                       : ") VALUES ($1, $2, $3::bytea, $4::bytea, $5, $6)"),
           params, bin);
}

bool load_plan(Conn& c, int64_t job, const Network& net, solver::SpreadPlan& plan) {
  const std::string id = std::to_string(job);
  // (slices through the row's JSON: 1 on a 0.4.0 database, which has no such column)
  Result k = c.exec("SELECT parts, components, solved_components, coalesce((to_jsonb(p) ->> 'slices')::int, 1) "
                    "FROM mln.job_plans p WHERE job = $1",
                    {id});
  if (k.rows() == 0) return false;
  plan.parts = static_cast<int>(k.num(0, 0));
  plan.components = static_cast<int>(k.num(0, 1));
  plan.solved_components = static_cast<int>(k.num(0, 2));
  plan.slices = static_cast<int>(k.num(0, 3));
  if (plan.slices < 1) throw DbError("the spread plan of job " + id + " has " + std::to_string(plan.slices) + " slices");
  std::vector<int32_t> part_of;
  std::string cut;
  // Both arrays by one binary COPY, keyed 0 (part_of) and 1 (cut).
  each_int_bytea(c,
                 "SELECT v.k, v.b FROM mln.job_plans, LATERAL (VALUES (0, part_of), (1, cut)) v(k, b) "
                 "WHERE job = " + id,
                 [&](int32_t key, const char* p, size_t n) {
                   if (key != 0) cut.assign(p, n);
                   else try {
                     part_of = solver::unpack_part_of(p, n);
                   } catch (const std::invalid_argument& e) {
                     throw DbError(std::string("the spread plan of job ") + id + ": " + e.what());
                   }
                 });
  if (part_of.size() != static_cast<size_t>(net.num_atoms) + 1 || cut.size() != static_cast<size_t>(plan.parts))
    throw DbError("the spread plan of job " + id + " does not fit its network");
  plan.part_of = std::move(part_of);
  plan.cut.assign(cut.begin(), cut.end());
  return true;
}

bool apply_states(Conn& c, const std::string& rows, const PlanIndex& pi, std::vector<uint8_t>& truth,
                  std::vector<uint8_t>* read) {
  bool changed = false;
  each_int_bytea(c, rows, [&](int32_t p, const char* s, size_t n) {
    if (p < 0 || p >= pi.plan.parts) throw DbError("a state of part " + std::to_string(p) + ", which the plan lacks");
    if (read) (*read)[p] = 1;
    try {
      changed = solver::unpack_state(s, n, pi.idx.members[p], truth) || changed;
    } catch (const std::invalid_argument& e) {
      throw DbError("part " + std::to_string(p) + ": " + e.what());
    }
  });
  return changed;
}

// The whole state at the start of round r: every part's latest state of the
// rounds before (the starting state where it has none).
std::vector<uint8_t> state_before(Conn& c, int64_t job, int r, const Network& net, const PlanIndex& pi,
                                  uint64_t seed) {
  // (each part's latest round first, then only those rows' states: a
  // kept walk's job has up to 30 rounds of rows)
  const std::string j = std::to_string(job);
  std::vector<uint8_t> truth(static_cast<size_t>(net.num_atoms) + 1, 0);  // atoms of no part: false
  std::vector<uint8_t> read(static_cast<size_t>(pi.plan.parts), 0);
  apply_states(c,
               "SELECT p.part, p.state FROM mln.job_parts p JOIN (SELECT part, max(round) AS round FROM mln.job_parts "
               "  WHERE job = " + j + " AND round >= 1 AND round < " + std::to_string(r) +
                   " AND status = 'done' GROUP BY part) l USING (part, round) WHERE p.job = " + j,
               pi, truth, &read);
  // The parts with no state yet (round 1, or a part not solved since)
  // start from the starting state.
  if (std::find(read.begin(), read.end(), 0) != read.end()) {
    const std::vector<uint8_t> start = solver::spread_initial_truth(net, pi.plan, seed);
    for (int p = 0; p < pi.plan.parts; ++p)
      if (!read[p])
        for (int32_t a : pi.idx.members[p]) truth[a] = start[a];
  }
  return truth;
}

namespace {

// The part a claim returned (job, round, part, seed, max_flips, time_limit);
// false when it returned none.
bool claimed(const Result& r, ClaimedPart& cp) {
  if (r.rows() == 0) return false;
  cp.job = r.num(0, 0);
  cp.round = static_cast<int>(r.num(0, 1));
  cp.part = static_cast<int>(r.num(0, 2));
  cp.seed = static_cast<uint64_t>(r.num(0, 3));
  cp.max_flips = r.num(0, 4);
  cp.time_limit = r.dbl(0, 5);
  return true;
}

}  // namespace

// Claims a part of a running job (of job `only` when non-zero) for this
// worker: first one the leader gave it (its kept walk's next round, queued
// as running under its lease with no start yet), then a waiting part or a
// running one whose lease ran out (so a part given to a worker that died
// goes to another once its lease runs out).
bool claim_next(Conn& c, const WorkerOptions& wo, const std::string& me, int64_t only, ClaimedPart& cp) {
  // Fault injection for tests/e2e/spread.sh: MLN_TEST_CLAIM_DELAY_MS=N makes
  // this worker wait before it claims a part not given to it, so that a
  // helper started beside it takes the first parts (parts of 200 flips
  // end in milliseconds: a leader could take them all before the helper).
  static const int delay_ms = [] {
    const char* e = std::getenv("MLN_TEST_CLAIM_DELAY_MS");
    return e ? std::atoi(e) : 0;
  }();
  for (const bool given : {true, false}) {
    if (!given && delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    Result r = c.exec(
        std::string("UPDATE mln.job_parts p SET ") +
            (given ? "" : "status = 'running', worker = $1, flips = NULL, flips_per_s = NULL, device = NULL, ") +
            "attempts = attempts + 1, started_at = clock_timestamp(), "
            "  lease_until = clock_timestamp() + make_interval(secs => $2::int) "
            "WHERE (p.job, p.round, p.part) = (SELECT q.job, q.round, q.part FROM mln.job_parts q "
            "  JOIN mln.jobs j ON j.id = q.job WHERE j.status = 'running' AND ($3::bigint = 0 OR q.job = $3::bigint) "
            "   AND " +
            (given ? std::string("q.status = 'running' AND q.worker = $1 AND q.started_at IS NULL")
                   : "(q.status = 'queued' OR (q.status = 'running' AND q.lease_until < clock_timestamp() "
                     "        AND q.attempts < " + std::to_string(kMaxAttempts) + "))") +
            "  ORDER BY q.job, q.round, q.part FOR UPDATE OF q SKIP LOCKED LIMIT 1) "
            "RETURNING p.job, p.round, p.part, p.seed, p.max_flips, p.time_limit",
        {me, std::to_string(wo.lease_seconds), std::to_string(only)});
    if (claimed(r, cp)) return true;
  }
  return false;
}

// Fault injection for tests/e2e/spread.sh: MLN_TEST_DIE_AT_ROUND=N makes
// this worker die (as if killed) when it has claimed a part of round N or
// later, so that a kept part's hand-over is tested without a race.
void die_if_told(int round) {
  static const int die_at = [] {
    const char* e = std::getenv("MLN_TEST_DIE_AT_ROUND");
    return e ? std::atoi(e) : 0;
  }();
  if (die_at > 0 && round >= die_at) _exit(9);
}

// Marks a part done with what every part reports and its answer (a MAP
// state, or a marginal unit's probabilities); false if the part was no
// longer this worker's (key: job, round, part, worker).
bool write_part_answer(Conn& c, const WorkerOptions& wo, const std::vector<std::string>& key, bool marginal,
                       const solver::PartMarginal& pm, const solver::PartOutcome& out, double secs) {
  const std::string& dev = marginal ? pm.device : out.device;
  const std::string device =
      dev + (wo.gpu >= 0 && dev.find("gpu") != std::string::npos ? " (GPU " + std::to_string(wo.gpu) + ")" : "");
  // What every part reports ($5-$9), then its answer ($10, a binary bytea, and on).
  const int64_t f = marginal ? pm.flips : out.flips;
  std::vector<std::string> params = {key[0], key[1], key[2], key[3], std::to_string(f),
                                     std::to_string(secs > 0 ? static_cast<double>(f) / secs : 0.0), device,
                                     float8_text(secs), std::to_string(marginal ? pm.clauses : out.clauses)};
  std::string answer;
  if (marginal) {
    answer = "probabilities = $10::bytea, samples = $11, average_cost = $12, components = $13, "
             "exact_components = $14, cancelled = $15";
    params.insert(params.end(), {solver::le_bytes(pm.prob), std::to_string(pm.samples), float8_text(pm.average_cost),
                                 std::to_string(pm.solved_components), std::to_string(pm.exact_components),
                                 pm.cancelled ? "true" : "false"});
  } else {
    answer = "state = $10::bytea, cost = $11, bound = $12, optimal = $13";
    params.insert(params.end(), {solver::pack_state(out.state), float8_text(out.cost), float8_text(out.bound),
                                 out.proven ? "true" : "false"});
  }
  std::vector<bool> bin(params.size(), false);
  bin[9] = true;
  Result r = c.exec_b(
      "UPDATE mln.job_parts SET status = 'done', lease_until = NULL, finished_at = clock_timestamp(), "
      "  flips = $5, flips_per_s = $6, device = $7, seconds = $8, clauses = $9, " + answer +
          " WHERE job = $1 AND round = $2 AND part = $3 AND worker = $4 AND status = 'running' "
          "RETURNING pg_notify('mln_parts', job::text)",
      params, bin);
  return r.rows() == 1;
}

// Solves a claimed part in a thread while this one renews its lease and
// publishes its flips/s; writes its state when it ends.  Returns false when
// the part was given up (the job ended, the lease was lost, or `stop`).
bool run_part(Conn& c, const WorkerOptions& wo, const std::string& me, const Job& job, const Network& net,
              const PlanIndex& pi, const ClaimedPart& cp, std::atomic<bool>& stop, std::atomic<bool>* outer) {
  die_if_told(cp.round);
  // Round 0: the marginal half of the job (MC-SAT over the part's whole
  // components); rounds 1 and up: MAP.
  const bool marginal = cp.round == 0;
  const auto t_read = Clock::now();
  const std::vector<uint8_t> truth = marginal ? std::vector<uint8_t>()
                                              : state_before(c, cp.job, cp.round, net, pi, job.map.seed);
  const double read_s = std::chrono::duration<double>(Clock::now() - t_read).count();
  // (a marginal unit is part * slices + slice)
  const int part = marginal ? cp.part / pi.plan.slices : cp.part;
  // The marginal units share the job's time: a unit claimed after others
  // began (fewer workers than units run them in turn) gets what is left of
  // it since the first unit's start, and its row says so.
  double time_limit = cp.time_limit;
  if (marginal && time_limit > 0) {
    Result e = c.exec(
        "UPDATE mln.job_parts p SET time_limit = greatest(0.001, p.time_limit - extract(epoch FROM clock_timestamp() - "
        "  (SELECT min(q.started_at) FROM mln.job_parts q WHERE q.job = p.job AND q.round = 0))) "
        "WHERE job = $1 AND round = 0 AND part = $2 AND worker = $3 RETURNING time_limit",
        {std::to_string(cp.job), std::to_string(cp.part), me});
    if (e.rows() == 1) time_limit = e.dbl(0, 0);
  }
  solver::MarginalOptions mo =
      solver::part_marginal_options(job.marginal, part, time_limit, cp.part % pi.plan.slices, pi.plan.slices);
  mo.seed = cp.seed;
  solver::SolveOptions o = job.map;
  o.seed = cp.seed;
  o.max_flips = cp.max_flips;
  o.timeout_s = cp.time_limit;
  std::atomic<bool> cancel{false};
  std::atomic<int64_t> flips{0};
  o.cancel = &cancel;
  o.progress = [&flips](double, int64_t f) { flips = f; };
  mo.cancel = &cancel;
  solver::PartOutcome out;
  solver::PartMarginal pm;
  std::string error;
  bool done = false;
  std::mutex mu;
  std::condition_variable cv;
  // A cut part goes on with the walk this worker keeps (made here at its
  // first round, or after another worker left it).
  const bool keep = !marginal && solver::walk_kept(pi.plan, cp.part, job.spread_rounds(), job.map);
  KeptWalks& kw = kept_walks();
  if (keep && kw.job != cp.job) kw.parts.clear(), kw.job = cp.job;
  std::unique_ptr<solver::PartWalker>* walker = keep ? &kw.parts[cp.part] : nullptr;
  if (walker && *walker) {
    // Kept from the round before only if this worker's answer is the one
    // written there (another worker may have taken the part over since).
    Result prev = c.exec("SELECT worker FROM mln.job_parts WHERE job = $1 AND round = $2 AND part = $3 "
                         "AND status = 'done'",
                         {std::to_string(cp.job), std::to_string(cp.round - 1), std::to_string(cp.part)});
    if (prev.rows() == 0 || prev.get(0, 0) != me) walker->reset();
  }
  std::thread t([&] {
    try {
      if (marginal) {
        pm = solver::sample_part(net, pi.plan, pi.idx, part, mo);
      } else if (walker) {
        if (!*walker) {
          *walker = std::make_unique<solver::PartWalker>(net, pi.plan, pi.idx, cp.part, truth, o);
          if (wo.log)
            wo.log("job " + std::to_string(cp.job) + " part " + std::to_string(cp.part) + ": kept walk of " +
                   std::to_string((*walker)->atoms()) + " atoms (" + std::to_string((*walker)->held()) + " held), " +
                   std::to_string((*walker)->clauses()) + " clauses on the " + ((*walker)->on_gpu() ? "GPU" : "CPU") +
                   ", made in " + std::to_string((*walker)->build_seconds()) + " s (" + (*walker)->build_detail() + ")");
        }
        out = (*walker)->step(truth, o);
      } else {
        out = solver::solve_part(net, pi.plan, pi.idx, cp.part, truth, o, solver::holds_boundary(cp.round, job.spread_rounds()));
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
    std::lock_guard<std::mutex> g(mu);
    done = true;
    cv.notify_all();
  });
  const std::vector<std::string> key = {std::to_string(cp.job), std::to_string(cp.round), std::to_string(cp.part), me};
  const auto t0 = Clock::now();
  bool ours = true;
  for (;;) {
    {
      std::unique_lock<std::mutex> g(mu);
      if (cv.wait_for(g, std::chrono::milliseconds(500), [&] { return done; })) break;
    }
    if (stop || (outer && *outer)) cancel = true;
    try {
      const double el = std::chrono::duration<double>(Clock::now() - t0).count();
      Result r = c.exec(
          "UPDATE mln.job_parts p SET lease_until = clock_timestamp() + make_interval(secs => $5::int), "
          "  flips = $6, flips_per_s = $7 WHERE job = $1 AND round = $2 AND part = $3 AND worker = $4 "
          "  AND status = 'running' RETURNING (SELECT status FROM mln.jobs j WHERE j.id = p.job)",
          {key[0], key[1], key[2], key[3], std::to_string(wo.lease_seconds), std::to_string(flips.load()),
           std::to_string(el > 0 ? static_cast<double>(flips.load()) / el : 0.0)});
      if (r.rows() == 0 || r.get(0, 0) != "running") ours = false, cancel = true;
    } catch (const std::exception& e) {
      if (wo.log) wo.log(std::string("part lease renewal failed: ") + e.what());
    }
  }
  t.join();
  // A kept walk whose round did not end as written (failed, given up) is
  // dropped: it moved past the state the other parts will see.
  if (walker && (!error.empty() || !ours || cancel)) walker->reset();
  if (!error.empty()) {  // the job cannot be answered: fail it
    c.exec("UPDATE mln.jobs SET status = 'failed', error = $2, finished_at = clock_timestamp() "
           "WHERE id = $1 AND status = 'running'",
           {key[0], "part " + key[2] + " of round " + key[1] + " failed on worker " + me + ": " + error});
    return false;
  }
  if (!ours || cancel) return false;  // given up: its lease runs out and another worker runs it
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  if (debug_timing() && wo.log)
    wo.log("job " + key[0] + " part " + key[2] + " round " + key[1] + ": states read in " + std::to_string(read_s) +
           " s, solved in " + std::to_string(secs) + " s");
  return write_part_answer(c, wo, key, marginal, pm, out, secs);
}

}  // namespace mln::worker::spread
