// Discriminative weight learning (docs/tuffy-reference.md section 7.4;
// docs/solver/learn.md, "Weight learning"): diagonal Newton (Lowd & Domingos
// 2007) on expected clause counts from MC-SAT, and the voted perceptron
// (Collins 2002; Singla & Domingos 2005) on MAP counts.
//
// The model: every ground clause g has the weight
//     w_g = base_g + sum over its origins (k, c) of c * w_k
// where w_k are the learnable first-order clauses' weights and base_g what
// is not learned (hard and fixed clauses, soft evidence).  Under Tuffy's
// cost semantics log P(x) = sum_g w_g * sat_g(x) + const for either sign of
// w_g, so the features are n_k(x) = sum_g c * sat_g(x) and the gradient of
// the conditional log-likelihood is n_k(training world) - E_w[n_k].
//
// No database and no CUDA types here.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "format/network.hpp"
#include "options/options.hpp"

namespace mln::solver {

// A ground network whose clauses know their learnable first-order origins,
// and the training world.
struct LearnNetwork {
  mln::Network net;                    // net.clauses.weights: ignored (recomputed from base and origins)
  std::vector<double> base_weight;     // per ground clause
  std::vector<int64_t> origin_off{0};  // CSR per ground clause: its (rule, coef) pairs
  std::vector<int32_t> origin_rule;    // 0 .. num_rules - 1
  std::vector<double> origin_coef;
  int32_t num_rules = 0;               // learnable first-order clauses
  std::vector<uint8_t> truth;          // training world by atom id (size num_atoms + 1)

