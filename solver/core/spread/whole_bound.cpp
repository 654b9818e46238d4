// The LP bound of a spread job's whole network beside its rounds
// (whole_bound.hpp).
#include "core/spread/whole_bound.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

namespace mln::solver {

WholeBound::WholeBound(const mln::Network& net, const SpreadPlan& plan, const SolveOptions& o)
    : gap_tolerance_(o.gap_tolerance), job_stop_(o.cancel, 0.0) {
  const bool cut = std::any_of(plan.cut.begin(), plan.cut.end(), [](uint8_t x) { return x != 0; });
  if (!o.pdhg_bound || !cut || plan.solved_components != plan.components) return;
  PdhgOptions po;
  po.time_limit_s = o.lp_seconds;
  po.threads = 1;  // the parts' walks hold the other threads
  po.rel_gap = 1e-6;
  // The GPU when the job may use one and this worker has one (the CPU path
  // if it fails); device "gpu" was checked by the parts' solves.
  po.device = o.device == options::Device::kCpu ? options::Device::kCpu : options::Device::kAuto;
  lp_ = std::make_unique<PdhgThread>(net, po, &job_stop_);  // not started: the parts' bounds stand
}

double WholeBound::finish(double parts_bound, double cost, double wait_s) {
  double bound = parts_bound;
  if (lp_) {
    lp_->set_target(gap_target(cost, gap_tolerance_));
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
    while (lp_->started() && !lp_->done() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    lp_->cancel_and_join();
    bound = std::max(bound, lp_->bound());
  }
  return std::min(bound, cost);
}

}  // namespace mln::solver
