// One MC-SAT chain on the whole GPU (mcsat_parallel.hpp): the steps of
// mcsat_parallel_cpu.cpp as kernels over ONE device copy of the instance.
// Per step: M (the alive clauses) is drawn on the device, the SAT phase is
// the weighted walk's GPU backend (walk_weighted_gpu.cuh) on device-resident
// weights (alive clauses +-1, the rest 0) from a coin-flip state, and the
// sweeps after it are mcsat_parallel_rules.hpp's rounds.  Nothing but a few
// counters crosses the bus per step; the counts stay on the device until
// the end.
#include <cmath>
#include <cstring>

#include "mcsat_gpu.hpp"
#include "mcsat_parallel.hpp"
#include "mcsat_parallel_rules.hpp"
#include "walk_weighted_gpu.cuh"

namespace mln::solver {

namespace gpu_detail {

namespace {

namespace mp = mcsat_parallel;

enum : int { kFlips = 0, kViol0 = 1, kViol1 = 2, kCost = 3, kFeatures = 4, kCtr = kFeatures + kGpuMaxFeatures };

// Counts and list 0 (violated alive clauses) from truth, the state's true
// cost (fixed point) into ctr[kCost], and, with features, each feature's sum.
__global__ void counts_kernel(weighted::Inst I, mp::State S, const int64_t* off, const int32_t* idx,
                              const float* coef, int k) {
  float fsum[kGpuMaxFeatures];
  for (int j = 0; j < k; ++j) fsum[j] = 0;
  unsigned long long cost = 0;
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < I.m; c += int64_t(gridDim.x) * blockDim.x) {
    int32_t t = 0;
    for (int64_t q = I.cl_off[c]; q < I.cl_off[c + 1]; ++q) t += S.truth[I.cl_lit[q] >> 1] == (I.cl_lit[q] & 1);
    S.tc[c] = t;
    const int64_t w = I.w[c];
    if (w > 0 ? t == 0 : (w < 0 && t > 0)) cost += static_cast<unsigned long long>(w > 0 ? w : -w);
    if (S.alive[c] && !mp::sat(I, S, c))
      S.viol[0][atomicAdd(&S.ctr[kViol0], 1ull)] = static_cast<int32_t>(c);
    if (k > 0 && t > 0)
      for (int64_t q = off[c]; q < off[c + 1]; ++q) fsum[idx[q]] += coef[q];
  }
  // Warp sums, then one atomic per warp.
  for (int s = 16; s > 0; s >>= 1) cost += __shfl_down_sync(0xffffffffu, cost, s);
  if ((threadIdx.x & 31) == 0 && cost) atomicAdd(&S.ctr[kCost], cost);
  for (int j = 0; j < k; ++j) {
    float v = fsum[j];
    for (int s = 16; s > 0; s >>= 1) v += __shfl_down_sync(0xffffffffu, v, s);
    if ((threadIdx.x & 31) == 0 && v != 0) atomicAdd(reinterpret_cast<float*>(&S.ctr[kFeatures + j]), v);
  }
}

// M: hard clauses always (hard_only: only they), a satisfied soft clause
// with its keep probability; the SAT phase's weights follow.
__global__ void choose_kernel(weighted::Inst I, mp::State S, const float* keep, int64_t* wm, uint64_t seed,
                              int hard_only) {
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < I.m; c += int64_t(gridDim.x) * blockDim.x) {
    bool a;
    if (hard_only) a = keep[c] > 1.5f;
    else a = mp::sat(I, S, c) && Rng(derive_seed(seed, static_cast<uint64_t>(c)) | 1).uniform() < keep[c];
    S.alive[c] = a;
    wm[c] = a ? (I.w[c] > 0 ? 1 : -1) : 0;
  }
}

// prev := truth; truth := coin flips (SampleSAT's start).
__global__ void coin_kernel(uint8_t* truth, uint8_t* prev, int32_t n, uint64_t seed) {
  for (int32_t a = blockIdx.x * blockDim.x + threadIdx.x; a < n; a += gridDim.x * blockDim.x) {
    prev[a] = truth[a];
    truth[a] = static_cast<uint8_t>(Rng(derive_seed(seed, static_cast<uint64_t>(a)) | 1).next() >> 63);
  }
}

__global__ void copy_kernel(const uint8_t* from, uint8_t* to, int32_t n) {
  for (int32_t a = blockIdx.x * blockDim.x + threadIdx.x; a < n; a += gridDim.x * blockDim.x) to[a] = from[a];
}

__global__ void propose_walk_kernel(weighted::Inst I, mp::State S, int in, mp::RoundParams P) {
  const int64_t n = static_cast<int64_t>(S.ctr[kViol0 + in]);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    mp::propose_walk(I, S, in, i, P);
}
__global__ void propose_sa_kernel(weighted::Inst I, mp::State S, mp::RoundParams P) {
  for (int32_t a = blockIdx.x * blockDim.x + threadIdx.x; a < I.n; a += gridDim.x * blockDim.x)
    mp::propose_sa(I, S, static_cast<uint32_t>(a), P);
}
__global__ void flip_walk_kernel(weighted::Inst I, mp::State S, int in, mp::RoundParams P) {
  const int64_t n = static_cast<int64_t>(S.ctr[kViol0 + in]);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    mp::flip_walk(I, S, in, i, P);
}
__global__ void flip_sa_kernel(weighted::Inst I, mp::State S, int in, mp::RoundParams P) {
  for (int32_t a = blockIdx.x * blockDim.x + threadIdx.x; a < I.n; a += gridDim.x * blockDim.x)
    mp::flip_sa(I, S, in, static_cast<uint32_t>(a), P);
}
__global__ void settle_viol_kernel(weighted::Inst I, mp::State S, int in) {
  const int64_t n = static_cast<int64_t>(S.ctr[kViol0 + in]);
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    mp::settle_viol(I, S, in, i);
}
// Metropolis claims cleared; the list just read emptied; when the new list
// is empty (M satisfied), good := truth.
__global__ void settle_sa_kernel(weighted::Inst I, mp::State S, int in, uint8_t* good) {
  const bool satisfied = S.ctr[kViol0 + (in ^ 1)] == 0;
  for (int32_t a = blockIdx.x * blockDim.x + threadIdx.x; a < I.n; a += gridDim.x * blockDim.x) {
    mp::settle_sa(I, S, static_cast<uint32_t>(a));
    if (satisfied) good[a] = S.truth[a];
  }
}
__global__ void end_sweep_round_kernel(mp::State S, int in) { S.ctr[kViol0 + in] = 0; }
// After the sweeps: truth := good when the last round left M violated.
__global__ void keep_good_kernel(mp::State S, int cur, const uint8_t* good, int32_t n) {
  if (S.ctr[kViol0 + cur] == 0) return;
  for (int32_t a = blockIdx.x * blockDim.x + threadIdx.x; a < n; a += gridDim.x * blockDim.x) S.truth[a] = good[a];
}
__global__ void tally_kernel(const uint8_t* truth, int32_t* count, int32_t n) {
  for (int32_t a = blockIdx.x * blockDim.x + threadIdx.x; a < n; a += gridDim.x * blockDim.x) count[a] += truth[a];
}

}  // namespace

}  // namespace gpu_detail

