// Differential test: a naive reference grounder (every variable binding
// enumerated over the type domains, the §5.4/§5.5 literal conditions checked
// tuple by tuple) against ground() on small random programs and data.  Also
// checks that every backend gives the identical network.
#include <cstdio>
#include <functional>
#include <random>
#include <set>

#include "ground_random_case.hpp"
#include "ground_util.hpp"

namespace mln::ground::test {
namespace {

// ---------------------------------------------------------------- reference

struct RefRow {
  int truth = -1;  // -1 unknown, 0, 1
  double prior = std::nan("");
  int club = 0;
};

struct RefPred {
  std::map<std::vector<int32_t>, RefRow> rows;
  bool cw = false, cs = false, safe = true, soft = false, query = false;
  std::set<std::vector<int32_t>> active;
  bool immutable() const { return cw && !soft; }
  bool no_need() const { return (safe && cw) || cs; }
};

class Reference {
 public:
  Reference(const lang::Program& p, const GroundInput& in) : p_(p), in_(in), preds_(p.preds.size()) {
    for (const auto& td : in.type_domains) dom_[td.first] = td.second;
  }

  NetSet run(std::vector<std::string>* atoms_out) {
    load();
    kbmc();
    for (size_t i = 0; i < preds_.size(); ++i)  // mark queries (bare predicate names only)
      if (preds_[i].query && !preds_[i].cw)
        for (auto& [t, r] : preds_[i].rows)
          if (r.club == 0 || r.club == 2) r.club += 1;
    for (auto& pr : preds_)  // soft evidence starts active
      for (auto& [t, r] : pr.rows)
        if (!std::isnan(r.prior)) pr.active.insert(t);
    closure();
    NetSet net;
    for (size_t ci = 0; ci < p_.clauses.size(); ++ci)
      if (relevant_[ci]) ground_clause(p_.clauses[ci], net);
    for (size_t pi = 0; pi < preds_.size(); ++pi)
      for (const auto& t : preds_[pi].active) {
        if (atoms_out) atoms_out->push_back(text(static_cast<int>(pi), t));
        const RefRow& r = preds_[pi].rows.at(t);
        if (std::isnan(r.prior)) continue;
        double w = r.prior >= 1 ? kHardWeight : r.prior <= 0 ? -kHardWeight : std::log(r.prior / (1 - r.prior));
        net[{"+" + text(static_cast<int>(pi), t)}] += w;
      }
    if (atoms_out) std::sort(atoms_out->begin(), atoms_out->end());
    return net;
  }

 private:
  std::string text(int pred, const std::vector<int32_t>& t) const {
    std::string s = p_.preds[pred].name + "(";
    for (size_t i = 0; i < t.size(); ++i) s += (i ? "," : "") + in_.symbols.names.at(t[i]);
    return s + ")";
  }

  void load() {
    for (size_t pi = 0; pi < preds_.size(); ++pi) {
      preds_[pi].cw = p_.preds[pi].closed_world;
      preds_[pi].cs = p_.preds[pi].completely_specified;
      const PredEvidence& e = in_.evidence[pi];
      for (size_t r = 0; r < e.rows(); ++r) {
        std::vector<int32_t> t;
        for (const auto& col : e.args) t.push_back(col[r]);
        RefRow row;
        if (!std::isnan(e.prior[r])) {
          row.truth = 1;
          row.prior = e.prior[r];
          preds_[pi].soft = true;
        } else {
          row.truth = e.truth[r];
          row.club = 2;
        }
        preds_[pi].rows[t] = row;
      }
    }
    for (const auto& q : in_.queries) preds_[q.pred].query = true;
  }

