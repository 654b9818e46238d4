// The marginal side of a job spread over workers (issue #23): a part of
// whole components sampled by MC-SAT, or one slice of it, and the parts'
// and slices' answers merged into the job's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/marginal/solve_marginal.hpp"
#include "core/spread/spread.hpp"

namespace mln::solver {

// The slices of a marginal plan for `workers` workers: workers / parts,
// at least 1, at most `samples` (each slice counts one sample or more).
int marginal_slices(const SpreadPlan& plan, int workers, int64_t samples);

// Marginal inference over a part of whole components (a plan made with
// split false), or over one slice of it: MC-SAT on the part's components
// by solve_marginal, with the job's options and a seed of the part's own
// (of the slice's own, the slice's share of the samples: samples / slices,
// one more for the first samples mod slices, and the burn-in of one of as
// many chains, mcsat_chain_burn_in, where slices > 1).
struct PartMarginal {
  std::vector<double> prob;  // P(true) of the part's atoms, in members[p] order
  int64_t samples = 0;       // per component (the smallest over the part's components)
  double average_cost = 0;   // summed over the part's components
  int64_t flips = 0;
  int solved_components = 0, exact_components = 0;
  std::string device;
  double seconds = 0;
  int64_t clauses = 0;  // the part's clauses
  bool cancelled = false;
  std::vector<std::string> warnings;
};
MarginalOptions part_marginal_options(const MarginalOptions& job, int p, double seconds_left, int slice = 0,
                                      int slices = 1);
PartMarginal sample_part(const mln::Network& net, const SpreadPlan& plan, const PartIndex& idx, int p,
                         const MarginalOptions& o);

// The parts' answers as the job's (`parts` by unit: part * slices + slice):
// a part's slices merged, probabilities and average cost weighted by the
// samples each counted (NaN where no slice has the atom's component) and
// samples summed; then over the parts, probabilities by atom id (NaN for
// atoms not searched), samples the smallest, costs and flips summed (the
// empty clauses' constant cost added once, as solve_marginal adds it).
MarginalResult merge_marginals(const mln::Network& net, const SpreadPlan& plan, const PartIndex& idx,
                               const std::vector<PartMarginal>& parts);

// A marginal job spread over `workers` parts (and `slices` slices of each,
// 0: marginal_slices), in this process (the tests' reference for the
// workers' answer).
MarginalResult solve_spread_marginal_local(const mln::Network& net, const MarginalOptions& o, int workers,
                                           int slices = 1);

}  // namespace mln::solver
