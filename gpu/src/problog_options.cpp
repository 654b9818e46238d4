// ProbLog's options and answers (mln/problog_options.hpp).
#include "mln/problog_options.hpp"

#include <stdexcept>

namespace mln::gpu {

const char* const kProblogOptionList =
    "device ('auto', 'cpu', 'gpu'), samples, delta, max_samples, seed, threads, max_rows and verbose";

ProblogOptions read_problog_options(const OptionEntries& opts) {
  ProblogOptions o;
  o.sample.seed = 42;
  const int64_t big = 1000000000000;  // 10^12 samples
  for (const OptionEntry& e : opts.entries()) {
    if (e.key == "device") {
      o.device = opts.choice(e, {"auto", "cpu", "gpu"});
    } else if (e.key == "samples") {
      o.sample.samples = static_cast<uint64_t>(opts.whole(e, 0, big, "a whole number >= 0 (0: the stopping rule)"));
    } else if (e.key == "max_samples") {
      o.sample.max_samples = static_cast<uint64_t>(opts.whole(e, 1, big));
    } else if (e.key == "seed") {
      o.sample.seed = static_cast<uint64_t>(opts.whole(e, 0, INT64_MAX));
    } else if (e.key == "threads") {
      o.sample.threads = static_cast<int>(opts.whole(e, 0, 4096, "a whole number in [0, 4096] (0: all cores)"));
      o.threads_given = true;
    } else if (e.key == "max_rows") {
      o.max_rows = static_cast<uint64_t>(opts.whole(e, 0, INT64_MAX, "a whole number >= 0 (0: no limit)"));
    } else if (e.key == "delta") {
      const std::string want = "a number in (0, 1): the width of the 95% interval the stopping rule reaches";
      o.sample.delta = opts.number(e, 0, want);
      if (!(o.sample.delta > 0 && o.sample.delta < 1))  // number() checks the lower bound only
        throw OptionEntryError("option \"delta\" of " + opts.function() + " must be " + want, "");
    } else if (e.key == "verbose") {
      o.verbose = opts.boolean(e);
    } else {
      throw opts.unknown(e);
    }
  }
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

}  // namespace mln::gpu
