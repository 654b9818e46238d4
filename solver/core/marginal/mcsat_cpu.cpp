// MC-SAT + SampleSAT on the CPU, and exact marginals by enumeration.
#include "core/marginal/mcsat_cpu.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/base/rng.hpp"

namespace mln::solver {

namespace {

// Fresh SampleSAT starts that may miss SAT(M) in a row before a chain keeps
// to local moves from its current state.
constexpr int kMaxFreshFailures = 3;

// The state of one chain: truth, true literals per clause, the alive set M
// of the current MC-SAT step and the alive clauses it violates.
//
// A clause is "satisfied" in the MC-SAT sense when it costs nothing: a
// positive one has a true literal, a negative one has none.  An alive
// negative clause therefore constrains all its literals to stay false.
// SampleSAT counts one unit per violated alive clause (the paper's target is
// uniform over SAT(M), so the weights play no part once M is drawn).
class ChainState {
 public:
  explicit ChainState(const WalkInstance& in) : in_(in) {}

  void load(const std::vector<uint8_t>& truth) {
    truth_ = truth;
    tc_.assign(in_.m, 0);
    alive_.assign(in_.m, 0);
    vpos_.assign(in_.m, -1);
    viol_.clear();
    cost_ = 0;
    for (int64_t c = 0; c < in_.m; ++c) {
      for (int64_t i = in_.cl_off[c]; i < in_.cl_off[c + 1]; ++i) {
        uint32_t l = in_.cl_lit[i];
        if (truth_[l >> 1] == (l & 1)) ++tc_[c];
      }
      if (!sat(c)) cost_ += std::llabs(in_.w[c]);
    }
  }

  bool sat(int64_t c) const {
    const int64_t w = in_.w[c];
    return w > 0 ? tc_[c] > 0 : (w < 0 ? tc_[c] == 0 : true);
  }

  // Makes M = { c : pick(c) } and rebuilds the violated list.
  template <class Pick>
  void set_alive(Pick pick) {
    viol_.clear();
    for (int64_t c = 0; c < in_.m; ++c) {
      vpos_[c] = -1;
      alive_[c] = in_.w[c] != 0 && pick(c);
      if (alive_[c] && !sat(c)) add_viol(c);
    }
  }

  // Change in the number of violated alive clauses if atom a were flipped.
  int32_t delta(uint32_t a) const {
    int32_t d = 0;
    const uint32_t v = truth_[a] ^ 1u;
    for (int64_t i = in_.occ_off[a]; i < in_.occ_off[a + 1]; ++i) {
      const uint32_t o = in_.occ[i], c = o >> 1;
      if (!alive_[c]) continue;
      const bool becomes_true = (o & 1) == v;
      const int32_t t = tc_[c];
      if (in_.w[c] > 0) {
        if (becomes_true) d -= (t == 0);
        else d += (t == 1);
      } else {
        if (becomes_true) d += (t == 0);
        else d -= (t == 1);
      }
    }
    return d;
  }

  // Flips atom a: true counts, cost and the violated alive list.
  void flip(uint32_t a) {
    const uint8_t v = truth_[a] ^ 1;
    truth_[a] = v;
    for (int64_t i = in_.occ_off[a]; i < in_.occ_off[a + 1]; ++i) {
      const uint32_t o = in_.occ[i], c = o >> 1;
      const bool was = sat(c);
      if ((o & 1) == v) ++tc_[c];
      else --tc_[c];
      const bool now = sat(c);
      if (was == now) continue;
      const int64_t aw = std::llabs(in_.w[c]);
      cost_ += now ? -aw : aw;
      if (alive_[c]) {
        if (now) del_viol(c);
        else add_viol(c);
      }
    }
  }

  const WalkInstance& in_;
  std::vector<uint8_t> truth_;
  std::vector<int32_t> tc_;
  std::vector<uint8_t> alive_;
  std::vector<int32_t> viol_;  // alive clauses violated
  std::vector<int32_t> vpos_;  // position in viol_, or -1
  int64_t cost_ = 0;           // full cost of truth_, fixed point

