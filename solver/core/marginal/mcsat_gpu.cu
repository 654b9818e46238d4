// MC-SAT on the GPU: many independent chains, one warp per chain, each the
// CPU chain (mcsat_cpu.cpp) step for step, so the chains are exact by
// construction.  One chain is sequential, so this pays off with many
// chains, i.e. many samples; for few samples of a large network,
// mcsat_parallel_gpu.cu runs one chain with its SampleSAT rounds in
// parallel instead (solve_marginal and the learner choose by
// gpu_one_chain_min_clauses; docs/solver/marginal.md).
//
// Within a chain the warp shares the work of each step: alive selection
// (a counter-based hash per clause), the delta of an atom and the updates
// of a flip run over clauses / occurrences in parallel lanes; the control
// flow (which atom, accept or not) is replicated in every lane, each lane
// drawing the same numbers from an identical copy of the chain's Rng.
// The kernels and their device structs: mcsat_gpu_kernels.cuh.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "core/marginal/mcsat_gpu.hpp"
#include "core/marginal/mcsat_gpu_kernels.cuh"
#include "core/walk/walksat_gpu_common.cuh"

namespace mln::solver {

using namespace mcsat_gpu_detail;

bool gpu_mcsat_available(std::string* why_not) { return gpu_walksat_available(why_not); }

size_t gpu_mcsat_peak_bytes(bool reset) { return gpu_walksat_peak_bytes(reset); }

// long function: the device buffers, their upload, the launch loop and the
// read-back share one scope, so every buffer is released on every way out.
McsatOutcome mcsat_gpu(const WalkInstance& in, const std::vector<uint8_t>& init, const McsatParams& p,
                       const GpuMcsatOptions& g, int* chains_used) {
  if (!init.empty() && static_cast<int64_t>(init.size()) != in.n)
    throw std::invalid_argument("mcsat_gpu: init has the wrong size");
  if (g.features && (g.features->k < 1 || g.features->k > kGpuMaxFeatures ||
                     g.features->off.size() != static_cast<size_t>(in.m) + 1))
    throw std::invalid_argument("mcsat_gpu: malformed features");
  if (p.samples < 1) throw std::invalid_argument("mcsat_gpu: samples must be >= 1");
  if (in.m >= (int64_t{1} << 31)) throw GpuError("mcsat_gpu: more than 2^31 clauses");
  try {
    int dev = 0, sms = 0;
    MLN_CUDA_TRY(cudaGetDevice(&dev));
    MLN_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    // Chains: as asked, else enough to fill the GPU (8 warps per SM) while
    // each chain still counts >= 1000 samples (MC-SAT mixes slowly near
    // deterministic dependencies, and a chain's early steps remember its
    // start state; see mcsat_chain_burn_in); then capped by samples and by
    // half the free device memory.
    int64_t chains = g.chains > 0 ? g.chains : std::min<int64_t>(int64_t{sms} * 8, std::max<int64_t>(1, p.samples / 1000));
    if (!g.chain_init) chains = std::min<int64_t>(chains, p.samples);
    if (g.chain_init && g.chain_init->size() != static_cast<size_t>(chains) * static_cast<size_t>(in.n))
      throw std::invalid_argument("mcsat_gpu: chain_init must hold chains x n states");
    size_t free_b = 0, total_b = 0;
    MLN_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
    const size_t per_chain = static_cast<size_t>(in.n) * 2 + static_cast<size_t>(in.m) * 13 + kTrailCap * 4 + sizeof(ChainCtl);
    const int64_t fit = static_cast<int64_t>(free_b / 2 / per_chain);
    if (fit < 1) throw GpuError("mcsat_gpu: not enough device memory for one chain");
    if (g.chain_init && fit < chains) throw GpuError("mcsat_gpu: not enough device memory for the given chains");
    chains = std::max<int64_t>(1, std::min(chains, fit));
    if (chains_used) *chains_used = static_cast<int>(chains);

    DevInstanceStore store(in);
    const DevInstance I = store.view(in);
    const std::vector<float> keep = mcsat_keep_probabilities(in, p.mcsat_param);
    DeviceArray<float> d_keep;
    d_keep.upload(keep);
    DeviceArray<uint8_t> d_init, d_chain_init;
    if (!init.empty()) d_init.upload(init);
    if (g.chain_init) d_chain_init.upload(*g.chain_init);
    const int fk = g.features ? g.features->k : 0;
    DeviceArray<int64_t> d_foff;
    DeviceArray<int32_t> d_fidx;
    DeviceArray<float> d_fcoef;
    DeviceArray<double> d_fsum, d_fouter;
    if (fk > 0) {
      d_foff.upload(g.features->off);
      std::vector<int32_t> idx = g.features->idx;
      std::vector<float> coef = g.features->coef;
      if (idx.empty()) idx.push_back(0), coef.push_back(0);  // no zero-size uploads
      d_fidx.upload(idx);
      d_fcoef.upload(coef);
    }
    const size_t C = static_cast<size_t>(chains);
    DeviceArray<uint8_t> truth(C * in.n), prev(C * in.n), alive(C * in.m);
    DeviceArray<int32_t> tc(C * in.m), viol(C * in.m), vpos(C * in.m);
    DeviceArray<uint32_t> trail(C * kTrailCap);
    DeviceArray<ChainCtl> ctl(C);
    DeviceArray<unsigned long long> count(in.n);
    MLN_CUDA_TRY(cudaMemset(count.get(), 0, std::max<size_t>(1, in.n) * sizeof(unsigned long long)));
    if (fk > 0) {
      d_fsum.resize(C * fk);
      d_fouter.resize(C * fk * fk);
      MLN_CUDA_TRY(cudaMemset(d_fsum.get(), 0, C * fk * sizeof(double)));
      MLN_CUDA_TRY(cudaMemset(d_fouter.get(), 0, C * fk * fk * sizeof(double)));
    }
    std::vector<ChainCtl> h_ctl(C);
    for (size_t j = 0; j < C; ++j) {
      h_ctl[j] = ChainCtl{};
      h_ctl[j].rng = Rng(derive_seed(derive_seed(p.seed, j), 0x4D435341ull)).s;
    }
    MLN_CUDA_TRY(cudaMemcpy(ctl.get(), h_ctl.data(), C * sizeof(ChainCtl), cudaMemcpyHostToDevice));

    // The stop flag: pinned host memory the kernel reads (mapped).
    struct HostFlag {
      int* h = nullptr;
      ~HostFlag() { if (h) cudaFreeHost(h); }
    } flag;
    MLN_CUDA_TRY(cudaHostAlloc(reinterpret_cast<void**>(&flag.h), sizeof(int), cudaHostAllocMapped));
    *reinterpret_cast<volatile int*>(flag.h) = 0;
    int* d_flag = nullptr;
    MLN_CUDA_TRY(cudaHostGetDevicePointer(reinterpret_cast<void**>(&d_flag), flag.h, 0));
    // Waits for the launches so far, raising the flag once the caller stops.
    auto wait = [&]() {
      while (true) {
        const cudaError_t q = cudaStreamQuery(0);
        if (q == cudaSuccess) break;
        if (q != cudaErrorNotReady) MLN_CUDA_TRY(q);
        if (p.stop && p.stop->should_stop()) *reinterpret_cast<volatile int*>(flag.h) = 1;
        std::this_thread::sleep_for(std::chrono::microseconds(500));
      }
      MLN_CUDA_TRY(cudaDeviceSynchronize());  // reports a kernel's error, if any
    };

    const int64_t burn_in = mcsat_chain_burn_in(p.burn_in, p.samples, chains);
    Params P{mcsat_flips_budget(p, in.n), mcsat_steps_after_sat(p, in.n), burn_in, p.samples, chains,
             p.sa_probability, p.random_step, p.sa_temperature, 1.0 / in.scale, p.seed};
    ChainArrays A{truth.get(), prev.get(), tc.get(), alive.get(), viol.get(), vpos.get(), trail.get(), ctl.get(), count.get(),
                  d_keep.get(), init.empty() ? nullptr : d_init.get(), g.chain_init ? d_chain_init.get() : nullptr,
                  fk, fk > 0 ? d_foff.get() : nullptr, fk > 0 ? d_fidx.get() : nullptr, fk > 0 ? d_fcoef.get() : nullptr,
                  fk > 0 ? d_fsum.get() : nullptr, fk > 0 ? d_fouter.get() : nullptr, d_flag};
    const int threads = 32 * kWarpsPerBlock;
    const int blocks = static_cast<int>((chains + kWarpsPerBlock - 1) / kWarpsPerBlock);

    McsatOutcome out;
    mcsat_kernel<<<blocks, threads>>>(I, P, A, 0, 0, 0);
    MLN_CUDA_LAUNCHED("mcsat_kernel(start)");
    wait();
    // Steps in launches of about 2^23 clause/occurrence visits per chain, so
    // the stop token and progress are served between launches.
    const int64_t work = in.m + 2 * static_cast<int64_t>(in.occ.size()) + 1;
    const int64_t chunk = std::max<int64_t>(1, (int64_t{1} << 23) / work);
    const int64_t per_chain_max = burn_in + (p.samples + chains - 1) / chains;
    auto counted_after = [&](int64_t s) {  // samples counted once every chain has done s steps
      int64_t tot = 0;
      for (int64_t j = 0; j < chains; ++j) {
        const int64_t mine = p.samples / chains + (j < p.samples % chains ? 1 : 0);
        tot += std::max<int64_t>(0, std::min(s, burn_in + mine) - burn_in);
      }
      return tot;
    };
    int64_t done_steps = 0, reported = 0;
    while (done_steps < per_chain_max) {
      if (p.stop && p.stop->should_stop()) { out.stopped = true; break; }
      const int64_t e = std::min(per_chain_max, done_steps + chunk);
      mcsat_kernel<<<blocks, threads>>>(I, P, A, 1, done_steps, e);
      MLN_CUDA_LAUNCHED("mcsat_kernel(steps)");
      wait();
      done_steps = e;
      if (*reinterpret_cast<volatile int*>(flag.h)) { out.stopped = true; break; }
      const int64_t now = counted_after(done_steps);
      if (p.on_samples && now > reported) p.on_samples(now - reported);
      reported = now;
    }
    std::vector<unsigned long long> h_count(in.n);
    if (in.n > 0)
      MLN_CUDA_TRY(cudaMemcpy(h_count.data(), count.get(), in.n * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    MLN_CUDA_TRY(cudaMemcpy(h_ctl.data(), ctl.get(), C * sizeof(ChainCtl), cudaMemcpyDeviceToHost));
    out.true_count.assign(h_count.begin(), h_count.end());
    out.counted = 0;  // what the chains counted (a cancelled launch ends its steps early)
    for (const ChainCtl& c : h_ctl) out.counted += c.counted;
    if (fk > 0) {
      std::vector<double> hs(C * fk), ho(C * fk * fk);
      MLN_CUDA_TRY(cudaMemcpy(hs.data(), d_fsum.get(), hs.size() * sizeof(double), cudaMemcpyDeviceToHost));
      MLN_CUDA_TRY(cudaMemcpy(ho.data(), d_fouter.get(), ho.size() * sizeof(double), cudaMemcpyDeviceToHost));
      out.feature_sum.assign(fk, 0.0);
      out.feature_outer.assign(static_cast<size_t>(fk) * fk, 0.0);
      for (size_t j = 0; j < C; ++j) {
        for (int k = 0; k < fk; ++k) out.feature_sum[k] += hs[j * fk + k];
        for (int e = 0; e < fk * fk; ++e) out.feature_outer[e] += ho[j * fk * fk + e];
      }
    }
    if (g.chain_final) {
      g.chain_final->resize(C * static_cast<size_t>(in.n));
      if (in.n > 0)
        MLN_CUDA_TRY(cudaMemcpy(g.chain_final->data(), truth.get(), C * in.n, cudaMemcpyDeviceToHost));
    }
    for (const ChainCtl& c : h_ctl) {
      out.cost_sum += c.cost_sum;
      out.flips += c.flips;
      out.unsat_calls += c.unsat_calls;
      out.hard_satisfied = out.hard_satisfied && c.hard_ok;
    }
    return out;
  } catch (const std::bad_alloc& e) {
    throw GpuError(std::string("host allocation failed in GPU MC-SAT: ") + e.what());
  }
}

}  // namespace mln::solver
