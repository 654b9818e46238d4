// MLN clause search by (weighted) pseudo-log-likelihood (docs/rules.md,
// "MLN clauses").  For a clause `body => t(x)` and a ground atom t(a), the
// clause's groundings that mention t(a) are satisfied when t(a) is true and,
// when it is false, exactly where the body is false; so the difference of
// true groundings between t(a) true and false is the number of the body's
// true groundings with x = a: the clause's bindings per example.  With one
// target literal per clause, the pseudo-log-likelihood of the target atoms
// is then a logistic regression of the labels on those counts, plus the
// unit clause t(x) as the intercept (seed 000, Eq. 3.11, weighted per
// predicate: one predicate here).
//
// Weights are fitted by Newton's method with a Gaussian prior: the model has
// at most max_rules + 1 weights, where an exact Newton step (a small dense
// solve) converges in a few iterations and needs no line-search tuning, so
// L-BFGS would buy nothing.  A candidate is scored with the other weights
// fixed (its own weight and the intercept refitted, warm-started), less
// `penalty` nats per body literal, as Alchemy charges clause length; the
// clause chosen is then refitted with all the others.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <unordered_set>

#include "rules/refine.hpp"

namespace mln::rules {

namespace {

// log(1 + exp(z)), stable.
double softplus(double z) { return z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z)); }
double sigmoid(double z) { return z >= 0 ? 1 / (1 + std::exp(-z)) : std::exp(z) / (1 + std::exp(z)); }

// The examples' labels and each clause's feature (bindings per example).
struct Model {
  std::vector<char> y;                      // 1 positive, 0 negative
  std::vector<std::vector<double>> feats;   // feats[0]: the intercept (all 1)
  std::vector<double> w;
  double l2 = 0;

  // Log-likelihood of the labels at margins m, less the prior of `w`
  // (the intercept has none).
  double loglik(const std::vector<double>& m, const std::vector<double>& w_) const {
    double ll = 0;
    for (size_t e = 0; e < y.size(); ++e) ll += y[e] ? -softplus(-m[e]) : -softplus(m[e]);
    for (size_t k = 1; k < w_.size(); ++k) ll -= 0.5 * l2 * w_[k] * w_[k];
    return ll;
  }
  // Each example's margin from the clauses' weights, the intercept left
  // out: what a candidate's fit holds fixed (the same for every candidate
  // of a round).
  std::vector<double> fixed_margins() const {
    std::vector<double> m(y.size(), 0.0);
    for (size_t k = 1; k < w.size(); ++k)
      for (size_t e = 0; e < y.size(); ++e) m[e] += w[k] * feats[k][e];
    return m;
  }
};

// Solves H d = g (H symmetric positive definite, small) by Gaussian
// elimination with partial pivoting; H and g are overwritten.
std::vector<double> solve(std::vector<std::vector<double>> H, std::vector<double> g) {
  const size_t n = g.size();
  for (size_t c = 0; c < n; ++c) {
    size_t p = c;
    for (size_t r = c + 1; r < n; ++r)
      if (std::fabs(H[r][c]) > std::fabs(H[p][c])) p = r;
    std::swap(H[c], H[p]);
    std::swap(g[c], g[p]);
    if (std::fabs(H[c][c]) < 1e-12) H[c][c] = 1e-12;
    for (size_t r = c + 1; r < n; ++r) {
      const double f = H[r][c] / H[c][c];
      for (size_t k = c; k < n; ++k) H[r][k] -= f * H[c][k];
      g[r] -= f * g[c];
    }
  }
  std::vector<double> d(n);
  for (size_t c = n; c-- > 0;) {
    double v = g[c];
    for (size_t k = c + 1; k < n; ++k) v -= H[c][k] * d[k];
    d[c] = v / H[c][c];
  }
  return d;
}

// Newton's method on the weights listed in `free` (the rest fixed, their
// margins in `base`); returns the log-likelihood reached.  Step halving
// keeps every step an ascent.
double newton(const Model& md, const std::vector<int>& free, std::vector<double>& w, const std::vector<double>& base) {
  const size_t n = free.size(), N = md.y.size();
  auto margins = [&](const std::vector<double>& ww) {
    std::vector<double> m = base;
    for (size_t i = 0; i < n; ++i)
      for (size_t e = 0; e < N; ++e) m[e] += ww[static_cast<size_t>(free[i])] * md.feats[static_cast<size_t>(free[i])][e];
    return m;
  };
  double ll = md.loglik(margins(w), w);
  for (int it = 0; it < 50; ++it) {
    const std::vector<double> m = margins(w);
    std::vector<double> g(n, 0.0);
    std::vector<std::vector<double>> H(n, std::vector<double>(n, 0.0));
    for (size_t e = 0; e < N; ++e) {
      const double p = sigmoid(m[e]), r = (md.y[e] ? 1.0 : 0.0) - p, v = p * (1 - p);
      for (size_t i = 0; i < n; ++i) {
        const double fi = md.feats[static_cast<size_t>(free[i])][e];
        if (fi == 0) continue;
        g[i] += r * fi;
        for (size_t j = 0; j <= i; ++j) H[i][j] += v * fi * md.feats[static_cast<size_t>(free[j])][e];
      }
    }
    for (size_t i = 0; i < n; ++i) {
      if (free[i] > 0) {
        g[i] -= md.l2 * w[static_cast<size_t>(free[i])];
        H[i][i] += md.l2;
      }
      for (size_t j = 0; j < i; ++j) H[j][i] = H[i][j];
      H[i][i] += 1e-9;
    }
    const std::vector<double> d = solve(H, g);
    double step = 1;
    for (; step > 1e-6; step /= 2) {
      std::vector<double> w2 = w;
      for (size_t i = 0; i < n; ++i) w2[static_cast<size_t>(free[i])] += step * d[i];
      const double ll2 = md.loglik(margins(w2), w2);
      if (ll2 >= ll - 1e-12) {
        const bool done = ll2 - ll < 1e-9 * (1 + std::fabs(ll));
        w = w2;
        ll = ll2;
        if (done) return ll;
        break;
      }
    }
    if (step <= 1e-6) break;
  }
  return ll;
}

