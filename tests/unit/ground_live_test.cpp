// Live grounding (issue #62) against ground() from scratch: random
// sequences of evidence inserts, deletes and truth flips (new constants and
// vanished ones included) on smokers, class and an entity-resolution
// program; after every step the live network must equal a grounding of the
// same input from scratch (atoms as tuples; clauses as a multiset with
// their merged weights), with and without unit propagation.
#include <random>
#include <set>

#include "ground/live.hpp"
#include "ground/network_diff.hpp"
#include "ground_random_case.hpp"
#include "ground_util.hpp"

namespace mln::ground::test {
namespace {

// Inputs over one dictionary, so that a constant keeps its id from step to
// step (make_input numbers symbols in first-seen order; the extension's
// symbol table keeps them).
class Inputs {
 public:
  explicit Inputs(const Loaded& l) : l_(l) {}

  GroundInput make(const std::vector<lang::EvidenceAtom>& ev) {
    GroundInput in = make_input(*l_.prog, l_.queries, ev);
    const lang::Program& p = *l_.prog;
    auto map = [&](int32_t id) {
      const std::string& s = in.symbols.names.at(id);
      auto [it, fresh] = dict_.emplace(s, static_cast<int32_t>(names_.size()));
      if (fresh) names_.push_back(s);
      return it->second;
    };
    for (size_t pi = 0; pi < in.evidence.size(); ++pi)
      for (size_t k = 0; k < in.evidence[pi].args.size(); ++k)
        if (p.preds[pi].arg_kinds[k] != lang::TypeKind::Int)
          for (int32_t& v : in.evidence[pi].args[k]) v = map(v);
    for (QueryPattern& q : in.queries)
      for (size_t k = 0; k < q.args.size(); ++k)
        if (q.args[k] >= 0 && p.preds[q.pred].arg_kinds[k] != lang::TypeKind::Int) q.args[k] = map(q.args[k]);
    for (auto& [type, vals] : in.type_domains)
      if (!int_type(type))
        for (int32_t& v : vals) v = map(v);
    in.symbols = Symbols();
    in.symbols.names = names_;
    return in;
  }

