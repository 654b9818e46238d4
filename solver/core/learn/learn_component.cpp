// A learning component's data and the exact sums over its states
// (learn_component.hpp); the feature counts of a world (learn.hpp).
#include "core/learn/learn_component.hpp"

#include <algorithm>
#include <cmath>

namespace mln::solver {

namespace {

// Whether a clause's literals hold in a truth assignment indexed by atom id.
bool clause_sat(const int32_t* l, size_t n, const uint8_t* truth_by_id) {
  for (size_t i = 0; i < n; ++i) {
    const int32_t a = l[i] > 0 ? l[i] : -l[i];
    if ((l[i] > 0) == (truth_by_id[a] != 0)) return true;
  }
  return false;
}

}  // namespace

std::vector<double> feature_counts(const LearnNetwork& ln, const std::vector<uint8_t>& x) {
  std::vector<double> n(ln.num_rules, 0.0);
  const auto& cs = ln.net.clauses;
  for (size_t g = 0; g < cs.size(); ++g) {
    if (ln.origin_off[g] == ln.origin_off[g + 1]) continue;
    if (!clause_sat(&cs.lits[cs.offsets[g]], cs.offsets[g + 1] - cs.offsets[g], x.data())) continue;
    for (int64_t i = ln.origin_off[g]; i < ln.origin_off[g + 1]; ++i) n[ln.origin_rule[i]] += ln.origin_coef[i];
  }
  return n;
}

namespace learn_detail {

void CompData::features(const std::vector<uint8_t>& x, std::vector<double>& f, std::vector<uint8_t>& by_id) const {
  std::fill(f.begin(), f.end(), 0.0);
  by_id.resize(x.size() + 1);
  std::copy(x.begin(), x.end(), by_id.begin() + 1);
  const auto& cs = sub.net.clauses;
  for (size_t j = 0; j < cs.size(); ++j) {
    if (off[j] == off[j + 1]) continue;
    if (!clause_sat(&cs.lits[cs.offsets[j]], cs.offsets[j + 1] - cs.offsets[j], by_id.data())) continue;
    for (int64_t i = off[j]; i < off[j + 1]; ++i) f[rule[i]] += coef[i];
  }
}

std::vector<double> state_log_weights(const CompData& c) {
  const int32_t n = c.n();
  const auto& cs = c.sub.net.clauses;
  std::vector<double> lw(size_t{1} << n, 0.0);
  std::vector<uint8_t> by_id(static_cast<size_t>(n) + 1, 0);
  for (size_t s = 0; s < lw.size(); ++s) {
    for (int32_t a = 0; a < n; ++a) by_id[a + 1] = (s >> a) & 1u;
    double v = 0;
    for (size_t j = 0; j < cs.size(); ++j)
      if (clause_sat(&cs.lits[cs.offsets[j]], cs.offsets[j + 1] - cs.offsets[j], by_id.data())) v += cs.weights[j];
    lw[s] = v;
  }
  return lw;
}

// State number s of n atoms, as 0/1 per local atom (bit i = atom i + 1).
std::vector<uint8_t> state_of(size_t s, int32_t n) {
  std::vector<uint8_t> x(static_cast<size_t>(n));
  for (int32_t a = 0; a < n; ++a) x[a] = (s >> a) & 1u;
  return x;
}

double exact_feature_sums(CompData& c, std::vector<double>& sum, std::vector<double>& outer) {
  const size_t k = c.k();
  std::vector<double> f(k);
  std::vector<uint8_t> by_id;
  const std::vector<double> lw = state_log_weights(c);
  const double mx = *std::max_element(lw.begin(), lw.end());
  double total = 0;
  for (size_t s = 0; s < lw.size(); ++s) {
    const double p = std::exp(lw[s] - mx);
    if (p == 0) continue;
    c.features(state_of(s, c.n()), f, by_id);
    for (size_t a = 0; a < k; ++a) {
      sum[a] += p * f[a];
      for (size_t b = 0; b < k; ++b) outer[a * k + b] += p * f[a] * f[b];
    }
    total += p;
  }
  return total;
}

}  // namespace learn_detail

}  // namespace mln::solver