// The candidate's gain: its weight and the intercept fitted, the others
// fixed (their margins: `fixed`, Model::fixed_margins).
double candidate_gain(Model& md, const std::vector<double>& feat, const std::vector<double>& fixed, double current) {
  md.feats.push_back(feat);
  std::vector<double> w = md.w;
  w.push_back(0.0);
  const int k = static_cast<int>(w.size()) - 1;
  const double ll = newton(md, {0, k}, w, fixed);
  md.feats.pop_back();
  return ll - current;
}

void check(const Task& task, SearchOptions o) {
  o.wpll = true;  // this search's rules, whatever the flag says
  check_search_options(o, task.target.types.size());
  if (task.pos.rows() == 0 || task.neg.rows() == 0)
    throw TaskError("wpll needs both positive and negative examples of \"" + task.target.name + "\"");
}

}  // namespace

std::vector<LearnedRule> learn_mln_rules(gpu::Engine& eng, const Task& task, const SearchOptions& opts,
                                         SearchStats* stats) {
  check(task, opts);
  SearchStats local;
  SearchStats& st = stats ? *stats : local;
  CoverageEngine ce(eng, task, opts.max_rows);
  Refiner refiner(task, opts);
  Model md;
  md.l2 = opts.l2;
  md.y.assign(task.pos.rows() + task.neg.rows(), 0);
  std::fill(md.y.begin(), md.y.begin() + static_cast<long>(task.pos.rows()), 1);
  md.feats.push_back(std::vector<double>(md.y.size(), 1.0));
  md.w = {0.0};
  double ll = newton(md, {0}, md.w, std::vector<double>(md.y.size(), 0.0));
  std::vector<Clause> chosen;
  std::vector<double> gains;
  std::unordered_set<std::string> taken;
  const CoverageEngine::Node root = ce.root({});
  while (static_cast<int>(chosen.size()) < opts.max_rules) {
    // Beam search for the clause of the largest gain.
    double best_gain = opts.min_gain;
    CoverageEngine::Node best;
    bool found = false;
    const std::vector<double> fixed = md.fixed_margins();
    std::vector<std::pair<double, CoverageEngine::Node>> beam{{0.0, root}};
    std::unordered_set<std::string> seen;
    for (int depth = 1; depth <= opts.max_body && !beam.empty(); ++depth) {
      std::vector<std::pair<double, CoverageEngine::Node>> cands;
      for (const auto& [g0, n] : beam) {
        if (!n.refinable) continue;
        std::vector<Clause> kids;
        refiner.refine(n.clause, kids);
        for (const Clause& c : kids) {
          const std::string key = Refiner::key(c, task.target.types.size());
          if (!seen.insert(key).second || taken.count(key)) continue;
          const auto t0 = std::chrono::steady_clock::now();
          CoverageEngine::Node kid = ce.extend(n, c);
          std::vector<double> feat = ce.counts(kid);
          st.coverage_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          ++st.candidates;
          if (kid.cov.pos + kid.cov.neg == 0) continue;  // true nowhere: no refinement is either
          const double gain = candidate_gain(md, feat, fixed, ll) - opts.penalty * static_cast<double>(c.body.size());
          if (gain > best_gain) {
            best_gain = gain;
            best = kid;
            found = true;
          }
          cands.emplace_back(gain, std::move(kid));
        }
      }
      if (opts.progress) opts.progress(static_cast<int>(chosen.size()), depth, static_cast<int64_t>(cands.size()));
      std::stable_sort(cands.begin(), cands.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
      if (static_cast<int>(cands.size()) > opts.beam) cands.resize(static_cast<size_t>(opts.beam));
      beam = std::move(cands);
    }
    if (!found) break;
    taken.insert(Refiner::key(best.clause, task.target.types.size()));
    chosen.push_back(best.clause);
    gains.push_back(best_gain);
    md.feats.push_back(ce.counts(best));
    md.w.push_back(0.0);
    std::vector<int> all(md.w.size());
    for (size_t k = 0; k < all.size(); ++k) all[k] = static_cast<int>(k);
    ll = newton(md, all, md.w, std::vector<double>(md.y.size(), 0.0));
  }
  std::vector<LearnedRule> out(1);
  out[0].weight = md.w[0];
  out[0].clause.var_types = task.target.types;
  out[0].on_all = {static_cast<int64_t>(task.pos.rows()), static_cast<int64_t>(task.neg.rows())};
  out[0].text = render_mln(task, out[0].clause, md.w[0]);
  for (size_t i = 0; i < chosen.size(); ++i) {
    LearnedRule r;
    r.clause = chosen[i];
    r.weight = md.w[i + 1];
    r.score = gains[i];
    r.on_all = ce.cover(r.clause, {});
    r.text = render_mln(task, r.clause, r.weight);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace mln::rules
