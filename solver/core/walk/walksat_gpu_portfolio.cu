// GPU design (a): a portfolio of independent WalkSAT walks, one per warp,
// over ONE read-only clause structure in device memory.  Each walk owns its
// truth / true-count / violated-set state; the 32 lanes of a warp share the
// work of a step (delta scans and count updates over occurrence lists) and
// run identical random streams, so control flow stays warp-uniform.
#include <algorithm>
#include <chrono>
#include <limits>

#include "core/walk/walksat_gpu_common.cuh"

namespace mln::solver::gpu_detail {

namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kWarpsPerBlock = 4;

// Per-walk scalars, kept in registers during a launch.
struct WalkCtl {
  uint64_t rng;
  int64_t cost, best_cost, flips, step;
  int32_t nviol, trail_len, try_idx, overflow;
  int32_t finished, need_init, satisfied, pad;
};

// Per-walk arrays: walk k's slice starts at k * n (atoms) or k * m (clauses).
struct WalkArrays {
  uint8_t* truth;
  uint8_t* best;
  uint32_t* trail;
  int32_t* tc;
  uint32_t* crit;
  int32_t* viol;
  int32_t* vpos;
};

// Sum of a 64-bit value over the warp (every lane gets it).
__device__ int64_t warp_sum64(int64_t v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFull, v, o);
  return v;
}

// One walk's view of its arrays.
struct View {
  uint8_t* truth;
  uint8_t* best;
  uint32_t* trail;
  int32_t* tc;
  uint32_t* crit;
  int32_t* viol;
  int32_t* vpos;
};

// Recomputes counts, the violated list (in clause order) and the cost.
__device__ void walk_init(const DevInstance& I, const View& v, int lane, int64_t& cost, int32_t& nviol) {
  nviol = 0;
  cost = 0;
  for (int64_t base = 0; base < I.m; base += 32) {
    int64_t c = base + lane;
    bool costly = false;
    int64_t add = 0;
    if (c < I.m) {
      int32_t t = 0;
      uint32_t x = 0;
      for (int64_t i = I.cl_off[c]; i < I.cl_off[c + 1]; ++i) {
        uint32_t l = I.cl_lit[i];
        if (v.truth[l >> 1] == (l & 1)) { ++t; x ^= l >> 1; }
      }
      v.tc[c] = t;
      v.crit[c] = x;
      v.vpos[c] = -1;
      int64_t w = I.w[c];
      costly = clause_costly(w, t);
      if (costly) add = w > 0 ? w : -w;
    }
    unsigned mask = __ballot_sync(kFull, costly);
    if (costly) {
      int r = __popc(mask & ((1u << lane) - 1));
      v.viol[nviol + r] = static_cast<int32_t>(c);
      v.vpos[c] = nviol + r;
    }
    nviol += __popc(mask);
    cost += warp_sum64(add);
  }
  __syncwarp();
}

// Flip delta and break weight of atom a (warp-cooperative).
__device__ void atom_delta(const DevInstance& I, const View& v, uint32_t a, int lane, int64_t& d, int64_t& brk) {
  d = 0;
  brk = 0;
  for (int64_t i = I.occ_off[a] + lane; i < I.occ_off[a + 1]; i += 32) occ_delta(I, v.truth, v.tc, a, I.occ[i], d, brk);
  d = warp_sum64(d);
  brk = warp_sum64(brk);
}

// Flips atom a and updates counts and the violated list (warp-cooperative).
__device__ void walk_flip(const DevInstance& I, const View& v, uint32_t a, int lane, int32_t& nviol) {
  uint8_t nv = v.truth[a] ^ 1;
  __syncwarp();
  if (lane == 0) v.truth[a] = nv;
  const int64_t lo = I.occ_off[a], hi = I.occ_off[a + 1];
  for (int64_t base = lo; base < hi; base += 32) {
    int64_t i = base + lane;
    bool add = false, rem = false;
    uint32_t c = 0;
    if (i < hi) {
      uint32_t o = I.occ[i];
      c = o >> 1;
      int64_t w = I.w[c];
      int32_t t = v.tc[c];
      bool was = clause_costly(w, t);
      t += ((o & 1) == nv) ? 1 : -1;
      v.tc[c] = t;
      v.crit[c] ^= a;
      bool now = clause_costly(w, t);
      add = now && !was;
      rem = was && !now;
    }
    unsigned rm = __ballot_sync(kFull, rem);
    __syncwarp();
    while (rm) {  // removals one at a time (swap with the last entry)
      int src = __ffs(rm) - 1;
      uint32_t cc = __shfl_sync(kFull, c, src);
      if (lane == 0) {
        int32_t p = v.vpos[cc], last = v.viol[nviol - 1];
        v.viol[p] = last;
        v.vpos[last] = p;
        v.vpos[cc] = -1;
      }
      --nviol;
      rm &= rm - 1;
      __syncwarp();
    }
    unsigned am = __ballot_sync(kFull, add);
    if (add) {
      int r = __popc(am & ((1u << lane) - 1));
      v.viol[nviol + r] = static_cast<int32_t>(c);
      v.vpos[c] = nviol + r;
    }
    nviol += __popc(am);
    __syncwarp();
  }
}

