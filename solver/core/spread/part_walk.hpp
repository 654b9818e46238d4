// A cut part of a spread MAP job walked in rounds with its walk kept (issue
// #23).  solve_part extracts a part again every round and walks it from fresh
// weights: every round pays the extraction and layout (seconds at 10^8 clauses;
// bench/results/gpu-2xNVIDIA-H200/spread_run.md), and its walk learns its
// clause weights again.  A PartWalker extracts its part once, with the atoms of
// the other parts that share its clauses *inside* its instance but held (the
// weighted walk's Inst::n_free: no clause proposes them), and keeps the
// weighted walk (walk_weighted.hpp's WeightedSession, on the GPU or on CPU
// threads) between rounds: a round moves the held atoms to the neighbours'
// latest states and walks on from the part's own state of the round before,
// with the dynamic weights it left.  Only the parts' states travel between
// rounds (through the database, solver/worker/spread_job.cpp).
//
// The held atoms make a round's answer exact for the part: its cost is the
// part's clauses (its own and those it shares) under its state and the
// neighbours' held ones, as solve_part's "cost with neighbours held".
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/map/solve_map.hpp"
#include "core/spread/spread.hpp"
#include "core/base/subnetwork.hpp"
#include "core/walk/walk_weighted.hpp"
#include "core/walk/walksat_cpu.hpp"

namespace mln::solver {

// Whether a part solved with options `o` walks the weighted walk, the one a
// PartWalker keeps: on a GPU (a device that is not "cpu") or on CPU
// threads (cpu_walk "weighted").
// Otherwise each round solves the part again (solve_part).
bool part_walk_applies(const SolveOptions& o);

class PartWalker {
 public:
  // Part p of `plan`: its atoms free and starting at `truth` (the whole
  // network's state by atom id), the other parts' atoms of its clauses held
  // there.  On the GPU when o.device allows it, the GPU is usable and the
  // part has gpu_min_atoms atoms (any, with device "gpu"); on CPU threads
  // otherwise, or when the GPU fails (a warning says so).
  PartWalker(const mln::Network& net, const SpreadPlan& plan, const PartIndex& idx, int p,
             const std::vector<uint8_t>& truth, const SolveOptions& o);
  ~PartWalker();
  PartWalker(const PartWalker&) = delete;
  PartWalker& operator=(const PartWalker&) = delete;

  // One round: the held atoms move to their values in `truth`, then the walk
  // goes on under o's seed, max_flips (per try; 0: 100 per atom of the
  // part), max_tries, timeout_s, cancel and progress.  The part's own atoms
  // start where the round before left them (the caller's `truth` for them
  // is not read).  A GPU failure moves the walk to CPU threads, from the
  // part's state in `truth`.  A round after one in which the part found
  // nothing better and its neighbours did not move searches longer before
  // it gives up (the walk's full time floor, not a quarter of it): a job
  // ends with such a round, the one after the first round that changed no
  // atom (RoundStop).
  PartOutcome step(const std::vector<uint8_t>& truth, const SolveOptions& o);

  int part() const { return part_; }
  int64_t atoms() const { return static_cast<int64_t>(free_); }
  int64_t held() const { return static_cast<int64_t>(held_.size()); }
  int64_t clauses() const { return inst_.m; }
  bool on_gpu() const { return gpu_; }
  // Seconds taken by the extraction and the layout.
  double build_seconds() const { return build_s_; }
  // Its phases ("held 0.1 s, extracted 1.2 s, laid out 0.3 s").
  const std::string& build_detail() const { return build_detail_; }

 private:
  void start_cpu(const std::vector<uint8_t>& init, const SolveOptions& o);
  std::vector<uint8_t> held_values(const std::vector<uint8_t>& truth) const;

  int part_ = 0;
  std::vector<uint8_t> last_;     // the part's state after the last round
  std::vector<uint8_t> last_held_;  // the held atoms' values in the last round
  double short_stall_ = 0, long_stall_ = 0;
  bool found_nothing_ = false;     // the last round returned the state it started from
  int32_t free_ = 0;             // the part's own atoms: local ids 1..free_
  std::vector<int32_t> members_;  // their parent ids, in local order (idx.members[p])
  std::vector<int32_t> held_;     // the held atoms' parent ids, local ids free_+1..
  SubNetwork sub_;
  WalkInstance inst_;
  std::unique_ptr<WeightedSession> session_;
  bool gpu_ = false;
  double build_s_ = 0;
  std::string build_detail_;
  std::vector<std::string> warnings_;  // reported with the next step
};

}  // namespace mln::solver
