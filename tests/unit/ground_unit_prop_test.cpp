// Hard-clause unit propagation (unit_propagate, extension/ground/unit_prop.cpp):
// hand-made cases, random small weighted networks checked by enumeration
// (propagation never changes the optimum when the hard clauses can hold, and
// never changes the cost of a state that agrees with the fixed atoms), and a
// grounding where hard rules over evidence fix atoms.
#include <cmath>
#include <cstdio>
#include <random>
#include <set>

#include "ground_util.hpp"

namespace mln::ground::test {
namespace {

constexpr double H = kHardWeight;

using Clause = std::pair<std::vector<int32_t>, double>;

Network make_net(int32_t atoms, const std::vector<Clause>& clauses) {
  Network n;
  n.num_atoms = atoms;
  n.is_query.assign(atoms + 1, 1);
  n.is_query[0] = 0;
  for (const auto& [l, w] : clauses) n.clauses.add(l.data(), l.size(), w);
  return n;
}

std::vector<Clause> clauses_of(const Network& n) {
  std::vector<Clause> out;
  const ClauseSet& cs = n.clauses;
  for (size_t c = 0; c < cs.size(); ++c)
    out.emplace_back(std::vector<int32_t>(cs.lits.begin() + cs.offsets[c], cs.lits.begin() + cs.offsets[c + 1]),
                     cs.weights[c]);
  return out;
}

bool same_network(const Network& a, const Network& b) {
  return a.num_atoms == b.num_atoms && a.clauses.offsets == b.clauses.offsets && a.clauses.lits == b.clauses.lits &&
         a.clauses.weights == b.clauses.weights && a.is_query == b.is_query && a.init_truth == b.init_truth;
}

bool hard(double w) { return std::fabs(w) >= kHardThreshold; }

// The state with id bits s (atom a is bit a-1).
std::vector<uint8_t> state(int32_t atoms, uint32_t s) {
  std::vector<uint8_t> t(atoms + 1, 0);
  for (int32_t a = 1; a <= atoms; ++a) t[a] = (s >> (a - 1)) & 1;
  return t;
}

bool hard_ok(const ClauseSet& cs, const std::vector<uint8_t>& t) {
  for (size_t c = 0; c < cs.size(); ++c)
    if (hard(cs.weights[c]) &&
        clause_cost(&cs.lits[cs.offsets[c]], cs.offsets[c + 1] - cs.offsets[c], cs.weights[c], t) > 0)
      return false;
  return true;
}

// The fixed atoms as the propagated network states them: its hard unit
// clauses (+1 true, 0 false; -1 not fixed).  Fails on two for one atom.
std::vector<int> fixed_of(const Network& n) {
  std::vector<int> v(n.num_atoms + 1, -1);
  const ClauseSet& cs = n.clauses;
  for (size_t c = 0; c < cs.size(); ++c) {
    if (cs.offsets[c + 1] - cs.offsets[c] != 1 || !hard(cs.weights[c])) continue;
    const int32_t l = cs.lits[cs.offsets[c]];
    EXPECT_GT(l, 0) << "a fixed atom's unit clause is [+a]";
    EXPECT_EQ(std::fabs(cs.weights[c]), H);
    EXPECT_EQ(v[std::abs(l)], -1) << "atom " << std::abs(l) << " has two hard unit clauses";
    v[std::abs(l)] = (l > 0) == (cs.weights[c] > 0) ? 1 : 0;
  }
  return v;
}

// Literal lists sorted ascending, duplicate-free, atoms in range.
void expect_well_formed(const Network& n) {
  const ClauseSet& cs = n.clauses;
  ASSERT_EQ(cs.offsets.size(), cs.size() + 1);
  ASSERT_EQ(cs.offsets.back(), static_cast<int64_t>(cs.lits.size()));
  for (size_t c = 0; c < cs.size(); ++c)
    for (int64_t i = cs.offsets[c]; i < cs.offsets[c + 1]; ++i) {
      EXPECT_NE(cs.lits[i], 0);
      EXPECT_LE(std::abs(cs.lits[i]), n.num_atoms);
      if (i > cs.offsets[c]) EXPECT_LT(cs.lits[i - 1], cs.lits[i]);
    }
}

TEST(UnitProp, ChainOfHardImplications) {
  // a; !a v b; !b v c  =>  a, b, c true.  Atom 4 stays free.
  Network n = make_net(4, {{{1}, H},
                           {{-1, 2}, H},
                           {{-2, 3}, H},
                           {{3}, -1.0},     // w<0 with a true literal: a constant 1.0
                           {{-1, 4}, 2.0},  // shortened to [4] 2.0
                           {{1, 4}, 0.5},   // satisfied: dropped
                           {{-3, -2}, 0.25}});  // every literal false: a constant 0.25
  UnitPropStats st = unit_propagate(n);
  EXPECT_TRUE(st.ran);
  EXPECT_FALSE(st.hard_conflict);
  EXPECT_EQ(st.atoms_fixed, 3);
  EXPECT_EQ(st.clauses_before, 7);
  EXPECT_EQ(st.clauses_removed, 6);
  EXPECT_EQ(st.clauses_shortened, 1);
  EXPECT_DOUBLE_EQ(st.constant_cost, 1.25);
  std::vector<Clause> want = {{{4}, 2.0}, {{}, 1.25}, {{1}, H}, {{2}, H}, {{3}, H}};
  EXPECT_EQ(clauses_of(n), want);
}

TEST(UnitProp, NegativeHardClauseForcesEveryLiteralFalse) {
  Network n = make_net(3, {{{1, 2}, -H},     // a and b false
                           {{1, 3}, 1.5},    // [3] 1.5
                           {{-2, 3}, 0.7},   // !b true: dropped
                           {{2, 3}, -0.4},   // [3] -0.4
                           {{-1}, 0.9},      // true: dropped
                           {{-3, 1}, 0.6}}); // [-3] 0.6, stored as the grounder stores it: [3] -0.6
  UnitPropStats st = unit_propagate(n);
  EXPECT_FALSE(st.hard_conflict);
  EXPECT_EQ(st.atoms_fixed, 2);
  EXPECT_EQ(st.clauses_removed, 3);
  EXPECT_EQ(st.clauses_shortened, 3);
  EXPECT_EQ(st.constant_cost, 0.0);
  std::vector<Clause> want = {{{3}, 1.5}, {{3}, -0.4}, {{3}, -0.6}, {{1}, -H}, {{2}, -H}};
  EXPECT_EQ(clauses_of(n), want);
}

TEST(UnitProp, NegativeSoftClauseWithATrueLiteralBecomesAConstant) {
  Network n = make_net(2, {{{1}, H}, {{1, 2}, -2.5}, {{2}, 0.3}});
  UnitPropStats st = unit_propagate(n);
  EXPECT_EQ(st.atoms_fixed, 1);
  EXPECT_DOUBLE_EQ(st.constant_cost, 2.5);
  std::vector<Clause> want = {{{2}, 0.3}, {{}, 2.5}, {{1}, H}};
  EXPECT_EQ(clauses_of(n), want);
  // Both states of atom 2 with atom 1 true cost what they did.
  Network orig = make_net(2, {{{1}, H}, {{1, 2}, -2.5}, {{2}, 0.3}});
  for (uint8_t b : {0, 1}) {
    std::vector<uint8_t> t = {0, 1, b};
    EXPECT_DOUBLE_EQ(total_cost(n.clauses, t), total_cost(orig.clauses, t));
  }
}

TEST(UnitProp, ConflictLeavesTheNetworkAsItWas) {
  const std::vector<std::vector<Clause>> cases = {
      {{{1}, H}, {{-1, 2}, H}, {{2}, -H}, {{1, 3}, 0.5}},  // a => b, but b is hard-false
      {{{1}, H}, {{1}, -H}},                                // a both ways (unconsolidated)
      {{{1}, H}, {{-1, 2}, H}, {{-1, -2}, H}},              // !a v !b all false
      {{{1, 2}, -H}, {{1, 2, 3}, H}, {{3}, -H}},            // the hard w>0 clause all false
  };
  for (size_t k = 0; k < cases.size(); ++k) {
    SCOPED_TRACE("case " + std::to_string(k));
    Network n = make_net(3, cases[k]);
    const Network before = n;
    UnitPropStats st = unit_propagate(n);
    EXPECT_TRUE(st.hard_conflict);
    EXPECT_EQ(st.atoms_fixed, 0);
    EXPECT_EQ(st.clauses_removed, 0);
    EXPECT_TRUE(same_network(n, before));
  }
}

TEST(UnitProp, NothingForcedLeavesTheNetworkAsItWas) {
  Network n = make_net(3, {{{1, 2}, H}, {{1}, 2.0}, {{-3}, -1.0}, {{2, 3}, H}});
  const Network before = n;
  UnitPropStats st = unit_propagate(n);
  EXPECT_TRUE(st.ran);
  EXPECT_FALSE(st.hard_conflict);
  EXPECT_EQ(st.atoms_fixed, 0);
  EXPECT_TRUE(same_network(n, before));
}

TEST(UnitProp, SecondRunChangesNothing) {
  Network n = make_net(5, {{{1}, H}, {{-1, 2, 3}, H}, {{-3}, H}, {{2, 4}, -1.0}, {{4, 5}, 0.5}, {{-2, 5}, 1.0}});
  UnitPropStats first = unit_propagate(n);
  EXPECT_EQ(first.atoms_fixed, 3);  // a, then c false, then b
  const Network once = n;
  UnitPropStats second = unit_propagate(n);
  EXPECT_EQ(second.atoms_fixed, first.atoms_fixed);
  EXPECT_EQ(second.clauses_shortened, 0);
  EXPECT_EQ(second.clauses_removed, first.atoms_fixed);  // the unit clauses, written again
  EXPECT_TRUE(same_network(n, once));
}

// Random networks of at most 12 atoms: hard and soft clauses of 1-4
// literals, weights in [-3, 3] or +-kHardWeight, extra hard unit clauses;
// conflicts happen.
Network random_network(std::mt19937& rng) {
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto coin = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  const int32_t atoms = uni(2, 12);
  const int clauses = uni(3, 3 + 2 * atoms);
  const double p_hard = std::uniform_real_distribution<double>(0.05, 0.6)(rng);
  std::vector<Clause> cl;
  for (int c = 0; c < clauses; ++c) {
    const int len = std::min<int>(atoms, coin(0.3) ? 1 : uni(1, 4));
    std::set<int32_t> picked;
    while (static_cast<int>(picked.size()) < len) picked.insert(uni(1, atoms));
    std::vector<int32_t> l;
    for (int32_t a : picked) l.push_back(coin(0.5) ? a : -a);
    std::sort(l.begin(), l.end());
    double w;
    if (coin(p_hard)) w = coin(0.75) ? H : -H;
    else do w = std::round(std::uniform_real_distribution<double>(-3, 3)(rng) * 100) / 100; while (w == 0);
    cl.emplace_back(l, w);
  }
  if (coin(0.08)) {  // four hard clauses over two atoms that no state satisfies and no unit clause shows
    const int32_t a = uni(1, atoms - 1), b = uni(a + 1, atoms);
    for (int32_t sa : {-1, 1})
      for (int32_t sb : {-1, 1}) {
        std::vector<int32_t> l = {sa * a, sb * b};
        std::sort(l.begin(), l.end());
        cl.emplace_back(l, H);
      }
  }
  const int units = coin(0.3) ? 0 : uni(1, 3);
  for (int u = 0; u < units; ++u) {
    const int32_t a = uni(1, atoms);
    cl.push_back({{coin(0.5) ? a : -a}, coin(0.7) ? H : -H});
  }
  std::shuffle(cl.begin(), cl.end(), rng);
  return make_net(atoms, cl);
}

TEST(UnitProp, NeverChangesTheOptimumOnRandomNetworks) {
  std::mt19937 rng(20250125);
  const int kCases = 400;
  int conflicts = 0, fixed_any = 0, unsat_undetected = 0, unsat_changed = 0, compared = 0;
  int64_t total_fixed = 0;
  for (int k = 0; k < kCases; ++k) {
    SCOPED_TRACE("network " + std::to_string(k));
    const Network orig = random_network(rng);
    Network n = orig;
    const UnitPropStats st = unit_propagate(n);
    ASSERT_TRUE(st.ran);
    if (st.hard_conflict) {
      ++conflicts;
      EXPECT_TRUE(same_network(n, orig));
      continue;
    }
    expect_well_formed(n);
    const std::vector<int> fixed = fixed_of(n);
    int64_t nfixed = 0;
    for (int32_t a = 1; a <= n.num_atoms; ++a) nfixed += fixed[a] >= 0;
    EXPECT_EQ(nfixed, st.atoms_fixed);
    size_t empties = 0;
    for (size_t c = 0; c < n.clauses.size(); ++c) empties += n.clauses.offsets[c] == n.clauses.offsets[c + 1];
    EXPECT_LE(empties, 1u);
    EXPECT_EQ(static_cast<int64_t>(n.clauses.size()),
              st.clauses_before - st.clauses_removed + static_cast<int64_t>(empties) + st.atoms_fixed);
    if (st.atoms_fixed == 0) EXPECT_TRUE(same_network(n, orig));
    fixed_any += st.atoms_fixed > 0;
    total_fixed += st.atoms_fixed;
    // Enumerate every state.
    double best_orig = INFINITY, best_new = INFINITY;
    bool satisfiable = false;
    const uint32_t states = 1u << orig.num_atoms;
    for (uint32_t s = 0; s < states; ++s) {
      const std::vector<uint8_t> t = state(orig.num_atoms, s);
      const double co = total_cost(orig.clauses, t), cn = total_cost(n.clauses, t);
      best_orig = std::min(best_orig, co);
      best_new = std::min(best_new, cn);
      bool agrees = true;
      for (int32_t a = 1; a <= orig.num_atoms; ++a) agrees &= fixed[a] < 0 || fixed[a] == t[a];
      if (agrees) EXPECT_NEAR(cn, co, 1e-9 * std::max(1.0, std::fabs(co))) << "state " << s;
      if (hard_ok(orig.clauses, t)) {
        satisfiable = true;
        EXPECT_TRUE(agrees) << "state " << s << " satisfies every hard clause but not the fixed atoms";
      }
    }
    if (satisfiable) {
      ++compared;
      EXPECT_NEAR(best_new, best_orig, 1e-6 * std::max(1.0, std::fabs(best_orig)));
    } else {
      ++unsat_undetected;
      unsat_changed += std::fabs(best_new - best_orig) > 1e-6 * std::max(1.0, std::fabs(best_orig));
    }
  }
  std::printf("[ unit prop ] %d random networks: %d hard conflicts found (left unchanged), %d compared by "
              "enumeration (%d with atoms fixed, %lld atoms in all), %d with unsatisfiable hard clauses that "
              "propagation did not detect (optimum changed in %d)\n",
              kCases, conflicts, compared, fixed_any, static_cast<long long>(total_fixed), unsat_undetected,
              unsat_changed);
  EXPECT_EQ(conflicts + compared + unsat_undetected, kCases);
  EXPECT_GE(conflicts, 20);   // the generator must exercise conflicts
  EXPECT_GE(fixed_any, 100);  // and real propagation
}

// Grounding: a hard rule over closed-world evidence grounds to hard unit
// clauses, and propagation follows them through a second hard rule.
TEST(UnitProp, GroundingFixesAtomsForcedByHardRules) {
  const std::string prog =
      "*Parent(person, person)\n"
      "Anc(person, person)\n"
      "Happy(person)\n"
      "Parent(x, y) => Anc(x, y).\n"
      "Anc(x, y), Parent(y, z) => Anc(x, z).\n"
      "1 Anc(x, y) => Happy(x)\n"
      "-0.5 Happy(x)\n"
      "0.2 Anc(x, y)\n";
  Loaded l = load_text(prog, "Parent(A, B)\nParent(B, C)\n", "Anc(x, y), Happy(x)\n");
  GroundInput in = make_input(*l.prog, l.queries, l.evidence);
  for (auto& eng : engines()) {
    SCOPED_TRACE(eng->name());
    GroundOptions off;
    off.unit_propagate = false;
    GroundOutput g0 = ground(in, *eng, off);
    EXPECT_FALSE(g0.unit_propagation.ran);
    GroundOutput g = ground(in, *eng);
    ASSERT_TRUE(g.unit_propagation.ran);
    EXPECT_FALSE(g.unit_propagation.hard_conflict);
    EXPECT_EQ(g.unit_propagation.clauses_before, static_cast<int64_t>(g0.network.clauses.size()));
    EXPECT_EQ(atom_set(*l.prog, in.symbols, g), atom_set(*l.prog, in.symbols, g0));  // atoms are kept
    // Anc(A,B) and Anc(B,C) from the first rule, Anc(A,C) from the second.
    EXPECT_EQ(g.unit_propagation.atoms_fixed, 3);
    std::vector<int> fixed = fixed_of(g.network);
    std::set<std::string> fixed_true;
    for (int32_t a = 1; a <= g.network.num_atoms; ++a)
      if (fixed[a] == 1) fixed_true.insert(atom_text(*l.prog, in.symbols, g.atoms[a - 1]));
      else EXPECT_EQ(fixed[a], -1);
    EXPECT_EQ(fixed_true, (std::set<std::string>{"Anc(A,B)", "Anc(B,C)", "Anc(A,C)"}));
    EXPECT_GT(g.unit_propagation.clauses_removed, 0);
    EXPECT_LT(g.network.clauses.size(), g0.network.clauses.size());
    ASSERT_EQ(g.network.num_atoms, g0.network.num_atoms);
    ASSERT_LE(g.network.num_atoms, 16);
    // The same optimum, by enumeration.
    double b0 = INFINITY, b1 = INFINITY;
    for (uint32_t s = 0; s < (1u << g.network.num_atoms); ++s) {
      const std::vector<uint8_t> t = state(g.network.num_atoms, s);
      b0 = std::min(b0, total_cost(g0.network.clauses, t));
      b1 = std::min(b1, total_cost(g.network.clauses, t));
    }
    EXPECT_NEAR(b1, b0, 1e-9);
    EXPECT_LT(b0, 1e6);  // the hard clauses hold in the optimum
  }
}

}  // namespace
}  // namespace mln::ground::test
