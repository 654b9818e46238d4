// An independent reference for ProbLog programs without tables: grounds
// naively (every variable over every constant of the program, rules whose
// positive body cannot hold removed), enumerates every choice of every
// ground rule (each head or none) and computes each choice's well-founded
// model by the alternating fixpoint, with no strata.  Exponential: for
// programs of a few ground rules.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "lang/problog.hpp"

namespace mln::problog_ref {

namespace pl = lang::problog;

struct Exact {
  double p_evidence = 0;
  std::map<std::string, double> p_true;  // P(atom | evidence) of every atom true in some world
  double get(const std::string& a) const {
    auto it = p_true.find(a);
    return it == p_true.end() ? 0.0 : it->second;
  }
};

inline std::string const_text(const pl::Term& t) {
  if (t.kind == pl::Term::Kind::Int) return std::to_string(t.ival);
  bool plain = !t.name.empty() && t.name[0] >= 'a' && t.name[0] <= 'z';
  for (char c : t.name) plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  return plain ? t.name : "'" + t.name + "'";
}

inline Exact exact(const pl::Program& p) {
  std::vector<pl::Term> consts;
  std::set<std::string> seen;
  auto add_consts = [&](const pl::Atom& a) {
    for (const pl::Term& t : a.args)
      if (t.is_const() && seen.insert(const_text(t)).second) consts.push_back(t);
  };
  for (const pl::Rule& r : p.rules) {
    for (const auto& h : r.head) add_consts(h.atom);
    for (const auto& a : r.pos) add_consts(a);
    for (const auto& a : r.neg) add_consts(a);
  }
  struct GRule {
    std::vector<std::string> heads, pos, neg;
    std::vector<double> probs;
  };
  std::vector<GRule> all;
  for (const pl::Rule& r : p.rules) {
    std::vector<std::string> vars;
    auto collect = [&](const pl::Atom& a) {
      for (const pl::Term& t : a.args)
        if (t.kind == pl::Term::Kind::Var && std::find(vars.begin(), vars.end(), t.name) == vars.end()) vars.push_back(t.name);
    };
    for (const auto& a : r.pos) collect(a);
    std::map<std::string, pl::Term> val;
    auto value = [&](const pl::Term& t) { return t.kind == pl::Term::Kind::Var ? val.at(t.name) : t; };
    auto ground = [&](const pl::Atom& a) {
      std::string s = p.preds[a.pred].name;
      for (size_t i = 0; i < a.args.size(); ++i) s += (i ? "," : "(") + const_text(value(a.args[i]));
      return a.args.empty() ? s : s + ")";
    };
    std::function<void(size_t)> assign = [&](size_t k) {
      if (k < vars.size()) {
        for (const pl::Term& c : consts) val[vars[k]] = c, assign(k + 1);
        return;
      }
      for (const pl::Compare& c : r.cmps) {
        const pl::Term a = value(c.lhs), b = value(c.rhs);
        const bool ints = a.kind == pl::Term::Kind::Int && b.kind == pl::Term::Kind::Int;
        const bool eq = const_text(a) == const_text(b);
        const bool ok = c.op == "=" ? eq : c.op == "!=" ? !eq : !ints ? false
                        : c.op == "<" ? a.ival < b.ival : c.op == "<=" ? a.ival <= b.ival
                        : c.op == ">" ? a.ival > b.ival : a.ival >= b.ival;
        if (!ok) return;
      }
      GRule g;
      for (const auto& h : r.head)
        if (h.prob > 0) g.heads.push_back(ground(h.atom)), g.probs.push_back(h.prob);
      for (const auto& a : r.pos) g.pos.push_back(ground(a));
      for (const auto& a : r.neg) g.neg.push_back(ground(a));
      all.push_back(std::move(g));
    };
    assign(0);
  }
  // Remove rules whose positive body holds an atom no rule can make true.
  for (bool changed = true; changed;) {
    changed = false;
    std::set<std::string> heads;
    for (const GRule& g : all) heads.insert(g.heads.begin(), g.heads.end());
    const size_t before = all.size();
    all.erase(std::remove_if(all.begin(), all.end(), [&](const GRule& g) {
                return std::any_of(g.pos.begin(), g.pos.end(), [&](const std::string& a) { return !heads.count(a); });
              }), all.end());
    changed = all.size() != before;
  }
  // Every choice: chosen[i] = a head index or -1 (none).
  Exact out;
  std::map<std::string, double> joint;
  std::vector<int> chosen(all.size(), -1);
  auto lfp = [&](const std::set<std::string>& j) {  // least model of the reduct by j
    std::set<std::string> m;
    for (bool grew = true; grew;) {
      grew = false;
      for (size_t i = 0; i < all.size(); ++i) {
        if (chosen[i] < 0 || m.count(all[i].heads[chosen[i]])) continue;
        bool ok = std::all_of(all[i].pos.begin(), all[i].pos.end(), [&](const std::string& a) { return m.count(a) > 0; }) &&
                  std::none_of(all[i].neg.begin(), all[i].neg.end(), [&](const std::string& a) { return j.count(a) > 0; });
        if (ok) m.insert(all[i].heads[chosen[i]]), grew = true;
      }
    }
    return m;
  };
  std::function<void(size_t, double)> choose = [&](size_t i, double w) {
    if (w == 0) return;
    if (i < all.size()) {
      double rest = 1;
      for (size_t h = 0; h < all[i].heads.size(); ++h) chosen[i] = static_cast<int>(h), choose(i + 1, w * all[i].probs[h]), rest -= all[i].probs[h];
      chosen[i] = -1;
      if (rest > 1e-12) choose(i + 1, w * rest);
      return;
    }
    std::set<std::string> k, u = lfp(k);
    for (;;) {
      std::set<std::string> k2 = lfp(u);
      u = lfp(k2);
      if (k2 == k) break;
      k = k2;
    }
    EXPECT_EQ(k, u) << "a world without a two-valued well-founded model";
    for (const pl::Evidence& e : p.evidence) {
      std::string s = p.preds[e.atom.pred].name;
      for (size_t a = 0; a < e.atom.args.size(); ++a) s += (a ? "," : "(") + const_text(e.atom.args[a]);
      if (!e.atom.args.empty()) s += ")";
      if ((k.count(s) > 0) != e.value) return;
    }
    out.p_evidence += w;
    for (const std::string& a : k) joint[a] += w;
  };
  choose(0, 1.0);
  for (auto& [a, w] : joint) out.p_true[a] = w / out.p_evidence;
  return out;
}

}  // namespace mln::problog_ref
