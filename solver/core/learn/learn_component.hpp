// One component of a learning network as the feature sampler keeps it
// between calls (learn_counts.cpp), and the exact sums over the 2^n states
// of a small one.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "core/base/subnetwork.hpp"
#include "core/learn/learn.hpp"
#include "core/marginal/mcsat_gpu.hpp"

namespace mln::solver::learn_detail {

// One component: its sub-network (local atoms 1..n), the learnable clauses
// that occur in it (local rule index -> global), and each local clause's
// origins in local rule indices.
struct CompData {
  SubNetwork sub;
  std::vector<int64_t> global_clause;  // local clause -> ground clause id
  std::vector<int32_t> rules;          // local rule -> learnable clause
  std::vector<int64_t> off{0};         // CSR per local clause
  std::vector<int32_t> rule;           // local rule index
  std::vector<double> coef;
  std::vector<uint8_t> state;          // last walk state (0-based), empty at first
  std::vector<std::vector<uint8_t>> chain_state;  // last state of each MC-SAT chain
  // GPU sampling: its features and every chain's last state (chains x n).
  bool on_gpu = false;
  GpuFeatures gpu_features;
  std::vector<uint8_t> gpu_states;
  // Accumulators of one expect() call (under mu).
  std::mutex mu;
  std::vector<double> sum, outer;
  double total = 0;

  int32_t n() const { return sub.net.num_atoms; }
  size_t k() const { return rules.size(); }

  // Local features of a state (0-based local atoms) into f (size k()).
  void features(const std::vector<uint8_t>& x, std::vector<double>& f, std::vector<uint8_t>& by_id) const;

  void set_weights(const LearnNetwork& ln) {
    for (size_t j = 0; j < global_clause.size(); ++j) sub.net.clauses.weights[j] = ln.net.clauses.weights[global_clause[j]];
  }
};

// Log of the unnormalised probability, sum_j w_j sat_j, of each of the
// 2^n states of a small component (state bit i = local atom i + 1).
std::vector<double> state_log_weights(const CompData& c);

// The features' sums and outer products over all 2^n states of a small
// component, each state weighted by its unnormalised probability (scaled by
// the largest, so that exp does not overflow); returns the summed weight.
double exact_feature_sums(CompData& c, std::vector<double>& sum, std::vector<double>& outer);

}  // namespace mln::solver::learn_detail
