// Rule learning jobs (task 'rules', queued by mln.learn_rules_job): the
// program's evidence, read over libpq in one snapshot, becomes the task
// mln.learn_rules_from builds (rules/program_task.hpp: one builder for
// both), the options are read by the reader mln.learn_rules_job checked
// them with when the job was queued (rules/options.hpp), and the search
// runs on the engine the job's `device` names while this thread supervises
// it.  The rules are written to mln.learned_rules in the transaction that
// marks the job done; a failed or cancelled job writes none.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "options/option_entries.hpp"
#include "mln/relation.hpp"
#include "rules/evidence_snapshot.hpp"
#include "rules/options.hpp"
#include "rules/program_task.hpp"
#include "rules/rules.hpp"
#include "worker/job.hpp"
#include "worker/pq.hpp"
#include "worker/trusted.hpp"
#include "worker/supervise.hpp"
#include "worker/worker.hpp"

namespace mln::worker {
namespace {

// The running job's cancel flag, which the engines poll between batches
// (gpu::CancelCheck is a plain function): a worker runs one job at a time.
std::atomic<const std::atomic<bool>*> g_cancel{nullptr};
bool cancel_requested() {
  const std::atomic<bool>* c = g_cancel.load();
  return c && c->load();
}

// The engine `device` names (auto: the GPU when one is usable), created on
// first use and kept for the worker's later jobs (a CUDA context costs
// ~0.4 s); throws when 'gpu' is asked for and none is usable.
gpu::Engine& engine_for(const std::string& device, int threads) {
  static std::unique_ptr<gpu::Engine> cpu, cuda;
  static std::mutex mu;
  std::lock_guard<std::mutex> g(mu);
  gpu::EngineOptions o;
  o.cpu_threads = threads;
  o.cancel = &cancel_requested;
  if (device != "cpu") {
    const gpu::DeviceInfo d = gpu::query_device();
    if (d.cuda_compiled && d.device_count > 0) {
      if (!cuda) cuda = gpu::make_cuda_engine(o);
      return *cuda;
    }
    if (device == "gpu")
      throw std::runtime_error("device 'gpu' requested but no GPU is usable: " +
                               (d.error.empty() ? std::string("no CUDA device") : d.error));
  }
  if (!cpu) cpu = gpu::make_cpu_engine(o);
  return *cpu;
}

// The program's evidence over libpq, each table checked before it is read
// (worker/trusted.hpp), in the caller's transaction.
class PqEvidence : public rules::EvidenceSource {
 public:
  PqEvidence(Conn& c, std::string program, std::string schema)
      : c_(c), program_(std::move(program)), schema_(std::move(schema)) {}
  gpu::HostTable atoms(const rules::DeclaredPredicate& p, bool truth) override {
    check_trusted_tables(c_, program_, schema_, {p.name}, false);
    std::vector<std::string> cols;
    for (const std::string& col : p.columns) cols.push_back(c_.quote_ident(col));
    Result r = c_.exec(rules::atoms_sql(c_.quote_ident(schema_) + "." + c_.quote_ident(p.name), cols, truth));
    gpu::HostTable t;
    t.cols.assign(cols.size(), std::vector<int32_t>(static_cast<size_t>(r.rows())));
    for (int i = 0; i < r.rows(); ++i)
      for (size_t k = 0; k < cols.size(); ++k)
        t.cols[k][static_cast<size_t>(i)] = static_cast<int32_t>(std::strtol(r.get(i, static_cast<int>(k)).c_str(), nullptr, 10));
    return t;
  }
  std::vector<std::pair<int32_t, std::string>> symbols() override {
    check_trusted_tables(c_, program_, schema_, {"_symbols"}, false);
    Result r = c_.exec(rules::symbols_sql(c_.quote_ident(schema_) + "._symbols"));
    std::vector<std::pair<int32_t, std::string>> rows;
    for (int i = 0; i < r.rows(); ++i) rows.emplace_back(static_cast<int32_t>(r.num(i, 0)), r.get(i, 1));
    return rows;
  }

