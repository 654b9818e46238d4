// CPU WalkSAT with incremental make/break bookkeeping.
#include "core/walk/walksat_cpu.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "core/base/rng.hpp"

namespace mln::solver {

namespace {

// The mutable search state of one walk over one instance.
class WalkState {
 public:
  explicit WalkState(const WalkInstance& in) : in_(in) {}

  // (Re)computes true counts, critical atoms, make/break and the violated set.
  void load(const std::vector<uint8_t>& truth) {
    truth_ = truth;
    tc_.assign(in_.m, 0);
    crit_.assign(in_.m, 0);
    brk_.assign(in_.n, 0);
    mk_.assign(in_.n, 0);
    vpos_.assign(in_.m, -1);
    hpos_.assign(in_.m, -1);
    viol_.clear();
    viol_hard_.clear();
    cost_ = 0;
    for (int64_t c = 0; c < in_.m; ++c) {
      for (int64_t i = in_.cl_off[c]; i < in_.cl_off[c + 1]; ++i) {
        uint32_t l = in_.cl_lit[i];
        if (truth_[l >> 1] == (l & 1)) { ++tc_[c]; crit_[c] ^= l >> 1; }
      }
      int64_t w = in_.w[c];
      if (w > 0) {
        if (tc_[c] == 0) { add_viol(c); cost_ += w; for_atoms(c, [&](uint32_t b) { mk_[b] += w; }); }
        else if (tc_[c] == 1) brk_[crit_[c]] += w;
      } else if (w < 0) {
        int64_t aw = -w;
        if (tc_[c] > 0) { add_viol(c); cost_ += aw; if (tc_[c] == 1) mk_[crit_[c]] += aw; }
        else for_atoms(c, [&](uint32_t b) { brk_[b] += aw; });
      }
    }
  }

  // Cost change if atom a were flipped.
  int64_t delta(uint32_t a) const { return brk_[a] - mk_[a]; }

  // Flips atom a and updates every count it touches.
  void flip(uint32_t a) {
    uint8_t v = truth_[a] ^ 1;
    truth_[a] = v;
    for (int64_t i = in_.occ_off[a]; i < in_.occ_off[a + 1]; ++i) {
      uint32_t o = in_.occ[i];
      uint32_t c = o >> 1;
      int64_t w = in_.w[c];
      if ((o & 1) == v) {  // literal became true
        int32_t old = tc_[c]++;
        uint32_t prev = crit_[c];
        crit_[c] ^= a;
        if (w > 0) {
          if (old == 0) { del_viol(c); cost_ -= w; for_atoms(c, [&](uint32_t b) { mk_[b] -= w; }); brk_[a] += w; }
          else if (old == 1) brk_[prev] -= w;
        } else if (w < 0) {
          int64_t aw = -w;
          if (old == 0) { add_viol(c); cost_ += aw; for_atoms(c, [&](uint32_t b) { brk_[b] -= aw; }); mk_[a] += aw; }
          else if (old == 1) mk_[prev] -= aw;
        }
      } else {  // literal became false
        int32_t now = --tc_[c];
        crit_[c] ^= a;
        if (w > 0) {
          if (now == 0) { add_viol(c); cost_ += w; brk_[a] -= w; for_atoms(c, [&](uint32_t b) { mk_[b] += w; }); }
          else if (now == 1) brk_[crit_[c]] += w;
        } else if (w < 0) {
          int64_t aw = -w;
          if (now == 0) { del_viol(c); cost_ -= aw; mk_[a] -= aw; for_atoms(c, [&](uint32_t b) { brk_[b] += aw; }); }
          else if (now == 1) mk_[crit_[c]] += aw;
        }
      }
    }
  }

  const WalkInstance& in_;
  std::vector<uint8_t> truth_;
  std::vector<int32_t> tc_;     // true literals per clause
  std::vector<uint32_t> crit_;  // XOR of the atoms of true literals (= the one when tc == 1)
  std::vector<int64_t> brk_;    // cost added by flipping (Tuffy's "violate")
  std::vector<int64_t> mk_;     // cost removed by flipping (Tuffy's "rescue")
  std::vector<int32_t> viol_;   // clauses with cost > 0
  std::vector<int32_t> vpos_;   // position in viol_, or -1
  std::vector<int32_t> viol_hard_;  // the violated hard clauses (|w| >= kHardThreshold)
  std::vector<int32_t> hpos_;       // position in viol_hard_, or -1
  int64_t cost_ = 0;

