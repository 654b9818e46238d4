// A job's options jsonb, decoded once through the options table
// (options/options.hpp) into the solvers' typed options.  The table also
// checked them when the job was queued; a row written around those checks
// (an older extension) fails here with the same message.  The options of
// rule learning and ProbLog jobs are entries for their own readers
// (job_option_entries).
#include <string>

#include "options/options.hpp"
#include "options/threads.hpp"
#include "worker/job.hpp"
#include "worker/pq.hpp"
#include "worker/worker.hpp"

namespace mln::worker {

namespace {

using options::Id;

void apply_learn(const options::Values& v, const WorkerOptions& wo, solver::LearnOptions& o) {
  if (v.has(Id::kMethod)) o.method = v.choice<options::LearnMethod>(Id::kMethod);
  if (v.has(Id::kIterations)) o.iterations = static_cast<int>(v.integer(Id::kIterations));
  if (v.has(Id::kSamples)) o.samples = static_cast<int>(v.integer(Id::kSamples));
  if (v.has(Id::kPriorStddev)) o.prior_stddev = v.number(Id::kPriorStddev);
  if (v.has(Id::kInit)) o.init = v.choice<options::LearnInit>(Id::kInit);
  if (v.has(Id::kSeed)) o.seed = static_cast<uint64_t>(v.integer(Id::kSeed));
  if (v.has(Id::kTimeout)) o.timeout_s = v.number(Id::kTimeout);
  // 0 (or none) is the worker's --threads.
  o.threads = capped_threads(v.has(Id::kThreads) && v.integer(Id::kThreads) > 0 ? static_cast<int>(v.integer(Id::kThreads))
                                                                                 : wo.threads);
  if (v.has(Id::kExactMaxAtoms)) o.exact_max_atoms = static_cast<int>(v.integer(Id::kExactMaxAtoms));
  if (v.has(Id::kLearningRate)) o.learning_rate = v.number(Id::kLearningRate);
  if (v.has(Id::kDevice)) o.device = v.choice<options::Device>(Id::kDevice);
}

// MAP's options, then the marginal's (a dual job uses both; the options
// common to them are read into both).
void apply_infer(const options::Values& v, const WorkerOptions& wo, Job& job) {
  auto i64 = [&](Id id) { return v.integer(id); };
  auto& o = job.map;
  if (v.has(Id::kMaxFlips)) o.max_flips = i64(Id::kMaxFlips);
  if (v.has(Id::kMaxTries)) o.max_tries = static_cast<int>(i64(Id::kMaxTries));
  if (v.has(Id::kTimeout)) o.timeout_s = v.number(Id::kTimeout);
  if (v.has(Id::kSeed)) o.seed = static_cast<uint64_t>(i64(Id::kSeed));
  o.threads = capped_threads(v.has(Id::kThreads) ? static_cast<int>(i64(Id::kThreads)) : wo.threads);
  if (v.has(Id::kDontBreak)) o.dont_break = v.boolean(Id::kDontBreak);
  if (v.has(Id::kDevice)) o.device = v.choice<options::Device>(Id::kDevice);
  if (v.has(Id::kRandomStep)) o.random_step = v.number(Id::kRandomStep);
  o.adaptive_noise = !v.has(Id::kRandomStep);  // -randomStep not pinned: lower the noise per try
  if (v.has(Id::kSkipComponentsWithoutQuery)) o.skip_components_without_query = v.boolean(Id::kSkipComponentsWithoutQuery);
  if (v.has(Id::kExactMaxAtoms)) o.exact_max_atoms = static_cast<int>(i64(Id::kExactMaxAtoms));
  if (v.has(Id::kSolver)) o.solver = v.choice<options::MapSolver>(Id::kSolver);
  if (v.has(Id::kIlpSeconds)) o.ilp_seconds = v.number(Id::kIlpSeconds);
  if (v.has(Id::kCpuWalk)) o.cpu_walk = v.choice<options::CpuWalk>(Id::kCpuWalk);
  if (v.has(Id::kPartitions)) job.partitions = static_cast<int>(i64(Id::kPartitions));
  if (v.has(Id::kRounds)) job.rounds = static_cast<int>(i64(Id::kRounds));
  if (v.has(Id::kGapTolerance)) o.gap_tolerance = v.number(Id::kGapTolerance);
  o.weighted.threads = o.threads;
  auto& m = job.marginal;
  if (v.has(Id::kSamples)) m.samples = static_cast<int>(i64(Id::kSamples));
  if (v.has(Id::kBurnIn)) m.burn_in = static_cast<int>(i64(Id::kBurnIn));
  if (v.has(Id::kMcsatParam)) m.mcsat_param = v.number(Id::kMcsatParam);
  if (v.has(Id::kSaTemperature)) m.sa_temperature = v.number(Id::kSaTemperature);
  if (v.has(Id::kRandomStep)) m.random_step = o.random_step;
  if (v.has(Id::kMaxFlips)) m.max_flips = o.max_flips;
  m.seed = o.seed;
  m.threads = o.threads;
  m.timeout_s = o.timeout_s;
  m.device = o.device;
  m.skip_components_without_query = o.skip_components_without_query;
  if (v.has(Id::kExactMaxAtoms)) m.exact_max_atoms = o.exact_max_atoms;
}

}  // namespace

void read_job_options(const std::string& json, const WorkerOptions& wo, Job& job) {
  const unsigned bits = options::task_bits(job.task);
  if (bits == 0) return;  // run_job fails the job for its task
  try {
    const options::Values v = options::decode(bits, json.empty() ? "{}" : json);
    if (bits == options::kLearn) apply_learn(v, wo, job.learn);
    else apply_infer(v, wo, job);
  } catch (const options::OptionError& e) {
    job.bad_options = std::string("invalid options for this job: ") + e.what() + " (" + e.hint + ")";
  }
}

std::vector<OptionEntry> job_option_entries(Conn& c, int64_t id, const std::string& minus) {
  Result r = c.exec("SELECT e.key, jsonb_typeof(e.value), e.value #>> '{}' FROM mln.jobs j, "
                    "jsonb_each(j.options - $2::text) e WHERE j.id = $1",
                    {std::to_string(id), minus});
  std::vector<OptionEntry> entries;
  for (int i = 0; i < r.rows(); ++i) entries.push_back({r.get(i, 0), r.get(i, 1), r.get(i, 2)});
  return entries;
}

}  // namespace mln::worker