// Brings the walk's best state up to date with the current one.
__device__ void record_best(const View& v, int lane, int32_t n, WalkCtl& s) {
  __syncwarp();
  if (s.overflow) {
    for (int32_t i = lane; i < n; i += 32) v.best[i] = v.truth[i];
  } else {
    for (int32_t i = lane; i < s.trail_len; i += 32) v.best[v.trail[i]] = v.truth[v.trail[i]];
  }
  s.trail_len = 0;
  s.overflow = 0;
  s.best_cost = s.cost;
  __syncwarp();
}

struct StepParams {
  int64_t flips_per_try;
  int max_tries;
  double p;
  int dont_break;
  int64_t target;  // < 0: none
};

// Runs up to `steps` steps of every walk (one warp each).
__global__ void portfolio_kernel(DevInstance I, WalkArrays A, WalkCtl* ctl, int walks, int64_t steps, StepParams P,
                                 int* done) {
  const int walk = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x & 31;
  if (walk >= walks) return;
  View v{A.truth + size_t(walk) * I.n, A.best + size_t(walk) * I.n, A.trail + size_t(walk) * I.n,
         A.tc + size_t(walk) * I.m,   A.crit + size_t(walk) * I.m, A.viol + size_t(walk) * I.m,
         A.vpos + size_t(walk) * I.m};
  WalkCtl s = ctl[walk];
  Rng rng(s.rng);
  if (s.need_init) {
    walk_init(I, v, lane, s.cost, s.nviol);
    s.best_cost = s.cost;
    s.need_init = 0;
  }
  for (int64_t k = 0; k < steps && !s.finished; ++k) {
    if ((k & 63) == 0 && *reinterpret_cast<volatile int*>(done)) { s.finished = 1; break; }
    if (s.step >= P.flips_per_try) {  // end of a try: restart from the best (COPY_LOW)
      s.step = 0;
      if (++s.try_idx >= P.max_tries) { s.finished = 1; break; }
      __syncwarp();
      for (int32_t i = lane; i < I.n; i += 32) v.truth[i] = v.best[i];
      __syncwarp();
      walk_init(I, v, lane, s.cost, s.nviol);
      s.trail_len = 0;
      s.overflow = 0;
    }
    if (s.nviol == 0) {  // nothing violated: optimal, stop every walk
      record_best(v, lane, I.n, s);
      s.satisfied = 1;
      s.finished = 1;
      if (lane == 0) atomicExch(done, 1);
      break;
    }
    ++s.flips;
    ++s.step;
    const uint32_t c = static_cast<uint32_t>(v.viol[rng.below(static_cast<uint32_t>(s.nviol))]);
    const StepPick pick = pick_step(I, c, v.truth, v.tc, v.crit, P.p, P.dont_break, rng,
                                    [&](uint32_t b, int64_t& d, int64_t& bk) { atom_delta(I, v, b, lane, d, bk); });
    if (pick.skip) continue;
    const uint32_t a = pick.atom;
    const int64_t da = pick.delta;
    walk_flip(I, v, a, lane, s.nviol);
    s.cost += da;
    if (!s.overflow) {
      if (lane == 0) v.trail[s.trail_len] = a;
      if (++s.trail_len >= I.n) { s.trail_len = 0; s.overflow = 1; }
    }
    if (s.cost < s.best_cost) {
      record_best(v, lane, I.n, s);
      if (P.target >= 0 && s.best_cost <= P.target && lane == 0) atomicExch(done, 1);
    }
  }
  s.rng = rng.s;
  __syncwarp();
  if (lane == 0) ctl[walk] = s;
}

// Copies the start state into every walk's truth and best.
__global__ void broadcast_init(const uint8_t* init, uint8_t* truth, uint8_t* best, int32_t n, int walks) {
  size_t total = size_t(n) * walks;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < total; i += size_t(gridDim.x) * blockDim.x) {
    truth[i] = init[i % n];
    best[i] = init[i % n];
  }
}

}  // namespace

