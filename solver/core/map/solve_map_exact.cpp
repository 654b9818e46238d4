// solve_map: a component's bound (the LP relaxation or unit bound) and its
// exact path (CBC), alone or batched with the other small components.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/base/network_cost.hpp"
#include "core/base/partition.hpp"
#include "core/base/rng.hpp"
#include "core/bound/closing.hpp"
#include "core/map/gpu_budget.hpp"
#include "core/map/solve_map_run.hpp"
#include "core/base/subnetwork.hpp"
#include "core/base/work_pool.hpp"
#include "core/walk/walksat_gpu.hpp"

namespace mln::solver::map_detail {

double Run::bound_component(int32_t k, const mln::Network& pn, int64_t n, bool enumerated, std::vector<uint8_t>& best,
                            bool* defer, LpOutcome* solved_lp) {
  const int64_t m = static_cast<int64_t>(pn.clauses.size());
  if (enumerated) {  // solve_exact_cpu enumerated every state
    comp_proven[k] = 1;
    return total_cost(pn.clauses, best);
  }
  // The LP relaxation first: it is cheap, and on many MLNs (RC among
  // them) as high as the walk's cost, which proves the answer.
  // Its rounded solution is an answer too, optimal when the LP is integral.
  double cost = total_cost_threads(pn.clauses, best);
  // No clause costs less than nothing (network.hpp's clause_cost), so an
  // answer of cost 0 is optimal: no LP, no exact path, and a side bound is
  // cancelled.  Smokers 10^4 has 3,053 such components; their LPs took
  // most of its search.
  if (cost <= 0) {
    take_side(k);  // destroyed here: it cancels and joins its thread
    comp_proven[k] = 1;
    return 0;
  }
  double bound;
  bool lp_optimal = false;  // bound is the LP relaxation's optimum
  if (pdhg_sized(m)) {  // the same LP by PDHG, mostly done beside the walk by now
    PdhgOutcome lp = side_bound(k, pn, gap_target(cost, opts.gap_tolerance));
    bound = lp.bound;
    lp_optimal = lp.converged;
    if (opts.solver == options::MapSolver::kAuto && !lp.state.empty() && lp.state_cost < cost) {
      cost = lp.state_cost;
      best = std::move(lp.state);
      lp_used = true;
    }
  } else if (m <= opts.lp_bound_max_clauses && ilp_available() && !stop.should_stop()) {
    LpOutcome lp = solved_lp ? std::move(*solved_lp) : lp_relaxation(pn, opts.lp_seconds, &stop);
    mark("component " + std::to_string(k) + ": LP relaxation, bound " + std::to_string(lp.bound));
    bound = lp.bound;
    lp_optimal = lp.solved;
    if (lp.solved && opts.solver == options::MapSolver::kAuto) {  // "walksat" and "ilp" keep their own answers
      const double c = total_cost_threads(pn.clauses, lp.state);
      if (c < cost) {
        cost = c;
        best = std::move(lp.state);
        lp_used = true;
      }
    }
  } else {
    bound = unit_bound(pn);
  }
  const bool partitioned = n > (opts.device == options::Device::kGpu ? opts.gpu_partition_max_atoms : opts.partition_max_atoms);
  // auto: not where the LP's optimum leaves a gap too wide for branch and
  // bound in the time after the walk (GapClosing::exact_may_close).
  const bool closable = !lp_optimal || GapClosing::exact_may_close(cost, bound, m);
  if (opts.solver == options::MapSolver::kAuto && !closable)
    mark("component " + std::to_string(k) + ": no exact path, the LP leaves a gap of " +
         std::to_string(100.0 * relative_gap(cost, bound)) + "%");
  const bool try_ilp = ilp_available() && !stop.should_stop() && !(opts.solver != options::MapSolver::kIlp && proven_within_tolerance(cost, bound)) &&
                       (opts.solver == options::MapSolver::kIlp || (opts.solver == options::MapSolver::kAuto && closable && !partitioned &&
                                                 m <= opts.ilp_max_clauses && opts.ilp_seconds > 0));
  if (try_ilp && m <= opts.ilp_batch_max_clauses) {
    *defer = true;
  } else if (try_ilp && opts.solver == options::MapSolver::kAuto) {
    std::lock_guard<std::mutex> lock(batch_mu);  // finish_exact, if the gap asks for it
    exact_later.push_back(k);
  } else if (IlpOutcome r; try_ilp && run_exact(pn, best, m > opts.ilp_full_max_clauses, r)) {
    if (r.cost < cost) {
      best = std::move(r.best);
      cost = r.cost;
    }
    bound = std::max(bound, r.bound);
    if (r.optimal) bound = std::max(bound, cost);
  }
  bound = std::min(bound, cost);
  if (proven_within_tolerance(cost, bound)) comp_proven[k] = 1;
  return bound;
}

Run::~Run() { side.clear(); }  // each side bound cancels and joins its thread

void Run::set_pdhg_iterations(const mln::Network& pn, PdhgOptions& po) const {
  const double nnz = static_cast<double>(std::max<size_t>(1, pn.clauses.lits.size()));
  const double share = static_cast<int64_t>(pn.clauses.size()) > opts.ilp_max_clauses ? 2.0 : 1.0;
  auto its = [&](double work) {
    return static_cast<int64_t>(std::clamp(share * work / nnz, static_cast<double>(kPdhgMinIterations),
                                           static_cast<double>(po.max_iterations)));
  };
  po.time_limit_s = opts.lp_seconds;  // the caller's cap, if any (0: none)
  po.gpu_max_iterations = its(opts.pdhg_gpu_work);
  po.max_iterations = its(opts.pdhg_cpu_work);
}

bool Run::pdhg_sized(int64_t m) const {
  return opts.pdhg_bound && (m > opts.lp_bound_max_clauses || m >= opts.pdhg_min_clauses || !ilp_available());
}

void Run::start_side_bound(int32_t k, const mln::Network& pn, const SubNetwork& sub, bool on_gpu) {
  auto sb = std::make_unique<SideBound>();
  const mln::Network* np = &pn;
  if (&pn != &net) {  // the walk's extraction ends with solve_component: a copy of its own
    sb->sub = sub;
    np = &sb->sub.net;
  }
  PdhgOptions po;
  set_pdhg_iterations(*np, po);
  // The CPU threads walk: one for the bound (its evaluations, where the GPU
  // iterates), unless the GPU walks this component.
  po.threads = on_gpu ? pool_threads(opts.threads) : 1;
  po.rel_gap = 1e-6;
  // On the GPU whenever the job has one (device "gpu", or "auto" with a GPU
  // present), beside the walk's kernels; the CPU path if the GPU fails.
  po.device = gpu_on ? options::Device::kAuto : options::Device::kCpu;
  // The stall rule's window after the walk: an eighth of the iterations the
  // bound may take where it runs.
  sb->window = std::max<int64_t>(kPdhgMinIterations, (gpu_on ? po.gpu_max_iterations : po.max_iterations) / 8);
  sb->lp = std::make_unique<PdhgThread>(*np, po, &stop);
  if (!sb->lp->started()) return;  // no thread: bound_component solves it in place
  std::lock_guard<std::mutex> lock(side_mu);
  side[k] = std::move(sb);
}

BoundPlace Run::plan_bound(int32_t k, const mln::Network& pn, bool on_gpu) {
  if (!on_gpu || !gpu_on) return BoundPlace::Beside;
  const int64_t m = static_cast<int64_t>(pn.clauses.size()), lits = static_cast<int64_t>(pn.clauses.lits.size());
  const int64_t walk = walk_device_bytes(pn.num_atoms, m, lits);
  const int64_t bound = pdhg_device_bytes(pn.num_atoms, lp_shape(pn.clauses));
  int64_t free_bytes = static_cast<int64_t>(gpu_free_bytes());
  if (opts.gpu_memory_limit > 0) free_bytes = std::min(free_bytes, opts.gpu_memory_limit);
  const BoundPlace place = place_bound(walk, bound, free_bytes);
  auto gb = [](int64_t b) { return std::to_string(static_cast<double>(b) / 1e9).substr(0, 5) + " GB"; };
  const std::string why = "the walk needs " + gb(walk) + " of device memory and the LP bound " + gb(bound) + ", " +
                          gb(free_bytes) + " free";
  if (debug) mark("component " + std::to_string(k) + ": the bound runs " + bound_place_name(place) + " (" + why + ")");
  if (place == BoundPlace::Beside) return place;
  {
    std::lock_guard<std::mutex> lock(side_mu);
    bound_place[k] = place;
  }
  warn(place == BoundPlace::After ? "the LP bound runs after the walk, not beside it: " + why
                                  : "no LP bound (the unit bound stands): " + why);
  return place;
}

PdhgOutcome Run::bound_after_walk(int32_t k, const mln::Network& pn, double target) {
  std::atomic<double> t{target};
  PdhgOptions po;
  set_pdhg_iterations(pn, po);
  po.stop = &stop;
  po.threads = pool_threads(opts.threads);  // the walk is over: the CPU's threads evaluate
  po.device = options::Device::kGpu;
  po.cpu_fallback = false;  // an LP too large for the GPU beside the walk is too large for the host's memory too
  po.rel_gap = 1e-6;
  po.bound_target = &t;
  if (debug) mark("component " + std::to_string(k) + ": the bound, after the walk");
  try {
    return lp_bound_pdhg(pn, po);
  } catch (const std::exception& e) {  // GpuError, or the host's bad_alloc: the unit bound stands
    warn(std::string("the LP bound after the walk failed, the unit bound is used: ") + e.what());
  }
  PdhgOutcome out;
  out.bound = unit_bound(pn);
  return out;
}

Run::SideBound* Run::side_of(int32_t k) {
  std::lock_guard<std::mutex> lock(side_mu);
  auto it = side.find(k);
  return it == side.end() ? nullptr : it->second.get();
}

std::unique_ptr<Run::SideBound> Run::take_side(int32_t k) {
  std::lock_guard<std::mutex> lock(side_mu);
  std::unique_ptr<SideBound> sb;
  auto it = side.find(k);
  if (it != side.end()) {
    sb = std::move(it->second);
    side.erase(it);
  }
  return sb;
}

BoundPlace Run::placed(int32_t k) {
  std::lock_guard<std::mutex> lock(side_mu);
  auto it = bound_place.find(k);
  return it == bound_place.end() ? BoundPlace::Beside : it->second;
}

PdhgOutcome Run::side_bound(int32_t k, const mln::Network& pn, double target) {
  std::unique_ptr<SideBound> sb = take_side(k);
  PdhgOutcome out;
  if (sb) {
    mark("component " + std::to_string(k) + ": walked; side bound " + std::to_string(sb->lp->bound()) + ", target " +
         std::to_string(target));
    // The walk has ended: the bound ends at the target, or once it stops
    // closing the gap to it (#39's rule), by a rule of its own iterations
    // (PdhgThread::finish), however far it got beside the walk.
    const bool joined = sb->lp->finish(target, sb->window, out);
    mark("component " + std::to_string(k) + ": side bound stopped at " + std::to_string(out.bound));
    if (joined) {
      if (!out.gpu_error.empty()) warn("the GPU PDHG bound failed, solved on the CPU: " + out.gpu_error);
      return out;
    }
    warn("the PDHG bound ran out of memory: the unit bound is used");
  } else if (BoundPlace place = placed(k); place != BoundPlace::Beside) {
    if (place == BoundPlace::After && !stop.should_stop()) return bound_after_walk(k, pn, target);
  } else if (!stop.should_stop()) {
    std::atomic<double> t{target};
    PdhgOptions po;
    set_pdhg_iterations(pn, po);
    po.gpu_max_iterations = 0;
    po.stop = &stop;
    po.threads = 1;  // on a worker thread, beside the other workers
    po.device = options::Device::kCpu;  // no side thread: a component walked in a GPU batch, or no thread to be had
    po.rel_gap = 1e-6;
    po.bound_target = &t;
    return lp_bound_pdhg(pn, po);
  }
  out.bound = unit_bound(pn);
  return out;
}

double Run::ilp_limit() const {
  const double now = seconds_so_far();
  double limit = 0;
  if (opts.solver != options::MapSolver::kIlp) {
    limit = opts.ilp_seconds - static_cast<double>(ilp_micros.load()) * 1e-6;
    if (limit <= 0) return -1;
  }
  if (opts.timeout_s > 0) {
    const double left = opts.timeout_s - now;
    if (left <= 0) return -1;
    limit = limit > 0 ? std::min(limit, left) : left;
  }
  return limit;
}

double Run::ilp_work_left() const {
  if (opts.solver == options::MapSolver::kIlp || opts.ilp_work <= 0) return 0;  // "ilp": until done or the timeout
  return opts.ilp_work - static_cast<double>(ilp_work.load());
}

bool Run::run_exact(const mln::Network& pn, const std::vector<uint8_t>& start, bool cutting_plane, IlpOutcome& r) {
  const double work = ilp_work_left();
  if (opts.solver != options::MapSolver::kIlp && opts.ilp_work > 0 && work <= 0) {
    ilp_spent = true;
    return false;
  }
  const double limit = ilp_limit();
  if (limit < 0) {  // a time cap (ilp_seconds or the timeout) ended the exact path
    time_capped = true;
    return false;
  }
  const auto t_ilp = std::chrono::steady_clock::now();
  IlpOptions io;
  io.time_limit_s = limit;
  io.work_limit = work;
  io.stop = &stop;
  io.cutting_plane = cutting_plane;
  io.stop_when_stalled = opts.solver == options::MapSolver::kAuto;  // after the walk: #39's stop rule; "ilp" keeps its time
  io.stall_window = opts.ilp_stall_work;
  r = solve_ilp(pn, start, io);
  mark("exact path (limit " + std::to_string(limit) + " s, work " + std::to_string(work) + "): " + r.status);
  ilp_used = true;
  if (r.timed_out) time_capped = true;
  ilp_work += static_cast<int64_t>(r.work);
  if (opts.solver != options::MapSolver::kIlp && opts.ilp_work > 0 && ilp_work_left() <= 0) ilp_spent = true;
  ilp_micros += std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t_ilp).count();
  return true;
}

