// diff_networks (issue #62): after random changes to a network (atoms gone
// and new, clauses added, removed and reweighted, the atoms renumbered),
// every component of the new network without a touched atom has exactly
// the clauses of the old network over its atoms, and the same network
// renumbered touches nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>

#include "ground/network_diff.hpp"

namespace mln::ground {
namespace {

struct Net {
  std::vector<AtomKey> atoms;
  std::vector<std::pair<std::vector<int32_t>, double>> clauses;  // literals over atom ids
  mln::ClauseSet set() const {
    mln::ClauseSet s;
    for (const auto& [l, w] : clauses) s.add(l.data(), l.size(), w);
    return s;
  }
};

Net random_net(std::mt19937& rng, int atoms, int clauses) {
  Net n;
  for (int a = 0; a < atoms; ++a) n.atoms.push_back({a % 3, {a, a * 7 % 11}});
  for (int c = 0; c < clauses; ++c) {
    std::vector<int32_t> l;
    const int len = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < len; ++k) {
      const int32_t a = 1 + static_cast<int32_t>(rng() % atoms);
      if (std::none_of(l.begin(), l.end(), [&](int32_t x) { return std::abs(x) == a; })) l.push_back(rng() % 2 ? a : -a);
    }
    n.clauses.push_back({l, static_cast<double>(1 + rng() % 4) * (rng() % 5 ? 1 : -1)});
  }
  return n;
}

// The same network with its atoms in another order (ids renumbered).
Net renumbered(const Net& n, std::mt19937& rng) {
  std::vector<int32_t> perm(n.atoms.size());
  std::iota(perm.begin(), perm.end(), 1);
  std::shuffle(perm.begin(), perm.end(), rng);  // old id i + 1 -> perm[i]
  Net m;
  m.atoms.resize(n.atoms.size());
  for (size_t i = 0; i < n.atoms.size(); ++i) m.atoms[perm[i] - 1] = n.atoms[i];
  for (auto [l, w] : n.clauses) {
    for (int32_t& x : l) x = x > 0 ? perm[x - 1] : -perm[-x - 1];
    std::reverse(l.begin(), l.end());
    m.clauses.push_back({l, w});
  }
  std::shuffle(m.clauses.begin(), m.clauses.end(), rng);
  return m;
}

// Components of `n` (union-find over each clause's atoms).
std::vector<int32_t> components(const Net& n) {
  std::vector<int32_t> p(n.atoms.size() + 1);
  std::iota(p.begin(), p.end(), 0);
  auto find = [&](int32_t a) {
    while (p[a] != a) a = p[a] = p[p[a]];
    return a;
  };
  for (const auto& [l, w] : n.clauses)
    for (size_t k = 1; k < l.size(); ++k) p[find(std::abs(l[k]))] = find(std::abs(l[0]));
  for (size_t a = 1; a < p.size(); ++a) p[a] = find(static_cast<int32_t>(a));
  return p;
}

// The clauses of `n` over the atoms of `keys` (by key), as sorted texts.
std::multiset<std::string> clauses_over(const Net& n, const std::set<AtomKey>& keys) {
  std::multiset<std::string> out;
  for (const auto& [l, w] : n.clauses) {
    bool in = !l.empty();
    std::vector<std::string> lits;
    for (int32_t x : l) {
      const AtomKey& k = n.atoms[std::abs(x) - 1];
      in = in && keys.count(k);
      lits.push_back((x < 0 ? "!" : "") + std::to_string(k.first) + ":" + std::to_string(k.second[0]));
    }
    std::sort(lits.begin(), lits.end());
    std::string s = std::to_string(w);
    for (const auto& t : lits) s += " " + t;
    if (in) out.insert(s);
  }
  return out;
}

TEST(GroundNetworkDiff, TheSameNetworkRenumberedTouchesNothing) {
  std::mt19937 rng(5);
  for (int round = 0; round < 20; ++round) {
    Net a = random_net(rng, 30, 40), b = renumbered(a, rng);
    NetworkDiff d = diff_networks(a.atoms, a.set(), b.atoms, b.set());
    EXPECT_TRUE(d.touched.empty()) << "round " << round;
    EXPECT_EQ(d.clauses_added + d.clauses_removed, 0);
  }
}

TEST(GroundNetworkDiff, UntouchedComponentsHaveTheOldClauses) {
  std::mt19937 rng(11);
  int64_t untouched_seen = 0;
  for (int round = 0; round < 200; ++round) {
    Net a = random_net(rng, 60, 45), b = a;
    const int changes = 1 + static_cast<int>(rng() % 3);
    for (int k = 0; k < changes; ++k) {
      switch (rng() % 4) {
        case 0: b.clauses.erase(b.clauses.begin() + rng() % b.clauses.size()); break;
        case 1: b.clauses[rng() % b.clauses.size()].second += 0.5; break;
        case 2: b.clauses.push_back(random_net(rng, 60, 1).clauses[0]); break;
        default: {  // an atom gone (its clauses with it), a new one in a clause
          const int32_t gone = 1 + static_cast<int32_t>(rng() % b.atoms.size());
          b.clauses.erase(std::remove_if(b.clauses.begin(), b.clauses.end(), [&](const auto& c) {
                            return std::any_of(c.first.begin(), c.first.end(), [&](int32_t x) { return std::abs(x) == gone; });
                          }), b.clauses.end());
          b.atoms[gone - 1] = {9, {1000 + round, k}};  // a new atom where it was
          b.clauses.push_back({{gone, 1 + static_cast<int32_t>(rng() % 60)}, 1.5});
        }
      }
    }
    b = renumbered(b, rng);
    NetworkDiff d = diff_networks(a.atoms, a.set(), b.atoms, b.set());
    std::vector<uint8_t> touched(b.atoms.size() + 1, 0);
    for (int32_t t : d.touched) touched[t] = 1;
    const std::vector<int32_t> comp = components(b);
    std::map<int32_t, std::set<AtomKey>> members;
    std::set<int32_t> dirty;
    for (size_t x = 1; x <= b.atoms.size(); ++x) {
      members[comp[x]].insert(b.atoms[x - 1]);
      if (touched[x]) dirty.insert(comp[x]);
    }
    for (const auto& [k, keys] : members) {
      if (dirty.count(k)) continue;
      ++untouched_seen;
      EXPECT_EQ(clauses_over(a, keys), clauses_over(b, keys)) << "round " << round;
      // The old clauses touching these atoms stay among them: no clause
      // joined them to an atom outside.
      for (const auto& [l, w] : a.clauses) {
        const bool any = std::any_of(l.begin(), l.end(), [&](int32_t x) { return keys.count(a.atoms[std::abs(x) - 1]); });
        const bool all = std::all_of(l.begin(), l.end(), [&](int32_t x) { return keys.count(a.atoms[std::abs(x) - 1]); });
        EXPECT_EQ(any, all) << "round " << round;
      }
    }
    for (size_t x = 1; x <= b.atoms.size(); ++x)
      if (b.atoms[x - 1].first == 9) EXPECT_TRUE(touched[x]) << "a new atom is touched";
  }
  EXPECT_GT(untouched_seen, 200);  // the check ran on many components
}

}  // namespace
}  // namespace mln::ground
