// Datalog maintenance (ground/datalog_maintain.hpp) against evaluation from
// scratch: random sequences of inserts and deletes on the inputs of
// recursive, mutually recursive, non-linear, negated and aggregating
// programs; after every step the maintained state equals evaluate() over
// the changed inputs, and the changes it reports are the difference of the
// two states.  CPU always, CUDA where a device is.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

#include "datalog_reference.hpp"
#include "ground/datalog_maintain.hpp"

namespace mln::ground::datalog {
namespace {

using namespace reference;

struct Case {
  const char* name;
  const char* text;
  std::vector<std::pair<const char*, int>> inputs;  // name, arity
  int domain;
  int rows;
};

const Case kCases[] = {
    {"transitive closure", "tc(X,Y) :- e(X,Y). tc(X,Y) :- tc(X,Z), e(Z,Y).", {{"e", 2}}, 12, 20},
    {"non-linear closure", "tc(X,Y) :- e(X,Y). tc(X,Y) :- tc(X,Z), tc(Z,Y).", {{"e", 2}}, 12, 18},
    {"same generation", "sg(X,Y) :- e(P,X), e(P,Y), X != Y. sg(X,Y) :- e(A,X), sg(A,B), e(B,Y), X != Y.", {{"e", 2}},
     10, 16},
    {"mutual recursion and negation",
     "node(X) :- e(X,_). node(Y) :- e(_,Y).\n"
     "even(X,Y) :- e(X,Y). odd(X,Y) :- even(X,Z), e(Z,Y). even(X,Y) :- odd(X,Z), e(Z,Y).\n"
     "gap(X,Y) :- node(X), node(Y), !even(X,Y), !b(X), X < Y.\n"
     "top(X) :- gap(X,_), !odd(X,X).",
     {{"e", 2}, {"b", 1}}, 8, 14},
    {"points-to (Andersen)",
     "pt(V,O) :- addr(V,O). pt(V,O) :- assign(V,W), pt(W,O).\n"
     "pt(V,O) :- load(V,W), pt(W,P), hpt(P,O). hpt(P,O) :- store(W,V), pt(W,P), pt(V,O).",
     {{"addr", 2}, {"assign", 2}, {"load", 2}, {"store", 2}}, 8, 8},
    {"aggregates and arithmetic",
     "reach(X,Y) :- e(X,Y). reach(X,Y) :- reach(X,Z), e(Z,Y).\n"
     "deg(X, count(Y)) :- reach(X,Y). far(X, D) :- deg(X, N), D = N * 2 + 1, D > 3.\n"
     "lonely(X) :- e(X,_), !far(X,_).",
     {{"e", 2}}, 9, 12},
};

// The state's relations as sets, by name (derived ones).
std::map<std::string, Set> derived(gpu::Engine& eng, const dl::Program& p, const std::vector<gpu::Relation>& rels) {
  std::map<std::string, Set> out;
  for (size_t r = 0; r < p.rels.size(); ++r)
    if (p.rels[r].derived) out[p.rels[r].name] = to_set(eng, rels[r]);
  return out;
}

void run_case(gpu::Engine& eng, const Case& c, uint32_t seed) {
  SCOPED_TRACE(std::string(c.name) + ", seed " + std::to_string(seed));
  const dl::Program p = int_program(c.text);
  std::mt19937 rng(seed);
  std::vector<Set> in(p.rels.size());
  for (const auto& [name, arity] : c.inputs) {
    const int r = p.find(name);
    ASSERT_GE(r, 0) << name;
    in[static_cast<size_t>(r)] = random_rel(rng, arity, c.rows, c.domain);
  }
  auto upload_all = [&](const std::vector<Set>& sets) {
    std::vector<gpu::Relation> rels(p.rels.size());
    for (size_t r = 0; r < p.rels.size(); ++r)
      if (p.rels[r].input) rels[r] = eng.upload(to_table(sets[r], p.rels[r].arity));
    return rels;
  };
  const EvalOptions o;
  std::vector<gpu::Relation> state = evaluate(eng, p, upload_all(in), o);
  MaintainStats stats;
  for (int step = 0; step < 25; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    // A batch of 1 to 4 rows per input: deletes of present rows (and of an
    // absent one), inserts of new rows (and of a present one).
    std::vector<RelationChange> changes(p.rels.size());
    std::vector<Set> ins(p.rels.size()), del(p.rels.size());
    for (const auto& [name, arity] : c.inputs) {
      const size_t r = static_cast<size_t>(p.find(name));
      const int n = 1 + static_cast<int>(rng() % 4);
      Set& cur = in[r];
      for (int k = 0; k < n; ++k) {
        if (rng() % 2 && !cur.empty()) {
          auto it = cur.begin();
          std::advance(it, rng() % cur.size());
          del[r].insert(*it);
        } else {
          ins[r].insert(*random_rel(rng, arity, 1, c.domain).begin());
        }
      }
      del[r].insert(*random_rel(rng, arity, 1, c.domain + 3).begin());  // perhaps absent
      if (!cur.empty()) ins[r].insert(*cur.begin());                     // present already
      changes[r].ins = eng.upload(to_table(ins[r], arity));
      changes[r].del = eng.upload(to_table(del[r], arity));
      for (const Tuple& t : del[r]) cur.erase(t);
      for (const Tuple& t : ins[r]) cur.insert(t);  // inserted wins over deleted
    }
    const std::map<std::string, Set> before = derived(eng, p, state);
    const std::vector<RelationChange> got = maintain(eng, p, state, changes, o, &stats);
    const std::vector<gpu::Relation> want = evaluate(eng, p, upload_all(in), o);
    for (size_t r = 0; r < p.rels.size(); ++r) {
      const std::string& name = p.rels[r].name;
      const Set now = to_set(eng, state[r]), expect = to_set(eng, want[r]);
      EXPECT_EQ(now, expect) << name;
      EXPECT_EQ(state[r].rows(), expect.size()) << name << ": duplicates";
      if (!p.rels[r].derived) continue;
      Set gained, lost;
      for (const Tuple& t : expect)
        if (!before.at(name).count(t)) gained.insert(t);
      for (const Tuple& t : before.at(name))
        if (!expect.count(t)) lost.insert(t);
      EXPECT_EQ(got[r].ins.impl() ? to_set(eng, got[r].ins) : Set(), gained) << name << " gained";
      EXPECT_EQ(got[r].del.impl() ? to_set(eng, got[r].del) : Set(), lost) << name << " lost";
    }
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(stats.strata_changed, 0);
}

TEST(DatalogMaintain, EqualsEvaluationFromScratchUnderRandomChanges) {
  for (auto& eng : test::engines())
    for (const Case& c : kCases)
      for (uint32_t seed = 1; seed <= 4; ++seed) run_case(*eng, c, seed);
}

// Deleting one edge of a long chain reaches only the closure's rows through
// it: the over-deleted rows are those paths, and the rest is not touched.
TEST(DatalogMaintain, ADeletedEdgeOverDeletesOnlyThePathsThroughIt) {
  auto eng = gpu::make_cpu_engine();
  const dl::Program p = int_program("tc(X,Y) :- e(X,Y). tc(X,Y) :- tc(X,Z), e(Z,Y).");
  Set e;
  for (int i = 0; i < 40; ++i) e.insert({i, i + 1});
  const size_t er = static_cast<size_t>(p.find("e")), tr = static_cast<size_t>(p.find("tc"));
  std::vector<gpu::Relation> in(p.rels.size());
  in[er] = eng->upload(to_table(e, 2));
  std::vector<gpu::Relation> state = evaluate(*eng, p, in, EvalOptions());
  ASSERT_EQ(state[tr].rows(), 41u * 40u / 2u);
  std::vector<RelationChange> change(p.rels.size());
  change[er].del = eng->upload(to_table({{39, 40}}, 2));
  MaintainStats st;
  const std::vector<RelationChange> got = maintain(*eng, p, state, change, EvalOptions(), &st);
  EXPECT_EQ(got[tr].del.rows(), 40u);  // the paths ending at 40
  EXPECT_EQ(st.over_deleted, 40u);
  EXPECT_EQ(st.rederived, 0u);
  EXPECT_EQ(state[tr].rows(), 40u * 39u / 2u);
}

}  // namespace
}  // namespace mln::ground::datalog