void Run::solve_batched(std::vector<uint8_t>& truth) {
  if (batch.empty() || stop.should_stop()) return;
  mln::Network u;
  std::vector<uint8_t> start{0};
  std::vector<int32_t> first;  // first union atom id of each deferred component
  for (const Deferred& d : batch) {
    first.push_back(u.num_atoms + 1);
    const auto& cs = d.net.clauses;
    std::vector<int32_t> lits;
    for (size_t c = 0; c < cs.size(); ++c) {
      lits.assign(cs.lits.begin() + cs.offsets[c], cs.lits.begin() + cs.offsets[c + 1]);
      for (int32_t& l : lits) l += l > 0 ? u.num_atoms : -u.num_atoms;
      u.clauses.add(lits.data(), lits.size(), cs.weights[c]);
    }
    for (int32_t a : d.atoms) start.push_back(truth[a]);
    u.num_atoms += d.net.num_atoms;
  }
  // One ILP over every clause, not cutting planes: on a batch of small
  // components the whole union proves faster (class; docs/solver/map.md).
  IlpOutcome r;
  if (!run_exact(u, start, false, r)) return;
  double own_bounds = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    const Deferred& d = batch[i];
    std::vector<uint8_t> st(d.atoms.size() + 1, 0);
    for (size_t j = 0; j < d.atoms.size(); ++j) st[j + 1] = r.best[first[i] + static_cast<int32_t>(j)];
    const double c = total_cost(d.net.clauses, st) + d.constant_cost;
    if (c < comp_cost[d.k]) {
      comp_cost[d.k] = c;
      for (size_t j = 0; j < d.atoms.size(); ++j) truth[d.atoms[j]] = st[j + 1];
    }
    if (r.optimal) {  // the union's optimum: each part at its own optimum
      comp_bound[d.k] = comp_cost[d.k];
      comp_proven[d.k] = 1;
    }
    own_bounds += comp_bound[d.k];
  }
  if (!r.optimal) {
    double consts = 0;
    for (const Deferred& d : batch) consts += d.constant_cost;
    batch_bound_extra = std::max(0.0, r.bound + consts - own_bounds);
  }
}