  // Appends a ground clause (literals as in mln::ClauseSet: sorted, distinct).
  void add_clause(const std::vector<int32_t>& lits, double base,
                  const std::vector<std::pair<int32_t, double>>& origins);
  // Ground weights for learnable weights `w` (size num_rules) into net.clauses.weights.
  void set_weights(const std::vector<double>& w);
  // Throws std::invalid_argument when the sizes do not agree.
  void validate() const;
};

// n_k(x) for every learnable clause: x by atom id (size num_atoms + 1).
std::vector<double> feature_counts(const LearnNetwork& ln, const std::vector<uint8_t>& x);

// E_w[n] and Cov_w[n] (num_rules x num_rules, row-major) over the query
// atoms, given the evidence already folded into the network.
struct FeatureStats {
  std::vector<double> mean;
  std::vector<double> cov;
  int64_t samples = 0;       // MC-SAT samples per sampled component (0: all exact)
  int exact_components = 0;
  int sampled_components = 0;
  int64_t flips = 0;
  bool stopped = false;
};

struct LearnOptions {
  // dn (diagonal Newton, MC-SAT counts) | perceptron (MAP counts)
  options::LearnMethod method = options::default_of<options::LearnMethod>(options::Id::kMethod, options::kLearn);
  // -dMaxIter (Tuffy's default is 500)
  int iterations = options::default_of<int>(options::Id::kIterations, options::kLearn);
  // MC-SAT samples per iteration and component (-mcsatSamples)
  int samples = options::default_of<int>(options::Id::kSamples, options::kLearn);
  // Gaussian prior N(0, s^2) on each weight; 0: none
  double prior_stddev = options::default_of<double>(options::Id::kPriorStddev, options::kLearn);
  // Initial weights: "tuffy" (ln(#satisfied / #violated) in the training
  // world, 1e-5 for a zero count) or program (initial_weights: the program's current weights).
  options::LearnInit init = options::default_of<options::LearnInit>(options::Id::kInit, options::kLearn);
  std::vector<double> initial_weights;
  double lambda = 100;          // trust-region start (Tuffy's)
  double tolerance = 1e-4;      // stop when a full Newton step would gain less (log posterior)
  // perceptron step (per unit of count difference / groundings)
  double learning_rate = options::default_of<double>(options::Id::kLearningRate, options::kLearn);
  // components this small get exact expectations by enumeration
  int exact_max_atoms = options::default_of<int>(options::Id::kExactMaxAtoms, options::kLearn);
  // Sampled components of at least this many atoms run one MC-SAT chain per
  // thread (splitting `samples`, each chain warm-started from its own last
  // state); smaller ones one chain.  One giant component (class: 69,350
  // atoms) would otherwise keep one core busy and leave the others idle.
  int32_t chains_min_atoms = 1000;
  // GPU sampling (device auto or gpu): a sampled component of at least
  // gpu_min_atoms atoms (any size with device gpu) and at most
  // kGpuMaxFeatures learnable clauses runs gpu_chains chains at once
  // (0: `samples`), each drawing one sample per iteration from where it
  // stopped the last time; gpu_burn_in steps first, on the first call only
  // (the chains then move on with the weights, as the CPU chains do; each
  // SampleSAT step starts from fresh coin flips, so one step already takes
  // a chain far from the shared start).
  int32_t gpu_min_atoms = 20000;
  // With gpu_chains = 0, a GPU network of at least this many ground clauses
  // runs ONE chain of `samples` steps per iteration instead, its SampleSAT
  // rounds in parallel (mcsat_parallel.hpp; solve_marginal.hpp's
  // gpu_one_chain_min_clauses), from the state the last iteration left.
  // A measured crossover: below it, 100 chains of one sample each are
  // faster (docs/solver/learn.md).
  int64_t gpu_one_chain_min_clauses = 300000;
  int gpu_chains = 0;
  int gpu_burn_in = 2;
  uint64_t seed = options::default_of<uint64_t>(options::Id::kSeed, options::kLearn);
  // CPU threads; 0 = hardware concurrency
  int threads = options::default_of<int>(options::Id::kThreads, options::kLearn);
  // wall clock; 0 = none (the weights so far are kept)
  double timeout_s = options::default_of<double>(options::Id::kTimeout, options::kLearn);
  // auto | cpu | gpu (the sampler's; gpu fails without a usable GPU)
  options::Device device = options::default_of<options::Device>(options::Id::kDevice, options::kLearn);
  // Called after each iteration, from the calling thread.
  std::function<void(int iteration, const std::vector<double>& weights, double objective)> on_iteration;
  std::atomic<bool>* cancel = nullptr;
};

struct LearnIteration {
  int iteration = 0;
  std::vector<double> weights;  // after the iteration
  double objective = 0;         // estimated gain in log posterior since the initial weights
  double gradient_norm = 0;
  double lambda = 0;            // the trust region's, for the next step
  bool accepted = true;         // false: the step was taken back (trust region)
  // Diagonal Newton: the gain in log posterior the quadratic model
  // predicted for the step and the one estimated after it (trapezoid rule),
  // and in words whether the step was taken and why ("step rejected: the
  // objective fell by ... where the model predicted a rise of ...; taken
  // back, lambda x4 to ...").  Empty for the perceptron.
  double predicted = 0;
  double actual = 0;
  std::string note;
};

struct LearnResult {
  std::vector<double> initial_weights;
  std::vector<double> weights;          // the learned weights (last accepted)
  std::vector<double> average_weights;  // mean over the iterations (Tuffy's first output section)
  std::vector<LearnIteration> trace;
  int iterations = 0;
  bool converged = false;
  bool cancelled = false;
  double seconds = 0;
  int64_t samples = 0;
  std::string device_used = "cpu";
  std::vector<std::string> warnings;
};

// Expected feature counts, component by component: exact by enumeration
// for small components, MC-SAT chains on CPU threads or on the GPU for the
// others, each chain starting where the previous call's chain ended (warm
// start).  Throws std::runtime_error for device gpu without a usable GPU.
class FeatureSampler {
 public:
  FeatureSampler(const LearnNetwork& ln, const LearnOptions& o);
  ~FeatureSampler();
  FeatureSampler(const FeatureSampler&) = delete;
  FeatureSampler& operator=(const FeatureSampler&) = delete;
  // E_w[n] and Cov_w[n] for learnable weights `w` (size num_rules).
  FeatureStats expect(const std::vector<double>& w, uint64_t seed);
  // The most probable world's features (perceptron): MaxWalkSAT per
  // component (exact for small ones), warm-started likewise.
  std::vector<double> map_counts(const std::vector<double>& w, uint64_t seed);
  int components() const;
  // Over every call so far: "cpu", "gpu" or "cpu+gpu"; and the warnings
  // (a GPU failure and its CPU fallback).
  std::string device_used() const;
  std::vector<std::string> warnings() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Learns the weights.  Throws std::invalid_argument on bad options or input.
LearnResult learn_weights(const LearnNetwork& ln, const LearnOptions& opts);

// Exact conditional log-likelihood of world `x` (query atoms) under `w`:
// sum over components of log P(x_c), by enumeration; throws
// std::invalid_argument when a component has more than 20 atoms.
double exact_conditional_log_likelihood(const LearnNetwork& ln, const std::vector<double>& w,
                                        const std::vector<uint8_t>& x);

}  // namespace mln::solver
