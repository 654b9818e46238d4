// Marginal inference by MC-SAT (Poon & Domingos 2006) driving SampleSAT
// (Wei, Erenrich & Selman 2004), per connected component, on CPU threads and
// on the GPU (docs/tuffy-reference.md section 7.3; docs/solver/marginal.md says where
// we follow Tuffy and where the papers).
//
// No database and no CUDA types here.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "format/network.hpp"

namespace mln::solver {

struct MarginalOptions {
  int samples = 100;            // counted samples per component (-mcsatSamples)
  int burn_in = 0;              // MC-SAT steps before counting starts (Tuffy: none)
  double mcsat_param = 1.0;     // a satisfied clause is kept with probability 1 - exp(-|w| * x) (-mcsatParam)
  double sa_temperature = 10;   // SampleSAT's SA coefficient: accept uphill delta with exp(-delta * sa) (-sa)
  double sa_probability = 0.5;  // share of SampleSAT steps that are SA steps (the rest WalkSAT steps)
  double random_step = 0.5;     // WalkSAT random-walk probability inside SampleSAT (-randomStep)
  int64_t max_flips = 0;        // flips per SampleSAT call, run-wide, prorated by component atoms; 0: 100 x atoms
  // SampleSAT steps (simulated annealing, mostly) after the alive clauses
  // are satisfied, for near-uniformity over their solutions; 0: four sweeps
  // (4 x component atoms).  Within max_flips.
  int64_t sa_steps_after_sat = 0;
  // Independent chains per sampled component: they split `samples`, each
  // with its own burn-in and seed (derived from `seed`, the component and
  // the chain), and CPU threads run them in parallel.  0: one chain on the
  // CPU (results do not depend on the thread count), the GPU sampler's
  // choice on the GPU (see docs/solver/marginal.md).
  int chains = 0;
  uint64_t seed = 1;            // results are a function of (network, options) for a given device
  int threads = 0;              // CPU threads; 0 = hardware concurrency
  double timeout_s = 0;         // wall-clock limit; 0 = none (results so far are kept, `cancelled` set)
  std::string device = "auto";  // auto | cpu | gpu
  bool skip_components_without_query = true;
  // Components with at most this many atoms get exact marginals by
  // enumerating their 2^n states (weighted by exp(-cost)); 0 turns it off.
  int exact_max_atoms = 12;
  // Components with at least this many atoms are sampled on the GPU in "auto" mode.
  int64_t gpu_min_atoms = 20000;
  // ... and when at least this many samples are asked for.  The GPU runs
  // independent chains (up to 8 per SM, each counting >= 1000 samples), and
  // one chain on a warp is several times slower than a CPU core (bench_mcsat,
  // docs/solver/marginal.md), while the CPU samples a component with one
  // chain: the GPU only wins from about 8 chains.  With Tuffy's default of
  // 100 samples, the CPU runs it.
  int64_t gpu_min_samples = 8000;
  // With chains = 0, a component of at least this many ground clauses is
  // sampled on the GPU by ONE chain whose SampleSAT moves run in parallel
  // (mcsat_parallel.hpp) when fewer than gpu_min_samples samples are asked
  // for.  A GPU step costs ~10-30 ms of latency-bound rounds whatever the
  // size, while a CPU core's step grows with the atoms: a measured
  // crossover, set where the GPU wins clearly, so that class (73k clauses,
  // 9.6k atoms, whose CPU steps are shorter) keeps its CPU chain
  // (docs/solver/marginal.md; bench/results/gpu-NVIDIA-H200/one_chain.md).
  int64_t gpu_one_chain_min_clauses = 300000;
  // Called with (samples done, samples total) summed over components; from
  // any thread (calls are serialised), at most ~10x per second.
  std::function<void(int64_t done, int64_t total)> progress;
  std::atomic<bool>* cancel = nullptr;  // set to true to stop early
};

struct MarginalResult {
  std::vector<double> prob;      // P(atom true) by atom id, size num_atoms + 1 ([0] unused);
                                 // atoms of components that were not solved: NaN
  int64_t samples = 0;           // samples counted per component (the smallest over solved components)
  double average_cost = 0;       // mean full-network cost per sample, summed over components (Tuffy's figure)
  int64_t flips = 0;             // SampleSAT steps, all components
  double seconds = 0;
  int components = 0;
  int solved_components = 0;
  int exact_components = 0;      // solved by enumeration
  std::string device_used;       // "cpu", "gpu" or "cpu+gpu"
  size_t gpu_memory_peak_bytes = 0;
  std::vector<std::string> warnings;
  bool cancelled = false;        // stopped by cancel or timeout (prob holds what was counted)
};

// Marginal probabilities of every atom of `net`.  Throws std::invalid_argument
// on bad options and std::runtime_error when device == "gpu" and no GPU is usable.
MarginalResult solve_marginal(const mln::Network& net, const MarginalOptions& opts);

}  // namespace mln::solver
