// GPU design (b): parallel flips inside ONE walk.  Each step, every violated
// clause proposes an atom by Tuffy's rules (random step / greedy with skip /
// negative-clause candidates / throttling) in parallel; an atom flips only if
// it holds the highest random priority on every clause it occurs in, so the
// flipped set shares no clause and each flip's delta stays exact.  Counts and
// the violated list are then updated in parallel.  The flip budget counts
// the flips made and the proposals skipped.
#include <algorithm>
#include <chrono>

#include "core/walk/walksat_gpu_common.cuh"

namespace mln::solver::gpu_detail {

namespace {

struct State {
  uint8_t* truth;
  uint8_t* best;
  int32_t* tc;
  uint32_t* crit;
  unsigned long long* claim;  // per clause: highest priority claiming it this step
  uint32_t* stamp;            // per atom: last step it flipped (dedup)
  int32_t* viol_in;
  int32_t* viol_out;
  uint32_t* cand;             // per violated entry: atom + 1, or 0 for no move
  unsigned long long* prio;   // per violated entry
  long long* scalars;         // [0] cost, [1] best cost, [2] next nviol, [3] improved flag,
                              // [4] moves this step (flips made + proposals skipped)
};

// Adds the number of this warp's threads with `yes` set to *counter (one
// atomic per warp: a per-thread atomic on one address from ~10^6 proposals
// a step would serialise on it).
__device__ void warp_count(bool yes, long long* counter) {
  const unsigned active = __activemask();
  const unsigned m = __ballot_sync(active, yes);
  if (m && (threadIdx.x & 31) == static_cast<unsigned>(__ffs(active) - 1))
    atomicAdd(reinterpret_cast<unsigned long long*>(counter), static_cast<unsigned long long>(__popc(m)));
}

// Per-step priority of an atom: random high bits, atom id low bits (unique).
__device__ unsigned long long atom_priority(uint64_t step_seed, uint32_t a) {
  uint64_t x = step_seed ^ (uint64_t(a) * 0x9E3779B97F4A7C15ull);
  uint64_t h = splitmix64(x);
  return ((h >> 32) << 32) | a;
}

// Delta and break weight of atom a (one thread).
__device__ void thread_delta(const DevInstance& I, const State& S, uint32_t a, int64_t& d, int64_t& brk) {
  d = 0;
  brk = 0;
  for (int64_t i = I.occ_off[a]; i < I.occ_off[a + 1]; ++i) occ_delta(I, S.truth, S.tc, a, I.occ[i], d, brk);
}

// Counts, the violated list and the cost from the current truth.
__global__ void init_kernel(DevInstance I, State S) {
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < I.m; c += int64_t(gridDim.x) * blockDim.x) {
    int32_t t = 0;
    uint32_t x = 0;
    for (int64_t i = I.cl_off[c]; i < I.cl_off[c + 1]; ++i) {
      uint32_t l = I.cl_lit[i];
      if (S.truth[l >> 1] == (l & 1)) { ++t; x ^= l >> 1; }
    }
    S.tc[c] = t;
    S.crit[c] = x;
    S.claim[c] = 0;
    int64_t w = I.w[c];
    if (clause_costly(w, t)) {
      S.viol_out[atomicAdd(reinterpret_cast<unsigned long long*>(&S.scalars[2]), 1ull)] = static_cast<int32_t>(c);
      atomicAdd(reinterpret_cast<unsigned long long*>(&S.scalars[0]), static_cast<unsigned long long>(w > 0 ? w : -w));
    }
  }
}

struct PickParams {
  double p;
  int dont_break;
  uint64_t seed;
  int64_t step;
};

// Every violated clause proposes an atom and claims the atom's clauses.
__global__ void pick_kernel(DevInstance I, State S, int32_t nviol, PickParams P) {
  int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nviol) return;
  const uint32_t c = static_cast<uint32_t>(S.viol_in[i]);
  Rng rng(derive_seed(P.seed ^ (uint64_t(P.step) * 0xD1B54A32D192ED03ull), i) | 1);
  const StepPick pick = pick_step(I, c, S.truth, S.tc, S.crit, P.p, P.dont_break, rng,
                                  [&](uint32_t b, int64_t& d, int64_t& bk) { thread_delta(I, S, b, d, bk); });
  warp_count(pick.skip, &S.scalars[4]);  // a skipped step still counts as a flip (Tuffy)
  if (pick.skip) { S.cand[i] = 0; return; }
  const uint32_t a = pick.atom;
  unsigned long long pr = atom_priority(P.seed + P.step, a);
  S.cand[i] = a + 1;
  S.prio[i] = pr;
  for (int64_t k = I.occ_off[a]; k < I.occ_off[a + 1]; ++k) atomicMax(&S.claim[I.occ[k] >> 1], pr);
}

