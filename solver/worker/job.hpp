// Internal to the worker: one claimed job (task and solver options) and
// what its run produced, between the job loop (worker.cpp) and the writing
// of results (results.cpp).
#pragma once

#include <cstdint>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <string>
#include <vector>

#include "core/learn/learn.hpp"
#include "core/marginal/solve_marginal.hpp"
#include "core/map/solve_map.hpp"
#include "core/spread/spread.hpp"
#include "format/network.hpp"
#include "options/option_entries.hpp"

namespace mln::worker {

class Conn;

struct Job {
  int64_t id = 0;
  std::string program;
  std::string schema;
  std::string task = "map";  // map | marginal | dual | learn | rules | problog
  solver::SolveOptions map;  // task map and dual
  solver::MarginalOptions marginal;  // task marginal and dual
  solver::LearnOptions learn;        // task learn
  std::vector<int32_t> learn_clauses;  // learn: mln.clauses.idx of each learnable weight
  int64_t learn_atoms = 0, learn_ground_clauses = 0;
  std::string bad_options;   // why the options could not be read (the job fails)
  int partitions = 0;        // MAP: parts for several workers (0: auto, 1: one worker)
  int rounds = 0;            // MAP spread over workers: rounds over the cut parts (0: spread_rounds's default)
  int spread = 1;            // MAP: the parts this run spreads over (spread_parts)
  // The rounds of a spread MAP job: its option, or 30 where the cut parts'
  // walks are kept between rounds, else 3 (core/spread.hpp default_rounds).
  int spread_rounds() const { return rounds > 0 ? rounds : solver::default_rounds(map); }
  bool wants_map() const { return task == "map" || task == "dual"; }
  bool wants_marginal() const { return task == "marginal" || task == "dual"; }
  bool wants_learn() const { return task == "learn"; }
  bool wants_rules() const { return task == "rules"; }
  bool wants_problog() const { return task == "problog"; }
};

// What a run produced.
struct JobOutcome {
  bool have_map = false;
  solver::SolveResult map;
  // MAP, MC-SAT searched only the components a change touched (from what
  // the grounding carried: read_live_change).
  bool map_touched = false, marginal_touched = false;
  int64_t touched_components = 0;
  bool have_marginal = false;
  solver::MarginalResult marginal;
  bool have_learn = false;
  solver::LearnResult learn;
};

// The job's options (its jsonb as text) decoded through the options table
// into job.map and job.marginal, or job.learn (job_options.cpp); where they
// are invalid, job.bad_options says why.
struct WorkerOptions;
void read_job_options(const std::string& json, const WorkerOptions& wo, Job& job);

// The queue (queue.cpp): claims the next queued job (or one whose lease ran
// out, fewer than kMaxAttempts times); fails a job this worker holds.
bool claim(Conn& c, const WorkerOptions& wo, const std::string& me, Job& job);
void fail(Conn& c, const Job& job, const std::string& me, const std::string& why);

// Runs one claimed job to its end (run_job.cpp): reads its network, solves
// it in a thread while the job is supervised, writes the results.
void run_job(Conn& c, const WorkerOptions& wo, const std::string& me, Job& job, std::atomic<bool>& stop);

// Runs `body` (the job's work) in a thread while this one supervises it
// (Supervisor, twice a second: lease, progress from the Progress the body
// fills, cancellation through the flag it is given): returns false when the
// job was cancelled or taken over; `error` is what the body threw.
struct Progress;
bool run_supervised(Conn& c, const WorkerOptions& wo, const std::string& me, const Job& job, std::atomic<bool>& stop,
                    const std::function<void(Progress&, std::atomic<bool>&)>& body, std::string& error);

// Rule learning jobs (rules_job.cpp, queued by mln.learn_rules_job): the
// program's evidence read as the task mln.learn_rules_from builds, the
// search under supervision (progress: rule, depth, candidates; a cancel
// between depths and inside the engine's operators), the rules written to
// mln.learned_rules with the job's final row in one transaction.
void run_rules_job(Conn& c, const WorkerOptions& wo, const std::string& me, Job& job, std::atomic<bool>& stop);

// ProbLog jobs (problog_job.cpp, queued by mln.problog_job): the ground
// program the queueing backend stored, sampled under supervision
// (progress: samples drawn and accepted, the widest interval; a cancel
// between batches), the answers written to mln.problog_results with the
// job's final row in one transaction.
void run_problog_job(Conn& c, const WorkerOptions& wo, const std::string& me, Job& job, std::atomic<bool>& stop);

// The entries of job `id`'s options jsonb, as jsonb_each gives them (less
// the key `minus`, where given), for the readers over options/option_entries.hpp
// (rule learning's, ProbLog's) that checked them when the job was queued.
std::vector<OptionEntry> job_option_entries(Conn& c, int64_t id, const std::string& minus = "");

// Learning jobs (learn_job.cpp): the learning network (the ground network
// `net` with its clauses' origins and the training world); and the
// finished job's weights, written with the job's final row in one
// transaction ("" when done, else why not).
solver::LearnNetwork read_learn_network(Conn& c, const std::string& schema, Network net, Job& job);
std::string finish_learn_job(Conn& c, const Job& job, const std::string& me, const std::string& net_oid,
                             const solver::LearnResult& res);

// The network the job read, identified by its _atoms table: a re-grounding
// drops and re-creates it, so a different oid means the results belong to a
// network that is gone.
std::string network_oid(Conn& c, const std::string& schema);

// Finishes a job in one transaction: when the job is still this worker's
// and its network unchanged (the job's and the program's rows locked),
// runs `write` and commits, returning ""; otherwise returns why (marking the
// job failed when the program was grounded again).  Rolls back and rethrows
// when `write` throws.
std::string finish_owned(Conn& c, const Job& job, const std::string& me, const std::string& net_oid,
                         const std::function<void()>& write);

// A float8 as text that reads back exactly ("%.17g").
std::string float8_text(double x);

// Writes the results (_map + map_result, _marginal + marginal_result) and
// marks the job done, in one transaction.  Returns "" when done, or why the
// results were not written (the job is no longer ours, or the program was
// re-grounded meanwhile: then the job is marked failed).
std::string finish_job(Conn& c, const Job& job, const std::string& me, const std::string& net_oid,
                       const Network& net, const JobOutcome& out);

// A job or a part whose lease ran out this many times in a row (each of
// its workers died or lost it) is not claimed again: the job fails with
// an error saying so, where before it went round the workers for ever
// (a network that crashes the worker would crash every one of them).
constexpr int kMaxAttempts = 5;

// Fails the running jobs that were abandoned kMaxAttempts times, or one of
// whose parts was; returns how many.
int fail_abandoned(Conn& c);

// Keeps a lease while the caller is busy on its own connection (reading a
// network of 10^8 clauses takes ~15 s, longer than a lease: another worker
// would take the job as abandoned and run it too).  A thread renews it
// every second with `sql` ($1..: params, the last one the lease seconds)
// on a connection of its own, opened only if the scope lasts a second.
class LeaseKeeper {
 public:
  LeaseKeeper(const WorkerOptions& wo, std::string sql, std::vector<std::string> params);
  ~LeaseKeeper();
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;

