// Parts of a spread MAP job: the plan, the parts' index, one part's solve
// and the whole network's totals (spread.hpp; the marginal side is
// spread_marginal.cpp).
#include "core/spread/spread.hpp"
#include "core/spread/whole_bound.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>
#include <stdexcept>

#include "core/base/components.hpp"
#include "core/base/le_bytes.hpp"
#include "core/base/network_cost.hpp"
#include "core/spread/part_extract.hpp"
#include "core/spread/part_walk.hpp"
#include "core/base/partition.hpp"
#include "core/base/rng.hpp"
#include "core/base/run_control.hpp"
#include "core/base/subnetwork.hpp"

namespace mln::solver {

namespace {
// A component's work, for balancing: its clauses and atoms.
int64_t work_of(const Components& cc, int32_t k) { return cc.num_clauses(k) + cc.num_atoms(k); }

// MLN_MAP_DEBUG=1: the plan's phase times on stderr (as solve_map's).
void mark(const char* what, std::chrono::steady_clock::time_point& t) {
  static const bool debug = std::getenv("MLN_MAP_DEBUG") != nullptr;
  const auto now = std::chrono::steady_clock::now();
  if (debug) std::fprintf(stderr, "[spread %8.4f s] %s\n", std::chrono::duration<double>(now - t).count(), what);
  t = now;
}
}  // namespace

SpreadPlan plan_spread(const mln::Network& net, int workers, const SolveOptions& o, int64_t metis_max_atoms,
                       bool split) {
  if (workers < 1) throw std::invalid_argument("plan_spread: workers must be >= 1");
  auto t = std::chrono::steady_clock::now();
  const Components cc = find_components(net, false);  // a split component's clauses are listed below
  mark("components", t);
  SpreadPlan plan;
  plan.part_of.assign(static_cast<size_t>(net.num_atoms) + 1, -1);
  plan.components = cc.count;
  std::vector<int32_t> searched;
  int64_t total = 0;
  for (int32_t k = 0; k < cc.count; ++k) {
    if (o.skip_components_without_query && !cc.has_query[k]) continue;
    searched.push_back(k);
    total += work_of(cc, k);
  }
  plan.solved_components = static_cast<int>(searched.size());
  const int64_t share = std::max<int64_t>(1, (total + workers - 1) / workers);
  // Components above a share: parts of their own (components come largest
  // first, by Tuffy's size estimate).
  std::vector<int32_t> small;
  int64_t small_work = 0;
  for (int32_t k : searched) {
    const int64_t w = work_of(cc, k), n = cc.num_atoms(k);
    const int pieces = static_cast<int>(std::min<int64_t>({n, (w + share - 1) / share, 4096}));
    if (!split || w <= share || pieces < 2 || workers < 2) {
      small.push_back(k);
      small_work += w;
      continue;
    }
    const int32_t* atoms = cc.atoms.data() + cc.atom_off[k];
    // The component as a network of its own; not copied when it is the
    // whole network (RC: one component of every atom and clause).
    const bool whole = n == net.num_atoms && cc.num_clauses(k) == static_cast<int64_t>(net.clauses.size());
    SubNetwork sub;
    if (!whole) {  // local ids: the component's own (index_in_comp), as solve_map extracts it
      const auto& cs = net.clauses;
      const std::vector<int64_t> cl = select_clauses(static_cast<int64_t>(cs.size()), [&](int64_t c) {
        return cs.offsets[c + 1] != cs.offsets[c] && cc.comp_of_atom[std::abs(cs.lits[cs.offsets[c]])] == k;
      });
      sub = extract_subnetwork(net, std::vector<int32_t>(atoms, atoms + n), cl.data(), cl.size(), cc.index_in_comp,
                               nullptr);
      mark("component extracted", t);
    }
    const mln::Network& g = whole ? net : sub.net;
    std::vector<int32_t> piece;
    if (n > kSpreadStreamMaxAtoms) {  // id ranges of about n / pieces atoms
      piece.assign(static_cast<size_t>(n) + 1, 0);
      for (int64_t i = 0; i < n; ++i) piece[i + 1] = static_cast<int32_t>(i * pieces / n);
    } else {
      piece = n > metis_max_atoms ? partition_atoms_streaming(g, pieces)
                                  : partition_atoms(g, pieces, derive_seed(o.seed, 0x53505244ull + k));
    }
    mark(n > kSpreadStreamMaxAtoms ? "ranges" : n > metis_max_atoms ? "streaming partition" : "METIS", t);
    // (atoms are listed in ascending id, so local id i + 1 is atoms[i])
    for (int64_t i = 0; i < n; ++i) plan.part_of[atoms[i]] = plan.parts + piece[i + 1];
    plan.cut.insert(plan.cut.end(), static_cast<size_t>(pieces), 1);
    plan.parts += pieces;
  }
  // The other components, largest first into the least loaded of at most
  // `workers` groups of about a share each (ties: the lowest group).
  if (!small.empty()) {
    const int groups = static_cast<int>(std::clamp<int64_t>((small_work + share - 1) / share, 1,
                                                            std::min<int64_t>(workers, small.size())));
    std::vector<int64_t> load(static_cast<size_t>(groups), 0);
    for (int32_t k : small) {
      const int g = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
      load[g] += work_of(cc, k);
      for (int64_t i = cc.atom_off[k]; i < cc.atom_off[k + 1]; ++i) plan.part_of[cc.atoms[i]] = plan.parts + g;
    }
    plan.cut.insert(plan.cut.end(), static_cast<size_t>(groups), 0);
    plan.parts += groups;
  }
  // A part that METIS left empty, or whose atoms share no clause with
  // another part, is not cut.
  std::vector<std::atomic<uint8_t>> shares(static_cast<size_t>(plan.parts));
  for (auto& x : shares) x.store(0, std::memory_order_relaxed);
  const auto& cs = net.clauses;
  const int64_t m = static_cast<int64_t>(cs.size());
  int64_t cut_clauses = 0;
#pragma omp parallel for schedule(dynamic, 65536) reduction(+ : cut_clauses)
  for (int64_t c = 0; c < m; ++c) {
    const int64_t lo = cs.offsets[c], hi = cs.offsets[c + 1];
    if (hi - lo < 2) continue;
    const int32_t p0 = plan.part_of[std::abs(cs.lits[lo])];
    if (p0 < 0 || !plan.cut[p0]) continue;
    bool across = false;
    for (int64_t i = lo + 1; i < hi; ++i) {
      const int32_t q = plan.part_of[std::abs(cs.lits[i])];
      if (q != p0) {
        across = true;
        // (read first: stores from every thread to the same few bytes
        // contend for their cache line; docs/solver/spread.md)
        if (!shares[p0].load(std::memory_order_relaxed)) shares[p0].store(1, std::memory_order_relaxed);
        if (!shares[q].load(std::memory_order_relaxed)) shares[q].store(1, std::memory_order_relaxed);
      }
    }
    cut_clauses += across;
  }
  plan.cut_clauses = cut_clauses;
  for (int p = 0; p < plan.parts; ++p) plan.cut[p] = plan.cut[p] && shares[p].load();
  mark("cut parts", t);
  return plan;
}

namespace {
constexpr char kRunsTag[4] = {'R', 'U', 'N', '1'};  // an int4 array starts with part_of[0] = -1: ff ff ff ff
}  // namespace

std::string pack_part_of(const std::vector<int32_t>& part_of) {
  const size_t n = part_of.size();
  size_t runs = 0;
  for (size_t i = 0; i < n; ++i) runs += i == 0 || part_of[i] != part_of[i - 1];
  std::string b;
  if (4 + 8 * runs < 4 * n) {
    b.reserve(4 + 8 * runs);
    b.append(kRunsTag, 4);
    for (size_t i = 0; i < n;) {
      size_t j = i;
      while (j < n && part_of[j] == part_of[i] && j - i < INT32_MAX) ++j;
      append_le(b, part_of[i]);
      append_le(b, static_cast<int32_t>(j - i));
      i = j;
    }
    return b;
  }
  return le_bytes(part_of);
}

std::vector<int32_t> unpack_part_of(const char* bytes, size_t n) {
  std::vector<int32_t> out;
  if (n >= 4 && std::equal(kRunsTag, kRunsTag + 4, bytes)) {
    if ((n - 4) % 8 != 0) throw std::invalid_argument("a plan's part_of: runs of " + std::to_string(n) + " bytes");
    for (size_t at = 4; at < n; at += 8) {
      const int32_t v = read_le<int32_t>(bytes + at), count = read_le<int32_t>(bytes + at + 4);
      if (count <= 0 || out.size() + static_cast<size_t>(count) > (size_t{1} << 31))
        throw std::invalid_argument("a plan's part_of: a run of " + std::to_string(count) + " atoms");
      out.insert(out.end(), static_cast<size_t>(count), v);
    }
    return out;
  }
  if (n % 4 != 0) throw std::invalid_argument("a plan's part_of: " + std::to_string(n) + " bytes");
  out.resize(n / 4);
  for (size_t i = 0; i < out.size(); ++i) out[i] = read_le<int32_t>(bytes + 4 * i);
  return out;
}

std::string pack_state(const std::vector<uint8_t>& state) {
  std::string b((state.size() + 7) / 8, '\0');
  for (size_t i = 0; i < state.size(); ++i)
    if (state[i]) b[i / 8] = static_cast<char>(static_cast<unsigned char>(b[i / 8]) | (1u << (i % 8)));
  return b;
}

bool unpack_state(const char* bytes, size_t n, const std::vector<int32_t>& members, std::vector<uint8_t>& truth) {
  const int64_t atoms = static_cast<int64_t>(members.size());
  if (n != static_cast<size_t>((atoms + 7) / 8))
    throw std::invalid_argument("a part's state of " + std::to_string(n) + " bytes for " + std::to_string(atoms) +
                                " atoms");
  // One thread: several workers of one host read their states at once, each
  // at the start of its round, and a parallel region per part there cost
  // more than it saved (bench/results/gpu-4xNVIDIA-H200/spread_run.md).
  bool changed = false;
  for (int64_t i = 0; i < atoms; ++i) {
    const uint8_t v = (static_cast<unsigned char>(bytes[i / 8]) >> (i % 8)) & 1u;
    uint8_t& t = truth[members[i]];
    changed = changed || t != v;
    t = v;
  }
  return changed;
}

PartIndex index_parts(const mln::Network& net, const SpreadPlan& plan) {
  PartIndex idx;
  idx.members.resize(static_cast<size_t>(plan.parts));
  for (int32_t a = 1; a <= net.num_atoms; ++a)
    if (plan.part_of[a] >= 0) idx.members[plan.part_of[a]].push_back(a);
  return idx;
}

const std::vector<int64_t>& PartIndex::clauses(const mln::Network& net, const SpreadPlan& plan, int p) const {
  std::lock_guard<std::mutex> g(found->mu);
  auto it = found->by_part.find(p);
  if (it == found->by_part.end()) it = found->by_part.emplace(p, part_clauses(net, plan.part_of, p)).first;
  return it->second;
}

bool spread_pays(const mln::Network& net, const SpreadPlan& plan, const PartIndex& idx) {
  const std::vector<int64_t> clauses = part_clause_counts(net, plan.part_of, plan.parts);
  int64_t total = 0, most = 0;
  for (int p = 0; p < plan.parts; ++p) {
    const int64_t w = static_cast<int64_t>(idx.members[p].size()) + clauses[p];
    total += w;
    most = std::max(most, w);
  }
  return plan.parts > 1 && 3 * most <= 2 * total;
}

std::vector<uint8_t> spread_initial_truth(const mln::Network& net, const SpreadPlan& plan, uint64_t seed) {
  std::vector<uint8_t> t(static_cast<size_t>(net.num_atoms) + 1, 0);
  const uint64_t s = derive_seed(seed, 0x494e4954ull);
#pragma omp parallel for schedule(static) if (net.num_atoms >= 65536)
  for (int32_t a = 1; a <= net.num_atoms; ++a)
    t[a] = plan.part_of[a] < 0        ? 0
           : net.init_truth.empty() ? static_cast<uint8_t>(derive_seed(s, static_cast<uint64_t>(a)) >> 63)
                                    : static_cast<uint8_t>(net.init_truth[a] != 0);
  // A given start is kept as it is; else StartCosts' rule (network_cost.hpp).
  if (net.init_truth.empty() &&
      start_costs(net.clauses, nullptr, static_cast<int64_t>(net.clauses.size()), t).false_is_cheaper())
    std::fill(t.begin(), t.end(), 0);
  return t;
}

SubNetwork part_network(const mln::Network& net, const PartIndex& idx, int p, const int64_t* clauses, size_t count,
                        const std::vector<uint8_t>* fixed, const std::vector<uint8_t>* start) {
  const auto& mem = idx.members[p];
  SubNetwork sub = extract_subnetwork(net, mem, clauses, count, fixed);
  if (start && !start->empty()) {
    sub.net.init_truth.assign(mem.size() + 1, 0);
    for (size_t i = 0; i < mem.size(); ++i) sub.net.init_truth[i + 1] = (*start)[mem[i]];
  }
  return sub;
}

PartOutcome solve_part(const mln::Network& net, const SpreadPlan& plan, const PartIndex& idx, int p,
                       const std::vector<uint8_t>& truth, SolveOptions o, bool hold_boundary) {
  if (p < 0 || p >= plan.parts) throw std::invalid_argument("solve_part: no part " + std::to_string(p));
  const auto t0 = std::chrono::steady_clock::now();
  const auto& mem = idx.members[p];
  PartOutcome out;
  out.state.assign(mem.size(), 0);
  if (mem.empty()) return out;
  const std::vector<int64_t>& pc = idx.clauses(net, plan, p);
  out.clauses = static_cast<int64_t>(pc.size());
  std::vector<int64_t> inner;
  if (!hold_boundary && plan.cut[p]) {
    const auto& cs = net.clauses;
    inner = select_clauses(static_cast<int64_t>(pc.size()), [&](int64_t j) {
      const int64_t c = pc[j];
      for (int64_t i = cs.offsets[c]; i < cs.offsets[c + 1]; ++i)
        if (plan.part_of[std::abs(cs.lits[i])] != p) return false;
      return true;
    });
    for (int64_t& j : inner) j = pc[j];
  }
  const bool own = !hold_boundary && plan.cut[p];
  SubNetwork sub = part_network(net, idx, p, own ? inner.data() : pc.data(), own ? inner.size() : pc.size(), &truth,
                                &truth);
  o.skip_components_without_query = false;  // the plan holds searched components only
  const SolveResult r = solve_map(sub.net, o);
  for (size_t i = 0; i < mem.size(); ++i) out.state[i] = r.truth[i + 1];
  out.cost = r.cost + sub.constant_cost;
  out.bound = plan.cut[p] ? 0.0 : r.bound + sub.constant_cost;
  out.proven = !plan.cut[p] && r.optimal;
  report_run(out, r, t0);
  return out;
}

bool walk_kept(const SpreadPlan& plan, int p, int rounds, const SolveOptions& o) {
  return plan.cut[p] && rounds > 1 && part_walk_applies(o);
}

RoundStop::RoundStop(const SpreadPlan& plan, int rounds, const SolveOptions& o) {
  for (int p = 0; p < plan.parts; ++p)
    if (walk_kept(plan, p, rounds, o)) after_ = 2;
}

bool RoundStop::ends_after(int r, bool changed) {
  if (settled_ > 0) ++settled_;
  else if (!changed && r > 1) settled_ = 1;
  return settled_ >= after_;
}

int default_rounds(const SolveOptions& o) { return part_walk_applies(o) ? kKeptRounds : kSolvedRounds; }

std::vector<int> round_parts(const SpreadPlan& plan, int r) {
  std::vector<int> ps;
  for (int p = 0; p < plan.parts; ++p)
    if (r == 1 || plan.cut[p]) ps.push_back(p);
  return ps;
}

SolveOptions part_options(const SolveOptions& job, const SpreadPlan& plan, const PartIndex& idx, int p, int r,
                          int rounds, double seconds_left) {
  SolveOptions o = job;
  o.seed = derive_seed(job.seed, 0x50415254ull + static_cast<uint64_t>(r) * 1000003ull + static_cast<uint64_t>(p));
  if (job.max_flips > 0) {
    int64_t searched = 0;
    for (const auto& m : idx.members) searched += static_cast<int64_t>(m.size());
    const double share = static_cast<double>(job.max_flips) * static_cast<double>(idx.members[p].size()) /
                         static_cast<double>(std::max<int64_t>(1, searched)) / (plan.cut[p] ? std::max(1, rounds) : 1);
    o.max_flips = std::max<int64_t>(4, static_cast<int64_t>(share));
  }
  o.timeout_s = seconds_left > 0 ? seconds_left / std::max(1, rounds - r + 1) : 0;
  o.progress = nullptr;
  o.cancel = nullptr;
  return o;
}

SpreadResult solve_spread_local(const mln::Network& net, const SolveOptions& o, int workers, int rounds) {
  const auto t0 = std::chrono::steady_clock::now();
  const SpreadPlan plan = plan_spread(net, workers, o);
  const PartIndex idx = index_parts(net, plan);
  std::vector<uint8_t> truth = spread_initial_truth(net, plan, o.seed);
  SpreadResult res;
  std::vector<uint8_t> best;
  double best_cost = 0;
  std::map<int, std::unique_ptr<PartWalker>> walkers;  // the kept walks, by part
  WholeBound whole(net, plan, o);
  RoundStop ending(plan, rounds, o);
  for (int r = 1; r <= rounds; ++r) {
    const std::vector<int> ps = round_parts(plan, r);
    if (ps.empty()) break;
    std::vector<uint8_t> next = truth;
    bool changed = false;
    for (int p : ps) {  // every part of the round sees the round's start
      const SolveOptions po_opts = part_options(o, plan, idx, p, r, rounds, 0);
      PartOutcome po;
      if (walk_kept(plan, p, rounds, o)) {
        auto& w = walkers[p];
        if (!w) w = std::make_unique<PartWalker>(net, plan, idx, p, truth, po_opts);
        po = w->step(truth, po_opts);
      } else {
        po = solve_part(net, plan, idx, p, truth, po_opts, holds_boundary(r, rounds));
      }
      for (size_t i = 0; i < idx.members[p].size(); ++i) {
        changed = changed || next[idx.members[p][i]] != po.state[i];
        next[idx.members[p][i]] = po.state[i];
      }
      res.map.flips += po.flips;
      if (r == 1) res.map.bound += po.bound, res.map.proven_components += po.proven;
    }
    truth.swap(next);
    res.rounds_run = r;
    const SpreadTotals t = spread_totals(net, plan, truth);
    if (best.empty() || t.cost < best_cost) best = truth, best_cost = t.cost, res.map.hard_violated = t.hard_violated;
    if (ending.ends_after(r, changed)) break;
  }
  res.map.truth = std::move(best);
  res.map.cost = best_cost;
  res.map.bound = whole.finish(res.map.bound, res.map.cost);
  res.map.components = plan.components;
  res.map.solved_components = plan.solved_components;
  res.map.partitions = plan.parts;
  res.map.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

SpreadTotals spread_totals(const mln::Network& net, const SpreadPlan& plan, const std::vector<uint8_t>& truth) {
  const auto& cs = net.clauses;
  return chunked_sum<SpreadTotals>(static_cast<int64_t>(cs.size()), [&](int64_t c) {
    // A clause belongs to the component of its atoms (all in one); an
    // empty clause to none, and counts as solve_map counts it.
    const bool empty = cs.offsets[c] == cs.offsets[c + 1];
    if (empty ? cs.weights[c] <= 0 : plan.part_of[std::abs(cs.lits[cs.offsets[c]])] < 0) return SpreadTotals{};
    const double x = empty ? cs.weights[c] : clause_cost_of(cs, c, truth);
    return SpreadTotals{x, x > 0 && std::fabs(cs.weights[c]) >= kHardThreshold ? 1 : 0};
  });
}

}  // namespace mln::solver
