// The weighted walk's GPU backend (walk_weighted_rules.hpp's rounds as
// kernels, driven by walk_weighted.hpp's run()): the MaxWalkSAT design
// walksat_gpu_weighted.cu, and the SAT phase of the one-chain MC-SAT
// sampler (mcsat_parallel_gpu.cu), which walks device-resident weights.
// One kernel per phase of a round, grid-stride over the violated list, whose
// length stays in device memory: the host launches batches of rounds and
// reads the counters back once per batch.
#pragma once

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>

#include "core/walk/walk_weighted.hpp"
#include "core/walk/walk_weighted_warp.cuh"
#include "core/walk/walksat_gpu_common.cuh"

namespace mln::solver::gpu_detail::weighted_gpu {

using namespace weighted;

namespace {


__global__ void init_kernel(Inst I, State S, int reset_dw) {
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < I.m; c += int64_t(gridDim.x) * blockDim.x)
    init_clause(I, S, c, reset_dw);
}

// Grid-stride over the violated list (its length in device memory): by
// thread, or, with `warp` and a list of at most kEntriesPerWarp entries per
// warp, a warp per entry (walk_weighted_warp.cuh; off by default for the
// MAP walk, where it did not pay: docs/solver/marginal.md).
template <class ByThread, class ByWarp>
__device__ inline void over_list(const State& S, int in, int warp, ByThread by_thread, ByWarp by_warp) {
  const int64_t n = static_cast<int64_t>(S.ctr[kViol0 + in]);
  const int64_t tid = blockIdx.x * int64_t(blockDim.x) + threadIdx.x, T = int64_t(gridDim.x) * blockDim.x;
  if (warp && n <= warp_rules::kEntriesPerWarp * (T >> 5)) {
    const int lane = static_cast<int>(threadIdx.x & 31);
    for (int64_t i = tid >> 5; i < n; i += T >> 5) by_warp(i, lane);
  } else {
    for (int64_t i = tid; i < n; i += T) by_thread(i);
  }
}

__global__ void propose_kernel(Inst I, State S, int in, RoundParams P, int warp) {
  over_list(S, in, warp, [&](int64_t i) { propose(I, S, in, i, P); },
            [&](int64_t i, int lane) { warp_rules::propose(I, S, in, i, P, lane); });
}

__global__ void flip_kernel(Inst I, State S, int in, int64_t round, int warp) {
  over_list(S, in, warp, [&](int64_t i) { flip(I, S, in, i, round); },
            [&](int64_t i, int lane) { warp_rules::flip(I, S, in, i, round, lane); });
}

__global__ void settle_kernel(Inst I, State S, int in, RoundParams P, int warp) {
  over_list(S, in, warp, [&](int64_t i) { settle(I, S, in, i, P); },
            [&](int64_t i, int lane) { warp_rules::settle(I, S, in, i, P, lane); });
}

__global__ void end_round_kernel(State S, int in) { end_round(S, in); }

__global__ void end_parts_kernel(State S, RoundParams P) {
  for (int32_t k = blockIdx.x * blockDim.x + threadIdx.x; k < S.parts; k += gridDim.x * blockDim.x)
    end_part(S, k, P);
}

__global__ void smooth_frozen_kernel(Inst I, State S, double keep) {
  if (!S.ctr[kAnyFrozen]) return;
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < I.m; c += int64_t(gridDim.x) * blockDim.x)
    smooth_frozen(I, S, c, keep);
}

__global__ void mark_parts_kernel(State S) {
  for (int32_t k = blockIdx.x * blockDim.x + threadIdx.x; k < S.parts; k += gridDim.x * blockDim.x) mark_part(S, k);
}

// Each atom's best value follows its part's best (nothing to do when no
// part improved this round).
__global__ void copy_best_kernel(State S, uint8_t* best, int32_t n) {
  if (!S.ctr[kImproved]) return;
  for (int32_t a = blockIdx.x * blockDim.x + threadIdx.x; a < n; a += gridDim.x * blockDim.x) copy_best_atom(S, best, a);
}

__global__ void copy_all_kernel(const uint8_t* from, uint8_t* to, int32_t n) {
  for (int32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) to[i] = from[i];
}

__global__ void smooth_kernel(Inst I, State S, double keep) {
  for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < I.m; c += int64_t(gridDim.x) * blockDim.x)
    smooth_clause(I, S, c, keep);
}