 private:
  void add_viol(int64_t c) { vpos_[c] = static_cast<int32_t>(viol_.size()); viol_.push_back(static_cast<int32_t>(c)); }
  void del_viol(int64_t c) {
    const int32_t p = vpos_[c], last = viol_.back();
    viol_[p] = last;
    vpos_[last] = p;
    viol_.pop_back();
    vpos_[c] = -1;
  }
};

// SampleSAT over the alive set of a ChainState.
class SampleSat {
 public:
  SampleSat(ChainState& s, Rng& rng, const McsatParams& p) : s_(s), rng_(rng), p_(p) {
    for (int d = 0; d < kTable; ++d) accept_[d] = std::exp(-d * p.sa_temperature);
  }

  // Mixes WalkSAT steps (on a violated alive clause) and Metropolis steps
  // (the atoms in sweep order, uphill delta accepted with exp(-delta * sa))
  // for at most `budget` steps, stopping `after` steps after M was first
  // satisfied.  With `revert`, a run that ends with M violated goes back to
  // the last state satisfying M (or, if none was reached, the start state).
  // Returns whether M was satisfied at some point; counts steps in `steps`.
  bool run(int64_t budget, int64_t after, double sa_probability, bool revert, int64_t& steps) {
    trail_.clear();
    bool reached = s_.viol_.empty();
    int64_t after_left = after;
    const uint32_t n = static_cast<uint32_t>(s_.in_.n);
    for (int64_t k = 0; k < budget; ++k) {
      if (reached) {
        if (after_left == 0) break;
        --after_left;
      }
      ++steps;
      uint32_t a;
      if (!s_.viol_.empty() && !(rng_.uniform() < sa_probability)) {
        a = walk_pick();
      } else {
        // Metropolis step with a random-value proposal: the atom under the
        // sweep gets a coin-flip value (half the time its own), accepted
        // with min(1, exp(-delta * sa)).  Proposing a flip every time would
        // tie the parity of the flips to the step count (two free atoms
        // after two steps: 00 <-> 11 only), and a sweep makes every atom
        // that no alive clause constrains exactly uniform.
        a = scan_;
        if (++scan_ >= n) scan_ = 0;
        if (rng_.next() >> 63) continue;
        const int32_t d = s_.delta(a);
        if (d > 0 && !(rng_.uniform() < (d < kTable ? accept_[d] : std::exp(-d * p_.sa_temperature)))) continue;
      }
      s_.flip(a);
      if (s_.viol_.empty()) {
        reached = true;
        trail_.clear();
      } else {
        trail_.push_back(a);
      }
    }
    if (revert && !s_.viol_.empty())
      for (auto it = trail_.rbegin(); it != trail_.rend(); ++it) s_.flip(*it);
    return reached;
  }

 private:
  // WalkSAT's choice on a random violated alive clause: a random candidate
  // with probability random_step, else the one that violates the fewest
  // alive clauses (ties at random).  Candidates: every atom of a positive
  // clause; the atoms of the true literals of a negative one.
  uint32_t walk_pick() {
    const WalkInstance& in = s_.in_;
    const uint32_t c = static_cast<uint32_t>(s_.viol_[rng_.below(static_cast<uint32_t>(s_.viol_.size()))]);
    const int64_t lo = in.cl_off[c], hi = in.cl_off[c + 1];
    const bool neg = in.w[c] < 0;
    auto candidate = [&](uint32_t l) { return !neg || s_.truth_[l >> 1] == (l & 1); };
    if (rng_.uniform() < p_.random_step) {
      uint32_t k = rng_.below(neg ? static_cast<uint32_t>(s_.tc_[c]) : static_cast<uint32_t>(hi - lo));
      for (int64_t i = lo; i < hi; ++i)
        if (candidate(in.cl_lit[i]) && k-- == 0) return in.cl_lit[i] >> 1;
    }
    int32_t best = std::numeric_limits<int32_t>::max();
    uint32_t a = in.cl_lit[lo] >> 1, ties = 0;
    for (int64_t i = lo; i < hi; ++i) {
      const uint32_t l = in.cl_lit[i];
      if (!candidate(l)) continue;
      const int32_t d = s_.delta(l >> 1);
      if (d < best) { best = d; a = l >> 1; ties = 1; }
      else if (d == best && rng_.below(++ties) == 0) a = l >> 1;
    }
    return a;
  }

