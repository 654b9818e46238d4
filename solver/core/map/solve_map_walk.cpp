// solve_map: one component solved (enumeration, the walk on the GPU or the
// CPU, Gauss-Seidel partitions), the GPU batches of small ones, and the
// starting states and progress seeding.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/base/network_cost.hpp"
#include "core/base/partition.hpp"
#include "core/base/rng.hpp"
#include "core/map/solve_map_run.hpp"
#include "core/base/subnetwork.hpp"
#include "core/walk/walksat_gpu.hpp"

namespace mln::solver::map_detail {

WalkParams Run::walk_params(int32_t k, int64_t flips, uint64_t seed, bool whole) {
  WalkParams p;
  p.flips_per_try = flips;
  p.max_tries = opts.max_tries;
  if (passes == 2) {
    p.first_try = pass;
    p.last_try = pass == 0 ? 1 : 0;
  }
  p.random_step = opts.random_step;
  p.adaptive_noise = opts.adaptive_noise;
  p.dont_break = opts.dont_break;
  p.hard_first = opts.hard_first;
  p.seed = seed;
  p.stop = &stop;
  // The walk ends by its own rules (flips, tries, rounds), never by how far
  // the bound running beside it has got: that race made the answer depend
  // on the two threads' speeds (issue #60).
  if (whole)
    p.on_progress = [this, k](double best, int64_t f) { sink.report(k, best, f); };
  else
    p.on_progress = [this](double, int64_t f) { sink.add_flips(f); };
  return p;
}

bool Run::first_try_within_gap(int32_t k, const mln::Network& pn, double cost, LpOutcome& lp) {
  const int64_t m = static_cast<int64_t>(pn.clauses.size());
  if (opts.solver != options::MapSolver::kAuto || pdhg_sized(m) || m > opts.lp_bound_max_clauses || !ilp_available() || stop.should_stop())
    return false;
  lp = lp_relaxation(pn, opts.lp_seconds, &stop);
  // The answer is the better of the walk's and the LP's rounded point
  // (bound_component takes the cheaper): on class the two largest
  // components' LPs are integral, their rounded points optimal where the
  // walk's first try was 12% and 6% above.
  if (lp.solved && !lp.state.empty()) cost = std::min(cost, total_cost_threads(pn.clauses, lp.state));
  const bool within = lp.solved && lp.bound >= gap_target(cost, opts.gap_tolerance);
  if (within && debug) mark("component " + std::to_string(k) + ": first try within the gap tolerance, no second");
  return within;
}

std::vector<uint8_t> Run::solve_piece(int32_t k, bool on_gpu, const mln::Network& sub, const std::vector<uint8_t>& init,
                                      int64_t flips, uint64_t seed, bool whole) {
  const bool big = debug && sub.clauses.size() >= 100000;
  const bool sized = gpu_sized(sub.num_atoms, static_cast<int64_t>(sub.clauses.size()));
  // The GPU walk lays the piece out in device memory itself; the host
  // builds the layout only if the GPU fails.
  const bool device_layout = on_gpu && !enumerable(sub.num_atoms) && sized;
  WalkInstance inst = device_layout ? walk_instance_header(sub) : build_walk_instance(sub);
  if (big) mark("component " + std::to_string(k) + ": walk instance built (" + std::to_string(inst.n) + " atoms, " +
                std::to_string(inst.m) + " clauses)");
  const WalkParams p = walk_params(k, flips, seed, whole);
  // The walks that take their tries whole get this pass's as max_tries.
  WalkParams pw = p;
  pw.max_tries = tries_this_pass();
  pw.first_try = pw.last_try = 0;
  std::vector<uint8_t> init0(init.begin() + 1, init.end());
  WalkOutcome out;
  bool done = false;
  if (enumerable(inst.n)) {
    out = solve_exact_cpu(inst, init0);
    done = true;
    cpu_used = true;
    if (whole)
      sink.report(k, out.best_cost, out.flips);
    else
      sink.add_flips(out.flips);
  } else if (pw.max_tries == 0 && ((on_gpu && sized) || weighted_on_cpu(inst.n))) {
    return init;  // only walksat_cpu's adaptive tries were left, and this walk has none
  } else if (on_gpu && sized) {
    // The GPU walk alone: the CPU walks the piece only when the GPU fails.
    try {
      GpuWalkOptions g;
      g.weighted = opts.weighted;
      out = walksat_gpu(inst, init0, pw, g);
      done = true;
      gpu_used = true;
    } catch (const GpuError& e) {
      warn(std::string("GPU MaxWalkSAT failed, component solved on the CPU: ") + e.what());
    }
  }
  if (!done) {
    if (inst.header_only()) inst = build_walk_instance(sub);
    if (weighted_on_cpu(inst.n)) {
      // OpenMP threads pay off on large pieces only (a round's parallel
      // loops cost more than they save on a few hundred clauses).
      WeightedOptions wo = opts.weighted;
      if (inst.n < 10000) wo.threads = 1;
      out = walk_weighted_cpu(inst, init0, pw, wo);
    } else {
      out = walksat_cpu(inst, init0, p);
    }
    cpu_used = true;
  }
  if (out.stopped) walk_stopped = true;
  if (big) mark("component " + std::to_string(k) + ": walked (" + std::to_string(out.flips) + " flips)");
  std::vector<uint8_t> best(out.best.size() + 1, 0);
  std::copy(out.best.begin(), out.best.end(), best.begin() + 1);
  return best;
}

bool Run::whole_network(int32_t k) const {
  const auto& cs = net.clauses;
  if (comps.atom_off[k + 1] - comps.atom_off[k] != net.num_atoms) return false;
  if (comps.num_clauses(k) != static_cast<int64_t>(cs.size())) return false;
  const int64_t m = static_cast<int64_t>(cs.size());
  int unsorted = 0;  // on threads: one pass over every literal (3 s serial at 10^9 clauses)
#pragma omp parallel for schedule(static) reduction(| : unsorted) if (m >= kCostChunk)
  for (int64_t c = 0; c < m; ++c)
    unsorted |= !std::is_sorted(cs.lits.begin() + cs.offsets[c], cs.lits.begin() + cs.offsets[c + 1]);
  return unsorted == 0;
}

void Run::solve_gpu_batch(const std::vector<int32_t>& ks, std::vector<uint8_t>& truth) {
  const bool more = pass == 1;  // the components' tries after the first, from their states so far
  if (more && (stop.should_stop() || tries_this_pass() == 0)) {  // no walk left: bound each as it is
    for (int32_t k : ks) {
      const std::vector<uint8_t> state = current_state(k, truth);
      solve_component(k, true, truth, &state);
    }
    return;
  }
  std::vector<int32_t> atoms, part;
  std::vector<int64_t> clauses;
  std::vector<uint8_t> init0;
  int64_t flips = 0;
  for (size_t j = 0; j < ks.size(); ++j) {
    const int32_t k = ks[j];
    const std::vector<uint8_t> init = more ? current_state(k, truth) : initial_state(k);
    atoms.insert(atoms.end(), comps.atoms.begin() + comps.atom_off[k], comps.atoms.begin() + comps.atom_off[k + 1]);
    part.insert(part.end(), init.size() - 1, static_cast<int32_t>(j));
    init0.insert(init0.end(), init.begin() + 1, init.end());
    clauses.insert(clauses.end(), comps.clauses.begin() + comps.clause_off[k],
                   comps.clauses.begin() + comps.clause_off[k + 1]);
    flips += std::max<int64_t>(4, static_cast<int64_t>(flips_per_atom * static_cast<double>(init.size() - 1)));
  }
  SubNetwork sub = extract_subnetwork(net, atoms, clauses.data(), clauses.size(), nullptr);
  WalkInstance inst = build_walk_instance(sub.net);
  WalkParams p;
  p.flips_per_try = flips;
  p.max_tries = tries_this_pass();
  p.seed = derive_seed(opts.seed, 0x42415443ull + static_cast<uint64_t>(ks[0]));
  if (more) p.seed = derive_seed(p.seed, kSecondPassSeed);
  p.stop = &stop;
  // The walk's best cost is the batch's: its components' progress values
  // move into the first one's for the walk, and back after it.
  std::vector<double> before(ks.size(), 0.0), during(ks.size(), 0.0);
  for (size_t j = 0; j < ks.size(); ++j) before[j] = sink.value(ks[j]);
  for (double v : before) during[0] += v;
  sink.assign(ks, during);
  p.on_progress = [this, k0 = ks[0]](double best, int64_t f) { sink.report(k0, best, f); };
  GpuWalkOptions g;
  g.weighted = opts.weighted;
  g.part_of_atom = &part;
  WalkOutcome out;
  try {
    out = walksat_gpu(inst, init0, p, g);
    gpu_used = true;
    walk_used = true;
    if (out.stopped) walk_stopped = true;
  } catch (const GpuError& e) {
    sink.assign(ks, before);
    warn(std::string("GPU MaxWalkSAT failed, components solved on the CPU: ") + e.what());
    for (int32_t k : ks) solve_component(k, false, truth);
    return;
  }
  if (opts.progress) {  // each component's cost in the walk's best state
    std::vector<uint8_t> t(out.best.size() + 1, 0);
    std::copy(out.best.begin(), out.best.end(), t.begin() + 1);
    std::vector<double> after(ks.size(), 0.0);
    const auto& cs = sub.net.clauses;
    for (size_t c = 0; c < cs.size(); ++c)
      if (cs.offsets[c + 1] > cs.offsets[c])
        after[part[std::abs(cs.lits[cs.offsets[c]]) - 1]] += clause_cost_of(cs, static_cast<int64_t>(c), t);
    sink.assign(ks, after);
  }
  size_t at = 0;
  for (int32_t k : ks) {
    const size_t n = static_cast<size_t>(comps.atom_off[k + 1] - comps.atom_off[k]);
    std::vector<uint8_t> best(n + 1, 0);
    std::copy(out.best.begin() + at, out.best.begin() + at + n, best.begin() + 1);
    at += n;
    solve_component(k, true, truth, &best);
  }
}

std::vector<uint8_t> Run::current_state(int32_t k, const std::vector<uint8_t>& truth) const {
  const int64_t lo = comps.atom_off[k], hi = comps.atom_off[k + 1];
  std::vector<uint8_t> s(static_cast<size_t>(hi - lo) + 1, 0);
  for (int64_t i = lo; i < hi; ++i) s[i - lo + 1] = truth[comps.atoms[i]];
  return s;
}

double Run::settle_unreached(int32_t k, std::vector<uint8_t>& truth) {
  const std::vector<uint8_t> init = initial_state(k);
  const int32_t* atoms = comps.atoms.data() + comps.atom_off[k];
  for (int64_t i = 0; i < comps.num_atoms(k); ++i) truth[atoms[i]] = init[i + 1];
  return start_cost[k];
}

std::vector<uint8_t> Run::coin_state(int32_t k) const {
  const int64_t lo = comps.atom_off[k], hi = comps.atom_off[k + 1];
  Rng rng(derive_seed(opts.seed, static_cast<uint64_t>(k)));
  std::vector<uint8_t> init(static_cast<size_t>(hi - lo) + 1, 0);
  for (int64_t i = lo; i < hi; ++i)
    init[i - lo + 1] = net.init_truth.empty() ? static_cast<uint8_t>(rng.next() >> 63)
                                              : (net.init_truth[comps.atoms[i]] != 0);
  return init;
}

std::vector<uint8_t> Run::initial_state(int32_t k) const {
  if (start_false.at(static_cast<size_t>(k))) return std::vector<uint8_t>(static_cast<size_t>(comps.num_atoms(k)) + 1, 0);
  return coin_state(k);
}

void Run::choose_starts() {
  const int32_t nk = comps.count;
  std::vector<uint8_t> t(static_cast<size_t>(net.num_atoms) + 1, 0);
#pragma omp parallel for schedule(dynamic, 16)
  for (int32_t k = 0; k < nk; ++k) {  // components own disjoint atoms
    if (!searched(k)) continue;
    const std::vector<uint8_t> init = coin_state(k);
    for (int64_t i = comps.atom_off[k]; i < comps.atom_off[k + 1]; ++i) t[comps.atoms[i]] = init[i - comps.atom_off[k] + 1];
  }
  std::vector<StartCosts> c(static_cast<size_t>(nk));
  auto costs = [&](int32_t k) {
    if (searched(k)) c[k] = start_costs(net.clauses, comps.clauses.data() + comps.clause_off[k], comps.num_clauses(k), t);
  };
  const int64_t large = 2 * kCostChunk;
  for (int32_t k = 0; k < nk; ++k)  // large components: their clauses on threads
    if (comps.num_clauses(k) >= large) costs(k);
#pragma omp parallel for schedule(dynamic, 64)
  for (int32_t k = 0; k < nk; ++k)  // the others: one component per thread
    if (comps.num_clauses(k) < large) costs(k);
  start_false.assign(static_cast<size_t>(nk), 0);
  start_cost.assign(static_cast<size_t>(nk), 0.0);
  for (int32_t k = 0; k < nk; ++k) {
    // A given start (net.init_truth) is kept as it is.
    start_false[k] = net.init_truth.empty() && c[k].false_is_cheaper();
    start_cost[k] = start_false[k] ? c[k].all_false : c[k].coin;
  }
}

void Run::seed_progress(const std::vector<int32_t>& ks) {
  for (int32_t k : ks) sink.start(k, start_cost[k]);
}

void Run::solve_tiny_component(int32_t k, std::vector<uint8_t>& truth) {
  const int32_t* atoms = comps.atoms.data() + comps.atom_off[k];
  const int n = static_cast<int>(comps.num_atoms(k));
  const std::vector<uint8_t> init = initial_state(k);
  uint32_t start = 0;
  for (int i = 0; i < n; ++i) start |= static_cast<uint32_t>(init[i + 1] != 0) << i;
  const int64_t* cls = comps.clauses.data() + comps.clause_off[k];
  const int64_t m = comps.num_clauses(k);
  const TinyExact r = solve_exact_tiny(net.clauses, cls, m, comps.index_in_comp, n, start);
  cpu_used = true;
  sink.report(k, r.best_cost, r.flips);
  for (int i = 0; i < n; ++i) truth[atoms[i]] = static_cast<uint8_t>((r.best >> i) & 1);
  double cost = 0;
  for (int64_t j = 0; j < m; ++j) cost += clause_cost_of(net.clauses, cls[j], truth);
  comp_proven[k] = 1;
  comp_bound[k] = cost;
  comp_cost[k] = cost;
  comp_done[k] = 1;
  sink.report(k, cost, 0);
}

const mln::Network& Run::component_network(int32_t k, std::vector<int32_t>& atoms, SubNetwork& sub) const {
  atoms.assign(comps.atoms.begin() + comps.atom_off[k], comps.atoms.begin() + comps.atom_off[k + 1]);
  // A component that is the whole network (RC: one component holds every
  // atom and clause) is used in place: extracting it would copy every
  // clause (~0.5 GB at 17.8M clauses) only to get the same network back.
  if (whole_network(k)) return net;
  sub = extract_subnetwork(net, atoms, comps.clauses.data() + comps.clause_off[k], comps.num_clauses(k),
                           comps.index_in_comp, nullptr);
  return sub.net;
}

void Run::solve_component(int32_t k, bool on_gpu, std::vector<uint8_t>& truth,
                          const std::vector<uint8_t>* walked) {
  if (!walked && comps.num_atoms(k) <= kTinyAtoms && enumerable(comps.num_atoms(k)) &&
      comps.num_atoms(k) <= (on_gpu ? opts.gpu_partition_max_atoms : opts.partition_max_atoms)) {
    solve_tiny_component(k, truth);
    return;
  }
  std::vector<int32_t> atoms;
  SubNetwork sub;
  const mln::Network& piece_net = component_network(k, atoms, sub);
  const bool big = debug && comps.num_clauses(k) >= 100000;
  if (big) mark("component " + std::to_string(k) + (&piece_net == &net ? ": the whole network" : ": extracted"));
  const bool more = pass == 1;  // the tries after the first, from the first's state
  uint64_t seed = derive_seed(opts.seed, static_cast<uint64_t>(k));
  if (more) seed = derive_seed(seed, kSecondPassSeed);
  const std::vector<uint8_t> init = more ? current_state(k, truth) : initial_state(k);
  const int64_t n = static_cast<int64_t>(atoms.size());
  const int64_t flips = std::max<int64_t>(4, static_cast<int64_t>(flips_per_atom * static_cast<double>(n)));
  std::vector<uint8_t> best;
  const int64_t part_max = on_gpu ? opts.gpu_partition_max_atoms : opts.partition_max_atoms;
  const bool enumerated = enumerable(n) && n <= part_max;
  const int64_t m = static_cast<int64_t>(piece_net.clauses.size());
  if (!more && !walked && !enumerated && pdhg_sized(m) &&
      m >= std::min(opts.pdhg_min_clauses, opts.lp_bound_max_clauses + 1) && !stop.should_stop() &&
      plan_bound(k, piece_net, on_gpu) == BoundPlace::Beside)
    start_side_bound(k, piece_net, sub, on_gpu);  // the bound beside the walk (joined by bound_component)
  if (walked) {
    best = *walked;
  } else if (more && stop.should_stop()) {
    best = init;  // the time ran out before this component's other tries
  } else if (opts.solver == options::MapSolver::kIlp && !enumerated) {
    best = init;  // the exact path alone, from the starting state
  } else if (n > part_max) {
    // Split by METIS in each pass (a second partitioning, but a split
    // component is far beyond what the walk's state holds, ~64M atoms).
    walk_used = true;
    int parts = static_cast<int>((n + part_max - 1) / part_max);
    GaussSeidelStats st;
    SubSolver piece = [&](const mln::Network& pn, const std::vector<uint8_t>& pi, int64_t pf, uint64_t ps) {
      return solve_piece(k, on_gpu, pn, pi, pf, ps, false);
    };
    best = solve_gauss_seidel(piece_net, init, parts, opts.gauss_seidel_rounds, flips, seed, piece,
                              [this] { return stop.should_stop(); }, &st);
    if (!more) partitions += st.partitions;
  } else {
    if (!enumerated) walk_used = true;
    best = solve_piece(k, on_gpu, piece_net, init, flips, seed, true);
  }
  LpOutcome first_lp;  // the LP first_try_within_gap solved, if it did
  if (passes == 2 && !more && !enumerated && opts.solver != options::MapSolver::kIlp) {
    for (size_t i = 0; i < atoms.size(); ++i) truth[atoms[i]] = best[i + 1];
    comp_cost[k] = total_cost_threads(piece_net.clauses, best) + sub.constant_cost;
    sink.report(k, comp_cost[k], 0);
    // Nothing violated: no other try can do better.  Nor, for solver
    // auto, where the first try is within gap_tolerance of the component's
    // LP bound (#39: the job ends within the tolerance, so a second pass
    // could only buy what the tolerance forgives).  Only where the LP is
    // Clp's (small components); bound_component takes the LP solved here.
    comp_more[k] = comp_cost[k] > 0 && !first_try_within_gap(k, piece_net, comp_cost[k] - sub.constant_cost, first_lp);
    if (comp_more[k] && debug)
      mark("component " + std::to_string(k) + ": first try " + std::to_string(comp_cost[k] - sub.constant_cost) +
           (first_lp.solved ? ", LP bound " + std::to_string(first_lp.bound) : std::string()) + ": a second");
    if (comp_more[k]) return;
  }
  bool defer = false;
  comp_bound[k] = bound_component(k, piece_net, n, enumerated, best, &defer, first_lp.solved ? &first_lp : nullptr) +
                  sub.constant_cost;
  if (big) mark("component " + std::to_string(k) + ": bound");
  if (defer) {
    std::lock_guard<std::mutex> lock(batch_mu);
    batch.push_back({k, piece_net, atoms, sub.constant_cost});
  }
  for (size_t i = 0; i < atoms.size(); ++i) truth[atoms[i]] = best[i + 1];
  comp_cost[k] = total_cost_threads(piece_net.clauses, best) + sub.constant_cost;
  comp_done[k] = 1;
  sink.report(k, comp_cost[k], 0);
  if (big || (debug && more))
    mark("component " + std::to_string(k) + ": done, cost " + std::to_string(comp_cost[k]) + ", bound " +
         std::to_string(comp_bound[k]));
}

}  // namespace mln::solver::map_detail
