// What a ProbLog run reads and answers on both sides of the job queue
// (docs/problog.md): mln.problog in the backend, and a ProbLog job
// (mln.problog_job, checked when queued, then sampled by the worker) read
// their options with one reader, so that they accept and refuse the same
// options with the same messages, and turn the sampler's counts into the
// same answer rows.
#pragma once

#include <cstdint>
#include <string>

#include "core/problog/forward_sampler.hpp"
#include "options/option_entries.hpp"

namespace mln::problog {

struct ProblogOptions {
  std::string device;          // '' (the caller's default: the mln.device setting), auto, cpu or gpu
  SampleOptions sample;        // device is set where the sampler runs
  bool threads_given = false;  // "threads" was set (else a worker uses its --threads)
  uint64_t max_rows = 0;       // the grounding's Datalog program (mln.datalog's max_rows)
  bool verbose = false;        // progress as NOTICE (backend) or log lines (worker)
  // The samples a run draws at most: the fixed count, or max_samples.
  uint64_t samples_total() const { return sample.samples ? sample.samples : sample.max_samples; }
};

// Reads every entry of `opts` (OptionEntries names the function in its
// messages; built with kProblogOptions); throws OptionEntryError on an
// unknown option or a bad value.  Defaults are the table's (options/option_entries.hpp).
ProblogOptions read_problog_options(const OptionEntries& opts);

// Where the sampler runs for a requested device: cpu, or gpu where the CUDA
// sampler is usable ('auto', 'gpu'); throws std::runtime_error when 'gpu'
// is asked for and none is usable.
std::string sampler_device(const std::string& requested);

// One query's answer row: the share of the accepted samples in which its
// atom is true, the 95% Wilson interval, the samples it rests on.  `index`
// is the query's place in CpProgram::queries (-1: it cannot be true: 0).
struct QueryAnswer {
  double p = 0, lo = 0, hi = 0;
  int64_t samples = 0;
};
QueryAnswer query_answer(const SampleResult& r, int index);

// The messages a run's outcome gives, named for function `fn`: no sample
// satisfied the evidence (an error), and the stopping rule not reached
// within max_samples (a warning), with its hint.
std::string no_accepted_sample_message(const std::string& fn, uint64_t drawn);
std::string not_converged_message(const std::string& fn, uint64_t max_samples);
extern const char* const kNoAcceptedSampleHint;
extern const char* const kNotConvergedHint;

}  // namespace mln::problog
