// One MAP job spread over several workers (issue #23): the network's
// searched components are cut into parts, units of work that any worker may
// solve, and the parts that share clauses are solved again in rounds, each
// with its neighbours' atoms held at their values of the round before
// (a Jacobi sweep: every part of a round sees the same boundary, so the
// parts of a round run at once on different workers, and the answer is a
// function of the network, the options and the seed, not of which worker
// ran which part).
//
// No database here: solver/worker/spread_job.cpp keeps the plan, the parts
// and their states in mln.job_plans and mln.job_parts.  docs/solver/spread.md,
// "One job on several workers".
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/map/solve_map.hpp"
#include "core/base/subnetwork.hpp"
#include "core/walk/walksat_cpu.hpp"
#include "format/network.hpp"

namespace mln::solver {

// Components of more atoms than this are split by the streaming
// partitioner (partition.hpp), not METIS, whose time on larger components
// is most of a job's (docs/solver/spread.md, "The plan").
constexpr int64_t kSpreadMetisMaxAtoms = 250000;
// ... and components of more atoms than this into contiguous ranges of atom
// ids (the grounding's order), which a pass over the clauses counts: on RC
// the streaming partitioner cuts about as many clauses as the ranges (the
// citations are drawn uniformly, so no partition cuts much less) and takes
// half the plan (docs/solver/spread.md, "Cutting, sweeps and the default").
constexpr int64_t kSpreadStreamMaxAtoms = 500000;

struct SpreadPlan {
  int parts = 0;
  std::vector<int32_t> part_of;  // by atom id (size num_atoms + 1, [0] = -1): its part, -1 when not searched
  std::vector<uint8_t> cut;      // by part: it shares a clause with another part (solved again each round)
  int components = 0;            // components of the whole network
  int solved_components = 0;     // those searched (query atoms, or skipping off)
  int64_t cut_clauses = 0;       // clauses over atoms of two parts or more (not kept with a stored plan)
  // Marginal jobs: each part is sampled in this many slices, by as many
  // workers, each slice counting its share of the samples with chains of its
  // own (unit u = part * slices + slice in mln.job_parts' round 0).  A job
  // of one giant component so samples on several GPUs.  MAP rounds ignore it.
  int slices = 1;
};


// The parts of `net` for `workers` workers.  Every searched component
// (skip_components_without_query as solve_map) goes to exactly one part,
// except one whose clauses and atoms exceed a worker's share: METIS splits
// it into about (its size / the share) parts of its own, which are cut
// (the streaming partitioner above kSpreadMetisMaxAtoms atoms, ranges of
// atom ids above kSpreadStreamMaxAtoms).  The
// other components are packed largest first into at most `workers` parts
// of about one share each.  Deterministic in (net, workers, o.seed).
// With split false no component is cut (a marginal or dual job: MC-SAT
// samples a component whole), and a part holds whole components only.
SpreadPlan plan_spread(const mln::Network& net, int workers, const SolveOptions& o,
                       int64_t metis_max_atoms = kSpreadMetisMaxAtoms, bool split = true);

// A plan's part_of as mln.job_plans keeps it: a little-endian int4 per atom
// id, or, where that is shorter, "RUN1" and then little-endian int4 pairs
// (part, how many atoms in a row).  A plan of id ranges is then a few runs,
// not an int4 per atom that the leader stores and each helper loads before
// its first round (docs/solver/spread.md).
std::string pack_part_of(const std::vector<int32_t>& part_of);
// The array again; throws std::invalid_argument for bytes that are neither
// form (a partial array, a run past the end).
std::vector<int32_t> unpack_part_of(const char* bytes, size_t n);

// A part's state as mln.job_parts keeps it: a bit per atom of the part, in
// members order, least significant bit first: an eighth of the size of a
// byte per atom, which TOAST would compress on every write and each reader
// fetch and expand (docs/solver/spread.md).
std::string pack_state(const std::vector<uint8_t>& state);
// Writes n packed bytes as the state of `members` into `truth` (by atom id);
// true if an atom changed.  Throws std::invalid_argument where n is not
// the packed size of members.size() atoms.
bool unpack_state(const char* bytes, size_t n, const std::vector<int32_t>& members, std::vector<uint8_t>& truth);

// Each part's atoms (ascending ids), from one pass over the plan.  A part's
// clauses are found where it is solved, by the worker that solves it
// (part_extract.hpp), and kept here for its next rounds: clauses(net, plan,
// p) finds them on first use (copies of an index share what they found).
struct PartIndex {
  std::vector<std::vector<int32_t>> members;
  const std::vector<int64_t>& clauses(const mln::Network& net, const SpreadPlan& plan, int p) const;

