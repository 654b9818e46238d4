// Forward sampling of a ground CP-logic theory (docs/problog.md; Van Ranst
// and Vennekens, "An OpenCL implementation of a forward sampling algorithm
// for CP-logic"): each sample fires, stratum by stratum, every rule whose
// body holds, each rule once choosing one of its heads (or none), until no
// rule can fire; queries are counted in the samples that satisfy the
// evidence (rejection).  Backends: CPU threads and CUDA, one code path
// (forward_sampler_kernel.hpp) over blocks of 32 samples, one bit each.
// Block b's random stream depends only on the seed and b, so both backends
// draw the same samples for the same seed and sample count.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "options/options.hpp"

namespace mln::problog {

// A ground CP-theory as flat arrays.  Rules are in firing order: by stratum
// (stratum_begin[s] .. stratum_begin[s + 1]), and within one, where the
// program allows, each rule after the rules that define its body atoms.
struct CpProgram {
  int32_t num_atoms = 0;
  std::vector<int32_t> stratum_begin{0, 0};  // num_strata + 1 offsets into the rules (one empty stratum)
  std::vector<int64_t> pos_off{0}, neg_off{0}, head_off{0};  // per rule, num_rules + 1 offsets
  std::vector<int32_t> pos, neg;           // body atoms
  std::vector<int32_t> head;               // head atoms
  std::vector<double> head_cum;            // cumulative probabilities of the heads (above the
                                           // last: no head)
  std::vector<double> head_cond;           // each head's probability given that no earlier
                                           // head of its rule was chosen (what the sampler draws)
  std::vector<int32_t> queries;            // atoms counted
  std::vector<int32_t> evidence;           // atoms observed
  std::vector<uint8_t> evidence_value;     // 1 true, 0 false
  size_t num_rules() const { return pos_off.size() - 1; }
  int num_strata() const { return static_cast<int>(stratum_begin.size()) - 1; }
  // Appends a rule to the last stratum (call new_stratum() between strata).
  void add_rule(const std::vector<int32_t>& p, const std::vector<int32_t>& n, const std::vector<int32_t>& heads,
                const std::vector<double>& probs);
  void new_stratum() { stratum_begin.push_back(static_cast<int32_t>(num_rules())); }
  // Throws std::invalid_argument on an atom out of range or bad offsets.
  void validate() const;
};

struct SampleProgress {
  uint64_t drawn = 0, accepted = 0;
  double max_width = 0;  // the widest query interval so far (stopping rule's)
};

struct SampleOptions {
  std::string device = "cpu";     // cpu or gpu
  // Defaults: the options table's problog rows (options/options.hpp).
  static constexpr int64_t def(options::Id id) { return options::default_integer(id, options::kProblog); }
  // fixed count of accepted samples; 0: the stopping rule
  uint64_t samples = static_cast<uint64_t>(def(options::Id::kSamples));
  double delta = options::default_number(options::Id::kDelta, options::kProblog);  // the stopping rule's interval width
  uint64_t max_samples = static_cast<uint64_t>(def(options::Id::kMaxSamples));  // most drawn, accepted or not
  uint64_t seed = static_cast<uint64_t>(def(options::Id::kSeed));
  int threads = static_cast<int>(def(options::Id::kThreads));  // CPU threads; 0: all cores
  uint64_t batch = 0;             // samples per batch; 0: the backend's choice
  // After each batch; may throw to stop (a cancel).
  std::function<void(const SampleProgress&)> progress;
};

struct SampleResult {
  uint64_t drawn = 0, accepted = 0;
  std::vector<uint64_t> true_counts;  // per query, among accepted samples
  bool converged = false;             // the stopping rule held (or the fixed count was reached)
  double seconds = 0;                 // sampling alone
  std::string device;                 // the backend that ran
};

// The stopping rule (MCINTYRE's, ProbLog's): every query's 95% interval,
// 2 * 1.96 * sqrt(p(1-p)/n), at most delta wide, with n*p > 5 and
// n*(1-p) > 5 (checked at the Wilson interval's ends lo and hi, not at
// p), or n at least (1.96/delta)^2, where every p's interval is.
bool stopping_rule_holds(const std::vector<uint64_t>& true_counts, uint64_t n, double delta, double* max_width);

// The Wilson score interval at 95% of k successes in n.
void wilson_interval(uint64_t k, uint64_t n, double* lo, double* hi);

// Samples `prog`.  Throws std::invalid_argument for bad options or program,
// gpu::EngineError (from mln/relation.hpp) when the GPU is asked for and not
// usable or fails, or what progress throws.
SampleResult forward_sample(const CpProgram& prog, const SampleOptions& opts);

// Whether the CUDA sampler is built and a device is usable.
bool cuda_sampler_available();

}  // namespace mln::problog