McsatOutcome mcsat_parallel_gpu(const WalkInstance& in, const std::vector<uint8_t>& init, const McsatParams& p,
                                const McsatParallelOptions& po, const GpuFeatures* features) {
  using namespace gpu_detail;
  using weighted_gpu::GpuBackend;
  McsatOutcome out;
  if (!p.start_given && !init.empty() && static_cast<int32_t>(init.size()) != in.n)
    throw std::invalid_argument("mcsat_parallel_gpu: init has the wrong size");
  if (p.start_given && static_cast<int32_t>(init.size()) != in.n)
    throw std::invalid_argument("mcsat_parallel_gpu: init has the wrong size");
  const int k = features ? features->k : 0;
  if (k > kGpuMaxFeatures) throw std::invalid_argument("mcsat_parallel_gpu: more than kGpuMaxFeatures features");
  const size_t m = std::max<int64_t>(1, in.m), n = std::max<int32_t>(1, in.n);

  DevInstanceStore store(in);
  DeviceArray<int64_t> wm(m), foff;
  DeviceArray<float> keep, fcoef;
  DeviceArray<int32_t> fidx;
  keep.upload(mcsat_keep_probabilities(in, p.mcsat_param));
  if (k > 0) {
    foff.upload(features->off);
    fidx.upload(features->idx);
    fcoef.upload(features->coef);
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
  const int ab = static_cast<int>(std::min<int64_t>((n + 255) / 256, int64_t(sms) * 4));
  unsigned long long host[kCtr];
  auto read = [&] {
    MLN_CUDA_TRY(cudaMemcpy(host, ctr.get(), sizeof(host), cudaMemcpyDeviceToHost));
  };
  // Counts, list 0, cost and features of truth.
  auto reload = [&] {
    MLN_CUDA_TRY(cudaMemset(ctr.get() + kViol0, 0, (kCtr - kViol0) * sizeof(unsigned long long)));
    counts_kernel<<<cb, 256>>>(I, S, foff.get(), fidx.get(), fcoef.get(), k);
    MLN_CUDA_LAUNCHED("counts_kernel");
  };

  // The weighted walk, reused for every walk of the chain (the start, the
  // hard clauses, each step's SAT phase); it updates truth in place.
  GpuBackend walker(I, truth.get());
  WalkInstance unit_shape;  // the SAT phase's weights are +-1: scale 1
  unit_shape.scale = 1;
  WeightedOptions wo;
  wo.stall_rounds = 2000;
  wo.max_batch = po.max_batch;
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
  // The start: one walk on the true weights (mcsat_start_state's MaxWalkSAT
  // try), unless the caller gives the state.
  if (!p.start_given) walk(I, in, derive_seed(p.seed, 0x4D415053ull));
  // The hard clauses, should any be violated.
  reload();
  choose_kernel<<<cb, 256>>>(I, S, keep.get(), wm.get(), 0, 1);
  MLN_CUDA_LAUNCHED("choose_kernel");
  reload();
  read();
  if (host[kViol0] != 0) out.hard_satisfied = walk(Im, unit_shape, derive_seed(p.seed, 0x48415244ull)).satisfied;
  const int64_t after = po.after_rounds > 0 ? po.after_rounds : static_cast<int64_t>(std::ceil(8.0 / po.sa_rate));
  int64_t round = 0;
  std::vector<double> fsum(k, 0), fouter(static_cast<size_t>(k) * k, 0);
  for (int64_t step = 0; step < p.burn_in + p.samples; ++step) {
    if (p.stop && p.stop->should_stop()) {
      out.stopped = true;
      break;
    }
    reload();
    const uint64_t sseed = derive_seed(p.seed, 0x5354455000000000ull + static_cast<uint64_t>(step));
    choose_kernel<<<cb, 256>>>(I, S, keep.get(), wm.get(), derive_seed(sseed, 1), 0);
    coin_kernel<<<ab, 256>>>(truth.get(), prev.get(), in.n, derive_seed(sseed, 2));
    MLN_CUDA_LAUNCHED("choose/coin");
    if (!walk(Im, unit_shape, derive_seed(sseed, 3)).satisfied) {
      ++out.unsat_calls;
      copy_kernel<<<ab, 256>>>(prev.get(), truth.get(), in.n);
    }
    // The sweeps, from a state in SAT(M) (the walk's, or prev's).
    round += round & 1;
    reload();
    copy_kernel<<<ab, 256>>>(truth.get(), good.get(), in.n);
    MLN_CUDA_LAUNCHED("sweep start");
    for (int64_t r = 0; r < after; ++r, ++round) {
      const int l = static_cast<int>(round & 1);
      mp::RoundParams P{p.seed, round, p.sa_probability, po.sa_rate, p.random_step, p.sa_temperature};
      propose_walk_kernel<<<cb, 256>>>(I, S, l, P);
      propose_sa_kernel<<<ab, 256>>>(I, S, P);
      flip_walk_kernel<<<cb, 256>>>(I, S, l, P);
      flip_sa_kernel<<<ab, 256>>>(I, S, l, P);
      settle_viol_kernel<<<cb, 256>>>(I, S, l);
      settle_sa_kernel<<<ab, 256>>>(I, S, l, good.get());
      end_sweep_round_kernel<<<1, 1>>>(S, l);
    }
    keep_good_kernel<<<ab, 256>>>(S, static_cast<int>(round & 1), good.get(), in.n);
    MLN_CUDA_LAUNCHED("sweeps");
    if (step < p.burn_in) continue;
    reload();
    tally_kernel<<<ab, 256>>>(truth.get(), count.get(), in.n);
    MLN_CUDA_LAUNCHED("tally_kernel");
    read();
    out.flips += static_cast<int64_t>(host[kFlips]);
    MLN_CUDA_TRY(cudaMemset(ctr.get() + kFlips, 0, sizeof(unsigned long long)));
    out.cost_sum += static_cast<double>(static_cast<int64_t>(host[kCost])) / in.scale;
    for (int a = 0; a < k; ++a) {
      float fa;
      std::memcpy(&fa, &host[kFeatures + a], sizeof fa);
      fsum[a] += fa;
      for (int b = 0; b < k; ++b) {
        float fb;
        std::memcpy(&fb, &host[kFeatures + b], sizeof fb);
        fouter[static_cast<size_t>(a) * k + b] += static_cast<double>(fa) * fb;
      }
    }
    ++out.counted;
    if (p.on_samples) p.on_samples(1);
    if (p.on_sample) {
      std::vector<uint8_t> x(in.n);
      if (in.n > 0) MLN_CUDA_TRY(cudaMemcpy(x.data(), truth.get(), in.n, cudaMemcpyDeviceToHost));
      p.on_sample(x);
    }
  }
  std::vector<int32_t> c(in.n);
  out.final_state.resize(in.n);
  if (in.n > 0) {
    MLN_CUDA_TRY(cudaMemcpy(c.data(), count.get(), in.n * sizeof(int32_t), cudaMemcpyDeviceToHost));
    MLN_CUDA_TRY(cudaMemcpy(out.final_state.data(), truth.get(), in.n, cudaMemcpyDeviceToHost));
  }
  out.true_count.assign(c.begin(), c.end());
  if (k > 0) {
    out.feature_sum = std::move(fsum);
    out.feature_outer = std::move(fouter);
  }
  return out;
}

}  // namespace mln::solver