  // KBMC for constant-free clauses and bare-name queries: reachability.
  void kbmc() {
    for (const auto& c : p_.clauses) {
      std::set<std::string> safe;
      for (const auto& l : c.lits)
        if (!l.positive)
          for (const auto& t : l.args) safe.insert(t.text);
      for (const auto& l : c.lits)
        if (l.positive)
          for (const auto& t : l.args)
            if (!safe.count(t.text)) { preds_[l.pred].safe = false; safe.insert(t.text); }
    }
    std::vector<uint8_t> explored(preds_.size(), 0);
    for (size_t i = 0; i < preds_.size(); ++i) explored[i] = preds_[i].query;
    relevant_.assign(p_.clauses.size(), 0);
    for (bool grew = true; grew;) {
      grew = false;
      for (size_t ci = 0; ci < p_.clauses.size(); ++ci) {
        bool touches = false;
        for (const auto& l : p_.clauses[ci].lits) touches |= explored[l.pred] != 0;
        if (!touches) continue;
        relevant_[ci] = 1;
        for (const auto& l : p_.clauses[ci].lits)
          if (!explored[l.pred] && !preds_[l.pred].no_need()) { explored[l.pred] = 1; grew = true; }
      }
    }
    for (size_t pi = 0; pi < preds_.size(); ++pi) {
      if (!explored[pi] || preds_[pi].no_need()) continue;
      const auto& d = p_.preds[pi];
      std::vector<int32_t> t(d.arity());
      std::function<void(int)> rec = [&](int k) {
        if (k == d.arity()) {
          if (!preds_[pi].rows.count(t)) {
            RefRow r;
            if (preds_[pi].cw) { r.truth = 0; r.club = 2; }
            preds_[pi].rows[t] = r;
          }
          return;
        }
        for (int32_t v : dom_[d.arg_types[k]]) { t[k] = v; rec(k + 1); }
      };
      rec(0);
    }
  }

  struct Binding {
    std::vector<std::string> vars;
    std::vector<int32_t> vals;
    int32_t get(const std::string& v) const {
      return vals[std::find(vars.begin(), vars.end(), v) - vars.begin()];
    }
  };

  // Calls f for every binding of the clause's variables over the domains.
  void for_bindings(const lang::Clause& c, const std::function<void(const Binding&)>& f) {
    Binding b;
    std::vector<std::string> types;
    for (const auto& l : c.lits)
      for (size_t i = 0; i < l.args.size(); ++i)
        if (std::find(b.vars.begin(), b.vars.end(), l.args[i].text) == b.vars.end()) {
          b.vars.push_back(l.args[i].text);
          types.push_back(p_.preds[l.pred].arg_types[i]);
        }
    b.vals.resize(b.vars.size());
    std::function<void(size_t)> rec = [&](size_t k) {
      if (k == b.vars.size()) { f(b); return; }
      for (int32_t v : dom_[types[k]]) { b.vals[k] = v; rec(k + 1); }
    };
    rec(0);
  }

  // Tuffy's FROM list: which literals are inner-joined (tuple must exist).
  std::vector<bool> inner_literals(const lang::Clause& c) {
    std::vector<bool> inner(c.lits.size(), false);
    std::set<std::string> bound;
    for (int pass = 0; pass < 2; ++pass)
      for (size_t i = 0; i < c.lits.size(); ++i) {
        if (c.lits[i].positive != (pass == 1)) continue;
        bool fresh = false;
        for (const auto& t : c.lits[i].args) fresh |= bound.insert(t.text).second;
        inner[i] = !c.lits[i].positive || fresh;
      }
    return inner;
  }

  bool eval(const lang::Expr& e, const Binding& b) {
    using K = lang::Expr::Kind;
    if (e.kind == K::Unary && e.text == "!") return !eval(e.args[0], b);
    if (e.text == "&&") return eval(e.args[0], b) && eval(e.args[1], b);
    if (e.text == "||") return eval(e.args[0], b) || eval(e.args[1], b);
    bool eq = b.get(e.args[0].text) == b.get(e.args[1].text);
    return e.text == "=" ? eq : !eq;
  }

  std::vector<int32_t> tuple(const lang::Literal& l, const Binding& b) {
    std::vector<int32_t> t;
    for (const auto& a : l.args) t.push_back(b.get(a.text));
    return t;
  }

  // One row of a clause: present tuples and the literal conditions.
  struct Row {
    bool exists = true;  // all inner literals present, conditions hold
    bool pass = true;    // every literal's condition holds
    std::vector<std::pair<int, std::vector<int32_t>>> tuples;
  };

  template <typename Cond>
  Row make_row(const lang::Clause& c, const Binding& b, const std::vector<bool>& inner, Cond cond) {
    Row r;
    for (const auto& e : c.conditions) r.exists &= eval(e, b);
    for (size_t i = 0; i < c.lits.size(); ++i) {
      const lang::Literal& l = c.lits[i];
      std::vector<int32_t> t = tuple(l, b);
      auto it = preds_[l.pred].rows.find(t);
      const RefRow* row = it == preds_[l.pred].rows.end() ? nullptr : &it->second;
      if (!row && inner[i]) r.exists = false;
      if (!cond(l, t, row)) r.pass = false;
      r.tuples.emplace_back(l.pred, t);
    }
    return r;
  }

