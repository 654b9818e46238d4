// solve_map_touched (map_touched.hpp).
#include "core/map/map_touched.hpp"

#include <algorithm>

#include "core/base/touched.hpp"

namespace mln::solver {

TouchedResult solve_map_touched(const mln::Network& net, const PreviousAnswer& previous,
                                const std::vector<int32_t>& touched, const SolveOptions& opts) {
  TouchedResult r;
  TouchedNetwork t = touched_subnetwork(net, touched, previous.truth, opts.skip_components_without_query);
  r.touched_components = t.touched_components;
  r.touched_atoms = t.sub.num_atoms;
  r.touched_clauses = static_cast<int64_t>(t.sub.clauses.size());
  const bool searched = t.sub.num_atoms > 0;
  if (searched) r.searched = solve_map(t.sub, opts);
  const SolveResult& s = r.searched;
  SolveResult& w = r.whole;
  w.truth = carry_over(t, net.num_atoms, previous.truth, s.truth);
  w.cost = t.kept_cost + t.empty_cost + s.cost;
  w.hard_violated = t.kept_hard + t.empty_hard + s.hard_violated;
  w.components = static_cast<int>(t.components);
  w.solved_components = static_cast<int>(t.kept_components) + s.solved_components;
  w.proven_components = s.proven_components + (previous.have_bound && previous.optimal ? static_cast<int>(t.kept_components) : 0);
  if (previous.have_bound) {
    // The previous gap bounds the kept part's (map_touched.hpp); a cost
    // and bound equal up to rounding leave none.
    const double gap = previous.optimal ? 0.0 : std::max(0.0, previous.cost - previous.bound);
    // A cost is never negative (a violated clause costs |w|): 0 is a bound too.
    w.bound = std::clamp(t.kept_cost - gap + t.empty_cost + s.bound, 0.0, w.cost);
    w.optimal = previous.optimal && (!searched || s.optimal);
    if (w.optimal) w.bound = w.cost;
  }
  w.flips = s.flips;
  w.seconds = s.seconds;
  w.partitions = s.partitions;
  w.device_used = searched ? s.device_used : "cpu";
  w.solver_used = searched ? s.solver_used : "kept";
  w.ilp_seconds = s.ilp_seconds;
  w.gpu_memory_peak_bytes = s.gpu_memory_peak_bytes;
  w.warnings = s.warnings;
  w.cancelled = s.cancelled;
  w.time_capped = s.time_capped;
  w.walk_cut = s.walk_cut;
  w.first_answer_s = s.first_answer_s;
  w.bound_s = s.bound_s;
  w.stop_reason = !searched ? "nothing touched" : s.stop_reason + " (on the touched components)";
  return r;
}

}  // namespace mln::solver