// Design (a); see walksat_gpu.hpp.
WalkOutcome walksat_gpu_portfolio(const WalkInstance& in, const std::vector<uint8_t>& init, const WalkParams& p,
                                  const GpuWalkOptions& g) {
  WalkOutcome out;
  DevInstanceStore store(in);
  const DevInstance I = store.view(in);
  int dev = 0, sms = 0;
  MLN_CUDA_TRY(cudaGetDevice(&dev));
  MLN_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  size_t free_b = 0, total_b = 0;
  MLN_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
  const size_t per_walk = size_t(in.n) * 6 + size_t(in.m) * 16 + 64;
  int walks = g.walks > 0 ? g.walks : sms * 16;
  walks = static_cast<int>(std::min<size_t>(walks, free_b * 7 / 10 / per_walk));
  if (walks < 1) throw GpuError("not enough device memory for one walk");
  DeviceArray<uint8_t> truth(size_t(in.n) * walks), best(size_t(in.n) * walks), d_init;
  DeviceArray<uint32_t> trail(size_t(in.n) * walks), crit(size_t(in.m) * walks);
  DeviceArray<int32_t> tc(size_t(in.m) * walks), viol(size_t(in.m) * walks), vpos(size_t(in.m) * walks);
  DeviceArray<WalkCtl> ctl(walks);
  DeviceArray<int> done(1);
  d_init.upload(init);
  broadcast_init<<<std::max(1, std::min(4096, int((size_t(in.n) * walks + 255) / 256))), 256>>>(
      d_init.get(), truth.get(), best.get(), in.n, walks);
  MLN_CUDA_LAUNCHED("broadcast_init");
  std::vector<WalkCtl> h(walks);
  for (int k = 0; k < walks; ++k) {
    h[k] = WalkCtl{};
    h[k].rng = derive_seed(p.seed, uint64_t(k) + 1) | 1;
    h[k].need_init = 1;
  }
  MLN_CUDA_TRY(cudaMemcpy(ctl.get(), h.data(), sizeof(WalkCtl) * walks, cudaMemcpyHostToDevice));
  MLN_CUDA_TRY(cudaMemset(done.get(), 0, sizeof(int)));
  WalkArrays A{truth.get(), best.get(), trail.get(), tc.get(), crit.get(), viol.get(), vpos.get()};
  StepParams P{p.flips_per_try, p.max_tries, p.random_step, p.dont_break ? 1 : 0, g.target_cost_fixed};
  const int blocks = (walks + kWarpsPerBlock - 1) / kWarpsPerBlock;
  int64_t steps = 256, reported = 0;
  while (true) {
    auto t0 = std::chrono::steady_clock::now();
    portfolio_kernel<<<blocks, kWarpsPerBlock * 32>>>(I, A, ctl.get(), walks, steps, P, done.get());
    MLN_CUDA_LAUNCHED("portfolio_kernel");
    MLN_CUDA_TRY(cudaMemcpy(h.data(), ctl.get(), sizeof(WalkCtl) * walks, cudaMemcpyDeviceToHost));
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (secs < 0.02 && steps < (int64_t{1} << 22)) steps *= 2;
    else if (secs > 0.1 && steps > 64) steps /= 2;
    int64_t flips = 0, best_cost = INT64_MAX;
    bool all_done = true;
    for (const auto& s : h) {
      flips += s.flips;
      best_cost = std::min(best_cost, s.best_cost);
      all_done &= s.finished != 0;
    }
    if (p.on_progress) p.on_progress(best_cost / in.scale, flips - reported);
    reported = flips;
    if (all_done) break;
    if (p.stop && p.stop->should_stop()) { out.stopped = true; break; }
  }
  int pick = 0;
  for (int k = 0; k < walks; ++k) {
    out.flips += h[k].flips;
    out.satisfied |= h[k].satisfied != 0;
    if (h[k].best_cost < h[pick].best_cost) pick = k;
  }
  out.best_cost_fixed = h[pick].best_cost;
  out.best_cost = out.best_cost_fixed / in.scale;
  out.best.resize(in.n);
  if (in.n > 0)
    MLN_CUDA_TRY(cudaMemcpy(out.best.data(), best.get() + size_t(pick) * in.n, in.n, cudaMemcpyDeviceToHost));
  return out;
}

}  // namespace mln::solver::gpu_detail