  // Groups rows by the non-existential variables; a group survives when all
  // of its existing rows pass (EXIST done right); plain clauses: one row each.
  template <typename Cond>
  std::vector<std::vector<Row>> groups(const lang::Clause& c, Cond cond) {
    std::vector<bool> inner = inner_literals(c);
    std::map<std::vector<int32_t>, std::vector<Row>> g;
    std::map<std::vector<int32_t>, bool> dead;
    for_bindings(c, [&](const Binding& b) {
      Row r = make_row(c, b, inner, cond);
      if (!r.exists) return;
      std::vector<int32_t> key;
      for (size_t i = 0; i < b.vars.size(); ++i)
        if (c.exist_vars.empty() || std::find(c.exist_vars.begin(), c.exist_vars.end(), b.vars[i]) == c.exist_vars.end())
          key.push_back(b.vals[i]);
      if (c.exist_vars.empty()) key = b.vals;
      if (!r.pass) dead[key] = true;
      else g[key].push_back(r);
    });
    std::vector<std::vector<Row>> out;
    for (auto& [k, rows] : g)
      if (!dead[k]) out.push_back(rows);
    return out;
  }

  bool is_active(int pred, const std::vector<int32_t>& t) { return preds_[pred].active.count(t) > 0; }

  void closure() {
    for (bool grew = true; grew;) {
      grew = false;
      for (size_t ci = 0; ci < p_.clauses.size(); ++ci) {
        if (!relevant_[ci]) continue;
        const lang::Clause& c = p_.clauses[ci];
        bool pos = c.weight > 0;
        auto cond = [&](const lang::Literal& l, const std::vector<int32_t>& t, const RefRow* r) {
          const RefPred& P = preds_[l.pred];
          if (!r) return l.positive && !P.cs;
          if (l.positive) return r->truth == 0 || is_active(l.pred, t) || (!P.cw && r->club < 2);
          return r->truth == 1 || is_active(l.pred, t) || (!P.cw && !pos && r->club < 2);
        };
        std::vector<std::pair<int, std::vector<int32_t>>> fresh;
        for (const auto& rows : groups(c, cond))
          for (const Row& r : rows) {
            if (!pos) {  // some negative open-world literal unknown
              bool ok = false;
              for (size_t i = 0; i < c.lits.size(); ++i) {
                const auto& [pi, t] = r.tuples[i];
                auto it = preds_[pi].rows.find(t);
                ok |= !c.lits[i].positive && !preds_[pi].cw && it != preds_[pi].rows.end() && it->second.club < 2;
              }
              if (!ok) continue;
            }
            for (size_t i = 0; i < c.lits.size(); ++i) {
              const auto& [pi, t] = r.tuples[i];
              if (c.lits[i].positive != pos || preds_[pi].immutable()) continue;
              auto it = preds_[pi].rows.find(t);
              if (it != preds_[pi].rows.end() && it->second.club < 2) fresh.emplace_back(pi, t);
            }
          }
        for (auto& [pi, t] : fresh) grew |= preds_[pi].active.insert(t).second;
      }
    }
  }

  void ground_clause(const lang::Clause& c, NetSet& net) {
    bool pos = c.weight > 0;
    auto unk = [&](int pred, const std::vector<int32_t>& t, const RefRow& r) {
      const RefPred& P = preds_[pred];
      if (!P.cw) return r.club < 2 || !std::isnan(r.prior);
      return P.soft && is_active(pred, t);
    };
    auto cond = [&](const lang::Literal& l, const std::vector<int32_t>& t, const RefRow* r) {
      if (!r) return l.positive && !preds_[l.pred].cs;
      if (l.positive) return r->truth == 0 || unk(l.pred, t, *r);
      if (pos) return r->truth == 1 || is_active(l.pred, t);
      return r->truth == 1 || unk(l.pred, t, *r);
    };
    for (const auto& rows : groups(c, cond)) {
      std::set<std::string> lits;
      for (const Row& r : rows) {
        if (!pos) {  // Tuffy's extra test for negative clauses
          bool ok = false;
          for (size_t i = 0; i < c.lits.size(); ++i) {
            const auto& [pi, t] = r.tuples[i];
            auto it = preds_[pi].rows.find(t);
            ok |= is_active(pi, t) ||
                  (!c.lits[i].positive && !preds_[pi].cw && it != preds_[pi].rows.end() && it->second.club < 2);
          }
          if (!ok) continue;
        }
        for (size_t i = 0; i < c.lits.size(); ++i) {
          const auto& [pi, t] = r.tuples[i];
          if (!preds_[pi].immutable() && is_active(pi, t))
            lits.insert((c.lits[i].positive ? "+" : "-") + text(pi, t));
        }
      }
      if (lits.empty()) continue;
      std::vector<std::string> key(lits.begin(), lits.end());
      double w = c.weight;
      if (key.size() == 1 && key[0][0] == '-') {
        key[0][0] = '+';
        w = -w;
      }
      net[key] += w;
    }
  }

