// The marginal side of a spread job (spread_marginal.hpp).
#include "core/spread/spread_marginal.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "core/marginal/mcsat_cpu.hpp"
#include "core/base/rng.hpp"
#include "core/base/run_control.hpp"
#include "core/base/subnetwork.hpp"

namespace mln::solver {

int marginal_slices(const SpreadPlan& plan, int workers, int64_t samples) {
  if (plan.parts < 1) return 1;
  return static_cast<int>(std::clamp<int64_t>(workers / plan.parts, 1, std::max<int64_t>(1, samples)));
}

MarginalOptions part_marginal_options(const MarginalOptions& job, int p, double seconds_left, int slice, int slices) {
  MarginalOptions o = job;
  o.seed = derive_seed(job.seed, 0x4d415247ull + static_cast<uint64_t>(p));
  if (slices > 1) {
    if (slice < 0 || slice >= slices) throw std::invalid_argument("part_marginal_options: no slice " + std::to_string(slice));
    o.seed = derive_seed(o.seed, 0x534c4943ull + static_cast<uint64_t>(slice));
    o.samples = job.samples / slices + (slice < job.samples % slices ? 1 : 0);
    o.burn_in = static_cast<int>(mcsat_chain_burn_in(job.burn_in, job.samples, slices));  // each slice a chain's
  }
  o.timeout_s = seconds_left > 0 ? seconds_left : 0;
  o.skip_components_without_query = false;  // the plan holds searched components only
  o.progress = nullptr;
  o.cancel = nullptr;
  return o;
}

PartMarginal sample_part(const mln::Network& net, const SpreadPlan& plan, const PartIndex& idx, int p,
                         const MarginalOptions& o) {
  if (p < 0 || p >= plan.parts) throw std::invalid_argument("sample_part: no part " + std::to_string(p));
  if (plan.cut[p]) throw std::invalid_argument("sample_part: part " + std::to_string(p) + " is cut");
  const auto t0 = std::chrono::steady_clock::now();
  const auto& mem = idx.members[p];
  PartMarginal out;
  if (mem.empty()) return out;
  // A part of every atom (one giant component: every slice of it) is
  // sampled on the network itself, not on a copy of it (a pass to list
  // every clause and one to copy them, on every GPU).
  // Not where the network has empty clauses: merge_marginals adds their
  // constant cost once for the job.
  const auto& off = net.clauses.offsets;  // an empty clause: two equal offsets in a row
  MarginalResult r;
  if (static_cast<int64_t>(mem.size()) == net.num_atoms && std::adjacent_find(off.begin(), off.end()) == off.end()) {
    out.clauses = static_cast<int64_t>(net.clauses.size());
    r = solve_marginal(net, o);
  } else {
    const std::vector<int64_t>& pc = idx.clauses(net, plan, p);
    out.clauses = static_cast<int64_t>(pc.size());
    SubNetwork sub = part_network(net, idx, p, pc.data(), pc.size(), nullptr, &net.init_truth);
    r = solve_marginal(sub.net, o);
  }
  out.prob.assign(mem.size(), 0.0);
  for (size_t i = 0; i < mem.size(); ++i) out.prob[i] = r.prob[i + 1];
  out.samples = r.samples;
  out.average_cost = r.average_cost;
  out.flips = r.flips;
  out.solved_components = r.solved_components;
  out.exact_components = r.exact_components;
  report_run(out, r, t0);
  return out;
}

namespace {
// Part p's slices (units p * slices ... + slices - 1) as one answer.
PartMarginal merge_slices(const std::vector<PartMarginal>& units, int p, int slices, size_t atoms) {
  const size_t first = static_cast<size_t>(p) * static_cast<size_t>(slices);
  if (slices == 1) return units[first];
  PartMarginal out;
  int64_t counted = 0;
  for (int k = 0; k < slices; ++k) counted += std::max<int64_t>(0, units[first + k].samples);
  // A slice's weight: the samples it counted (all alike where none counted:
  // parts of exactly enumerated components).
  auto weight = [&](const PartMarginal& u) { return counted > 0 ? static_cast<double>(std::max<int64_t>(0, u.samples)) : 1.0; };
  out.prob.assign(atoms, std::nan(""));
  std::vector<double> sum(atoms, 0.0), w(atoms, 0.0);
  double cost = 0, cost_w = 0;
  for (int k = 0; k < slices; ++k) {
    const PartMarginal& u = units[first + k];
    const double wk = weight(u);
    for (size_t i = 0; i < atoms && i < u.prob.size(); ++i)
      if (!std::isnan(u.prob[i])) sum[i] += wk * u.prob[i], w[i] += wk;
    cost += wk * u.average_cost, cost_w += wk;
    out.flips += u.flips;
    out.solved_components = std::max(out.solved_components, u.solved_components);
    out.exact_components = std::max(out.exact_components, u.exact_components);
    out.clauses = std::max(out.clauses, u.clauses);
    out.cancelled = out.cancelled || u.cancelled;
    out.device += (k ? "," : "") + u.device;
    out.warnings.insert(out.warnings.end(), u.warnings.begin(), u.warnings.end());
  }
  for (size_t i = 0; i < atoms; ++i)
    if (w[i] > 0) out.prob[i] = sum[i] / w[i];
  out.samples = counted;
  out.average_cost = cost_w > 0 ? cost / cost_w : 0;
  return out;
}
}  // namespace

MarginalResult merge_marginals(const mln::Network& net, const SpreadPlan& plan, const PartIndex& idx,
                               const std::vector<PartMarginal>& parts) {
  const int slices = std::max(1, plan.slices);
  if (parts.size() < static_cast<size_t>(plan.parts) * static_cast<size_t>(slices))
    throw std::invalid_argument("merge_marginals: " + std::to_string(parts.size()) + " answers for " +
                                std::to_string(plan.parts) + " parts of " + std::to_string(slices) + " slices");
  MarginalResult res;
  res.prob.assign(static_cast<size_t>(net.num_atoms) + 1, std::nan(""));
  res.components = plan.components;
  bool first = true;
  std::string devices;
  for (int p = 0; p < plan.parts; ++p) {
    const auto& mem = idx.members[p];
    const PartMarginal pm = merge_slices(parts, p, slices, mem.size());
    for (size_t i = 0; i < mem.size() && i < pm.prob.size(); ++i) res.prob[mem[i]] = pm.prob[i];
    if (mem.empty()) continue;
    res.samples = first ? pm.samples : std::min(res.samples, pm.samples);
    first = false;
    res.average_cost += pm.average_cost;
    res.flips += pm.flips;
    res.solved_components += pm.solved_components;
    res.exact_components += pm.exact_components;
    res.cancelled = res.cancelled || pm.cancelled;
    devices += pm.device + ",";
    res.warnings.insert(res.warnings.end(), pm.warnings.begin(), pm.warnings.end());
  }
  for (size_t c = 0; c < net.clauses.size(); ++c)  // constant: a positive empty clause always costs its weight
    if (net.clauses.offsets[c] == net.clauses.offsets[c + 1] && net.clauses.weights[c] > 0)
      res.average_cost += net.clauses.weights[c];
  res.device_used = device_used_of(devices);
  return res;
}

MarginalResult solve_spread_marginal_local(const mln::Network& net, const MarginalOptions& o, int workers,
                                           int slices) {
  const auto t0 = std::chrono::steady_clock::now();
  SolveOptions so;
  so.seed = o.seed;
  so.skip_components_without_query = o.skip_components_without_query;
  SpreadPlan plan = plan_spread(net, workers, so, kSpreadMetisMaxAtoms, false);
  plan.slices = slices > 0 ? slices : marginal_slices(plan, workers, o.samples);
  const PartIndex idx = index_parts(net, plan);
  std::vector<PartMarginal> parts;
  for (int p = 0; p < plan.parts; ++p)
    for (int k = 0; k < plan.slices; ++k)
      parts.push_back(sample_part(net, plan, idx, p, part_marginal_options(o, p, 0, k, plan.slices)));
  MarginalResult res = merge_marginals(net, plan, idx, parts);
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace mln::solver
