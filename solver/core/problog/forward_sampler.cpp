// The forward sampler's driver (forward_sampler.hpp): the program's checks,
// batches on a backend, the stopping rule, the intervals.
#include "core/problog/forward_sampler.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "core/problog/forward_sampler_impl.hpp"

namespace mln::problog {

void CpProgram::add_rule(const std::vector<int32_t>& p, const std::vector<int32_t>& n,
                         const std::vector<int32_t>& heads, const std::vector<double>& probs) {
  pos.insert(pos.end(), p.begin(), p.end());
  neg.insert(neg.end(), n.begin(), n.end());
  double cum = 0;
  for (size_t i = 0; i < heads.size(); ++i) {
    head.push_back(heads[i]);
    const double before = cum;
    cum += probs[i];
    // Probabilities that add up to 1 up to rounding choose a head always.
    const bool last_of_one = i + 1 == heads.size() && std::fabs(cum - 1.0) < 1e-9;
    head_cum.push_back(last_of_one ? 1.0 : cum);
    head_cond.push_back(last_of_one || before >= 1.0 ? 1.0 : std::min(1.0, probs[i] / (1.0 - before)));
  }
  pos_off.push_back(static_cast<int64_t>(pos.size()));
  neg_off.push_back(static_cast<int64_t>(neg.size()));
  head_off.push_back(static_cast<int64_t>(head.size()));
  stratum_begin.back() = static_cast<int32_t>(num_rules());
}

void CpProgram::validate() const {
  auto bad = [](const std::string& m) { throw std::invalid_argument("forward sampler: " + m); };
  if (pos_off.empty() || neg_off.empty() || head_off.empty()) bad("offset arrays without their leading 0");
  const size_t nr = num_rules();
  if (neg_off.size() != nr + 1 || head_off.size() != nr + 1) bad("offset arrays of different lengths");
  if (pos_off.back() != static_cast<int64_t>(pos.size()) || neg_off.back() != static_cast<int64_t>(neg.size()) ||
      head_off.back() != static_cast<int64_t>(head.size()) || head_cum.size() != head.size() ||
      head_cond.size() != head.size())
    bad("offsets do not match the arrays");
  // Offsets start at 0 and never decrease: the kernels index by them unchecked.
  for (const auto* off : {&pos_off, &neg_off, &head_off}) {
    if (off->front() != 0) bad("offsets do not start at 0");
    for (size_t r = 1; r < off->size(); ++r)
      if ((*off)[r] < (*off)[r - 1]) bad("offsets decrease at rule " + std::to_string(r - 1));
  }
  if (stratum_begin.size() < 2 || stratum_begin.front() != 0 || stratum_begin.back() != static_cast<int32_t>(nr))
    bad("strata do not cover the rules");
  for (size_t s = 1; s < stratum_begin.size(); ++s)
    if (stratum_begin[s] < stratum_begin[s - 1]) bad("strata out of order");
  auto atoms = [&](const std::vector<int32_t>& v, const char* what) {
    for (int32_t a : v)
      if (a < 0 || a >= num_atoms) bad(std::string(what) + " atom " + std::to_string(a) + " out of range");
  };
  atoms(pos, "body"), atoms(neg, "negated body"), atoms(head, "head"), atoms(queries, "query"), atoms(evidence, "evidence");
  if (evidence_value.size() != evidence.size()) bad("evidence values and atoms of different lengths");
}

namespace fs {

std::vector<uint8_t> one_pass_strata(const CpProgram& p) {
  std::vector<int64_t> last_def(static_cast<size_t>(std::max(p.num_atoms, 0)), -1);
  for (size_t r = 0; r < p.num_rules(); ++r)
    for (int64_t k = p.head_off[r]; k < p.head_off[r + 1]; ++k) last_def[static_cast<size_t>(p.head[k])] = static_cast<int64_t>(r);
  std::vector<uint8_t> one(static_cast<size_t>(p.num_strata()), 1);
  for (int s = 0; s < p.num_strata(); ++s)
    for (int64_t r = p.stratum_begin[s]; r < p.stratum_begin[s + 1] && one[s]; ++r)
      for (int64_t k = p.pos_off[r]; k < p.pos_off[r + 1]; ++k)
        if (last_def[static_cast<size_t>(p.pos[k])] >= r) one[s] = 0;
  return one;
}

std::vector<AliasSlot> alias_tables(const CpProgram& p) {
  std::vector<AliasSlot> table(p.head.size() + p.num_rules());
  std::vector<double> q;  // each slot's probability times the slots
  std::vector<int32_t> small, large;
  for (size_t r = 0; r < p.num_rules(); ++r) {
    const int64_t first = p.head_off[r], n = p.head_off[r + 1] - first;
    if (n < kHeadsChosenEach) continue;
    const double slots = static_cast<double>(n + 1);
    q.assign(static_cast<size_t>(n + 1), 0.0);
    double before = 0;
    for (int64_t k = 0; k < n; ++k) {
      const double cum = p.head_cum[static_cast<size_t>(first + k)];
      q[static_cast<size_t>(k)] = std::max(0.0, cum - before) * slots;
      before = std::max(before, cum);
    }
    q[static_cast<size_t>(n)] = std::max(0.0, 1.0 - before) * slots;
    small.clear(), large.clear();
    for (int32_t j = 0; j <= n; ++j) (q[static_cast<size_t>(j)] < 1 ? small : large).push_back(j);
    AliasSlot* a = table.data() + first + static_cast<int64_t>(r);
    while (!small.empty() && !large.empty()) {
      const int32_t s = small.back(), l = large.back();
      small.pop_back();
      a[s].keep = q[static_cast<size_t>(s)], a[s].alias = l;
      q[static_cast<size_t>(l)] = (q[static_cast<size_t>(l)] + q[static_cast<size_t>(s)]) - 1;
      if (q[static_cast<size_t>(l)] < 1) large.pop_back(), small.push_back(l);
    }
    for (const auto* rest : {&small, &large})  // what rounding leaves: keep themselves
      for (int32_t j : *rest) a[j].keep = 1, a[j].alias = j;
  }
  return table;
}

}  // namespace fs

bool stopping_rule_holds(const std::vector<uint64_t>& true_counts, uint64_t n, double delta, double* max_width) {
  const double z = 1.96;
  double widest = 0;
  bool ok = n > 0;
  const double n_worst = std::ceil(z * z / (delta * delta));
  for (uint64_t k : true_counts) {
    if (n == 0) break;
    const double p = static_cast<double>(k) / static_cast<double>(n), nd = static_cast<double>(n);
    const double width = 2 * z * std::sqrt(p * (1 - p) / nd);
    widest = std::max(widest, width);
    // The normal approximation is checked at the ends of the Wilson
    // interval, not at p: near 0 or 1 the estimate right after a batch that
    // happened to miss often passes n p > 5 first, and stopping on it left
    // 90% of the intervals covering 0.999 (ProbLogSample.StoppedIntervalsCoverNearOne).
    double lo, hi;
    wilson_interval(k, n, &lo, &hi);
    const bool normal = nd * lo > 5 && nd * (1 - hi) > 5;
    if (!(width <= delta && (normal || nd >= n_worst))) ok = false;
  }
  if (max_width) *max_width = n == 0 ? 1.0 : widest;
  return ok;
}

namespace {

// The Wilson score interval at 95% of a share p of nd > 0 samples.
void wilson_of_share(double p, double nd, double* lo, double* hi) {
  const double z = 1.96;
  const double den = 1 + z * z / nd, mid = (p + z * z / (2 * nd)) / den;
  const double half = z * std::sqrt(p * (1 - p) / nd + z * z / (4 * nd * nd)) / den;
  *lo = std::max(0.0, mid - half), *hi = std::min(1.0, mid + half);
}

// The accepted samples that the stopping rule's normal approximation needs
// at an estimate p: the least n with n lo > 5 and n (1 - hi) > 5 at the
// Wilson interval of p over n, as stopping_rule_holds checks it (n lo grows
// with n), by bisection up to cap; cap where cap is not enough.  Near 0 or
// 1 this is several times 5 / p or 5 / (1 - p), which the batches asked
// for before, so that the rule failed after each of a run of short ones.
double normal_samples(double p, double cap) {
  auto ok = [p](double n) {
    double lo, hi;
    wilson_of_share(p, n, &lo, &hi);
    return n * lo > 5 && n * (1 - hi) > 5;
  };
  if (!(p > 0 && p < 1) || !ok(cap)) return cap;
  double fail = 1, pass = cap;
  while (pass - fail > 1) {
    const double mid = std::floor((fail + pass) / 2);
    (ok(mid) ? pass : fail) = mid;
  }
  return pass;
}

}  // namespace

void wilson_interval(uint64_t k, uint64_t n, double* lo, double* hi) {
  if (n == 0) {
    *lo = 0, *hi = 1;
    return;
  }
  wilson_of_share(static_cast<double>(k) / static_cast<double>(n), static_cast<double>(n), lo, hi);
}

bool cuda_sampler_available() { return fs::cuda_sampler_usable(); }

SampleResult forward_sample(const CpProgram& prog, const SampleOptions& o) {
  prog.validate();
  if (o.device != "cpu" && o.device != "gpu") throw std::invalid_argument("forward sampler: device must be cpu or gpu");
  if (!(o.delta > 0 && o.delta < 1)) throw std::invalid_argument("forward sampler: delta must lie in (0, 1)");
  if (o.max_samples == 0) throw std::invalid_argument("forward sampler: max_samples must be at least 1");
  std::unique_ptr<fs::SamplerBackend> be =
      o.device == "gpu" ? fs::make_cuda_sampler(prog) : fs::make_cpu_sampler(prog, o.threads);
  SampleResult res;
  res.device = be->name();
  std::vector<uint64_t> counts(1 + prog.queries.size(), 0);
  const uint64_t goal = o.samples ? o.samples : o.max_samples;
  // The stopping rule is checked after each batch.  A first batch of 2,048
  // samples estimates each query; each next batch is what the widest query
  // then needs by the rule (a tenth more, at most the worst case's count),
  // through the acceptance rate so far, up to the backend's width.  A fixed
  // count runs at that width.
  // The worst case's count, at most the goal: for a delta under ~5e-10 it
  // passes 2^64, and cast to an integer it became 0, a batch of nothing
  // drawn forever.  Capped, such a run ends at max_samples, unconverged.
  const double n_worst = std::min(std::ceil(1.96 * 1.96 / (o.delta * o.delta)), static_cast<double>(goal));
  const uint64_t wide = std::max<uint64_t>(be->batch_blocks() * 32, static_cast<uint64_t>(n_worst));
  const auto t0 = std::chrono::steady_clock::now();
  while (res.drawn < goal) {
    uint64_t batch =
        o.samples ? be->batch_blocks() * 32 : std::max<uint64_t>(32, std::min<uint64_t>(2048, static_cast<uint64_t>(n_worst)));
    if (!o.samples && res.drawn > 0) {
      const double n = static_cast<double>(counts[0]);
      double need = 0;
      for (size_t q = 1; q < counts.size(); ++q) {
        const double p = n > 0 ? static_cast<double>(counts[q]) / n : 0.5;
        const double width_n = 4 * 1.96 * 1.96 * p * (1 - p) / (o.delta * o.delta);
        const double nq = p <= 0 || p >= 1 ? n_worst : std::max(width_n, normal_samples(p, n_worst));
        need = std::max(need, std::min(nq, n_worst));
      }
      // Never past the worst case's count, where the rule holds for any p.
      const double target = std::min(n_worst, n + std::max(need - n, 32.0) * 1.1);
      const double rate = std::max(1e-6, n / static_cast<double>(res.drawn));
      const double more = std::max(target - n, 32.0) / rate;
      batch = std::clamp<uint64_t>(static_cast<uint64_t>(std::ceil(more)), 32, wide);
    }
    if (o.batch) batch = o.batch;
    const uint64_t end = std::min(goal, res.drawn + batch);
    be->run(res.drawn, end, o.seed, counts);
    res.drawn = end;
    SampleProgress pr;
    pr.drawn = res.drawn;
    pr.accepted = counts[0];
    const std::vector<uint64_t> qc(counts.begin() + 1, counts.end());
    const bool stop = stopping_rule_holds(qc, counts[0], o.delta, &pr.max_width);
    if (o.progress) o.progress(pr);
    if (!o.samples && stop) {
      res.converged = true;
      break;
    }
  }
  if (o.samples) res.converged = true;
  res.accepted = counts[0];
  res.true_counts.assign(counts.begin() + 1, counts.end());
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace mln::problog
