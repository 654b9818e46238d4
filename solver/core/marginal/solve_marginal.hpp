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
#include "options/options.hpp"

namespace mln::solver {

struct MarginalOptions {
  // counted samples per component (-mcsatSamples)
  int samples = options::default_of<int>(options::Id::kSamples, options::kMarginal);
  // MC-SAT steps before counting starts (Tuffy: none)
  int burn_in = options::default_of<int>(options::Id::kBurnIn, options::kMarginal);
  // a satisfied clause is kept with probability 1 - exp(-|w| * x) (-mcsatParam)
  double mcsat_param = options::default_of<double>(options::Id::kMcsatParam, options::kMarginal);
  // SampleSAT's SA coefficient: accept uphill delta with exp(-delta * sa) (-sa)
  double sa_temperature = options::default_of<double>(options::Id::kSaTemperature, options::kMarginal);
  double sa_probability = 0.5;  // share of SampleSAT steps that are SA steps (the rest WalkSAT steps)
  // WalkSAT random-walk probability inside SampleSAT (-randomStep)
  double random_step = options::default_of<double>(options::Id::kRandomStep, options::kMarginal);
  // flips per SampleSAT call, run-wide, prorated by component atoms; 0: 100 x atoms
  int64_t max_flips = options::default_of<int64_t>(options::Id::kMaxFlips, options::kMarginal);
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
  // results are a function of (network, options) for a given device
  uint64_t seed = options::default_of<uint64_t>(options::Id::kSeed, options::kMarginal);
  // CPU threads; 0 = hardware concurrency
  int threads = options::default_of<int>(options::Id::kThreads, options::kMarginal);
  // wall-clock limit; 0 = none (results so far are kept, `cancelled` set)
  double timeout_s = options::default_of<double>(options::Id::kTimeout, options::kMarginal);
  // auto | cpu | gpu
  options::Device device = options::default_of<options::Device>(options::Id::kDevice, options::kMarginal);
  bool skip_components_without_query = options::default_of<bool>(options::Id::kSkipComponentsWithoutQuery, options::kMarginal);
  // Components with at most this many atoms get exact marginals by
  // enumerating their 2^n states (weighted by exp(-cost)); 0 turns it off.
  int exact_max_atoms = options::default_of<int>(options::Id::kExactMaxAtoms, options::kMarginal);
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
