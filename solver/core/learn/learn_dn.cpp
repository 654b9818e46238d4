// learn_weights: diagonal Newton with a trust region (Lowd & Domingos
// 2007, as Tuffy's DNLearner: docs/tuffy-reference.md section 7.4) on
// MC-SAT feature expectations, and the voted perceptron on MAP counts.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "core/learn/learn.hpp"
#include "core/base/rng.hpp"
#include "options/options.hpp"

namespace mln::solver {

namespace {

void validate(const LearnNetwork& ln, const LearnOptions& o) {
  ln.validate();
  auto bad = [](const std::string& what) { throw std::invalid_argument("learn_weights: " + what); };
  if (o.iterations < 1) bad("iterations must be >= 1");
  if (o.samples < 1) bad("samples must be >= 1");
  if (!(o.prior_stddev >= 0) || !std::isfinite(o.prior_stddev)) bad("prior_stddev must be a finite number >= 0");
  if (o.init == options::LearnInit::kProgram && o.initial_weights.size() != static_cast<size_t>(ln.num_rules))
    bad("initial_weights must hold one weight per learnable clause");
  if (!(o.lambda > 0)) bad("lambda must be > 0");
  if (!(o.learning_rate > 0)) bad("learning_rate must be > 0");
  if (o.exact_max_atoms < 0 || o.exact_max_atoms > 20) bad("exact_max_atoms must be between 0 and 20");
  if (!(o.timeout_s >= 0)) bad("timeout_s must be >= 0");
  if (o.gpu_chains < 0) bad("gpu_chains must be >= 0");
  if (o.gpu_burn_in < 0) bad("gpu_burn_in must be >= 0");
  if (ln.num_rules == 0) bad("nothing to learn: no soft clause that is neither fixed nor hard has a grounding");
}

// Tuffy's initial weights: ln(#satisfied / #violated) groundings of each
// clause in the training world (a zero count is 1e-5).  A ground clause
// with coefficient -1 is the first-order clause's negation (a unit clause
// stored flipped), so its satisfaction counts as a violation.
std::vector<double> tuffy_initial_weights(const LearnNetwork& ln) {
  std::vector<double> sat(ln.num_rules, 0.0), viol(ln.num_rules, 0.0);
  const auto& cs = ln.net.clauses;
  for (size_t g = 0; g < cs.size(); ++g) {
    bool s = false;
    for (int64_t i = cs.offsets[g]; i < cs.offsets[g + 1] && !s; ++i) {
      const int32_t l = cs.lits[i];
      s = (l > 0) == (ln.truth[l > 0 ? l : -l] != 0);
    }
    for (int64_t i = ln.origin_off[g]; i < ln.origin_off[g + 1]; ++i) {
      const double c = ln.origin_coef[i];
      const bool orig_sat = c > 0 ? s : !s;
      (orig_sat ? sat : viol)[ln.origin_rule[i]] += std::fabs(c);
    }
  }
  std::vector<double> w(ln.num_rules);
  for (int32_t k = 0; k < ln.num_rules; ++k)
    w[k] = std::log((sat[k] > 0 ? sat[k] : 1e-5) / (viol[k] > 0 ? viol[k] : 1e-5));
  return w;
}

// The trust region's verdict on a step in words (LearnIteration::note):
// whether it was taken, the gains predicted and estimated, and what became
// of lambda (before: its value for this step).
std::string step_note(bool accepted, double predicted, double actual, double before, double lambda) {
  char buf[320];
  if (predicted == 0) {
    std::snprintf(buf, sizeof buf, "step taken: the quadratic model predicted no change; lambda /4 to %g", lambda);
  } else if (accepted) {
    std::snprintf(buf, sizeof buf, "step taken: the objective rose by %.4g (predicted %.4g, ratio %.2f)%s", actual,
                  predicted, actual / predicted, lambda < before ? "; lambda halved" : "");
    if (lambda < before) std::snprintf(buf + std::strlen(buf), sizeof buf - std::strlen(buf), " to %g", lambda);
  } else {
    const std::string what =
        actual <= 0 ? "the objective fell by %.4g where the model predicted a rise of %.4g (the step overshot)"
                    : "the objective rose by %.4g, under a quarter of the predicted %.4g";
    std::snprintf(buf, sizeof buf, ("step rejected: " + what + "; taken back, ").c_str(), std::fabs(actual), predicted);
    std::snprintf(buf + std::strlen(buf), sizeof buf - std::strlen(buf),
                  lambda > before ? "lambda x4 to %g: the next step is shorter" : "lambda stays at its cap %g", lambda);
  }
  return buf;
}

// Every step taken back: the answer is the initial weights and its
// estimated gain 0, which is said, with the last step's reason.  (class at
// Tuffy's initial weights, 2 iterations: the sampled variances lie far
// below the curvature, so the first steps overshoot -- the estimated
// objective fell -- and lambda grows 4x a step; the 4th step is taken.)
void warn_if_no_step(LearnResult& res) {
  if (res.trace.empty() ||
      std::any_of(res.trace.begin(), res.trace.end(), [](const LearnIteration& li) { return li.accepted; }))
    return;
  const LearnIteration& last = res.trace.back();
  const std::string why = "iteration " + std::to_string(last.iteration) + ": " + last.note;
  res.warnings.push_back("no step was taken in " + std::to_string(res.trace.size()) +
                         " iterations: the trust region took each back, so the weights are the initial ones and "
                         "the estimated gain is 0 (" +
                         why + "); allow more iterations (option iterations, -dMaxIter)");
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

namespace {

// One learning run: the training world's counts, the sampler(s), the
// iterates and the trace.  learn_weights() runs perceptron() or newton().
struct Learner {
  const LearnNetwork& ln;
  const LearnOptions& opts;
  const std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  const size_t K;
  double inv_var;  // the Gaussian prior's 1 / s^2 (0: none)
  LearnResult res;
  FeatureSampler sampler;
  // With hidden atoms (unknown, not query atoms: an open-world predicate
  // that is not a target), which are not in the training world, the
  // observed counts are E[n | training world], sampled with the query atoms
  // clamped to it (hard unit clauses); without, they are n(training world).
  std::unique_ptr<FeatureSampler> clamped;
  std::vector<double> n_fixed;
  std::vector<double> w, sum_w;
  double objective = 0;

  Learner(const LearnNetwork& l, const LearnOptions& o)
      : ln(l), opts(o), K(static_cast<size_t>(l.num_rules)), sampler(l, o) {
    inv_var = opts.prior_stddev > 0 ? 1.0 / (opts.prior_stddev * opts.prior_stddev) : 0.0;
    res.initial_weights = opts.init == options::LearnInit::kProgram ? opts.initial_weights : tuffy_initial_weights(ln);
    bool hidden = false;
    for (int32_t a = 1; a <= ln.net.num_atoms && !hidden; ++a)
      hidden = !ln.net.is_query.empty() && ln.net.is_query[a] == 0;
    if (hidden) {
      LearnNetwork cl = ln;
      for (int32_t a = 1; a <= ln.net.num_atoms; ++a)
        if (ln.net.is_query[a]) cl.add_clause({a}, ln.truth[a] ? kHardWeight : -kHardWeight, {});
      clamped = std::make_unique<FeatureSampler>(cl, opts);
    }
    n_fixed = feature_counts(ln, ln.truth);
    w = res.initial_weights;
    sum_w.assign(K, 0.0);
  }

  std::vector<double> observed(const std::vector<double>& x, uint64_t seed) {
    return clamped ? clamped->expect(x, seed).mean : n_fixed;
  }

  bool stopped() const {
    if (opts.cancel && opts.cancel->load()) return true;
    return opts.timeout_s > 0 &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > opts.timeout_s;
  }

  LearnIteration& record(int it, double gnorm, double lambda, bool accepted) {
    LearnIteration li;
    li.iteration = it;
    li.weights = w;
    li.objective = objective;
    li.gradient_norm = gnorm;
    li.lambda = lambda;
    li.accepted = accepted;
    res.trace.push_back(li);
    for (size_t k = 0; k < K; ++k) sum_w[k] += w[k];
    res.iterations = it;
    if (opts.on_iteration) opts.on_iteration(it, w, objective);
    return res.trace.back();
  }

  // The iterates' average (the answer of the voted perceptron).
  std::vector<double> average() const {
    std::vector<double> avg(K, 0.0);
    for (size_t k = 0; k < K; ++k) avg[k] = res.iterations > 0 ? sum_w[k] / res.iterations : w[k];
    return avg;
  }

  // Voted perceptron: w += rate * (n_train - n_MAP(w)) / groundings, the
  // answer the average of the iterates (Collins 2002).  The per-clause
  // scale (groundings) keeps the step size independent of domain size.
  void perceptron() {
    std::vector<double> scale(K, 0.0);
    for (size_t i = 0; i < ln.origin_rule.size(); ++i) scale[ln.origin_rule[i]] += std::fabs(ln.origin_coef[i]);
    for (int it = 1; it <= opts.iterations && !stopped(); ++it) {
      const std::vector<double> n_map = sampler.map_counts(w, derive_seed(opts.seed, it));
      const std::vector<double> n_train = observed(w, derive_seed(opts.seed ^ 0x5A5Aull, it));
      if (stopped()) break;
      double gnorm = 0;
      for (size_t k = 0; k < K; ++k) {
        const double g = (n_train[k] - n_map[k]) / std::max(1.0, scale[k]) - inv_var * w[k];
        w[k] += opts.learning_rate * g;
        gnorm += g * g;
      }
      record(it, std::sqrt(gnorm), 0, true);
    }
    res.weights = average();
    res.average_weights = res.weights;
  }

  // Gradient of the negative log posterior: E[n] - n_train + w / s^2.
  std::vector<double> gradient(const FeatureStats& st, const std::vector<double>& x, uint64_t seed) {
    const std::vector<double> n_train = observed(x, seed);
    std::vector<double> g(K);
    for (size_t k = 0; k < K; ++k) g[k] = st.mean[k] - n_train[k] + inv_var * x[k];
    return g;
  }

  // Diagonal Newton with a trust region (Tuffy's DN; docs/solver/learn.md).
  void newton() {
    FeatureStats st = sampler.expect(w, derive_seed(opts.seed, 0));
    res.samples = st.samples;
    std::vector<double> g = gradient(st, w, derive_seed(opts.seed ^ 0x5A5Aull, 0));
    double lambda = opts.lambda;
    for (int it = 1; it <= opts.iterations && !stopped() && !st.stopped; ++it) {
      // Direction: the gradient scaled by the inverse diagonal Hessian
      // (Var[n_k] + 1/s^2); step length from the full sampled Hessian and
      // the trust region: alpha = -d.g / (d'Hd + lambda d.d).
      std::vector<double> d(K);
      for (size_t k = 0; k < K; ++k) d[k] = -g[k] / (st.cov[k * K + k] + inv_var + 1e-10);
      double dhd = 0;
      for (size_t a = 0; a < K; ++a) {
        double row = 0;
        for (size_t b = 0; b < K; ++b) row += st.cov[a * K + b] * d[b];
        dhd += d[a] * row + inv_var * d[a] * d[a];
      }
      const double dg = dot(d, g), dd = dot(d, d);
      // Stop when even an unconstrained Newton step would gain less than
      // the tolerance.  (Tuffy stops on |dw . g| of the last step, which a
      // large trust-region penalty makes small long before the optimum.)
      if (dd == 0 || (dhd > 0 && dg * dg / (2 * dhd) < opts.tolerance)) {
        res.converged = true;
        break;
      }
      const double alpha = -dg / (dhd + lambda * dd);
      std::vector<double> dw(K), w_new(K);
      for (size_t k = 0; k < K; ++k) dw[k] = alpha * d[k], w_new[k] = w[k] + dw[k];
      // Predicted decrease of the negative log posterior (quadratic model).
      const double predicted = -(alpha * dg + 0.5 * alpha * alpha * dhd);
      FeatureStats st_new = sampler.expect(w_new, derive_seed(opts.seed, it));
      if (st_new.stopped) break;
      std::vector<double> g_new = gradient(st_new, w_new, derive_seed(opts.seed ^ 0x5A5Aull, it));
      // Actual decrease, by the trapezoid rule along the step.
      double actual = 0;
      for (size_t k = 0; k < K; ++k) actual -= dw[k] * 0.5 * (g[k] + g_new[k]);
      const double ratio = predicted != 0 ? actual / predicted : 0;
      const double lambda_before = lambda;
      bool accepted = true;
      if (predicted == 0) {
        lambda /= 4;
      } else if (ratio < 0.25) {
        lambda = std::min(lambda * 4, 1e6);
        accepted = false;  // back to w (its expectations are still st, g)
      } else if (ratio > 0.75) {
        lambda = std::max(lambda / 2, 1e-3);
      }
      if (accepted) {
        w = w_new;
        st = std::move(st_new);
        objective += actual;
        g = std::move(g_new);
      }
      LearnIteration& li = record(it, std::sqrt(dot(g, g)), lambda, accepted);
      li.predicted = predicted;
      li.actual = actual;
      li.note = step_note(accepted, predicted, actual, lambda_before, lambda);
    }
    warn_if_no_step(res);
    res.weights = w;
    res.average_weights = average();
  }
};

}  // namespace

LearnResult learn_weights(const LearnNetwork& ln, const LearnOptions& opts) {
  validate(ln, opts);
  Learner l(ln, opts);
  if (opts.method == options::LearnMethod::kPerceptron)
    l.perceptron();
  else
    l.newton();
  LearnResult& res = l.res;
  res.device_used = l.sampler.device_used();
  const std::vector<std::string> sampler_warnings = l.sampler.warnings();
  res.warnings.insert(res.warnings.begin(), sampler_warnings.begin(), sampler_warnings.end());
  if (l.clamped && l.clamped->device_used() != res.device_used) res.device_used = "cpu+gpu";
  res.cancelled = l.stopped() && !res.converged && res.iterations < opts.iterations;
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - l.t0).count();
  return std::move(res);
}

}  // namespace mln::solver