  const lang::Program& p_;
  const GroundInput& in_;
  std::vector<RefPred> preds_;
  std::map<std::string, std::vector<int32_t>> dom_;
  std::vector<uint8_t> relevant_;
};

// ---------------------------------------------------------------- generator

TEST(GroundDifferential, RandomProgramsMatchNaiveReference) {
  auto engs = engines();
  int compared = 0, nonempty = 0, propagated = 0;
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    RandomCase rc = random_case(seed);
    SCOPED_TRACE("seed " + std::to_string(seed) + "\n" + rc.prog + "--\n" + rc.evidence);
    Loaded l;
    try {
      l = load_text(rc.prog, rc.evidence, rc.query);
    } catch (const lang::LangError& e) {
      ADD_FAILURE() << "generated program did not parse: " << e.what();
      continue;
    }
    GroundInput in = make_input(*l.prog, l.queries, l.evidence);
    std::vector<std::string> ref_atoms;
    NetSet ref = Reference(*l.prog, in).run(&ref_atoms);
    GroundOptions tuffy;  // the reference is Tuffy's grounding, before unit propagation
    tuffy.unit_propagate = false;
    for (auto& eng : engs) {
      SCOPED_TRACE(eng->name());
      GroundOutput g = ground(in, *eng, tuffy);
      EXPECT_EQ(atom_set(*l.prog, in.symbols, g), ref_atoms);
      EXPECT_TRUE(same_net(net_set(*l.prog, in.symbols, g), ref));
      // With propagation: the same atoms, and the network the propagation
      // of Tuffy's network gives.
      GroundOutput up = ground(in, *eng);
      EXPECT_EQ(atom_set(*l.prog, in.symbols, up), ref_atoms);
      Network again = g.network;
      const UnitPropStats st = unit_propagate(again);
      EXPECT_EQ(st.atoms_fixed, up.unit_propagation.atoms_fixed);
      EXPECT_EQ(st.hard_conflict, up.unit_propagation.hard_conflict);
      EXPECT_EQ(again.clauses.offsets, up.network.clauses.offsets);
      EXPECT_EQ(again.clauses.lits, up.network.clauses.lits);
      EXPECT_EQ(again.clauses.weights, up.network.clauses.weights);
      propagated += st.atoms_fixed > 0;
    }
    ++compared;
    nonempty += !ref.empty();
  }
  EXPECT_EQ(compared, 60);
  EXPECT_GE(nonempty, 30);  // the generator must exercise real networks
  std::printf("[ differential ] unit propagation fixed atoms in %d of %d groundings\n", propagated,
              compared * static_cast<int>(engs.size()));
}

// Exact equality (atom order, clause arrays, weights) between backends, and
// determinism of repeated runs.
TEST(GroundDifferential, BackendsGiveIdenticalNetworks) {
  Loaded cls = load_dir(datasets_dir() + "/class");
  GroundInput in = make_input(*cls.prog, cls.queries, cls.evidence);
  auto engs = engines();
  GroundOutput base = ground(in, *engs[0]);
  for (size_t e = 0; e < engs.size(); ++e) {
    SCOPED_TRACE(engs[e]->name());
    GroundOutput g = ground(in, *engs[e]);
    ASSERT_EQ(g.atoms.size(), base.atoms.size());
    for (size_t i = 0; i < g.atoms.size(); ++i) {
      EXPECT_EQ(g.atoms[i].pred, base.atoms[i].pred);
      EXPECT_EQ(g.atoms[i].args, base.atoms[i].args);
    }
    EXPECT_EQ(g.network.clauses.offsets, base.network.clauses.offsets);
    EXPECT_EQ(g.network.clauses.lits, base.network.clauses.lits);
    EXPECT_EQ(g.network.clauses.weights, base.network.clauses.weights);
  }
}

}  // namespace
}  // namespace mln::ground::test
