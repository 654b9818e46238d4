// ProbLog's options and answers (core/problog/problog_options.hpp).
#include "core/problog/problog_options.hpp"

#include <stdexcept>

namespace mln::problog {

ProblogOptions read_problog_options(const OptionEntries& opts) {
  opts.reject_unknown();
  ProblogOptions o;
  o.device = opts.choice(options::Id::kDevice);
  o.sample.samples = static_cast<uint64_t>(opts.whole(options::Id::kSamples));
  o.sample.max_samples = static_cast<uint64_t>(opts.whole(options::Id::kMaxSamples));
  o.sample.seed = static_cast<uint64_t>(opts.whole(options::Id::kSeed));
  o.sample.threads = static_cast<int>(opts.whole(options::Id::kThreads));
  o.threads_given = opts.given(options::Id::kThreads);
  o.max_rows = static_cast<uint64_t>(opts.whole(options::Id::kMaxRows));
  o.sample.delta = opts.number(options::Id::kDelta);
  o.verbose = opts.boolean(options::Id::kVerbose);
  return o;
}

std::string sampler_device(const std::string& requested) {
  if (requested == "cpu") return "cpu";
  if (cuda_sampler_available()) return "gpu";
  if (requested == "gpu") throw std::runtime_error("device 'gpu' requested but no GPU is usable");
  return "cpu";
}

QueryAnswer query_answer(const SampleResult& r, int index) {
  QueryAnswer a;
  a.samples = static_cast<int64_t>(r.accepted);
  if (index >= 0 && r.accepted > 0) {
    const uint64_t k = r.true_counts[static_cast<size_t>(index)];
    a.p = static_cast<double>(k) / static_cast<double>(r.accepted);
    wilson_interval(k, r.accepted, &a.lo, &a.hi);
  }
  return a;
}

const char* const kNoAcceptedSampleHint = "the evidence is very unlikely or impossible: check it, or raise max_samples";
const char* const kNotConvergedHint = "the intervals are wider than delta; raise max_samples";

std::string no_accepted_sample_message(const std::string& fn, uint64_t drawn) {
  return fn + ": no sample satisfied the evidence (" + std::to_string(drawn) + " drawn)";
}

std::string not_converged_message(const std::string& fn, uint64_t max_samples) {
  return fn + ": the stopping rule did not hold after max_samples = " + std::to_string(max_samples) + " samples";
}

}  // namespace mln::problog