  static constexpr int kTable = 16;
  ChainState& s_;
  Rng& rng_;
  const McsatParams& p_;
  double accept_[kTable];
  std::vector<uint32_t> trail_;  // flips since M was last satisfied
  uint32_t scan_ = 0;            // next atom of the SA sweep (kept across calls)
};

}  // namespace

std::vector<uint8_t> mcsat_start_state(const WalkInstance& in, const std::vector<uint8_t>& init, const McsatParams& p,
                                       int64_t* flips) {
  std::vector<uint8_t> start(init);
  if (start.empty()) {
    Rng rng(derive_seed(p.seed, 0x53544152ull));
    start.resize(in.n);
    for (auto& t : start) t = static_cast<uint8_t>(rng.next() >> 63);
  }
  if (static_cast<int32_t>(start.size()) != in.n) throw std::invalid_argument("mcsat: init has the wrong size");
  WalkParams wp;
  wp.flips_per_try = mcsat_flips_budget(p, in.n);
  wp.max_tries = 1;
  wp.random_step = p.random_step;
  wp.seed = derive_seed(p.seed, 0x57414C4Bull);
  wp.stop = p.stop;
  WalkOutcome w = walksat_cpu(in, start, wp);
  if (flips) *flips += w.flips;
  return w.best;
}

McsatOutcome mcsat_cpu(const WalkInstance& in, const std::vector<uint8_t>& init, const McsatParams& p) {
  McsatOutcome out;
  out.true_count.assign(in.n, 0);
  Rng rng(derive_seed(p.seed, 0x4D435341ull));
  // The chain starts from a low-cost state (one MaxWalkSAT try), so that a
  // chain on a network where SampleSAT must fall back to local moves (see
  // below) sits near the mode, not at a coin-flip state.
  const std::vector<uint8_t> start = p.start_given ? init : mcsat_start_state(in, init, p, &out.flips);
  if (static_cast<int32_t>(start.size()) != in.n) throw std::invalid_argument("mcsat_cpu: init has the wrong size");
  ChainState s(in);
  s.load(start);
  SampleSat ss(s, rng, p);
  const int64_t budget = mcsat_flips_budget(p, in.n);
  const int64_t after = mcsat_steps_after_sat(p, in.n);
  const auto is_hard = [&](int64_t c) { return mcsat_is_hard(in, c); };

  // A start state that satisfies every hard clause: plain WalkSAT on them.
  s.set_alive(is_hard);
  for (int t = 0; t < 10 && !s.viol_.empty(); ++t) ss.run(budget, 0, 0.0, false, out.flips);
  out.hard_satisfied = s.viol_.empty();

  const std::vector<float> keep = mcsat_keep_probabilities(in, p.mcsat_param);

  int64_t reported = 0, polled_flips = out.flips;
  const int64_t steps = p.burn_in + p.samples;
  std::vector<uint8_t> prev;
  int fresh_failures = 0;  // fresh starts that missed SAT(M) in a row
  for (int64_t step = 0; step < steps; ++step) {
    if (p.stop && (out.flips - polled_flips >= 4096 || (step & 255) == 0)) {
      polled_flips = out.flips;
      if (p.stop->should_stop()) { out.stopped = true; break; }
    }
    // M: each satisfied clause, kept with its probability.
    s.set_alive([&](int64_t c) { return s.sat(c) && rng.uniform() < keep[c]; });
    // SampleSAT starts from a fresh coin-flip state (Wei et al.; Tuffy does the
    // same).  Starting at the current state, which satisfies M, is valid but
    // mixes only locally: where most satisfied clauses are kept (class), no
    // atom can move without violating an alive clause, and a chain stays at its
    // start (docs/solver/marginal.md).  When a fresh start does not satisfy M
    // within the budget (large, tightly coupled networks such as RC), the step
    // goes on from the previous state instead, which satisfies M; after
    // kMaxFreshFailures misses in a row the chain stops trying fresh starts (a
    // warning says so).
    prev = s.truth_;
    bool sampled = false;
    if (fresh_failures < kMaxFreshFailures) {
      for (int32_t a = 0; a < in.n; ++a)
        if (static_cast<uint8_t>(rng.next() >> 63) != s.truth_[a]) s.flip(static_cast<uint32_t>(a));
      sampled = ss.run(budget, after, p.sa_probability, true, out.flips);
      fresh_failures = sampled ? 0 : fresh_failures + 1;
      if (!sampled)
        for (int32_t a = 0; a < in.n; ++a)
          if (s.truth_[a] != prev[a]) s.flip(static_cast<uint32_t>(a));
    }
    if (!sampled) {
      ++out.unsat_calls;
      ss.run(budget, after, p.sa_probability, true, out.flips);  // from prev: satisfies M at once
    }
    if (step < p.burn_in) continue;
    for (int32_t a = 0; a < in.n; ++a) out.true_count[a] += s.truth_[a];
    out.cost_sum += static_cast<double>(s.cost_) / in.scale;
    ++out.counted;
    if (p.on_sample) p.on_sample(s.truth_);
    if (p.on_samples && (out.counted - reported >= 256 || out.flips - polled_flips >= 4096)) {
      p.on_samples(out.counted - reported);
      reported = out.counted;
    }
  }
  if (p.on_samples && out.counted > reported) p.on_samples(out.counted - reported);
  out.final_state = s.truth_;
  return out;
}

ExactMarginals exact_marginals_cpu(const WalkInstance& in) {
  if (in.n > kExactMaxAtoms) throw std::invalid_argument("exact_marginals_cpu: too many atoms for enumeration");
  ChainState s(in);
  s.load(std::vector<uint8_t>(in.n, 0));
  // Costs of all states in reflected Gray-code order: state i is gray(i) =
  // i ^ (i >> 1), reached from state i - 1 by flipping atom ctz(i).
  const uint64_t states = uint64_t{1} << in.n;
  std::vector<int64_t> cost(states);
  cost[0] = s.cost_;
  for (uint64_t i = 1; i < states; ++i) {
    s.flip(static_cast<uint32_t>(__builtin_ctzll(i)));
    cost[i] = s.cost_;
  }
  // exp(-(cost - min)): hard weights (5.2e7) would underflow exp(-cost).
  const int64_t lo = *std::min_element(cost.begin(), cost.end());
  std::vector<double> acc(in.n, 0.0);
  double z = 0, e = 0;
  for (uint64_t i = 0; i < states; ++i) {
    const double rel = static_cast<double>(cost[i] - lo) / in.scale;
    const double pw = std::exp(-rel);
    if (pw == 0) continue;
    z += pw;
    e += pw * rel;
    const uint64_t g = i ^ (i >> 1);
    for (int32_t a = 0; a < in.n; ++a)
      if ((g >> a) & 1) acc[a] += pw;
  }
  ExactMarginals out;
  out.prob.resize(in.n);
  for (int32_t a = 0; a < in.n; ++a) out.prob[a] = acc[a] / z;
  out.expected_cost = static_cast<double>(lo) / in.scale + e / z;
  return out;
}

}  // namespace mln::solver