 private:
  template <class F>
  void for_atoms(int64_t c, F f) {
    for (int64_t i = in_.cl_off[c]; i < in_.cl_off[c + 1]; ++i) f(in_.cl_lit[i] >> 1);
  }
  bool hard(int64_t c) const { return in_.w[c] >= in_.hard_fixed || -in_.w[c] >= in_.hard_fixed; }
  void add_viol(int64_t c) {
    vpos_[c] = static_cast<int32_t>(viol_.size());
    viol_.push_back(static_cast<int32_t>(c));
    if (hard(c)) {
      hpos_[c] = static_cast<int32_t>(viol_hard_.size());
      viol_hard_.push_back(static_cast<int32_t>(c));
    }
  }
  void del_viol(int64_t c) {
    int32_t p = vpos_[c], last = viol_.back();
    viol_[p] = last;
    vpos_[last] = p;
    viol_.pop_back();
    vpos_[c] = -1;
    if (hard(c)) {
      int32_t hp = hpos_[c], hl = viol_hard_.back();
      viol_hard_[hp] = hl;
      hpos_[hl] = hp;
      viol_hard_.pop_back();
      hpos_[c] = -1;
    }
  }
};

}  // namespace

TinyExact solve_exact_tiny(const mln::ClauseSet& cs, const int64_t* clauses, int64_t m,
                           const std::vector<int32_t>& local_of, int n, uint32_t init) {
  if (n > kTinyAtoms) throw std::invalid_argument("solve_exact_tiny: too many atoms");
  double sum = 0;
  for (int64_t j = 0; j < m; ++j) sum += std::fabs(cs.weights[clauses[j]]);
  const double scale = fixed_point_scale_of_sum(sum);
  // Each clause as masks of the local atoms whose literal is positive /
  // negative, and its fixed-point weight.
  constexpr int kMax = 64;
  uint32_t pos[kMax], neg[kMax];
  int64_t w[kMax];
  std::vector<uint32_t> pos_big, neg_big;
  std::vector<int64_t> w_big;
  uint32_t* P = pos;
  uint32_t* N = neg;
  int64_t* W = w;
  if (m > kMax) {
    pos_big.resize(m);
    neg_big.resize(m);
    w_big.resize(m);
    P = pos_big.data();
    N = neg_big.data();
    W = w_big.data();
  }
  for (int64_t j = 0; j < m; ++j) {
    const int64_t c = clauses[j];
    P[j] = N[j] = 0;
    for (int64_t i = cs.offsets[c]; i < cs.offsets[c + 1]; ++i) {
      const int32_t l = cs.lits[i];
      const uint32_t bit = 1u << (local_of[l > 0 ? l : -l] - 1);
      if (l > 0) P[j] |= bit;
      else N[j] |= bit;
    }
    W[j] = static_cast<int64_t>(std::llround(cs.weights[c] * scale));
  }
  const uint32_t all = (1u << n) - 1;
  auto cost = [&](uint32_t s) {
    int64_t total = 0;
    for (int64_t j = 0; j < m; ++j) {
      const bool any_true = (s & P[j]) || (~s & all & N[j]);
      if (W[j] > 0 && !any_true) total += W[j];
      else if (W[j] < 0 && any_true) total -= W[j];
    }
    return total;
  };
  TinyExact out;
  uint32_t s = init;
  int64_t best = cost(s);
  out.best = s;
  const uint32_t states = 1u << n;
  for (uint32_t i = 1; i < states; ++i) {  // solve_exact_cpu's order
    s ^= 1u << __builtin_ctz(i);
    const int64_t c = cost(s);
    if (c < best) {
      best = c;
      out.best = s;
    }
  }
  out.flips = states - 1;
  out.best_cost = static_cast<double>(best) / scale;
  return out;
}

WalkOutcome solve_exact_cpu(const WalkInstance& in, const std::vector<uint8_t>& init) {
  if (in.n > kExactMaxAtoms) throw std::invalid_argument("solve_exact_cpu: too many atoms for enumeration");
  WalkOutcome out;
  WalkState s(in);
  s.load(init);
  out.best = s.truth_;
  out.best_cost_fixed = s.cost_;
  // Reflected Gray code: step i flips atom ctz(i), so the 2^n states are
  // visited with one incremental flip each; ties keep the earlier state.
  const uint64_t states = uint64_t{1} << in.n;
  for (uint64_t i = 1; i < states; ++i) {
    s.flip(static_cast<uint32_t>(__builtin_ctzll(i)));
    ++out.flips;
    if (s.cost_ < out.best_cost_fixed) {
      out.best = s.truth_;
      out.best_cost_fixed = s.cost_;
    }
  }
  out.satisfied = out.best_cost_fixed == 0;
  out.best_cost = out.best_cost_fixed / in.scale;
  return out;
}

namespace {

// The atom that a step repairing violated clause c flips, by Tuffy's rules
// (a random atom with probability pr, else the greedy choice, ties broken by
// reservoir sampling); false when the step flips nothing (greedy and uphill).
inline bool pick_atom(const WalkInstance& in, const WalkState& s, Rng& rng, uint32_t c, double pr, uint32_t& a) {
  const int64_t lo = in.cl_off[c], len = in.cl_off[c + 1] - lo;
  const uint32_t* lits = &in.cl_lit[lo];
  if (in.w[c] > 0) {
    if (rng.uniform() < pr) {
      a = lits[rng.below(static_cast<uint32_t>(len))] >> 1;
    } else {  // greedy: smallest delta, ties broken by reservoir sampling
      int64_t best = std::numeric_limits<int64_t>::max();
      uint32_t ties = 0;
      for (int64_t i = 0; i < len; ++i) {
        uint32_t b = lits[i] >> 1;
        int64_t d = s.delta(b);
        if (d < best) { best = d; a = b; ties = 1; }
        else if (d == best && rng.below(++ties) == 0) a = b;
      }
      if (best > 0) return false;
    }
  } else {  // negative clause: candidates are the atoms of true literals
    if (s.tc_[c] == 1) {
      a = s.crit_[c];
      if (s.delta(a) > 0 && rng.uniform() < 1.0 - pr) return false;
    } else if (rng.uniform() < pr) {
      uint32_t k = rng.below(static_cast<uint32_t>(s.tc_[c]));
      for (int64_t i = 0; i < len; ++i) {
        uint32_t l = lits[i];
        if (s.truth_[l >> 1] == (l & 1) && k-- == 0) { a = l >> 1; break; }
      }
    } else {
      int64_t best = std::numeric_limits<int64_t>::max();
      uint32_t ties = 0;
      for (int64_t i = 0; i < len; ++i) {
        uint32_t l = lits[i];
        if (s.truth_[l >> 1] != (l & 1)) continue;
        int64_t d = s.delta(l >> 1);
        if (d < best) { best = d; a = l >> 1; ties = 1; }
        else if (d == best && rng.below(++ties) == 0) a = l >> 1;
      }
      if (best > 0) return false;
    }
  }
  return true;
}

}  // namespace

WalkOutcome walksat_cpu(const WalkInstance& in, const std::vector<uint8_t>& init, const WalkParams& p) {
  WalkOutcome out;
  Rng rng(derive_seed(p.seed, 0x57414C4Bull));
  WalkState s(in);
  s.load(init);
  out.best = s.truth_;
  out.best_cost_fixed = s.cost_;
  // Atoms flipped since `best` was last brought up to date; once it is longer
  // than n, the next new best copies the whole state instead.
  std::vector<uint32_t> trail;
  bool trail_overflow = false;
  auto record_best = [&]() {
    if (trail_overflow) out.best = s.truth_;
    else for (uint32_t a : trail) out.best[a] = s.truth_[a];
    trail.clear();
    trail_overflow = false;
    out.best_cost_fixed = s.cost_;
  };
  int64_t reported = 0, since_poll = 0;
  // Adaptive mode: after the requested tries, more tries (up to 20x as many in
  // all) continue while one of the last 30 still improved the best cost.
  const int try_limit = p.adaptive_noise ? p.max_tries * 20 : p.max_tries;
  int last_improved = 0;
  // The extra tries also stop once they have made as many flips as the
  // requested ones (at least kExtraMinFlips), so large instances pay at
  // most about twice the work.  Counted in flips, not seconds: a try is
  // flips_per_try flips, so the rule is a number of tries, and where the
  // walk stops does not depend on the machine's speed or load (issue #60).
  constexpr int64_t kExtraMinFlips = 10000000;
  const int64_t per_try = std::max<int64_t>(1, p.flips_per_try);
  const int64_t extra_tries = std::max<int64_t>(p.max_tries, (kExtraMinFlips + per_try - 1) / per_try);
  const int first = std::max(0, p.first_try);
  const int end = p.last_try > 0 ? std::min(p.last_try, try_limit) : try_limit;
  for (int t = first; t < end && !out.satisfied && !out.stopped; ++t) {
    if (t >= p.max_tries && t - last_improved > 30) break;
    if (t >= p.max_tries && t - p.max_tries >= extra_tries) break;
    const int64_t best_before = out.best_cost_fixed;
    const int64_t flips_this_try = p.flips_per_try;
    if (t > first) {  // COPY_LOW: restart from the best state so far
      s.load(out.best);
      trail.clear();
      trail_overflow = false;
    }
    static constexpr double kNoiseSchedule[3] = {1.0, 0.4, 0.2};
    const double pr = p.adaptive_noise ? p.random_step * kNoiseSchedule[t % 3] : p.random_step;
    for (int64_t step = 0; step < flips_this_try; ++step) {
      // Every 4096 steps, counted across tries: tries shorter than that
      // (100 flips per atom on a component of a few dozen atoms) never
      // looked at the stop token, and a large max_tries ran past the timeout.
      if ((++since_poll & 4095) == 0) {
        if (p.on_progress) {
          p.on_progress(out.best_cost_fixed / in.scale, out.flips - reported);
          reported = out.flips;
        }
        if (p.stop && p.stop->should_stop()) { out.stopped = true; break; }
      }
      if (s.viol_.empty()) {  // nothing violated: best possible, stop all tries
        record_best();
        out.satisfied = true;
        break;
      }
      ++out.flips;
      // Hard clauses first: while one is violated, the clause to repair is
      // drawn among the violated hard clauses with probability
      // hard_first (Tuffy draws uniformly among all violated clauses, so
      // a few violated hard clauses among many soft ones are rarely looked at).
      const bool from_hard = !s.viol_hard_.empty() && p.hard_first > 0 && rng.uniform() < p.hard_first;
      const std::vector<int32_t>& pool = from_hard ? s.viol_hard_ : s.viol_;
      uint32_t c = static_cast<uint32_t>(pool[rng.below(static_cast<uint32_t>(pool.size()))]);
      uint32_t a = 0;
      if (!pick_atom(in, s, rng, c, pr, a)) continue;
      if (p.dont_break && s.brk_[a] > in.hard_fixed) continue;
      const int64_t d = s.delta(a);
      if (d > 0 && rng.uniform() < kGreedyThrottle) continue;
      s.flip(a);
      if (p.on_flip) p.on_flip(a);
      if (!trail_overflow) {
        trail.push_back(a);
        if (trail.size() > static_cast<size_t>(in.n)) { trail.clear(); trail_overflow = true; }
      }
      if (s.cost_ < out.best_cost_fixed) record_best();
    }
    if (out.best_cost_fixed < best_before) last_improved = t;
  }
  if (p.on_progress) p.on_progress(out.best_cost_fixed / in.scale, out.flips - reported);
  out.best_cost = out.best_cost_fixed / in.scale;
  return out;
}

}  // namespace mln::solver