 private:
  Conn& c_;
  std::string program_, schema_;
};

// The job's target and options (read as mln.learn_rules_job checked them).
rules::LearnOptions job_options(Conn& c, const Job& job, std::string& target) {
  const std::string id = std::to_string(job.id);
  Result t = c.exec("SELECT options->>'target' FROM mln.jobs WHERE id = $1", {id});
  target = t.rows() ? t.get(0, 0) : "";
  return rules::read_options(
      OptionEntries(job_option_entries(c, job.id, "target"), "mln.learn_rules_job", kRulesOptions));
}

// The task, from one snapshot of the program's evidence: the one
// mln.learn_rules_job stored in mln.rules_input (read with the caller's
// privileges), or, for a job queued before 0.13.0, the evidence tables
// themselves, each checked before it is read (worker/trusted.hpp).
rules::Task read_task(Conn& c, const Job& job, const std::string& target, const rules::LearnOptions& opts) {
  c.exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  try {
    Result r = c.exec(rules::kPredicatesSql, {job.program});
    std::vector<rules::DeclaredPredicate> preds;
    for (int i = 0; i < r.rows(); ++i)
      preds.push_back(rules::declared_predicate(r.get(i, 0), r.get(i, 1), r.get(i, 2), r.get(i, 3)));
    std::string bytes;
    const bool stored = c.exec("SELECT to_regclass('mln.rules_input') IS NOT NULL").get(0, 0) == "t" &&
                        read_job_bytes(c, "mln.rules_input", job.id, bytes);
    std::unique_ptr<rules::EvidenceSource> src;
    if (stored) src = std::make_unique<rules::SnapshotEvidence>(bytes);
    else src = std::make_unique<PqEvidence>(c, job.program, job.schema);
    rules::Task task = rules::program_task(preds, job.program, target, *src, opts.negatives_per_positive,
                                           static_cast<uint64_t>(opts.seed));
    c.exec("COMMIT");
    return task;
  } catch (...) {
    try { c.exec("ROLLBACK"); } catch (...) {}
    throw;
  }
}

// Why the job may not run ("" when it may): its program, and whether its
// owner may act on the program (the worker reads every program's tables,
// so it does not take the queue's word for it).
std::string refusal(Conn& c, const Job& job) {
  const std::string missing = "program \"" + job.program + "\" does not exist";
  if (job.schema.empty()) return missing;
  Result g = c.exec("SELECT pg_has_role(j.owner, p.owner, 'MEMBER') FROM mln.programs p JOIN mln.jobs j "
                    "ON j.program = p.name WHERE p.name = $1 AND j.id = $2",
                    {job.program, std::to_string(job.id)});
  if (g.rows() == 0) return missing;
  if (g.get(0, 0) != "t") return "the job's owner may not act on program \"" + job.program + "\" (not a member of its owner)";
  return "";
}

struct RulesOutcome {
  std::vector<rules::LearnedRule> theory;
  rules::SearchStats stats;
  std::string device;
  double seconds = 0;
};

// The search, in the supervised thread: progress into `pr`, a cancel (or a
// shutdown) thrown from the callback between depths, and polled by the
// engine's operators through g_cancel.
void search(const WorkerOptions& wo, const Job& job, const rules::Task& task, const rules::LearnOptions& opts,
            Progress& pr, std::atomic<bool>& cancel, RulesOutcome& out) {
  rules::SearchOptions so = opts.search;
  so.progress = [&](int rule, int depth, int64_t candidates) {
    {
      std::lock_guard<std::mutex> g(pr.mu);
      pr.rule = rule + 1;
      pr.depth = depth;
      pr.candidates = candidates;
    }
    if (opts.verbose && wo.log)
      wo.log("job " + std::to_string(job.id) + ": rule " + std::to_string(rule + 1) + " depth " +
             std::to_string(depth) + ": " + std::to_string(candidates) + " candidates");
    if (cancel) throw std::runtime_error("cancelled");
  };
  const auto t0 = std::chrono::steady_clock::now();
  gpu::Engine& eng = engine_for(opts.device.empty() ? "auto" : opts.device, wo.threads);
  out.device = eng.backend() == gpu::Backend::CUDA ? "gpu" : "cpu";
  struct CancelScope {  // the engines poll this job's flag while it searches
    explicit CancelScope(std::atomic<bool>& c) { g_cancel = &c; }
    ~CancelScope() { g_cancel = nullptr; }
  } scope(cancel);
  try {
    out.theory = so.wpll ? rules::learn_mln_rules(eng, task, so, &out.stats) : rules::learn_rules(eng, task, so, &out.stats);
  } catch (const rules::TaskError& e) {
    throw std::runtime_error(std::string("mln.learn_rules_job: ") + e.what());
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The rules and the job's final row, in one transaction.
std::string finish(Conn& c, const Job& job, const std::string& me, const std::string& target,
                   const rules::Task& task, bool wpll, const RulesOutcome& out) {
  const std::string id = std::to_string(job.id);
  return finish_owned(c, job, me, "", [&] {
    c.exec("DELETE FROM mln.learned_rules WHERE job = $1", {id});  // an earlier attempt's
    for (size_t i = 0; i < out.theory.size(); ++i) {
      const rules::LearnedRule& r = out.theory[i];
      // As mln.learn_rules returns them: coverage has no weight; wpll no
      // new positives, and its unit clause (first) no gain.
      const bool unit = wpll && r.clause.body.empty();
      c.exec_n("INSERT INTO mln.learned_rules(job, program, target, rule_no, rule, formula, positives, negatives, "
               "new_positives, score, weight) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
               {id, job.program, target, std::to_string(i + 1), r.text, rules::render_formula(task, r.clause),
                std::to_string(r.on_all.pos), std::to_string(r.on_all.neg), std::to_string(r.new_pos),
                float8_text(r.score), float8_text(r.weight)},
               {false, false, false, false, false, false, false, false, wpll, unit, !wpll});
    }
    c.exec("UPDATE mln.jobs SET status = 'done', finished_at = clock_timestamp(), seconds = $2::float8, device = $3, "
           "iterations = $4::int, candidates = $5::bigint, lease_until = NULL WHERE id = $1",
           {id, float8_text(out.seconds), out.device, std::to_string(out.theory.size()),
            std::to_string(out.stats.candidates)});
  });
}

}  // namespace

void run_rules_job(Conn& c, const WorkerOptions& wo, const std::string& me, Job& job, std::atomic<bool>& stop) {
  auto log = [&](const std::string& s) {
    if (wo.log) wo.log("job " + std::to_string(job.id) + ": " + s);
  };
  if (const std::string why = refusal(c, job); !why.empty()) return fail(c, job, me, why);
  std::string target;
  rules::LearnOptions opts;
  rules::Task task;
  try {
    opts = job_options(c, job, target);
    // The lease, while the evidence is read (the supervisor renews it after).
    JobLease keep_lease(wo, job, me);
    task = read_task(c, job, target, opts);
  } catch (const OptionEntryError& e) {  // a row written around mln.learn_rules_job's check
    return fail(c, job, me, std::string("invalid options for this job: ") + e.what());
  } catch (const rules::TaskError& e) {  // no such target, or no example of it
    return fail(c, job, me, e.what());
  }
  log("rules for " + target + ": " + std::to_string(task.pos.rows()) + " positive and " +
      std::to_string(task.neg.rows()) + " negative examples, " + std::to_string(task.background.size()) +
      " background relations");
  for (const rules::Warning& w : rules::task_warnings(task)) log("warning: " + w.message);
  RulesOutcome out;
  std::string error;
  const bool keep = run_supervised(
      c, wo, me, job, stop,
      [&](Progress& pr, std::atomic<bool>& cancel) { search(wo, job, task, opts, pr, cancel, out); }, error);
  if (!keep) return log("cancelled");  // the job's row says so; nothing is written
  if (stop) return;                    // shutting down: the lease runs out and another worker re-runs it
  if (!error.empty()) {
    log("failed: " + error);
    return fail(c, job, me, error);
  }
  const std::string why = finish(c, job, me, target, task, opts.search.wpll, out);
  if (!why.empty()) return log("results not written: " + why);
  log("done: " + std::to_string(out.theory.size()) + " rules, " + std::to_string(out.stats.candidates) +
      " candidates, " + std::to_string(out.seconds) + " s on " + out.device);
}

}  // namespace mln::worker
