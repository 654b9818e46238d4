// One MC-SAT chain on the whole GPU (mcsat_parallel.hpp): the steps of
// mcsat_parallel_cpu.cpp over ONE device copy of the instance.  The start
// (one walk on the true weights, then the hard clauses) uses the weighted
// walk's GPU backend (walk_weighted_gpu.cuh).  The steps are one cooperative
// kernel (steps_kernel) that runs a batch of whole steps with grid-wide
// barriers between the phases of a round: M drawn from the current state,
// SampleSAT's coin-flip start, the SAT phase (the weighted walk's rules on
// M, alive clauses weighing +-1, the rest 0), the sweeps
// (mcsat_parallel_rules.hpp's rounds), and the sample's tally, cost and
// features.  A step is some 10^2 rounds of a few small phases: one launch
// per round phase costs more than the phase itself, a grid barrier a few
// microseconds (docs/solver/marginal.md).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include <cooperative_groups.h>

#include "core/marginal/mcsat_gpu.hpp"
#include "core/marginal/mcsat_parallel.hpp"
#include "core/marginal/mcsat_parallel_rules.hpp"
#include "core/walk/walk_weighted_gpu.cuh"
#include "core/walk/walk_weighted_warp.cuh"

namespace mln::solver {

namespace gpu_detail {

namespace {

namespace mp = mcsat_parallel;

enum : int { kFlips = 0, kViol0 = 1, kViol1 = 2, kCost = 3, kCtr = 4 };

// Counts and list 0 (violated alive clauses) from truth.
__global__ void counts_kernel(weighted::Inst I, mp::State S) {
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < I.m; c += int64_t(gridDim.x) * blockDim.x) {
    S.tc[c] = weighted::true_literals(I, S.truth, c);
    if (S.alive[c] && !mp::sat(I, S, c)) S.viol[0][atomicAdd(&S.ctr[kViol0], 1ull)] = static_cast<int32_t>(c);
  }
}

// Whether clause c is in M: hard clauses always (hard_only: only they), a
// satisfied soft clause with its keep probability; the SAT phase's weight
// follows (+-1 in M, else 0).
__device__ inline void choose_clause(const weighted::Inst& I, const mp::State& S, const float* keep, int64_t* wm,
                                     uint64_t seed, int hard_only, int64_t c) {
  const bool a = hard_only ? keep[c] > 1.5f
                           : mp::sat(I, S, c) && Rng(derive_seed(seed, static_cast<uint64_t>(c)) | 1).uniform() < keep[c];
  S.alive[c] = a;
  wm[c] = a ? (I.w[c] > 0 ? 1 : -1) : 0;
}

__global__ void choose_kernel(weighted::Inst I, mp::State S, const float* keep, int64_t* wm, uint64_t seed,
                              int hard_only) {
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < I.m; c += int64_t(gridDim.x) * blockDim.x)
    choose_clause(I, S, keep, wm, seed, hard_only, c);
}

// Everything steps_kernel reads.  The walk (W) and the sweeps (S) share
// truth, tc, claim, stamp, the violated lists and cand: one runs after the
// other, and round numbers (R, for random streams and stamps) never repeat.
struct StepArgs {
  weighted::Inst I;   // true weights
  weighted::Inst Im;  // the SAT phase's weights (wm)
  weighted::State W;
  mp::State S;
  weighted::RoundParams Pw;  // the walk's rules (round set per round)
  double smooth_keep;
  mp::RoundParams Ps;        // the sweeps' rules
  const float* keep;
  int64_t* wm;
  uint8_t* prev;
  uint8_t* good;
  int32_t* count;
  uint32_t* wflips;          // [2] the walk's flips by round parity
  const int64_t* foff;
  const int32_t* fidx;
  const int32_t* fcoef;      // integral coefficients: summed exactly, so in any order the same
  int k;
  unsigned long long* fsample;  // [k] this sample's features (two's complement int64)
  double* fstat;             // [k] sums, then [k * k] products, over samples
  double* cost_sum;          // over counted samples, in weight units
  double inv_scale;
  unsigned long long* out;   // [0] round counter R, [1] unsat steps, [2] counted, [3] walk rounds, [4] walk flips,
                             // [5..8] ns in M + init, the walk, the sweeps, the sample (thread 0's laps)
  uint64_t seed;
  int64_t step0, steps, burn_in;
  int64_t max_rounds, after;
  int warp;                  // the SAT phase's rounds with a warp per violated entry (walk_weighted_warp.cuh)
};

// Nanoseconds (the GPU's global timer), for MLN_MCSAT_DEBUG's phase times.
__device__ inline unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ inline bool load_zero(const unsigned long long* p) { return weighted::load_u64(p) == 0; }

// Recounts tc from truth (grid-stride; the caller syncs after).
__device__ inline void recount(const StepArgs& A, int64_t tid, int64_t T) {
  for (int64_t c = tid; c < A.I.m; c += T) A.S.tc[c] = weighted::true_literals(A.I, A.S.truth, c);
}

// long function: one step's phases in order, separated by grid-wide syncs;
// the synchronisation is checked by reading them in one place.
__global__ void __launch_bounds__(256) steps_kernel(StepArgs A) {
  namespace cg = cooperative_groups;
  cg::grid_group g = cg::this_grid();
  const int64_t tid = blockIdx.x * int64_t(blockDim.x) + threadIdx.x, T = int64_t(gridDim.x) * blockDim.x;
  const int32_t n = A.I.n;
  const int64_t m = A.I.m;
  int64_t R = static_cast<int64_t>(A.out[0]);
  weighted::State W = A.W;
  unsigned long long t_mark = tid == 0 ? now_ns() : 0;
  // Thread 0 adds the time since the last mark to out[5 + phase].
  auto lap = [&](int phase) {
    if (tid != 0) return;
    const unsigned long long t = now_ns();
    A.out[5 + phase] += t - t_mark;
    t_mark = t;
  };
  for (int64_t s = 0; s < A.steps; ++s) {
    const int64_t step = A.step0 + s;
    const uint64_t sseed = derive_seed(A.seed, 0x5354455000000000ull + static_cast<uint64_t>(step));
    // 1. M from the current state (tc is its), the walk's weights, and
    // SampleSAT's coin-flip start (prev keeps the state).
    const uint64_t cseed = derive_seed(sseed, 1), fseed = derive_seed(sseed, 2);
    for (int64_t c = tid; c < m; c += T) choose_clause(A.I, A.S, A.keep, A.wm, cseed, 0, c);
    for (int64_t a = tid; a < n; a += T) {
      A.prev[a] = A.S.truth[a];
      A.S.truth[a] = static_cast<uint8_t>(Rng(derive_seed(fseed, static_cast<uint64_t>(a)) | 1).next() >> 63);
    }
    if (tid == 0) {
      for (int c = 0; c < weighted::kCounters; ++c) W.ctr[c] = 0;
      W.pcost[0] = 0;
      W.pfrozen[0] = 0;
      A.wflips[0] = A.wflips[1] = 0;
      for (int j = 0; j < A.k; ++j) A.fsample[j] = 0;
    }
    g.sync();
    // 2. The walk's counts, weights and list 0.
    for (int64_t c = tid; c < m; c += T) weighted::init_clause(A.Im, W, c, 1);
    g.sync();
    lap(0);
    // 3. The SAT phase: rounds until M holds (list parity by r, randomness by R).
    int64_t r = 0;
    uint32_t still = 0;
    weighted::RoundParams Pw = A.Pw;
    for (; r < A.max_rounds; ++r, ++R) {
      const int in = static_cast<int>(r & 1);
      const int64_t nv = static_cast<int64_t>(weighted::load_u64(&W.ctr[weighted::kViol0 + in]));
      if (nv == 0) break;
      Pw.round = R;
      W.pflips = A.wflips + in;
      // A warp per entry shortens each entry's chain of loads (~3 deep
      // instead of ~30) but gives each warp 32x the entries: worth it while
      // the list is short, which is most of the rounds (the tail).
      const int64_t NW = T >> 5;
      if (A.warp && nv <= warp_rules::kEntriesPerWarp * NW) {
        const int lane = static_cast<int>(threadIdx.x & 31);
        const int64_t wid = tid >> 5;
        for (int64_t i = wid; i < nv; i += NW) warp_rules::propose(A.Im, W, in, i, Pw, lane);
        g.sync();
        for (int64_t i = wid; i < nv; i += NW) warp_rules::flip(A.Im, W, in, i, R, lane);
        g.sync();
        for (int64_t i = wid; i < nv; i += NW) warp_rules::settle(A.Im, W, in, i, Pw, lane);
        g.sync();
      } else {
        for (int64_t i = tid; i < nv; i += T) weighted::propose(A.Im, W, in, i, Pw);
        g.sync();
        for (int64_t i = tid; i < nv; i += T) weighted::flip(A.Im, W, in, i, R);
        g.sync();
        for (int64_t i = tid; i < nv; i += T) weighted::settle(A.Im, W, in, i, Pw);
        g.sync();
      }
      // Freezing (walk_weighted_rules.hpp's end_part, one part): every
      // thread tracks the same count of rounds without a flip.
      still = *reinterpret_cast<volatile uint32_t*>(A.wflips + in) == 0 ? still + 1 : 0;
      const bool frozen = still >= Pw.freeze_rounds;
      if (frozen) {
        still = 0;
        for (int64_t c = tid; c < m; c += T) weighted::smooth_clause(A.Im, W, c, A.smooth_keep);
      }
      if (tid == 0) {
        W.pfrozen[0] = frozen;
        W.ctr[weighted::kViol0 + in] = 0;
        A.wflips[in ^ 1] = 0;
      }
      g.sync();
    }
    const bool reached = load_zero(&W.ctr[weighted::kViol0 + (r & 1)]);
    if (tid == 0) {
      A.out[3] += static_cast<unsigned long long>(r);
      A.out[4] += W.ctr[weighted::kFlips];
      if (!reached) ++A.out[1];
      A.S.ctr[kViol0] = A.S.ctr[kViol1] = 0;
    }
    if (!reached) {  // the step goes on from the previous state, which satisfies M
      for (int64_t a = tid; a < n; a += T) A.S.truth[a] = A.prev[a];
      g.sync();
      recount(A, tid, T);
    }
    lap(1);
    // 4. The sweeps, from a state in SAT(M) (its violated alive list is empty).
    for (int64_t a = tid; a < n; a += T) A.good[a] = A.S.truth[a];
    g.sync();
    mp::RoundParams Ps = A.Ps;
    for (int64_t j = 0; j < A.after; ++j, ++R) {
      const int l = static_cast<int>(j & 1);
      const int64_t nv = static_cast<int64_t>(weighted::load_u64(&A.S.ctr[kViol0 + l]));
      Ps.round = R;
      for (int64_t i = tid; i < nv; i += T) mp::propose_walk(A.I, A.S, l, i, Ps);
      for (int64_t a = tid; a < n; a += T) mp::propose_sa(A.I, A.S, static_cast<uint32_t>(a), Ps);
      g.sync();
      for (int64_t i = tid; i < nv; i += T) mp::flip_walk(A.I, A.S, l, i, Ps);
      g.sync();
      for (int64_t a = tid; a < n; a += T) mp::flip_sa(A.I, A.S, l, static_cast<uint32_t>(a), Ps);
      g.sync();
      for (int64_t i = tid; i < nv; i += T) mp::settle_viol(A.I, A.S, l, i);
      for (int64_t a = tid; a < n; a += T) mp::settle_sa(A.I, A.S, static_cast<uint32_t>(a));
      g.sync();
      if (load_zero(&A.S.ctr[kViol0 + (l ^ 1)]))
        for (int64_t a = tid; a < n; a += T) A.good[a] = A.S.truth[a];
      if (tid == 0) A.S.ctr[kViol0 + l] = 0;
      g.sync();
    }
    if (!load_zero(&A.S.ctr[kViol0 + (A.after & 1)])) {  // M left violated: back to the last state in SAT(M)
      for (int64_t a = tid; a < n; a += T) A.S.truth[a] = A.good[a];
      g.sync();
      recount(A, tid, T);
      g.sync();
    }
    lap(2);
    // 5. The sample: atoms, cost, features.
    if (step < A.burn_in) continue;
    for (int64_t a = tid; a < n; a += T) A.count[a] += A.S.truth[a];
    unsigned long long cost = 0;
    for (int64_t c = tid; c < m; c += T) {
      const int64_t w = A.I.w[c];
      const int32_t t = A.S.tc[c];
      if (weighted::costly(w, t)) cost += static_cast<unsigned long long>(w > 0 ? w : -w);
      if (A.k > 0 && t > 0)
        for (int64_t q = A.foff[c]; q < A.foff[c + 1]; ++q)
          atomicAdd(&A.fsample[A.fidx[q]], static_cast<unsigned long long>(static_cast<long long>(A.fcoef[q])));
    }
    for (int sh = 16; sh > 0; sh >>= 1) cost += __shfl_down_sync(0xffffffffu, cost, sh);
    if ((threadIdx.x & 31) == 0 && cost) atomicAdd(&A.S.ctr[kCost], cost);
    g.sync();
    if (tid == 0) {
      *A.cost_sum += static_cast<double>(static_cast<int64_t>(A.S.ctr[kCost])) * A.inv_scale;
      A.S.ctr[kCost] = 0;
      ++A.out[2];
    }
    for (int64_t q = tid; q < static_cast<int64_t>(A.k) * (A.k + 1); q += T) {
      const auto f = [&](int64_t j) { return static_cast<double>(static_cast<long long>(A.fsample[j])); };
      if (q < A.k) A.fstat[q] += f(q);
      else {
        const int64_t ab = q - A.k;
        A.fstat[q] += f(ab / A.k) * f(ab % A.k);
      }
    }
    g.sync();
    lap(3);
  }
  if (tid == 0) A.out[0] = static_cast<unsigned long long>(R);
}

}  // namespace