 private:
  std::atomic<bool> done_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
};

// A job's lease, kept while this worker reads what the job needs (before
// the supervisor takes over the renewal).
class JobLease : public LeaseKeeper {
 public:
  JobLease(const WorkerOptions& wo, const Job& job, const std::string& me);
};

// The job `id` with its options (as a claim reads them); false when gone.
bool load_job(Conn& c, const WorkerOptions& wo, int64_t id, Job& job);

// MAP jobs spread over several workers (spread_job.cpp, core/spread.hpp).
// How many parts `job` over `net` is spread over: the job's "partitions";
// with 0 (auto) the workers connected to this database for a network of at
// least kSpreadMinClauses clauses (whole components only, and only where
// the parts share the work: spread_pays), else 1 (no spreading).
constexpr int64_t kSpreadMinClauses = 1000000;
int spread_parts(Conn& c, const Job& job, const Network& net);
// The MAP answer of a spread job, led by this worker: plans the parts (or
// resumes the plan a worker before it left), queues each round's parts in
// mln.job_parts, solves parts itself while it waits for the others, and
// keeps the best whole state over the rounds.  Runs in the solver thread
// with a connection of its own; job.map.cancel and job.map.progress apply.
solver::SolveResult solve_spread(const WorkerOptions& wo, const std::string& me, const Job& job, const Network& net);
// The marginal half of a spread job (task marginal or dual): every part,
// whole components only, sampled once (round 0 of mln.job_parts) by
// whichever worker claims it; their probabilities merged.
solver::MarginalResult solve_spread_marginal(const WorkerOptions& wo, const std::string& me, const Job& job,
                                             const Network& net);
// What a worker keeps of the spread job whose parts it last solved.
struct PartCache {
  int64_t job = 0;
  std::string net_oid;
  Network net;
  std::shared_ptr<const void> plan;  // the job's plan and part index (spread_job.cpp)
};
// Claims a part of a spread job that waits (queued, or its lease ran out),
// solves it under its lease and writes its state; false when none waits.
bool serve_part(Conn& c, const WorkerOptions& wo, const std::string& me, PartCache& cache, std::atomic<bool>& stop);

// {"a","b"}: a text[] literal.
std::string pg_array(const std::vector<std::string>& v);

// Whether table mln.<table> has column `column`: a worker serves databases
// whose extension is at an older version, and writes a newer column only
// where it exists.
bool catalog_has_column(Conn& c, const std::string& table, const std::string& column);

}  // namespace mln::worker
