// The weighted walk on CPU threads: walk_weighted_rules.hpp's rounds with
// OpenMP loops (the GPU design runs the same rules as kernels).
#include <omp.h>

#include <algorithm>
#include <stdexcept>

#include "core/walk/walk_weighted.hpp"

namespace mln::solver {

namespace {

using namespace weighted;

class CpuBackend {
 public:
  CpuBackend(const WalkInstance& in, const std::vector<uint8_t>& init, int threads, const std::vector<int32_t>* part,
             int32_t parts, int64_t n_free = INT64_MAX)
      : in_(in), truth_(init), best_(init), tc_(std::max<int64_t>(1, in.m)), crit_(tc_.size()), dw_(tc_.size()),
        claim_(tc_.size()), stamp_(std::max(1, in.n), 0), va_(tc_.size()), vb_(tc_.size()), cand_(tc_.size()),
        prio_(tc_.size()), bump_(tc_.size()), pcost_(parts), pbest_(parts), pimproved_(parts), pflips_(parts, 0),
        pstill_(parts, 0), pfrozen_(parts, 0),
        threads_(threads > 0 ? threads : omp_get_max_threads()) {
    I_ = Inst{in.n, in.m, in.cl_off.data(), in.cl_lit.data(), in.occ_off.data(), in.occ.data(), in.w.data(), n_free};
    S_ = State{truth_.data(), tc_.data(), crit_.data(), dw_.data(), claim_.data(), stamp_.data(),
               {va_.data(), vb_.data()}, cand_.data(), prio_.data(), bump_.data(), ctr_,
               part ? part->data() : nullptr, parts, pcost_.data(), pbest_.data(), pimproved_.data(),
               pflips_.data(), pstill_.data(), pfrozen_.data()};
  }

  void init(bool reset_dw) {
    const unsigned long long best = ctr_[kBestCost];
    std::fill(ctr_, ctr_ + kCounters, 0ull);
    ctr_[kBestCost] = best;
    std::fill(pcost_.begin(), pcost_.end(), 0ull);
    std::fill(pflips_.begin(), pflips_.end(), 0u);
    std::fill(pstill_.begin(), pstill_.end(), 0u);
    std::fill(pfrozen_.begin(), pfrozen_.end(), 0);
    const int64_t m = in_.m;
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (int64_t c = 0; c < m; ++c) init_clause(I_, S_, c, reset_dw ? 1 : 0);
  }
  void mark_best() {
    std::copy(truth_.begin(), truth_.end(), best_.begin());
    ctr_[kBestCost] = 0;
    for (int32_t k = 0; k < S_.parts; ++k) mark_part(S_, k);
  }
  void rounds(int64_t first, int count, const RoundParams& P0, double keep) {
    RoundParams P = P0;
    for (int64_t r = first; r < first + count; ++r) {
      const int in = static_cast<int>(r & 1);
      const int64_t nin = static_cast<int64_t>(ctr_[kViol0 + in]);
      P.round = r;
#pragma omp parallel num_threads(threads_)
      {
#pragma omp for schedule(dynamic, 256)
        for (int64_t i = 0; i < nin; ++i) propose(I_, S_, in, i, P);
#pragma omp for schedule(dynamic, 256)
        for (int64_t i = 0; i < nin; ++i) flip(I_, S_, in, i, r);
#pragma omp for schedule(dynamic, 256)
        for (int64_t i = 0; i < nin; ++i) settle(I_, S_, in, i, P);
      }
      for (int32_t k = 0; k < S_.parts; ++k) end_part(S_, k, P);
      if (ctr_[kImproved]) {
        const int32_t n = in_.n;
#pragma omp parallel for schedule(static) num_threads(threads_)
        for (int32_t a = 0; a < n; ++a) copy_best_atom(S_, best_.data(), a);
      }
      if (ctr_[kAnyFrozen]) {
        const int64_t m = in_.m;
#pragma omp parallel for schedule(static) num_threads(threads_)
        for (int64_t c = 0; c < m; ++c) smooth_frozen(I_, S_, c, keep);
      }
      end_round(S_, in);
    }
  }
  void smooth(double keep) {
    const int64_t m = in_.m;
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (int64_t c = 0; c < m; ++c) smooth_clause(I_, S_, c, keep);
  }
  Counts read(int list) {
    Counts c;
    c.cost = static_cast<int64_t>(ctr_[kCost]);
    c.best_cost = static_cast<int64_t>(ctr_[kBestCost]);
    c.nviol = static_cast<int64_t>(ctr_[kViol0 + list]);
    c.flips = static_cast<int64_t>(ctr_[kFlips]);
    ctr_[kFlips] = 0;
    return c;
  }
  void restore_best() { std::copy(best_.begin(), best_.end(), truth_.begin()); }
  void hold(const uint8_t* v, int64_t k) {
    std::copy(v, v + k, truth_.end() - k);
    std::copy(v, v + k, best_.end() - k);
  }
  std::vector<uint8_t> best() { return best_; }

 private:
  const WalkInstance& in_;
  std::vector<uint8_t> truth_, best_;
  std::vector<int32_t> tc_;
  std::vector<uint32_t> crit_;
  std::vector<double> dw_;
  std::vector<unsigned long long> claim_;
  std::vector<uint32_t> stamp_;
  std::vector<int32_t> va_, vb_;
  std::vector<uint32_t> cand_;
  std::vector<unsigned long long> prio_;
  std::vector<uint8_t> bump_;
  std::vector<unsigned long long> pcost_, pbest_;
  std::vector<uint8_t> pimproved_;
  std::vector<uint32_t> pflips_, pstill_;
  std::vector<uint8_t> pfrozen_;
  unsigned long long ctr_[kCounters] = {};
  int threads_;
  Inst I_{};
  State S_{};
};

// The driver checks for the end after every round: batches amortise the
// GPU's host round trips, which the CPU does not have.  No cap rule
// (stall_cap_work): a CPU round of a large network is long, and the rule
// proportional to the rounds to the best ends the walk (docs/solver/walk.md).
// With a fixed thread count a seeded walk repeats exactly: the rules'
// random streams are the clauses' and their atomics add integers.
WeightedOptions cpu_driver_options(WeightedOptions wo) {
  wo.max_batch = 1;
  wo.stall_cap_work = 0;
  return wo;
}

}  // namespace

std::unique_ptr<WeightedSession> weighted_session_cpu(const WalkInstance& in, const std::vector<uint8_t>& init,
                                                      int64_t n_free, const WeightedOptions& wo) {
  weighted::check_session(in, init, n_free);
  return std::make_unique<weighted::Session<CpuBackend>>(in, n_free, cpu_driver_options(wo), in, init, wo.threads,
                                                         nullptr, 1, n_free);
}

WalkOutcome walk_weighted_cpu(const WalkInstance& in, const std::vector<uint8_t>& init, const WalkParams& p,
                              const WeightedOptions& wo, const std::vector<int32_t>* part_of_atom) {
  if (static_cast<int64_t>(init.size()) != in.n) throw std::invalid_argument("walk_weighted_cpu: init has the wrong size");
  if (in.m == 0) {
    WalkOutcome out;
    out.best = init;
    out.satisfied = true;
    return out;
  }
  const int32_t parts = weighted::count_parts(in, part_of_atom);
  CpuBackend b(in, init, wo.threads, part_of_atom, parts);
  return weighted::run(b, in, p, cpu_driver_options(wo), -1);
}

}  // namespace mln::solver
