// The LP bound of a spread job's whole network, by PDHG (map/lp_pdhg.hpp),
// on a thread of its own beside the rounds.  A cut part's bound holds only
// with its neighbours held, so the parts' bounds alone count every cut part
// at 0; the whole network's LP bound has no such gap.  It is started only
// where every component is searched: the bound is then one of the cost the
// rounds report (spread_totals counts the searched components' clauses).
#pragma once

#include <memory>

#include "core/base/run_control.hpp"
#include "core/bound/lp_pdhg.hpp"
#include "core/map/solve_map.hpp"
#include "core/spread/spread.hpp"
#include "format/network.hpp"

namespace mln::solver {

class WholeBound {
 public:
  // Starts the solve (one CPU thread, its iterations or the cap o.lp_seconds, stopped by
  // o.cancel) where o.pdhg_bound holds, some part is cut and every
  // component is searched; otherwise does nothing.
  WholeBound(const mln::Network& net, const SpreadPlan& plan, const SolveOptions& o);
  // A solve still running is cancelled and joined when this is destroyed.
  WholeBound(const WholeBound&) = delete;
  WholeBound& operator=(const WholeBound&) = delete;

  // The job's bound: the larger of `parts_bound` and the LP's, at most
  // `cost`.  The solve is given until its bound is within gap_tolerance of
  // `cost`, or `wait_s` more seconds, then stopped: its best certified bound
  // so far counts.
  double finish(double parts_bound, double cost, double wait_s = 1.0);

 private:
  double gap_tolerance_ = 0;
  StopToken job_stop_;               // o.cancel (outlives lp_)
  std::unique_ptr<PdhgThread> lp_;   // null: not started
};

}  // namespace mln::solver