// Many threads sum the features at once: float atomics would round in the
// order threads arrive (learned weights differing run to run), integers add
// exactly in any order.  Learning's coefficients are +-1: nothing is lost.
namespace {
std::vector<int32_t> integral_coefficients(const std::vector<float>& coef) {
  std::vector<int32_t> out(coef.size());
  for (size_t i = 0; i < coef.size(); ++i) {
    const float c = coef[i];
    if (!(std::fabs(c) <= float(1 << 20)) || c != std::nearbyint(c))
      throw std::invalid_argument("mcsat_parallel_gpu: a feature coefficient that is not a small integer");
    out[i] = static_cast<int32_t>(c);
  }
  return out;
}
}  // namespace
}  // namespace gpu_detail

// long function: the device buffers, their upload, the launch loop and the
// read-back share one scope, so every buffer is released on every way out.
McsatOutcome mcsat_parallel_gpu(const WalkInstance& in, const std::vector<uint8_t>& init, const McsatParams& p,
                                const McsatParallelOptions& po, const GpuFeatures* features) {
  using namespace gpu_detail;
  using weighted_gpu::GpuBackend;
  McsatOutcome out;
  if ((p.start_given || !init.empty()) && static_cast<int32_t>(init.size()) != in.n)
    throw std::invalid_argument("mcsat_parallel_gpu: init has the wrong size");
  const int k = features ? features->k : 0;
  if (k > kGpuMaxFeatures) throw std::invalid_argument("mcsat_parallel_gpu: more than kGpuMaxFeatures features");
  const size_t m = std::max<int64_t>(1, in.m), n = std::max<int32_t>(1, in.n);

  DevInstanceStore store(in);
  DeviceArray<int64_t> wm(m), foff;
  DeviceArray<float> keep;
  DeviceArray<int32_t> fidx, fcoef;
  keep.upload(mcsat_keep_probabilities(in, p.mcsat_param));
  if (k > 0) {
    foff.upload(features->off);
    fidx.upload(features->idx);
    fcoef.upload(integral_coefficients(features->coef));
  }
  std::vector<uint8_t> start = init;
  if (start.empty()) {  // coin flips, as mcsat_start_state
    Rng r(derive_seed(p.seed, 0x53544152ull));
    start.resize(in.n);
    for (auto& v : start) v = static_cast<uint8_t>(r.next() >> 63);
  }
  DeviceArray<uint8_t> truth, prev(n), good(n), alive(m), sa_val(n);
  truth.upload(start);
  DeviceArray<int32_t> tc(m), va(m), vb(m), count(n);
  DeviceArray<unsigned long long> claim(m), sa(n), ctr(kCtr);
  DeviceArray<uint32_t> stamp(n), cand(m);
  MLN_CUDA_TRY(cudaMemset(claim.get(), 0, m * sizeof(unsigned long long)));
  MLN_CUDA_TRY(cudaMemset(stamp.get(), 0, n * sizeof(uint32_t)));
  MLN_CUDA_TRY(cudaMemset(count.get(), 0, n * sizeof(int32_t)));
  MLN_CUDA_TRY(cudaMemset(alive.get(), 0, m));
  MLN_CUDA_TRY(cudaMemset(ctr.get(), 0, kCtr * sizeof(unsigned long long)));
  const weighted::Inst I{in.n, in.m, store.cl_off.get(), store.cl_lit.get(), store.occ_off.get(), store.occ.get(),
                         store.w.get()};
  weighted::Inst Im = I;
  Im.w = wm.get();
  mp::State S{truth.get(), tc.get(), alive.get(), claim.get(), stamp.get(), {va.get(), vb.get()},
              cand.get(), sa.get(), sa_val.get(), ctr.get()};
  int dev = 0, sms = 0;
  MLN_CUDA_TRY(cudaGetDevice(&dev));
  MLN_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  const int cb = static_cast<int>(std::min<int64_t>((m + 255) / 256, int64_t(sms) * 8));
  unsigned long long host[kCtr];
  auto read = [&] {
    MLN_CUDA_TRY(cudaMemcpy(host, ctr.get(), sizeof(host), cudaMemcpyDeviceToHost));
  };
  // Counts and list 0 of truth.
  auto reload = [&] {
    MLN_CUDA_TRY(cudaMemset(ctr.get() + kViol0, 0, (kCtr - kViol0) * sizeof(unsigned long long)));
    counts_kernel<<<cb, 256>>>(I, S);
    MLN_CUDA_LAUNCHED("counts_kernel");
  };

  // The start, with the weighted walk's GPU backend (freed before the steps
  // allocate their state): one walk on the true weights (mcsat_start_state's
  // MaxWalkSAT try) unless the caller gives the state, then the hard
  // clauses, should any be violated.
  WeightedOptions wo;
  wo.stall_rounds = 2000;
  wo.max_batch = po.max_batch;
  {
    GpuBackend walker(I, truth.get());
    auto walk = [&](const weighted::Inst& on, const WalkInstance& shape, uint64_t seed) {
      walker.set_instance(on);
      WalkParams wp;
      wp.flips_per_try = mcsat_flips_budget(p, in.n);
      wp.max_tries = 1;
      wp.seed = seed;
      wp.stop = p.stop;
      WalkOutcome w = weighted::run(walker, shape, wp, wo, -1);
      out.flips += w.flips;
      if (!w.satisfied) walker.restore_best();
      return w;
    };
    if (!p.start_given) walk(I, in, derive_seed(p.seed, 0x4D415053ull));
    choose_kernel<<<cb, 256>>>(I, S, keep.get(), wm.get(), 0, 1);
    MLN_CUDA_LAUNCHED("choose_kernel");
    reload();  // tc of the start state (which the first step's M reads) and its violated hard clauses
    read();
    WalkInstance unit_shape;  // the alive clauses weigh +-1: scale 1
    unit_shape.scale = 1;
    if (host[kViol0] != 0) {
      out.hard_satisfied = walk(Im, unit_shape, derive_seed(p.seed, 0x48415244ull)).satisfied;
      reload();  // the walk moved truth (its own counts stay in the backend)
    }
  }
  const int64_t after = po.after_rounds > 0 ? po.after_rounds : static_cast<int64_t>(std::ceil(8.0 / po.sa_rate));

  // The steps: batches of whole steps per cooperative launch, sized to take
  // 2-20 ms (stop, progress and on_sample between launches).
  DeviceArray<uint32_t> wcrit(m), wflips(2);
  DeviceArray<double> wdw(m), fstat(static_cast<size_t>(k) * (k + 1) + 1), cost_sum(1);
  DeviceArray<unsigned long long> wprio(m), wctr(weighted::kCounters), wpcost(1), wpbest(1), outd(10);
  DeviceArray<uint8_t> wbump(m), wpimproved(1), wpfrozen(1);
  DeviceArray<uint32_t> wpstill(1);
  DeviceArray<unsigned long long> fsample(std::max(1, k));
  MLN_CUDA_TRY(cudaMemset(fstat.get(), 0, fstat.size() * sizeof(double)));
  MLN_CUDA_TRY(cudaMemset(cost_sum.get(), 0, sizeof(double)));
  MLN_CUDA_TRY(cudaMemset(outd.get(), 0, 10 * sizeof(unsigned long long)));
  MLN_CUDA_TRY(cudaMemset(wpstill.get(), 0, sizeof(uint32_t)));
  MLN_CUDA_TRY(cudaMemset(wpimproved.get(), 0, 1));
  StepArgs A{};
  A.I = I;
  A.Im = Im;
  A.W = weighted::State{truth.get(), tc.get(), wcrit.get(), wdw.get(), claim.get(), stamp.get(),
                        {va.get(), vb.get()}, cand.get(), wprio.get(), wbump.get(), wctr.get(),
                        nullptr, 1, wpcost.get(), wpbest.get(), wpimproved.get(),
                        wflips.get(), wpstill.get(), wpfrozen.get()};
  A.S = S;
  A.Pw = weighted::round_params(p.seed, wo, 1);  // the SAT phase's weights are +-1
  A.smooth_keep = wo.smooth_keep;
  A.Ps = mp::RoundParams{p.seed, 0, p.sa_probability, po.sa_rate, p.random_step, p.sa_temperature};
  A.keep = keep.get();
  A.wm = wm.get();
  A.prev = prev.get();
  A.good = good.get();
  A.count = count.get();
  A.wflips = wflips.get();
  A.foff = foff.get();
  A.fidx = fidx.get();
  A.fcoef = fcoef.get();
  A.k = k;
  A.fsample = fsample.get();
  A.fstat = fstat.get();
  A.cost_sum = cost_sum.get();
  A.inv_scale = 1.0 / in.scale;
  A.out = outd.get();
  A.seed = p.seed;
  A.burn_in = p.burn_in;
  A.max_rounds = po.max_rounds;
  A.warp = po.warp_rounds ? 1 : 0;
  if (const char* e = std::getenv("MLN_MCSAT_WARP")) A.warp = std::atoi(e) != 0;  // tuning runs
  A.after = after;
  int per_sm = 0;
  MLN_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, steps_kernel, 256, 0));
  if (per_sm < 1) throw GpuError("mcsat_parallel_gpu: the step kernel does not fit on an SM");
  int bps = po.blocks_per_sm;
  if (const char* e = std::getenv("MLN_MCSAT_BLOCKS_PER_SM")) bps = std::atoi(e);  // tuning runs
  const int blocks = sms * (bps > 0 ? std::min(per_sm, bps) : per_sm);
  const auto t_steps = std::chrono::steady_clock::now();
  unsigned long long o[10] = {};
  int64_t batch = 1, done = 0;
  const int64_t total = p.burn_in + p.samples;
  while (done < total) {
    if (p.stop && p.stop->should_stop()) {
      out.stopped = true;
      break;
    }
    A.step0 = done;
    A.steps = p.on_sample ? 1 : std::min(batch, total - done);
    const auto t0 = std::chrono::steady_clock::now();
    void* args[] = {&A};
    MLN_CUDA_TRY(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(steps_kernel), blocks, 256, args, 0, 0));
    MLN_CUDA_TRY(cudaMemcpy(o, outd.get(), sizeof(o), cudaMemcpyDeviceToHost));
    done += A.steps;
    const int64_t counted = static_cast<int64_t>(o[2]) - out.counted;
    out.counted = static_cast<int64_t>(o[2]);
    if (p.on_samples && counted > 0) p.on_samples(counted);
    if (p.on_sample && counted > 0) {
      std::vector<uint8_t> x(in.n);
      if (in.n > 0) MLN_CUDA_TRY(cudaMemcpy(x.data(), truth.get(), in.n, cudaMemcpyDeviceToHost));
      p.on_sample(x);
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (ms < 2 && batch < (int64_t{1} << 20)) batch *= 2;
    else if (ms > 20 && batch > 1) batch /= 2;
  }
  if (std::getenv("MLN_MCSAT_DEBUG")) {
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_steps).count();
    const double st = std::max<double>(1, static_cast<double>(done));
    std::fprintf(stderr, "mcsat_parallel_gpu: n %d m %lld blocks %d: %lld steps in %.3f s (%.3f ms each), walk rounds %.1f per step, "
                 "walk flips %.0f per step, unsat %llu, batch %lld; ms per step: M+init %.3f, walk %.3f, sweeps %.3f, sample %.3f\n", in.n, static_cast<long long>(in.m), blocks,
                 static_cast<long long>(done), sec, 1e3 * sec / st, static_cast<double>(o[3]) / st,
                 static_cast<double>(o[4]) / st, o[1], static_cast<long long>(batch), 1e-6 * o[5] / st, 1e-6 * o[6] / st,
                 1e-6 * o[7] / st, 1e-6 * o[8] / st);
  }
  out.unsat_calls += static_cast<int64_t>(o[1]);
  out.flips += static_cast<int64_t>(o[4]);
  {
    unsigned long long sweep_flips = 0;
    MLN_CUDA_TRY(cudaMemcpy(&sweep_flips, ctr.get() + kFlips, sizeof sweep_flips, cudaMemcpyDeviceToHost));
    out.flips += static_cast<int64_t>(sweep_flips);
  }
  MLN_CUDA_TRY(cudaMemcpy(&out.cost_sum, cost_sum.get(), sizeof(double), cudaMemcpyDeviceToHost));
  if (k > 0) {
    std::vector<double> st(static_cast<size_t>(k) * (k + 1));
    MLN_CUDA_TRY(cudaMemcpy(st.data(), fstat.get(), st.size() * sizeof(double), cudaMemcpyDeviceToHost));
    out.feature_sum.assign(st.begin(), st.begin() + k);
    out.feature_outer.assign(st.begin() + k, st.end());
  }
  std::vector<int32_t> c(in.n);
  out.final_state.resize(in.n);
  if (in.n > 0) {
    MLN_CUDA_TRY(cudaMemcpy(c.data(), count.get(), in.n * sizeof(int32_t), cudaMemcpyDeviceToHost));
    MLN_CUDA_TRY(cudaMemcpy(out.final_state.data(), truth.get(), in.n, cudaMemcpyDeviceToHost));
  }
  out.true_count.assign(c.begin(), c.end());
  return out;
}

}  // namespace mln::solver
