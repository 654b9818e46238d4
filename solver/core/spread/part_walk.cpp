// A cut part walked in rounds with its walk kept (part_walk.hpp).
#include "core/spread/part_walk.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "core/spread/part_extract.hpp"
#include "core/base/run_control.hpp"
#include "core/walk/walksat_gpu.hpp"

namespace mln::solver {

namespace {
using Clock = std::chrono::steady_clock;

bool gpu_allowed(const SolveOptions& o) { return o.device != options::Device::kCpu; }

// The kept walk's settings: a round that stops finding better states ends
// after a quarter of the walk's stall floor (WeightedOptions::stall_work),
// since the next round goes on from there with its neighbours moved.
constexpr double kKeptStallShare = 0.25;
WeightedOptions kept_options(const SolveOptions& o) {
  static const double share = [] {
    const char* e = std::getenv("MLN_KEPT_STALL_SHARE");  // tuning runs (bench/spread_run.sh)
    return e ? std::atof(e) : kKeptStallShare;
  }();
  WeightedOptions wo = o.weighted;
  wo.stall_work *= share;
  wo.stall_cap_work *= share;
  return wo;
}
}  // namespace

bool part_walk_applies(const SolveOptions& o) {
  if (o.solver == options::MapSolver::kIlp) return false;  // the exact path answers each part
  if (o.cpu_walk == options::CpuWalk::kWeighted) return true;
  return gpu_allowed(o) && gpu_walksat_available(nullptr);
}

PartWalker::PartWalker(const mln::Network& net, const SpreadPlan& plan, const PartIndex& idx, int p,
                       const std::vector<uint8_t>& truth, const SolveOptions& o)
    : part_(p) {
  if (p < 0 || p >= plan.parts) throw std::invalid_argument("PartWalker: no part " + std::to_string(p));
  const auto t0 = Clock::now();
  members_ = idx.members[p];
  free_ = static_cast<int32_t>(members_.size());
  // The held atoms: the other parts' atoms of the part's clauses, ascending
  // (local ids free_ + 1, ...).
  HeldPart hp = extract_held_part(net, plan.part_of, p, members_);
  held_ = std::move(hp.held);
  sub_ = std::move(hp.sub);
  std::vector<uint8_t> init(static_cast<size_t>(sub_.net.num_atoms));
  for (int32_t i = 0; i < sub_.net.num_atoms; ++i) init[i] = truth[sub_.global[i + 1]];
  auto phase = [&, t = t0](const char* what) mutable {
    const auto now = Clock::now();
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s %.2f s", build_detail_.empty() ? "" : ", ", what,
                  std::chrono::duration<double>(now - t).count());
    build_detail_ += buf;
    t = now;
  };
  phase("extracted");
  const bool want_gpu = gpu_allowed(o) && (o.device == options::Device::kGpu || free_ >= o.gpu_min_atoms);
  if (want_gpu) {
    try {
      inst_ = walk_instance_header(sub_.net);
      session_ = weighted_session_gpu(inst_, init, free_, kept_options(o));
      gpu_ = true;
    } catch (const GpuError& e) {
      warnings_.push_back(std::string("GPU walk of part ") + std::to_string(p) + " failed, walked on the CPU: " +
                          e.what());
      session_.reset();
    }
  }
  if (!session_) start_cpu(init, o);
  short_stall_ = 1.0;  // the kept walk's own (kept_options)
  long_stall_ = 1.0 / kKeptStallShare;  // the whole walk's
  phase("laid out");
  build_s_ = std::chrono::duration<double>(Clock::now() - t0).count();
}

PartWalker::~PartWalker() = default;

void PartWalker::start_cpu(const std::vector<uint8_t>& init, const SolveOptions& o) {
  gpu_ = false;
  if (inst_.header_only() || inst_.cl_off.empty()) inst_ = build_walk_instance(sub_.net);
  WeightedOptions wo = kept_options(o);
  wo.threads = inst_.n < 10000 ? 1 : o.threads;  // as solve_map's CPU driver
  session_ = weighted_session_cpu(inst_, init, free_, wo);
}

std::vector<uint8_t> PartWalker::held_values(const std::vector<uint8_t>& truth) const {
  std::vector<uint8_t> v(held_.size());
  for (size_t i = 0; i < held_.size(); ++i) v[i] = truth[held_[i]];
  return v;
}

PartOutcome PartWalker::step(const std::vector<uint8_t>& truth, const SolveOptions& o) {
  const auto t0 = Clock::now();
  PartOutcome out;
  out.warnings.swap(warnings_);
  StopToken stop(o.cancel, o.timeout_s);
  WalkParams wp;
  wp.flips_per_try = o.max_flips > 0 ? o.max_flips : 100 * static_cast<int64_t>(std::max<int32_t>(1, free_));
  wp.max_tries = o.max_tries;
  wp.seed = o.seed;
  wp.stop = &stop;
  int64_t flips = 0;
  const double scale = inst_.scale;
  wp.on_progress = [&](double best, int64_t f) {
    flips += f;
    if (o.progress) o.progress(best, flips);
  };
  WalkOutcome w;
  std::vector<uint8_t> hv = held_values(truth);
  // Nothing moved since the round before, in the part or around it: this
  // round searches longer before it gives up (it may be the job's last).
  const double stall = found_nothing_ && hv == last_held_ ? long_stall_ : short_stall_;
  try {
    session_->set_stall_share(stall);
    session_->hold(hv);
    w = session_->walk(wp);
  } catch (const GpuError& e) {
    if (!gpu_) throw;
    out.warnings.push_back(std::string("GPU walk of part ") + std::to_string(part_) +
                           " failed, walked on the CPU from its last state: " + e.what());
    std::vector<uint8_t> init(static_cast<size_t>(free_) + held_.size());
    for (int32_t i = 0; i < free_; ++i) init[i] = truth[members_[i]];
    std::copy(hv.begin(), hv.end(), init.begin() + free_);
    session_.reset();
    start_cpu(init, o);
    session_->set_stall_share(stall);
    flips = 0;
    w = session_->walk(wp);
  }
  out.state.assign(w.best.begin(), w.best.begin() + free_);
  found_nothing_ = out.state == last_;
  last_ = out.state;
  last_held_ = std::move(hv);
  out.cost = static_cast<double>(w.best_cost_fixed) / scale;
  out.flips = w.flips;
  out.clauses = inst_.m;
  out.device = gpu_ ? "gpu" : "cpu";
  out.cancelled = o.cancel && o.cancel->load();
  out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return out;
}

}  // namespace mln::solver