class GpuBackend {
 public:
  // Owns a device copy of `in` and walks it from `init`.
  // Atoms n_free..n-1 are held (Inst::n_free).
  GpuBackend(const WalkInstance& in, const std::vector<uint8_t>& init, const std::vector<int32_t>* part, int32_t parts,
             int64_t n_free = INT64_MAX)
      : store_(std::make_unique<DevInstanceStore>(in)) {
    truth_.upload(init);
    setup(Inst{in.n, in.m, store_->cl_off.get(), store_->cl_lit.get(), store_->occ_off.get(), store_->occ.get(),
               store_->w.get(), n_free},
          truth_.get(), part, parts);
  }
  // Walks the device instance I (one part) from the state in `truth` (I.n
  // bytes of device memory), which it updates in place; I's arrays stay the
  // caller's, and so may its weights between walks (MC-SAT's SAT phase).
  GpuBackend(const Inst& I, uint8_t* truth) { setup(I, truth, nullptr, 1); }
  GpuBackend(const GpuBackend&) = delete;
  GpuBackend& operator=(const GpuBackend&) = delete;
  ~GpuBackend() {
    if (host_) cudaFreeHost(host_);
    if (read_done_) cudaEventDestroy(read_done_);
  }

  // Rounds with a warp per violated entry while the list is short
  // (WeightedOptions::warp_rounds).
  void set_warp(bool on) { warp_ = on ? 1 : 0; }
  // The instance walked from now on (same n and m; MC-SAT swaps weights).
  void set_instance(const Inst& I) { I_ = I; }

  void init(bool reset_dw) {
    // Every counter but the best cost starts at 0.
    MLN_CUDA_TRY(cudaMemset(ctr_.get(), 0, kBestCost * sizeof(unsigned long long)));
    MLN_CUDA_TRY(cudaMemset(ctr_.get() + kBestCost + 1, 0, (kCounters - kBestCost - 1) * sizeof(unsigned long long)));
    MLN_CUDA_TRY(cudaMemset(pcost_.get(), 0, parts_ * sizeof(unsigned long long)));
    MLN_CUDA_TRY(cudaMemset(pflips_.get(), 0, parts_ * sizeof(uint32_t)));
    MLN_CUDA_TRY(cudaMemset(pstill_.get(), 0, parts_ * sizeof(uint32_t)));
    MLN_CUDA_TRY(cudaMemset(pfrozen_.get(), 0, parts_));
    // A new walk numbers its rounds from 0 again (MC-SAT walks the same
    // backend once per step): no atom may look as if it flipped already.
    if (reset_dw) MLN_CUDA_TRY(cudaMemset(stamp_.get(), 0, std::max<int32_t>(1, n_) * sizeof(uint32_t)));
    init_kernel<<<list_blocks_, 256>>>(I_, S_, reset_dw ? 1 : 0);
    MLN_CUDA_LAUNCHED("init_kernel");
  }
  void mark_best() {
    MLN_CUDA_TRY(cudaMemset(ctr_.get() + kBestCost, 0, sizeof(unsigned long long)));
    mark_parts_kernel<<<part_blocks_, 256>>>(S_);
    copy_all_kernel<<<atom_blocks_, 256>>>(truth_ptr_, best_.get(), n_);
    MLN_CUDA_LAUNCHED("mark_best");
  }
  void rounds(int64_t first, int count, const RoundParams& P0, double keep) {
    RoundParams P = P0;
    for (int64_t r = first; r < first + count; ++r) {
      const int in = static_cast<int>(r & 1);
      P.round = r;
      propose_kernel<<<list_blocks_, 256>>>(I_, S_, in, P, warp_);
      flip_kernel<<<list_blocks_, 256>>>(I_, S_, in, r, warp_);
      settle_kernel<<<list_blocks_, 256>>>(I_, S_, in, P, warp_);
      end_parts_kernel<<<part_blocks_, 256>>>(S_, P);
      copy_best_kernel<<<atom_blocks_, 256>>>(S_, best_.get(), n_);
      smooth_frozen_kernel<<<list_blocks_, 256>>>(I_, S_, keep);
      end_round_kernel<<<1, 1>>>(S_, in);
    }
    MLN_CUDA_LAUNCHED("weighted rounds");
  }
  void smooth(double keep) {
    smooth_kernel<<<list_blocks_, 256>>>(I_, S_, keep);
    MLN_CUDA_LAUNCHED("smooth_kernel");
  }
  Counts read(int list) {
    // The counters' copy is queued behind the rounds and its event polled,
    // with a sleep between: a blocking cudaMemcpy here waits inside the
    // driver in a way that stalls other host threads' CUDA calls on the
    // device: the PDHG bound's set-up beside the walk then ends only when
    // the walk does (issue #45; the measurements are in docs/solver/map.md).
    MLN_CUDA_TRY(cudaMemcpyAsync(host_, ctr_.get(), kCounters * sizeof(unsigned long long), cudaMemcpyDeviceToHost, 0));
    MLN_CUDA_TRY(cudaEventRecord(read_done_, 0));
    cudaError_t e;
    while ((e = cudaEventQuery(read_done_)) == cudaErrorNotReady) std::this_thread::sleep_for(std::chrono::microseconds(50));
    MLN_CUDA_TRY(e);
    MLN_CUDA_TRY(cudaMemset(ctr_.get() + kFlips, 0, sizeof(unsigned long long)));
    Counts c;
    c.cost = static_cast<int64_t>(host_[kCost]);
    c.best_cost = static_cast<int64_t>(host_[kBestCost]);
    c.nviol = static_cast<int64_t>(host_[kViol0 + list]);
    c.flips = static_cast<int64_t>(host_[kFlips]);
    return c;
  }
  void restore_best() {
    MLN_CUDA_TRY(cudaMemcpy(truth_ptr_, best_.get(), n_, cudaMemcpyDeviceToDevice));
  }
  // Truth and best of the last k atoms (the held ones) := v[0..k) (a Session's hold).
  void hold(const uint8_t* v, int64_t k) {
    if (k == 0) return;
    MLN_CUDA_TRY(cudaMemcpy(truth_ptr_ + (n_ - k), v, k, cudaMemcpyHostToDevice));
    MLN_CUDA_TRY(cudaMemcpy(best_.get() + (n_ - k), v, k, cudaMemcpyHostToDevice));
  }
  std::vector<uint8_t> best() {
    std::vector<uint8_t> b(n_);
    if (n_ > 0) MLN_CUDA_TRY(cudaMemcpy(b.data(), best_.get(), n_, cudaMemcpyDeviceToHost));
    return b;
  }

