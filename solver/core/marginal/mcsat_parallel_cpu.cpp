// One MC-SAT chain with parallel SampleSAT rounds
// (mcsat_parallel_rules.hpp) on OpenMP threads: the CPU reference of the
// one-chain GPU sampler (mcsat_parallel_gpu.cu), tested against exact
// marginals like it.  Same contract as mcsat_cpu.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/marginal/mcsat_parallel.hpp"
#include "core/marginal/mcsat_parallel_rules.hpp"
#include "core/walk/walk_weighted.hpp"

namespace mln::solver {

McsatOutcome mcsat_parallel_cpu(const WalkInstance& in, const std::vector<uint8_t>& init, const McsatParams& p,
                                const McsatParallelOptions& po) {
  using namespace mcsat_parallel;
  McsatOutcome out;
  out.true_count.assign(in.n, 0);
  const std::vector<uint8_t> start = p.start_given ? init : mcsat_start_state(in, init, p, &out.flips);
  if (static_cast<int32_t>(start.size()) != in.n) throw std::invalid_argument("mcsat_parallel: init has the wrong size");
  const size_t m = std::max<int64_t>(1, in.m), n = std::max<int32_t>(1, in.n);
  std::vector<uint8_t> truth(start), alive(m, 0), sa_val(n, 0), prev, good;
  std::vector<int32_t> tc(m, 0), va(m), vb(m);
  std::vector<unsigned long long> claim(m, 0), sa(n, 0);
  std::vector<uint32_t> stamp(n, 0), cand(m, 0);
  unsigned long long ctr[3] = {0, 0, 0};
  weighted::Inst I{in.n, in.m, in.cl_off.data(), in.cl_lit.data(), in.occ_off.data(), in.occ.data(), in.w.data()};
  State S{truth.data(), tc.data(), alive.data(), claim.data(), stamp.data(), {va.data(), vb.data()},
          cand.data(), sa.data(), sa_val.data(), ctr};
  const int T = std::max(1, po.threads);
  // Counts from truth, and list 0 = the violated alive clauses.
  auto reload = [&]() {
    ctr[1] = ctr[2] = 0;
    for (int64_t c = 0; c < in.m; ++c) {
      tc[c] = weighted::true_literals(I, truth.data(), c);
      if (alive[c] && !sat(I, S, c)) va[ctr[1]++] = static_cast<int32_t>(c);
    }
  };
  int64_t round = 0;
  // Rounds until M is satisfied and `after` more (or `budget` in all); the
  // last state that satisfied M is kept in `good`.  Returns whether M was
  // satisfied at some point; truth ends at `good` if it was.
  auto sample_sat = [&](int64_t budget, int64_t after, double sa_probability) {
    round += round & 1;  // list 0 is read first
    reload();
    bool reached = ctr[1] == 0;
    if (reached) good = truth;
    int64_t left = after;
    for (int64_t r = 0; r < budget; ++r) {
      if (reached && left-- <= 0) break;
      const int inl = static_cast<int>(round & 1);
      const int64_t nv = static_cast<int64_t>(ctr[1 + inl]);
      RoundParams P{p.seed, round, sa_probability, po.sa_rate, p.random_step, p.sa_temperature};
#pragma omp parallel num_threads(T)
      {
#pragma omp for schedule(static)
        for (int64_t i = 0; i < nv; ++i) propose_walk(I, S, inl, i, P);
#pragma omp for schedule(static)
        for (int32_t a = 0; a < in.n; ++a) propose_sa(I, S, static_cast<uint32_t>(a), P);
#pragma omp for schedule(static)
        for (int64_t i = 0; i < nv; ++i) flip_walk(I, S, inl, i, P);
#pragma omp for schedule(static)
        for (int32_t a = 0; a < in.n; ++a) flip_sa(I, S, inl, static_cast<uint32_t>(a), P);
#pragma omp for schedule(static)
        for (int64_t i = 0; i < nv; ++i) settle_viol(I, S, inl, i);
#pragma omp for schedule(static)
        for (int32_t a = 0; a < in.n; ++a) settle_sa(I, S, static_cast<uint32_t>(a));
      }
      ctr[1 + inl] = 0;
      ++round;
      if (ctr[1 + (inl ^ 1)] == 0) {
        reached = true;
        good = truth;
      }
    }
    if (reached && ctr[1 + (round & 1)] != 0) std::copy(good.begin(), good.end(), truth.begin());
    return reached;
  };

  // The hard clauses first, as mcsat_cpu does.
  for (int64_t c = 0; c < in.m; ++c) alive[c] = mcsat_is_hard(in, c);
  for (int t = 0; t < 10; ++t) {
    if (sample_sat(po.max_rounds, 0, 0.0)) break;
  }
  reload();
  out.hard_satisfied = ctr[1] == 0;
  const std::vector<float> keep = mcsat_keep_probabilities(in, p.mcsat_param);
  const int64_t after = po.after_rounds > 0 ? po.after_rounds : static_cast<int64_t>(std::ceil(8.0 / po.sa_rate));
  Rng rng(derive_seed(p.seed, 0x50415241ull));
  // The SAT phase of each step: the weighted walk (downhill rounds with
  // clause weighting) on M, every alive clause weighing 1 and the others
  // nothing.  Parallel WalkSAT proposals alone rarely reached SAT(M) on
  // large instances (mcsat_parallel_rules.hpp).
  WalkInstance im = in;
  im.scale = 1;
  im.hard_fixed = INT64_MAX;
  WeightedOptions wo;
  wo.threads = T;
  wo.stall_rounds = 2000;
  auto walk_to_sat = [&](int64_t step) {
    for (int64_t c = 0; c < in.m; ++c) im.w[c] = alive[c] ? (in.w[c] > 0 ? 1 : -1) : 0;
    WalkParams wp;
    wp.flips_per_try = mcsat_flips_budget(p, in.n);
    wp.max_tries = 1;
    wp.seed = derive_seed(p.seed, 0x57534154ull + static_cast<uint64_t>(step));
    wp.stop = p.stop;
    WalkOutcome w = walk_weighted_cpu(im, truth, wp, wo);
    out.flips += w.flips;
    if (w.best_cost_fixed != 0) return false;
    std::copy(w.best.begin(), w.best.end(), truth.begin());
    return true;
  };
  for (int64_t step = 0; step < p.burn_in + p.samples; ++step) {
    if (p.stop && p.stop->should_stop()) { out.stopped = true; break; }
    for (int64_t c = 0; c < in.m; ++c) alive[c] = sat(I, S, c) && rng.uniform() < keep[c];
    prev = truth;
    for (int32_t a = 0; a < in.n; ++a) truth[a] = static_cast<uint8_t>(rng.next() >> 63);
    if (!walk_to_sat(step)) {
      ++out.unsat_calls;
      std::copy(prev.begin(), prev.end(), truth.begin());
    }
    sample_sat(after, after, p.sa_probability);  // from a state in SAT(M): the Metropolis sweeps
    out.flips += static_cast<int64_t>(ctr[0]);
    ctr[0] = 0;
    reload();
    if (step < p.burn_in) continue;
    for (int32_t a = 0; a < in.n; ++a) out.true_count[a] += truth[a];
    ++out.counted;
  }
  out.final_state = truth;
  return out;
}

}  // namespace mln::solver