// True if proposal i won every clause its atom touches (and is the first
// proposal of that atom this step).
__device__ bool wins(const DevInstance& I, const State& S, int32_t i, int64_t step) {
  if (S.cand[i] == 0) return false;
  const uint32_t a = S.cand[i] - 1;
  const unsigned long long pr = S.prio[i];
  for (int64_t k = I.occ_off[a]; k < I.occ_off[a + 1]; ++k)
    if (S.claim[I.occ[k] >> 1] != pr) return false;
  return atomicExch(&S.stamp[a], static_cast<uint32_t>(step + 1)) != static_cast<uint32_t>(step + 1);  // duplicate
}

// Flips the proposals that won every clause they touch.  Only these count
// as flips: a proposal that lost a claim did not move.
__global__ void flip_kernel(DevInstance I, State S, int32_t nviol, int64_t step) {
  int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nviol) return;
  const bool won = wins(I, S, i, step);
  warp_count(won, &S.scalars[4]);
  if (!won) return;
  const uint32_t a = S.cand[i] - 1;
  const uint8_t nv = S.truth[a] ^ 1;
  S.truth[a] = nv;
  int64_t dcost = 0;
  for (int64_t k = I.occ_off[a]; k < I.occ_off[a + 1]; ++k) {
    uint32_t o = I.occ[k], c = o >> 1;
    int64_t w = I.w[c], aw = w > 0 ? w : -w;
    int32_t t = S.tc[c];
    bool was = clause_costly(w, t);
    t += ((o & 1) == nv) ? 1 : -1;
    S.tc[c] = t;
    S.crit[c] ^= a;
    bool now = clause_costly(w, t);
    if (now && !was) {
      dcost += aw;
      S.viol_out[atomicAdd(reinterpret_cast<unsigned long long*>(&S.scalars[2]), 1ull)] = static_cast<int32_t>(c);
    } else if (was && !now) {
      dcost -= aw;
    }
  }
  atomicAdd(reinterpret_cast<unsigned long long*>(&S.scalars[0]), static_cast<unsigned long long>(dcost));
}

// Clears this step's claims and keeps old violated clauses that still cost.
__global__ void settle_kernel(DevInstance I, State S, int32_t nviol) {
  int32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= nviol) return;
  if (S.cand[i] != 0) {
    uint32_t a = S.cand[i] - 1;
    for (int64_t k = I.occ_off[a]; k < I.occ_off[a + 1]; ++k) S.claim[I.occ[k] >> 1] = 0;
  }
  uint32_t c = static_cast<uint32_t>(S.viol_in[i]);
  if (clause_costly(I.w[c], S.tc[c]))
    S.viol_out[atomicAdd(reinterpret_cast<unsigned long long*>(&S.scalars[2]), 1ull)] = static_cast<int32_t>(c);
}

// Marks whether the cost improved on the best (one thread).
__global__ void check_best_kernel(State S) {
  S.scalars[3] = S.scalars[0] < S.scalars[1];
  if (S.scalars[3]) S.scalars[1] = S.scalars[0];
}

// Copies truth to best when the last step improved.
__global__ void copy_best_kernel(State S, int32_t n, int force) {
  if (!force && !S.scalars[3]) return;
  for (int32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) S.best[i] = S.truth[i];
}

// Copies best to truth (COPY_LOW restart).
__global__ void restore_best_kernel(State S, int32_t n) {
  for (int32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) S.truth[i] = S.best[i];
}

}  // namespace