  struct Found {
    std::mutex mu;
    std::map<int, std::vector<int64_t>> by_part;  // never erased: references stay valid
  };
  std::shared_ptr<Found> found = std::make_shared<Found>();
};
PartIndex index_parts(const mln::Network& net, const SpreadPlan& plan);

// Whether spreading over `plan` can pay without being asked for: no part
// holds more than two thirds of the searched work (atoms and clauses, each
// part's clauses counted by part_clause_counts: one pass over the network).
// Otherwise one worker would do most of it anyway, after a plan and an
// extraction the unspread job does not need.
bool spread_pays(const mln::Network& net, const SpreadPlan& plan, const PartIndex& idx);

// The starting state of a spread job: a coin flip per atom from the seed
// (by atom id), or every atom false where that costs less (StartCosts'
// rule, network_cost.hpp), or the network's own start where it has one;
// atoms the plan does not search are false, as solve_map leaves them.
std::vector<uint8_t> spread_initial_truth(const mln::Network& net, const SpreadPlan& plan, uint64_t seed);

struct PartOutcome {
  std::vector<uint8_t> state;  // the part's best state, in members[p] order
  double cost = 0;             // the part's cost with its neighbours held (boundary clauses included)
  double bound = 0;            // a lower bound on the part's optimum: valid for the job only if the part is not cut
  bool proven = false;         // not cut, and the answer is proven optimal
  int64_t flips = 0;
  std::string device;          // the device(s) that produced it (solve_map's device_used)
  double seconds = 0;
  int64_t clauses = 0;         // the part's clauses as solved (those it shares included)
  bool cancelled = false;
  std::vector<std::string> warnings;
};

// Solves part p of the plan by solve_map (components, GPU or CPU, the exact
// path) from `truth` (the whole network's state by atom id: the part's own
// atoms start there, the other parts' atoms are held there).  `o` carries
// the part's seed, flips and time limit; skip_components_without_query is
// not applied again (the plan did).
//
// With hold_boundary false the clauses the part shares with other parts are
// left out (round 1 of several: the other parts' atoms are still at their
// coin flips, and holding them there makes the parts of a network like RC,
// a third of whose clauses cross the cut, satisfy random boundaries;
// docs/solver/spread.md).  The rounds after it hold the boundary at the
// parts' own answers.
PartOutcome solve_part(const mln::Network& net, const SpreadPlan& plan, const PartIndex& idx, int p,
                       const std::vector<uint8_t>& truth, SolveOptions o, bool hold_boundary = true);

// Whether round r of `rounds` holds the parts' boundaries (every round
// but the first of several).
inline bool holds_boundary(int r, int rounds) { return r > 1 || rounds <= 1; }

// Whether part p goes on with a kept walk in every round (part_walk.hpp's
// PartWalker, made at the part's first round) rather than solve_part: a cut
// part of a job of several rounds, when part_walk_applies(o) (the weighted
// walk).  From round 1 on: its neighbours are held at their starting state
// there, and short rounds move them soon.  (Round 1 over each part's own
// clauses alone, as solve_part does it, leaves RC's parts each fixing its
// own categories, and then both sides of a shared citation flipping to the
// other's, round after round, far above one walk's cost;
// docs/solver/spread.md, "Kept walks".)
bool walk_kept(const SpreadPlan& plan, int p, int rounds, const SolveOptions& o);

// Rounds of a spread MAP job that did not set them (job option "rounds"):
// kept walks take many short rounds (30 reached one walk's cost sooner than
// 16; docs/solver/spread.md), solve_part three (each round extracts its
// parts again).
constexpr int kKeptRounds = 30;
constexpr int kSolvedRounds = 3;
int default_rounds(const SolveOptions& o);

// When a spread job's rounds end.  Where parts are solved afresh each
// round (solve_part), after the first round that changes no atom.  Where
// walks are kept, after the round that follows it: in that round every
// part searches with the walk's full time floor (PartWalker::step: nothing
// moved in it or around it), and what it finds is kept.  Ending at the
// round that changed nothing stopped short of one GPU's cost, and waiting
// for a second such round cost two more rounds that found nothing
// (docs/solver/spread.md, "Kept walks").
class RoundStop {
 public:
  RoundStop(const SpreadPlan& plan, int rounds, const SolveOptions& o);
  // Round r ended having changed some atom or not: true if the job ends.
  bool ends_after(int r, bool changed);

 private:
  int after_ = 1;
  int settled_ = 0;
};

// The parts solved in round r (1-based): every part in round 1, the cut
// parts after it (a part that shares no clause keeps its round-1 answer).
std::vector<int> round_parts(const SpreadPlan& plan, int r);

// Part p's options in round r of `rounds`, from the job's: its own seed
// (of the job's seed, r and p, so that whichever worker runs it gets the
// same answer); its share of the job's max_flips by atoms (a cut part's
// share split over the rounds; 0 stays 0: solve_map's 100 flips per atom);
// and `seconds_left` (0: none) split evenly over this round and the ones
// after it.
SolveOptions part_options(const SolveOptions& job, const SpreadPlan& plan, const PartIndex& idx, int p, int r,
                          int rounds, double seconds_left);

// The whole spread job in this process, part after part, as the workers
// run it (tests, and the reference the workers' answer must equal).
// Rounds stop early when a round changes no atom.
struct SpreadResult {
  SolveResult map;         // truth, cost, hard_violated, flips, bound (0 for cut parts), partitions = parts
  int rounds_run = 0;
};
SpreadResult solve_spread_local(const mln::Network& net, const SolveOptions& o, int workers, int rounds);

// Part p as a network of its own over `clauses` (its atoms' local ids in
// members[p] order), other atoms held at `fixed`; its start from `start`
// (by atom id) where given.  (solve_part here, sample_part in
// spread_marginal.cpp.)
SubNetwork part_network(const mln::Network& net, const PartIndex& idx, int p, const int64_t* clauses, size_t count,
                        const std::vector<uint8_t>* fixed, const std::vector<uint8_t>* start);

// What every part's outcome reports of its solver's result.
template <class Out, class Result>
void report_run(Out& out, const Result& r, std::chrono::steady_clock::time_point t0) {
  out.flips = r.flips;
  out.device = r.device_used;
  out.cancelled = r.cancelled;
  out.warnings = r.warnings;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The searched components' cost under `truth` (solve_map's figure: the
// clauses of the planned atoms and the empty clauses) and their violated
// hard clauses.
struct SpreadTotals {
  double cost = 0;
  int64_t hard_violated = 0;
  SpreadTotals& operator+=(const SpreadTotals& o) {
    cost += o.cost;
    hard_violated += o.hard_violated;
    return *this;
  }
};
SpreadTotals spread_totals(const mln::Network& net, const SpreadPlan& plan, const std::vector<uint8_t>& truth);

}  // namespace mln::solver