 private:
  bool int_type(const std::string& type) const {
    for (const auto& d : l_.prog->preds)
      for (size_t k = 0; k < d.arg_types.size(); ++k)
        if (d.arg_types[k] == type) return d.arg_kinds[k] == lang::TypeKind::Int;
    return false;
  }
  const Loaded& l_;
  std::map<std::string, int32_t> dict_;
  std::vector<std::string> names_{std::string()};
};

std::vector<std::string> live_atoms(const lang::Program& p, const Symbols& s, const GroundOutput& g) {
  std::vector<std::string> out;
  for (const auto& a : g.atoms)
    if (a.pred >= 0) out.push_back(atom_text(p, s, a));
  std::sort(out.begin(), out.end());
  return out;
}

::testing::AssertionResult equals_scratch(const Loaded& l, const GroundInput& in, const LiveGrounder& live,
                                          bool propagate) {
  GroundOptions o;
  o.unit_propagate = propagate;
  auto eng = gpu::make_cpu_engine();
  GroundOutput want = ground(in, *eng, o);
  GroundOutput got = live.output();
  if (propagate) got.unit_propagation = unit_propagate(got.network);
  std::vector<std::string> wa = atom_set(*l.prog, in.symbols, want), ga = live_atoms(*l.prog, in.symbols, got);
  if (wa != ga) {
    std::vector<std::string> only;
    std::set_symmetric_difference(wa.begin(), wa.end(), ga.begin(), ga.end(), std::back_inserter(only));
    return ::testing::AssertionFailure() << "atoms differ (" << wa.size() << " from scratch, " << ga.size()
                                         << " live); first: " << (only.empty() ? "" : only[0]);
  }
  auto qe = [&](const GroundOutput& g) {
    std::vector<std::string> v;
    for (const auto& [pred, args] : g.true_query_evidence) {
      Atom a;
      a.pred = pred;
      a.args = args;
      v.push_back(atom_text(*l.prog, in.symbols, a));
    }
    std::sort(v.begin(), v.end());
    return v;
  };
  if (qe(want) != qe(got)) return ::testing::AssertionFailure() << "true query evidence differs";
  // Dense, the network is ground()'s array for array: the same atom ids and
  // clause order, so that seeded answers do not depend on the path.
  GroundOutput dense = live.output(true);
  if (propagate) dense.unit_propagation = unit_propagate(dense.network);
  if (dense.atoms.size() != want.atoms.size()) return ::testing::AssertionFailure() << "dense: atom count differs";
  for (size_t i = 0; i < want.atoms.size(); ++i)
    if (dense.atoms[i].pred != want.atoms[i].pred || dense.atoms[i].args != want.atoms[i].args)
      return ::testing::AssertionFailure() << "dense: atom " << i + 1 << " differs";
  if (!(dense.network.clauses.offsets == want.network.clauses.offsets) ||
      !(dense.network.clauses.lits == want.network.clauses.lits) ||
      !(dense.network.clauses.weights == want.network.clauses.weights))
    return ::testing::AssertionFailure() << "dense: the clause arrays differ from ground()'s";
  return same_net(net_set(*l.prog, in.symbols, want), net_set(*l.prog, in.symbols, got));
}

// The update's touched atoms cover every atom the two networks differ in
// (network_diff.hpp, which compares them): a component left out of the
// search after a change is one whose clauses did not change.
struct Dense {
  std::vector<AtomKey> atoms;
  mln::ClauseSet clauses;
};
Dense dense_of(const LiveGrounder& live, std::vector<int32_t>* id_map = nullptr) {
  GroundOutput g = live.output(true, id_map);
  Dense d;
  for (const auto& a : g.atoms) d.atoms.emplace_back(a.pred, a.args);
  d.clauses = g.network.clauses;
  return d;
}
::testing::AssertionResult touched_covers(const Dense& before, const LiveGrounder& live, const LiveDelta& delta) {
  std::vector<int32_t> id_map;
  Dense after = dense_of(live, &id_map);
  std::set<int32_t> live_touched;
  for (int32_t a : delta.touched_atoms)
    if (a > 0 && static_cast<size_t>(a) < id_map.size() && id_map[a] > 0) live_touched.insert(id_map[a]);
  NetworkDiff d = diff_networks(before.atoms, before.clauses, after.atoms, after.clauses);
  for (int32_t a : d.touched)
    if (!live_touched.count(a))
      return ::testing::AssertionFailure() << "atom " << a << " differs between the networks but is not touched ("
                                           << d.touched.size() << " differ, " << live_touched.size() << " touched)";
  return ::testing::AssertionSuccess();
}

// Runs `steps` random changes from `start`: each step applies 1-4 edits of
// `edit` to the evidence list, updates the live state, and compares.
void run_sequence(const Loaded& l, std::vector<lang::EvidenceAtom> ev, int steps, uint32_t seed,
                  const std::function<void(std::mt19937&, std::vector<lang::EvidenceAtom>&)>& edit) {
  Inputs inputs(l);
  GroundInput in = inputs.make(ev);
  GroundOptions o;
  o.unit_propagate = false;
  LiveGrounder live(in, o);
  ASSERT_TRUE(equals_scratch(l, in, live, false)) << "after the build";
  std::mt19937 rng(seed);
  for (int step = 0; step < steps; ++step) {
    const int n = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < n; ++k) edit(rng, ev);
    in = inputs.make(ev);
    const Dense before = dense_of(live);
    LiveDelta d = live.update(in);
    ASSERT_TRUE(equals_scratch(l, in, live, false)) << "seed " << seed << ", step " << step << " ("
                                                    << d.tuples_changed << " tuples changed)";
    ASSERT_TRUE(touched_covers(before, live, d)) << "seed " << seed << ", step " << step;
    if (step % 5 == 4) ASSERT_TRUE(equals_scratch(l, in, live, true)) << "propagated, step " << step;
  }
}

lang::EvidenceAtom atom(const lang::Program& p, const std::string& pred, std::vector<std::string> args, bool truth) {
  lang::EvidenceAtom a;
  for (size_t i = 0; i < p.preds.size(); ++i)
    if (p.preds[i].name == pred) a.pred = static_cast<int>(i);
  a.args = std::move(args);
  a.truth = truth;
  return a;
}

// Removes a random row, flips one, or adds one made by `fresh`.
void edit_rows(std::mt19937& rng, std::vector<lang::EvidenceAtom>& ev, const std::function<lang::EvidenceAtom()>& fresh) {
  const unsigned k = rng() % 3;
  if (k == 0 && !ev.empty()) {
    ev.erase(ev.begin() + rng() % ev.size());
  } else if (k == 1 && !ev.empty()) {
    lang::EvidenceAtom& a = ev[rng() % ev.size()];
    a.truth = !a.truth;
  } else {
    ev.push_back(fresh());
  }
}

TEST(GroundLive, SmokersFollowEveryChange) {
  Loaded l = load_dir(datasets_dir() + "/smoke");
  ASSERT_EQ(live_unsupported(make_input(*l.prog, l.queries, l.evidence), {}), "");
  const char* people[] = {"Anna", "Bob", "Chris", "Daniel", "Edward", "Frank", "Gary", "Helen", "Ida"};
  for (uint32_t seed : {1u, 2u, 3u}) {
    run_sequence(l, l.evidence, 30, seed, [&](std::mt19937& rng, std::vector<lang::EvidenceAtom>& ev) {
      edit_rows(rng, ev, [&] {
        const std::string a = people[rng() % 9], b = people[rng() % 9];
        return rng() % 2 ? atom(*l.prog, "Friends", {a, b}, rng() % 4 != 0) : atom(*l.prog, "Smokes", {a}, rng() % 2);
      });
    });
  }
}

TEST(GroundLive, ClassFollowsEveryChange) {
  Loaded l = load_dir(datasets_dir() + "/class");
  ASSERT_EQ(live_unsupported(make_input(*l.prog, l.queries, l.evidence), {}), "");
  std::vector<std::string> papers, people;
  for (const auto& a : l.evidence) {
    const std::string& name = l.prog->preds[a.pred].name;
    if (name == "wrote") { people.push_back(a.args[0]); papers.push_back(a.args[1]); }
    if (name == "refers") papers.push_back(a.args[0]);
  }
  ASSERT_FALSE(papers.empty());
  for (uint32_t seed : {1u, 2u}) {
    run_sequence(l, l.evidence, 8, seed, [&](std::mt19937& rng, std::vector<lang::EvidenceAtom>& ev) {
      edit_rows(rng, ev, [&] {
        const std::string& p = papers[rng() % papers.size()];
        const std::string q = rng() % 5 == 0 ? "NewPaper" + std::to_string(rng() % 3) : papers[rng() % papers.size()];
        switch (rng() % 3) {
          case 0: return atom(*l.prog, "wrote", {people[rng() % people.size()], q}, true);
          case 1: return atom(*l.prog, "refers", {p, q}, true);
          default: return atom(*l.prog, "category", {q, rng() % 2 ? "Databases" : "Networking"}, rng() % 3 != 0);
        }
      });
    });
  }
}

// Issue #62's entity-resolution program over a few dozen records: Sim and
// SameZip computed from the records after every edit, as views would be.
TEST(GroundLive, EntityResolutionFollowsRecordEdits) {
  const std::string prog =
      "*Sim(rec, rec)\n*SameZip(rec, rec)\nSame(rec, rec)\n2.0  Sim(a, b) => Same(a, b)\n"
      "1.0  SameZip(a, b) => Same(a, b)\n-1.5 Same(a, b)\n3.0  Same(a, b), Same(b, c) => Same(a, c)\n"
      "Same(a, b) => Same(b, a).\n";
  Loaded l = load_text(prog, "", "Same(x, y)\n");
  struct Rec { std::string id, name, zip; };
  const char* syl[] = {"an", "ber", "ca", "dor"};
  std::mt19937 gen(7);
  auto name = [&] { return std::string(syl[gen() % 4]) + syl[gen() % 4]; };
  auto zip = [&] { return std::to_string(gen() % 4); };
  std::vector<Rec> recs;
  int next = 0;
  for (; next < 24; ++next) recs.push_back({"r" + std::to_string(next), name(), zip()});
  auto evidence = [&] {
    std::vector<lang::EvidenceAtom> ev;
    auto near = [](const std::string& a, const std::string& b) {  // edit distance <= 1 (one substitution)
      if (a.size() != b.size()) return false;
      int diff = 0;
      for (size_t i = 0; i < a.size(); ++i) diff += a[i] != b[i];
      return diff <= 1;
    };
    for (const Rec& a : recs)
      for (const Rec& b : recs) {
        if (a.id == b.id) continue;
        if (a.name[0] == b.name[0] && near(a.name, b.name)) ev.push_back(atom(*l.prog, "Sim", {a.id, b.id}, true));
        if (a.zip == b.zip && a.name.compare(0, 2, b.name, 0, 2) == 0)
          ev.push_back(atom(*l.prog, "SameZip", {a.id, b.id}, true));
      }
    return ev;
  };
  Inputs inputs(l);
  GroundInput in = inputs.make(evidence());
  GroundOptions o;
  o.unit_propagate = false;
  LiveGrounder live(in, o);
  ASSERT_TRUE(equals_scratch(l, in, live, false));
  for (int step = 0; step < 40; ++step) {
    const unsigned k = gen() % 4;
    if (k == 0) recs[gen() % recs.size()].name = name();
    else if (k == 1) recs[gen() % recs.size()].zip = zip();
    else if (k == 2) recs.push_back({"r" + std::to_string(next++), name(), zip()});
    else recs.erase(recs.begin() + gen() % recs.size());
    in = inputs.make(evidence());
    const Dense before = dense_of(live);
    LiveDelta d = live.update(in);
    ASSERT_TRUE(equals_scratch(l, in, live, false)) << "step " << step << " (edit " << k << ")";
    ASSERT_TRUE(touched_covers(before, live, d)) << "step " << step << " (edit " << k << ")";
  }
}

// Random programs (ground_random_case.hpp: open- and closed-world, **,
// negative weights, hard clauses) under random edits of their evidence,
// the DomA/DomB rows that make the type domains among them.
TEST(GroundLive, RandomProgramsFollowRandomEdits) {
  int maintained = 0, nonempty = 0;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    RandomCase rc = random_case(seed, true);
    SCOPED_TRACE("seed " + std::to_string(seed) + "\n" + rc.prog + "--\n" + rc.evidence);
    Loaded l = load_text(rc.prog, rc.evidence, rc.query);
    if (!live_unsupported(make_input(*l.prog, l.queries, l.evidence), {}).empty()) continue;
    ++maintained;
    const std::vector<std::vector<std::string>> consts = {{"A0", "A1", "A2", "A3"}, {"B0", "B1", "B2"}};
    const lang::Program& p = *l.prog;
    std::mt19937 rng(seed);
    auto fresh = [&] {
      const int pi = static_cast<int>(rng() % p.preds.size());
      std::vector<std::string> args;
      for (const std::string& t : p.preds[pi].arg_types) {
        const auto& pool = consts[t == "ta" ? 0 : 1];
        args.push_back(pool[rng() % pool.size()]);
      }
      return atom(p, p.preds[pi].name, args, rng() % 3 != 0);
    };
    run_sequence(l, l.evidence, 10, seed, [&](std::mt19937& r, std::vector<lang::EvidenceAtom>& ev) {
      edit_rows(r, ev, fresh);
    });
    if (::testing::Test::HasFatalFailure()) return;
    Inputs again(l);
    GroundInput in = again.make(l.evidence);
    nonempty += LiveGrounder(in).clauses() > 0;
  }
  EXPECT_GE(maintained, 30);
  EXPECT_GE(nonempty, 15);  // the generator must exercise real networks
}

TEST(GroundLive, NamesWhatItDoesNotMaintain) {
  Loaded l = load_text("p(t)\nq(t)\n1 EXIST y p(x) v q(y)\n", "p(A)\n", "q(x)\n");
  GroundInput in = make_input(*l.prog, l.queries, l.evidence);
  EXPECT_EQ(live_unsupported(in, {}), "an EXIST clause");
  EXPECT_THROW(LiveGrounder(in, {}), lang::LangError);
  // A network past the caller's limit: std::length_error (the caller grounds from scratch).
  Loaded cls = load_dir(datasets_dir() + "/class");
  EXPECT_THROW(LiveGrounder(make_input(*cls.prog, cls.queries, cls.evidence), {}, 1000), std::length_error);
  Loaded s = load_dir(datasets_dir() + "/smoke");
  GroundOptions learn;
  learn.learning = true;
  EXPECT_EQ(live_unsupported(make_input(*s.prog, s.queries, s.evidence), learn), "weight learning");
}

}  // namespace
}  // namespace mln::ground::test
