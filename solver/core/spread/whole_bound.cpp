// The LP bound of a spread job's whole network beside its rounds
// (whole_bound.hpp).
#include "core/spread/whole_bound.hpp"

#include <algorithm>
#include <chrono>
#include <system_error>

namespace mln::solver {

WholeBound::WholeBound(const mln::Network& net, const SpreadPlan& plan, const SolveOptions& o)
    : gap_tolerance_(o.gap_tolerance), job_stop_(o.cancel, 0.0), stop_(&job_stop_, &cancel_) {
  const bool cut = std::any_of(plan.cut.begin(), plan.cut.end(), [](uint8_t x) { return x != 0; });
  if (!o.pdhg_bound || !cut || plan.solved_components != plan.components) return;
  PdhgOptions po;
  po.time_limit_s = o.lp_seconds;
  po.stop = &stop_;
  po.threads = 1;  // the parts' walks hold the other threads
  po.rel_gap = 1e-6;
  po.bound_target = &target_;
  po.progress = [this](const PdhgProgress& pr) { best_ = pr.bound; };
  try {
    th_ = std::thread([this, &net, po] {
      try {
        const PdhgOutcome out = lp_bound_pdhg(net, po);
        best_ = out.bound;
      } catch (...) {  // out of memory: the parts' bounds stand
      }
      done_ = true;
    });
  } catch (const std::system_error&) {  // no thread: the parts' bounds stand
  }
}

WholeBound::~WholeBound() {
  cancel_ = true;
  if (th_.joinable()) th_.join();
}

double WholeBound::finish(double parts_bound, double cost, double wait_s) {
  if (th_.joinable()) {
    target_ = cost - gap_tolerance_ * std::max(cost, 0.0);
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
    while (!done_ && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    cancel_ = true;
    th_.join();
  }
  return std::min(std::max(parts_bound, best_.load()), cost);
}

}  // namespace mln::solver