// Design (b); see walksat_gpu.hpp.
WalkOutcome walksat_gpu_parallel(const WalkInstance& in, const std::vector<uint8_t>& init, const WalkParams& p,
                                 const GpuWalkOptions& g) {
  WalkOutcome out;
  DevInstanceStore store(in);
  const DevInstance I = store.view(in);
  const size_t m = std::max<int64_t>(1, in.m), n = std::max<int32_t>(1, in.n);
  DeviceArray<uint8_t> truth, best(n);
  DeviceArray<int32_t> tc(m), va(m), vb(m);
  DeviceArray<uint32_t> crit(m), stamp(n), cand(m);
  DeviceArray<unsigned long long> claim(m), prio(m);
  DeviceArray<long long> scalars(5);
  truth.upload(init);
  MLN_CUDA_TRY(cudaMemset(stamp.get(), 0, n * sizeof(uint32_t)));
  State S{truth.get(), best.get(), tc.get(), crit.get(), claim.get(), stamp.get(),
          va.get(), vb.get(), cand.get(), prio.get(), scalars.get()};
  long long* h = nullptr;
  MLN_CUDA_TRY(cudaMallocHost(&h, 5 * sizeof(long long)));
  struct PinnedFree { long long* p; ~PinnedFree() { cudaFreeHost(p); } } guard{h};
  // (Re)initialises counts and the violated list from `truth`.
  auto reload = [&](bool first) {
    MLN_CUDA_TRY(cudaMemset(scalars.get(), 0, 3 * sizeof(long long)));
    init_kernel<<<grid_for(in.m, 256), 256>>>(I, S);
    MLN_CUDA_LAUNCHED("init_kernel");
    MLN_CUDA_TRY(cudaMemcpy(h, scalars.get(), 5 * sizeof(long long), cudaMemcpyDeviceToHost));
    if (first) {
      h[1] = h[0];
      MLN_CUDA_TRY(cudaMemcpy(scalars.get() + 1, h + 1, sizeof(long long), cudaMemcpyHostToDevice));
      copy_best_kernel<<<grid_for(in.n, 256), 256>>>(S, in.n, 1);
      MLN_CUDA_LAUNCHED("copy_best_kernel");
    }
    std::swap(S.viol_in, S.viol_out);
    return static_cast<int32_t>(h[2]);
  };
  int32_t nviol = reload(true);
  int64_t best_cost = h[1], step = 0, reported = 0;
  auto last_report = std::chrono::steady_clock::now();
  for (int t = 0; t < p.max_tries && !out.satisfied && !out.stopped; ++t) {
    if (t > 0) {
      restore_best_kernel<<<grid_for(in.n, 256), 256>>>(S, in.n);
      MLN_CUDA_LAUNCHED("restore_best_kernel");
      nviol = reload(false);
    }
    for (int64_t flips_in_try = 0; flips_in_try < p.flips_per_try;) {
      if (nviol == 0) { out.satisfied = true; break; }
      if (g.target_cost_fixed >= 0 && best_cost <= g.target_cost_fixed) { out.stopped = true; break; }
      ++step;
      const int blocks = grid_for(nviol, 256);
      MLN_CUDA_TRY(cudaMemsetAsync(scalars.get() + 2, 0, 3 * sizeof(long long)));  // nviol, improved, moves
      pick_kernel<<<blocks, 256>>>(I, S, nviol, PickParams{p.random_step, p.dont_break ? 1 : 0, p.seed, step});
      flip_kernel<<<blocks, 256>>>(I, S, nviol, step);
      settle_kernel<<<blocks, 256>>>(I, S, nviol);
      check_best_kernel<<<1, 1>>>(S);
      copy_best_kernel<<<grid_for(in.n, 256), 256>>>(S, in.n, 0);
      MLN_CUDA_LAUNCHED("parallel step");
      MLN_CUDA_TRY(cudaMemcpy(h, scalars.get(), 5 * sizeof(long long), cudaMemcpyDeviceToHost));
      std::swap(S.viol_in, S.viol_out);
      // Flips made plus proposals skipped count against the budget, as one
      // step each does in Tuffy's walk (at least one per step, so a step
      // where every proposal lost its claims still ends the try).  Counting
      // every proposal instead ran out of budget within a few dozen steps
      // on RC at 10^5 papers (10^6 violated clauses at the start), and the
      // walk stopped at 11x the CPU walk's cost.
      const int64_t moves = std::max<long long>(1, h[4]);
      out.flips += moves;
      flips_in_try += moves;
      nviol = static_cast<int32_t>(h[2]);
      best_cost = h[1];
      auto now = std::chrono::steady_clock::now();
      if (now - last_report > std::chrono::milliseconds(20)) {
        last_report = now;
        if (p.on_progress) p.on_progress(best_cost / in.scale, out.flips - reported);
        reported = out.flips;
        if (p.stop && p.stop->should_stop()) { out.stopped = true; break; }
      }
    }
  }
  if (nviol == 0) {  // the current state is a zero-cost one
    copy_best_kernel<<<grid_for(in.n, 256), 256>>>(S, in.n, 1);
    MLN_CUDA_LAUNCHED("copy_best_kernel");
    best_cost = 0;
  }
  if (p.on_progress) p.on_progress(best_cost / in.scale, out.flips - reported);
  out.best.resize(in.n);
  if (in.n > 0) MLN_CUDA_TRY(cudaMemcpy(out.best.data(), best.get(), in.n, cudaMemcpyDeviceToHost));
  out.best_cost_fixed = best_cost;
  out.best_cost = best_cost / in.scale;
  return out;
}

}  // namespace mln::solver::gpu_detail
