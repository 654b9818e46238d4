// The part side of a MAP or marginal job spread over workers (issue #23),
// shared by the job's leader and the workers that serve its parts
// (spread_job.cpp): the plan and each part's state as the database keeps
// them (mln.job_plans, mln.job_parts), and claiming and solving a part.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/spread/spread.hpp"
#include "core/spread/spread_marginal.hpp"
#include "worker/job.hpp"
#include "worker/pq.hpp"

namespace mln::worker::spread {

// MLN_MAP_DEBUG=1: where a spread job's time goes, in the worker's log.
bool debug_timing();

struct PlanIndex {
  solver::SpreadPlan plan;
  solver::PartIndex idx;
};

// Frees the walks this worker keeps for `job`'s parts (0: whatever job's).
void drop_kept_walks(int64_t job);

// Rows of a query of (int4, bytea) columns, by binary COPY.
void each_int_bytea(Conn& c, const std::string& query, const std::function<void(int32_t, const char*, size_t)>& f);

// Whether mln.job_plans has its slices column (pg_mln 0.5.0; a database
// at 0.4.0 plans one slice a part: save_plan and load_plan take either).
bool plans_have_slices(Conn& c);

// The job's plan in mln.job_plans; load_plan is false when no leader made one yet.
void save_plan(Conn& c, int64_t job, const solver::SpreadPlan& plan);
bool load_plan(Conn& c, int64_t job, const Network& net, solver::SpreadPlan& plan);

// Writes the parts' states of `rows` (a query of part, state) into `truth`;
// true if an atom changed.  `read` (where given) marks the parts read.
bool apply_states(Conn& c, const std::string& rows, const PlanIndex& pi, std::vector<uint8_t>& truth,
                  std::vector<uint8_t>* read = nullptr);
// The whole state at the start of round r: every part's latest state of the
// rounds before (the starting state `seed` gives where it has none).
std::vector<uint8_t> state_before(Conn& c, int64_t job, int r, const Network& net, const PlanIndex& pi,
                                  uint64_t seed);

struct ClaimedPart {
  int64_t job = 0;
  int round = 0, part = 0;
  uint64_t seed = 0;
  int64_t max_flips = 0;
  double time_limit = 0;
};

// Claims a part of a running job (of job `only` when non-zero) for this
// worker: one the leader gave it first, then a waiting one or one whose
// lease ran out.
bool claim_next(Conn& c, const WorkerOptions& wo, const std::string& me, int64_t only, ClaimedPart& cp);

// Solves the claimed part (round 0: samples it; rounds 1 and up: MAP from
// the states the round starts from), renewing its lease, and writes its
// answer to its row.  False when the part was given up (the job ended,
// the lease was lost, `stop` or `*outer`).
bool run_part(Conn& c, const WorkerOptions& wo, const std::string& me, const Job& job, const Network& net,
              const PlanIndex& pi, const ClaimedPart& cp, std::atomic<bool>& stop, std::atomic<bool>* outer);

}  // namespace mln::worker::spread
