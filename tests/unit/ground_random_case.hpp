// Small random MLN programs with evidence for the grounder's differential
// tests: 3-4 predicates over two types (some closed-world, some **), 2-4
// clauses of 1-3 literals with mixed weights, hard clauses, conditions,
// EXIST and soft evidence.  live_only leaves out what live grounding does
// not maintain (conditions, EXIST, soft evidence) and draws the rest alike.
#pragma once

#include <random>
#include <set>
#include <string>
#include <vector>

namespace mln::ground::test {

struct RandomCase {
  std::string prog, evidence, query;
};

inline RandomCase random_case(uint32_t seed, bool live_only = false) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  const std::vector<std::string> types = {"ta", "tb"};
  const std::vector<std::vector<std::string>> consts = {{"A0", "A1", "A2", "A3"}, {"B0", "B1", "B2"}};
  const std::vector<std::vector<std::string>> vars = {{"a", "b", "c"}, {"u", "w"}};
  int dom_a = 2 + pick(3), dom_b = 2 + pick(2);
  RandomCase rc;
  struct P { std::string name; std::vector<int> ty; bool cw, cs; };
  std::vector<P> ps;
  int np = 3 + pick(2);
  for (int i = 0; i < np; ++i) {
    P p{"P" + std::to_string(i), {}, i > 0 && chance(0.4), false};
    if (!p.cw && i > 0) p.cs = chance(0.1);
    int ar = 1 + pick(2);
    for (int k = 0; k < ar; ++k) p.ty.push_back(pick(2));
    if (ar == 2 && p.ty[0] == p.ty[1] && p.ty[0] == 1 && dom_b < 2) p.ty[1] = 0;
    ps.push_back(p);
    rc.prog += std::string(p.cw ? "*" : p.cs ? "**" : "") + p.name + "(";
    for (int k = 0; k < ar; ++k) rc.prog += (k ? "," : "") + types[p.ty[k]];
    rc.prog += ")\n";
  }
  rc.prog += "*DomA(ta)\n*DomB(tb)\n";
  int q = pick(np);
  while (ps[q].cw || ps[q].cs) q = pick(np);  // P0 is always a plain open-world predicate
  rc.query = ps[q].name + "\n";
  int nc = 2 + pick(3);
  const double weights[] = {-1.5, -0.5, 0.5, 1, 2};
  for (int ci = 0; ci < nc; ++ci) {
    int nl = 1 + pick(3);
    std::string body;
    std::vector<std::string> used[2];
    for (int li = 0; li < nl; ++li) {
      const P& p = ps[li == 0 && chance(0.5) ? q : pick(np)];
      std::string lit = std::string(chance(0.5) ? "!" : "") + p.name + "(";
      std::set<std::string> in_lit;
      for (size_t k = 0; k < p.ty.size(); ++k) {
        const auto& pool = vars[p.ty[k]];
        std::string v;
        do v = pool[pick(static_cast<int>(pool.size()))]; while (in_lit.count(v));
        in_lit.insert(v);
        if (std::find(used[p.ty[k]].begin(), used[p.ty[k]].end(), v) == used[p.ty[k]].end()) used[p.ty[k]].push_back(v);
        lit += (k ? "," : "") + v;
      }
      body += (li ? " v " : "") + lit + ")";
    }
    bool hard = chance(0.1);
    if (!hard && used[0].size() >= 2 && chance(0.3) && !live_only) body += " v [" + used[0][0] + " = " + used[0][1] + "]";
    std::string exist;
    if (!hard && chance(0.2)) {
      const auto& u = used[pick(2)];
      if (!u.empty()) exist = "EXIST " + u[pick(static_cast<int>(u.size()))] + " ";
      if (live_only) exist.clear();
    }
    if (hard) rc.prog += body + ".\n";
    else rc.prog += std::to_string(weights[pick(5)]) + " " + exist + body + "\n";
  }
  for (int i = 0; i < dom_a; ++i) rc.evidence += "DomA(" + consts[0][i] + ")\n";
  for (int i = 0; i < dom_b; ++i) rc.evidence += "DomB(" + consts[1][i] + ")\n";
  for (const P& p : ps) {
    int na = p.ty[0] == 0 ? dom_a : dom_b;
    int nb = p.ty.size() < 2 ? 1 : p.ty[1] == 0 ? dom_a : dom_b;
    for (int x = 0; x < na; ++x)
      for (int y = 0; y < nb; ++y) {
        std::string args = consts[p.ty[0]][x] + (p.ty.size() > 1 ? "," + consts[p.ty[1]][y] : "");
        double r = std::uniform_real_distribution<double>(0, 1)(rng);
        if (r < 0.25) rc.evidence += p.name + "(" + args + ")\n";
        else if (r < 0.45) rc.evidence += "!" + p.name + "(" + args + ")\n";
        else if (r < 0.52 && (!p.cw || chance(0.3)) && !live_only) rc.evidence += "0.7 " + p.name + "(" + args + ")\n";
      }
  }
  return rc;
}

}  // namespace mln::ground::test
