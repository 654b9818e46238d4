// The forward sampler on CPU threads (forward_sampler.hpp): each thread
// takes blocks of 32 samples from a shared counter, with its own state and
// counts; a block's random stream is its own (forward_sampler_kernel.hpp),
// so results do not depend on the thread count.
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>

#include "options/threads.hpp"

#include "core/problog/forward_sampler_impl.hpp"
#include "core/problog/forward_sampler_kernel.hpp"

namespace mln::problog::fs {

namespace {

CpView view(const CpProgram& p, const std::vector<uint8_t>& one_pass, const std::vector<AliasSlot>& alias) {
  CpView v;
  v.one_pass = one_pass.data(), v.alias = alias.data();
  v.num_atoms = p.num_atoms;
  v.num_strata = p.num_strata();
  v.num_rules = static_cast<int64_t>(p.num_rules());
  v.num_queries = static_cast<int32_t>(p.queries.size());
  v.num_evidence = static_cast<int32_t>(p.evidence.size());
  v.stratum_begin = p.stratum_begin.data();
  v.pos_off = p.pos_off.data(), v.neg_off = p.neg_off.data(), v.head_off = p.head_off.data();
  v.pos = p.pos.data(), v.neg = p.neg.data(), v.head = p.head.data();
  v.head_cond = p.head_cond.data();
  v.queries = p.queries.data();
  v.evidence = p.evidence.data(), v.evidence_value = p.evidence_value.data();
  return v;
}

class CpuSampler : public SamplerBackend {
 public:
  CpuSampler(const CpProgram& p, int threads)
      : prog_(p), one_pass_(one_pass_strata(p)), alias_(alias_tables(p)), view_(view(prog_, one_pass_, alias_)) {
    threads_ = usable_threads(threads);
  }
  void run(uint64_t begin, uint64_t end, uint64_t seed, std::vector<uint64_t>& counts) override {
    const uint64_t block0 = begin / 32, nblocks = (end + 31) / 32 - block0;
    std::atomic<uint64_t> next{0};
    std::mutex mu;
    std::exception_ptr failed;
    auto work = [&] {
      try {
        work_on(next, nblocks, block0, begin, end, seed, counts, mu);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        failed = std::current_exception();
        next = nblocks;  // the others stop at their next block
      }
    };
    const int n = static_cast<int>(std::min<uint64_t>(static_cast<uint64_t>(threads_), nblocks));
    std::vector<std::thread> pool;
    // A thread the system refuses (a per-process limit) leaves its blocks to
    // the ones started: blocks are taken from a shared counter and each has
    // its own random stream, so the answer is the same.
    try {
      for (int t = 1; t < n; ++t) pool.emplace_back(work);
    } catch (const std::system_error&) {
    }
    work();
    for (std::thread& t : pool) t.join();
    if (failed) std::rethrow_exception(failed);
  }
  // 16,384 samples a thread: a batch long enough to pay for starting the
  // threads, short enough to check for a cancel often.
  uint64_t batch_blocks() const override { return static_cast<uint64_t>(threads_) * 512; }
  const char* name() const override { return "cpu"; }

 private:
  const CpProgram& prog_;
  std::vector<uint8_t> one_pass_;
  std::vector<AliasSlot> alias_;
  CpView view_;
  int threads_ = 1;

  // One thread's share: blocks from the shared counter, counts added once.
  void work_on(std::atomic<uint64_t>& next, uint64_t nblocks, uint64_t block0, uint64_t begin, uint64_t end,
               uint64_t seed, std::vector<uint64_t>& counts, std::mutex& mu) const {
    std::vector<uint32_t> atoms(static_cast<size_t>(std::max(view_.num_atoms, 1)));
    std::vector<uint32_t> fired(static_cast<size_t>(std::max<int64_t>(view_.num_rules, 1)));
    std::vector<uint64_t> local(counts.size(), 0);
    for (;;) {
      const uint64_t i = next.fetch_add(1);
      if (i >= nblocks) break;
      const uint64_t b = block0 + i;
      Rng rng = block_rng(seed, b, begin);
      const uint32_t acc = sample_block(view_, atoms.data(), fired.data(), 1, valid_mask(b, begin, end), rng);
      local[0] += static_cast<uint64_t>(popcount32(acc));
      for (int32_t q = 0; q < view_.num_queries; ++q)
        local[1 + static_cast<size_t>(q)] += static_cast<uint64_t>(popcount32(atoms[view_.queries[q]] & acc));
    }
    std::lock_guard<std::mutex> lock(mu);
    for (size_t k = 0; k < counts.size(); ++k) counts[k] += local[k];
  }
};

}  // namespace

std::unique_ptr<SamplerBackend> make_cpu_sampler(const CpProgram& prog, int threads) {
  return std::make_unique<CpuSampler>(prog, threads);
}

}  // namespace mln::problog::fs
