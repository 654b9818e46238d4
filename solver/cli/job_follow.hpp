// The command line's side of a job (job_follow.cpp): following it to its
// end, serving it in this process when no worker claims it, and reporting
// what it found in Tuffy's console lines.
#pragma once

#include <atomic>
#include <string>

#include "cli/options.hpp"
#include "worker/pq.hpp"

namespace mln::cli {

// A job's state, from mln.wait's json.
struct JobState {
  std::string status, best, hard, flips, err, gpu_mem, samples, samples_total, avg_cost, iterations, objective, device,
      bound, gap, optimal, solver, stop_reason, first_answer_s, bound_s;
  double progress = 0;
  bool lease_expired = false;  // running, but its worker has not renewed its lease
  bool finished() const { return status == "done" || status == "failed" || status == "cancelled"; }
};

// Sees the job served and waits for its end, showing its progress; returns
// its last state.  A worker connected to the database (mln_worker) may serve
// it; if none claims it within a second, or its worker stops renewing the
// lease, a worker in this process does (at once when `embedded`: a private
// server has no other worker).  Throws on `interrupted` and when the job
// did not end done.
JobState follow_job(worker::Conn& c, const Options& o, const std::string& task, long long job, const std::string& dsn,
                    bool embedded, const std::atomic<bool>& interrupted);

// Prints what the job found: the cost and its bound, how the search ended,
// the learning summary, the job's warnings, the average cost of the samples.
void report_job(worker::Conn& c, const Options& o, const std::string& task, long long job, const JobState& s);

// Prints a line to stdout (Tuffy's console), or to stderr after
// say_on_stderr(true): -problog without -o writes its answer to stdout.
void say(const std::string& s);
void say_on_stderr(bool on);

}  // namespace mln::cli