bool Run::within_gap() const {
  double cost = 0, bound = batch_bound_extra;
  for (int32_t k = 0; k < comps.count; ++k)
    if (comp_done[k]) cost += comp_cost[k], bound += comp_bound[k];
  return relative_gap(cost, bound) <= opts.gap_tolerance;
}

void Run::finish_exact(std::vector<uint8_t>& truth) {
  if (opts.solver != options::MapSolver::kAuto) {
    solve_batched(truth);
    return;
  }
  if (batch.empty() && exact_later.empty()) return;
  if (within_gap()) {
    gap_stopped = true;
    return;
  }
  solve_batched(truth);
  std::sort(exact_later.begin(), exact_later.end(), [this](int32_t a, int32_t b) {
    return comp_cost[a] - comp_bound[a] > comp_cost[b] - comp_bound[b];
  });
  for (int32_t k : exact_later) {
    if (stop.should_stop()) return;
    if (within_gap()) {
      gap_stopped = true;
      return;
    }
    std::vector<int32_t> atoms;
    SubNetwork sub;
    const mln::Network& pn = component_network(k, atoms, sub);
    IlpOutcome r;
    if (!run_exact(pn, current_state(k, truth), static_cast<int64_t>(pn.clauses.size()) > opts.ilp_full_max_clauses, r))
      return;  // no time left
    const double c = r.cost + sub.constant_cost;
    if (c < comp_cost[k]) {
      comp_cost[k] = c;
      for (size_t i = 0; i < atoms.size(); ++i) truth[atoms[i]] = r.best[i + 1];
    }
    comp_bound[k] = std::min(comp_cost[k], std::max(comp_bound[k], r.optimal ? comp_cost[k] : r.bound + sub.constant_cost));
    if (proven_within_tolerance(comp_cost[k], comp_bound[k])) comp_proven[k] = 1;
    sink.report(k, comp_cost[k], 0);
  }
}

}  // namespace mln::solver::map_detail