 private:
  void setup(const Inst& I, uint8_t* truth, const std::vector<int32_t>* part, int32_t parts) {
    n_ = I.n;
    parts_ = parts;
    truth_ptr_ = truth;
    const size_t m = std::max<int64_t>(1, I.m), n = std::max<int32_t>(1, I.n);
    best_.resize(n);
    tc_.resize(m);
    crit_.resize(m);
    dw_.resize(m);
    claim_.resize(m);
    stamp_.resize(n);
    va_.resize(m);
    vb_.resize(m);
    cand_.resize(m);
    prio_.resize(m);
    bump_.resize(m);
    ctr_.resize(kCounters);
    if (part) part_.upload(*part);
    pcost_.resize(parts);
    pbest_.resize(parts);
    pimproved_.resize(parts);
    pflips_.resize(parts);
    pstill_.resize(parts);
    pfrozen_.resize(parts);
    MLN_CUDA_TRY(cudaMemset(pimproved_.get(), 0, parts));
    MLN_CUDA_TRY(cudaMemset(stamp_.get(), 0, n * sizeof(uint32_t)));
    MLN_CUDA_TRY(cudaMemset(ctr_.get(), 0, kCounters * sizeof(unsigned long long)));
    MLN_CUDA_TRY(cudaMallocHost(&host_, kCounters * sizeof(unsigned long long)));
    MLN_CUDA_TRY(cudaEventCreateWithFlags(&read_done_, cudaEventDisableTiming));
    int dev = 0, sms = 0;
    MLN_CUDA_TRY(cudaGetDevice(&dev));
    MLN_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    // Grid-stride kernels: enough blocks to fill the GPU, fewer for small lists.
    list_blocks_ = static_cast<int>(std::min<int64_t>((m + 255) / 256, int64_t(sms) * 8));
    atom_blocks_ = static_cast<int>(std::min<int64_t>((n + 255) / 256, int64_t(sms) * 4));
    I_ = I;
    S_ = State{truth, tc_.get(), crit_.get(), dw_.get(), claim_.get(), stamp_.get(),
               {va_.get(), vb_.get()}, cand_.get(), prio_.get(), bump_.get(), ctr_.get(),
               part ? part_.get() : nullptr, parts, pcost_.get(), pbest_.get(), pimproved_.get(),
               pflips_.get(), pstill_.get(), pfrozen_.get()};
    part_blocks_ = static_cast<int>(std::min<int64_t>((parts + 255) / 256, int64_t(sms) * 4));
  }

  int32_t n_ = 0;
  int warp_ = 0;
  uint8_t* truth_ptr_ = nullptr;
  std::unique_ptr<DevInstanceStore> store_;
  DeviceArray<uint8_t> truth_, best_, bump_;
  DeviceArray<int32_t> tc_, va_, vb_;
  DeviceArray<uint32_t> crit_, stamp_, cand_;
  DeviceArray<double> dw_;
  DeviceArray<unsigned long long> claim_, prio_, ctr_, pcost_, pbest_;
  DeviceArray<int32_t> part_;
  DeviceArray<uint8_t> pimproved_, pfrozen_;
  DeviceArray<uint32_t> pflips_, pstill_;
  int32_t parts_ = 1;
  int part_blocks_ = 1;
  unsigned long long* host_ = nullptr;
  cudaEvent_t read_done_ = nullptr;  // the counters' copy done (read())
  int list_blocks_ = 1, atom_blocks_ = 1;
  Inst I_{};
  State S_{};
};


}  // namespace

}  // namespace mln::solver::gpu_detail::weighted_gpu
