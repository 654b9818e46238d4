// The forward sampler on a CUDA device (forward_sampler.hpp): one thread per
// block of 32 samples (forward_sampler_kernel.hpp), its state words strided
// across the threads so that a warp reads one atom of its 32 threads in one
// transaction; counts reduced in the warp, then one atomic add per warp.
// The program stays on the device across batches; the state is sized to
// a share of free device memory.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "core/problog/forward_sampler_impl.hpp"
#include "core/problog/forward_sampler_kernel.hpp"
#include "mln/cuda_check.cuh"
#include "mln/relation.hpp"

namespace mln::problog::fs {

namespace {

void check(cudaError_t e, const char* what) {
  mln::cuda_check(e, what, [](cudaError_t err, const std::string& msg) {
    const auto kind = err == cudaErrorMemoryAllocation ? gpu::EngineError::Kind::OutOfMemory : gpu::EngineError::Kind::DeviceFailure;
    return gpu::EngineError(kind, "forward sampler: " + msg);
  });
}

// A device copy of a host vector, freed with the sampler.
template <class T>
T* upload(const std::vector<T>& v, std::vector<void*>& owned) {
  void* p = nullptr;
  const size_t bytes = std::max<size_t>(1, v.size()) * sizeof(T);
  check(cudaMalloc(&p, bytes), "cudaMalloc");
  owned.push_back(p);
  if (!v.empty()) check(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  return static_cast<T*>(p);
}

__global__ void sample_kernel(CpView g, uint32_t* atoms, uint32_t* fired, int64_t stride, uint64_t block0,
                              uint64_t begin, uint64_t end, uint64_t seed, unsigned long long* counts) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= stride) return;  // whole warps leave: stride and the block size are multiples of 32
  const uint64_t b = block0 + static_cast<uint64_t>(t);
  const uint32_t valid = valid_mask(b, begin, end);  // 0 past the end: the thread only joins the reduction
  Rng rng = block_rng(seed, b, begin);
  const uint32_t acc = sample_block(g, atoms + t, fired + t, stride, valid, rng);
  auto add = [&](int k, uint32_t c) {
    for (int off = 16; off > 0; off >>= 1) c += __shfl_down_sync(0xFFFFFFFFu, c, off);
    if ((threadIdx.x & 31) == 0 && c) atomicAdd(counts + k, static_cast<unsigned long long>(c));
  };
  add(0, static_cast<uint32_t>(__popc(acc)));
  for (int32_t q = 0; q < g.num_queries; ++q) add(1 + q, static_cast<uint32_t>(__popc(atoms[g.queries[q] * stride + t] & acc)));
}

class CudaSampler : public SamplerBackend {
 public:
  explicit CudaSampler(const CpProgram& p) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      cudaGetLastError();
      throw gpu::EngineError(gpu::EngineError::Kind::DeviceUnavailable, "forward sampler: no usable CUDA device");
    }
    try {
      setup(p);
    } catch (...) {
      release();
      throw;
    }
  }
  ~CudaSampler() override { release(); }

  void run(uint64_t begin, uint64_t end, uint64_t seed, std::vector<uint64_t>& counts) override {
    const uint64_t first = begin / 32, last = (end + 31) / 32;
    for (uint64_t block0 = first; block0 < last; block0 += static_cast<uint64_t>(stride_)) {
      check(cudaMemset(counts_, 0, counts.size() * sizeof(unsigned long long)), "cudaMemset");
      // Threads for the blocks of samples there are, no more, in thread
      // blocks of as few warps as spread them over every multiprocessor:
      // a thread's blocks are sequential work, and the stopping rule's
      // batches are short (38,416 samples: 1,201 threads, which 256-thread
      // blocks put on 5 of an H200's 132 multiprocessors, 8 warps each,
      // their state words far past the L1 cache).
      const uint64_t warps = (std::min<uint64_t>(static_cast<uint64_t>(stride_), last - block0) + 31) / 32;
      const uint64_t per_sm = (warps + static_cast<uint64_t>(sms_) - 1) / static_cast<uint64_t>(sms_);
      const int threads = static_cast<int>(std::clamp<uint64_t>(per_sm, 1, 8) * 32);
      const unsigned grid = static_cast<unsigned>((warps * 32 + static_cast<uint64_t>(threads) - 1) / threads);
      sample_kernel<<<grid, threads>>>(view_, atoms_, fired_, stride_, block0, begin, end, seed, counts_);
      check(cudaGetLastError(), "sample_kernel launch");
      std::vector<unsigned long long> host(counts.size());
      check(cudaMemcpy(host.data(), counts_, host.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost),
            "sample_kernel");
      for (size_t k = 0; k < counts.size(); ++k) counts[k] += host[k];
    }
  }
  uint64_t batch_blocks() const override { return static_cast<uint64_t>(stride_); }
  const char* name() const override { return "gpu"; }

 private:
  std::vector<void*> owned_;
  CpView view_;
  uint32_t *atoms_ = nullptr, *fired_ = nullptr;
  unsigned long long* counts_ = nullptr;
  int64_t stride_ = 0;  // threads of one launch at most, a multiple of 256
  int sms_ = 1;         // the device's multiprocessors

  void setup(const CpProgram& p) {
    view_.num_atoms = p.num_atoms;
    view_.num_strata = p.num_strata();
    view_.num_rules = static_cast<int64_t>(p.num_rules());
    view_.num_queries = static_cast<int32_t>(p.queries.size());
    view_.num_evidence = static_cast<int32_t>(p.evidence.size());
    view_.stratum_begin = upload(p.stratum_begin, owned_);
    view_.one_pass = upload(one_pass_strata(p), owned_);
    view_.pos_off = upload(p.pos_off, owned_), view_.neg_off = upload(p.neg_off, owned_);
    view_.head_off = upload(p.head_off, owned_);
    view_.pos = upload(p.pos, owned_), view_.neg = upload(p.neg, owned_), view_.head = upload(p.head, owned_);
    view_.head_cond = upload(p.head_cond, owned_), view_.alias = upload(alias_tables(p), owned_);
    view_.queries = upload(p.queries, owned_);
    view_.evidence = upload(p.evidence, owned_), view_.evidence_value = upload(p.evidence_value, owned_);
    counts_ = upload(std::vector<unsigned long long>(1 + p.queries.size(), 0), owned_);
    // Threads: up to 2^16 (2^21 samples a launch), as many as half the free
    // memory holds, each with num_atoms + num_rules words.
    int dev = 0;
    check(cudaGetDevice(&dev), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute");
    sms_ = std::max(sms_, 1);
    size_t free_b = 0, total_b = 0;
    check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    const size_t words = static_cast<size_t>(std::max(p.num_atoms, 1)) + std::max<size_t>(p.num_rules(), 1);
    const size_t fit = free_b / 2 / (words * sizeof(uint32_t));
    stride_ = static_cast<int64_t>(std::min<size_t>(65536, fit) / 256 * 256);
    if (stride_ == 0)
      throw gpu::EngineError(gpu::EngineError::Kind::OutOfMemory,
                        "forward sampler: the ground program (" + std::to_string(words) +
                            " atoms and rules) does not fit 256 samplers in half the free GPU memory");
    void* a = nullptr;
    check(cudaMalloc(&a, static_cast<size_t>(stride_) * std::max(p.num_atoms, 1) * sizeof(uint32_t)), "cudaMalloc");
    owned_.push_back(a);
    atoms_ = static_cast<uint32_t*>(a);
    check(cudaMalloc(&a, static_cast<size_t>(stride_) * std::max<size_t>(p.num_rules(), 1) * sizeof(uint32_t)), "cudaMalloc");
    owned_.push_back(a);
    fired_ = static_cast<uint32_t*>(a);
  }
  void release() {
    for (void* p : owned_) cudaFree(p);
    owned_.clear();
  }
};

}  // namespace

std::unique_ptr<SamplerBackend> make_cuda_sampler(const CpProgram& prog) { return std::make_unique<CudaSampler>(prog); }

bool cuda_sampler_usable() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return count > 0;
}

}  // namespace mln::problog::fs
