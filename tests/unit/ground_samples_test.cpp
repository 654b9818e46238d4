// The bundled Tuffy samples: smoke must match the worked example of
// reference §5.9 exactly, class must match Tuffy's counts.
#include "ground_util.hpp"

namespace mln::ground::test {
namespace {

TEST(GroundSamples, SmokeMatchesWorkedExample) {
  Loaded l = load_dir(datasets_dir() + "/smoke");
  GroundInput in = make_input(*l.prog, l.queries, l.evidence);
  // Symbols: Anna=1, Bob=2, Edward=3, Frank=4, Gary=5, Helen=6.
  ASSERT_GE(in.symbols.names.size(), 7u);
  EXPECT_EQ(in.symbols.names[1], "Anna");
  EXPECT_EQ(in.symbols.names[6], "Helen");
  NetSet expected = {
      {{"+Cancer(Frank)", "-Smokes(Frank)"}, 0.5}, {{"+Cancer(Anna)"}, 0.5},
      {{"+Smokes(Bob)"}, 0.4},                      {{"+Smokes(Frank)"}, 0.8},
      {{"+Cancer(Edward)"}, 0.5},                   {{"+Cancer(Bob)", "-Smokes(Bob)"}, 0.5},
  };
  std::vector<std::string> atoms = {"Cancer(Anna)", "Cancer(Bob)",  "Cancer(Edward)",
                                    "Cancer(Frank)", "Smokes(Bob)", "Smokes(Frank)"};
  for (auto& eng : engines()) {
    SCOPED_TRACE(eng->name());
    GroundOutput g = ground(in, *eng);
    EXPECT_EQ(atom_set(*l.prog, in.symbols, g), atoms);
    EXPECT_EQ(g.network.num_atoms, 6);
    EXPECT_EQ(g.network.clauses.size(), 6u);
    EXPECT_TRUE(same_net(net_set(*l.prog, in.symbols, g), expected));
    EXPECT_EQ(g.closure_rounds, 3);
    EXPECT_EQ(g.kbmc_patterns, std::vector<std::string>{"Cancer(v1)"});
    EXPECT_EQ(g.relevant_clauses.size(), 3u);
    for (const auto& a : g.atoms) EXPECT_EQ(a.is_query, l.prog->preds[a.pred].name == "Cancer");
    EXPECT_TRUE(g.true_query_evidence.empty());
    EXPECT_TRUE(g.unit_propagation.ran);  // smoke has no hard clause: nothing fixed
    EXPECT_EQ(g.unit_propagation.atoms_fixed, 0);
    EXPECT_EQ(g.unit_propagation.clauses_removed, 0);
    ASSERT_FALSE(g.phases.empty());
    for (const auto& ph : g.phases) EXPECT_GE(ph.seconds, 0.0);
  }
}

TEST(GroundSamples, ClassMatchesTuffyCounts) {
  Loaded l = load_dir(datasets_dir() + "/class");
  GroundInput in = make_input(*l.prog, l.queries, l.evidence);
  for (auto& eng : engines()) {
    SCOPED_TRACE(eng->name());
    // Tuffy's counts are before unit propagation.
    GroundOptions tuffy;
    tuffy.unit_propagate = false;
    GroundOutput g = ground(in, *eng, tuffy);
    EXPECT_EQ(g.network.num_atoms, 9650);
    EXPECT_EQ(g.network.clauses.size(), 73265u);
    // class has no hard clause: propagation fixes nothing and keeps the network.
    GroundOutput up = ground(in, *eng);
    EXPECT_TRUE(up.unit_propagation.ran);
    EXPECT_FALSE(up.unit_propagation.hard_conflict);
    EXPECT_EQ(up.unit_propagation.atoms_fixed, 0);
    EXPECT_EQ(up.unit_propagation.clauses_removed, 0);
    EXPECT_EQ(up.network.num_atoms, 9650);
    EXPECT_EQ(up.network.clauses.size(), 73265u);
    EXPECT_EQ(up.network.clauses.weights, g.network.clauses.weights);
  }
}

TEST(GroundSamples, ProgressIsCalledAndCanCancel) {
  Loaded l = load_dir(datasets_dir() + "/smoke");
  GroundInput in = make_input(*l.prog, l.queries, l.evidence);
  auto eng = gpu::make_cpu_engine();
  std::vector<std::string> seen;
  GroundOptions o;
  o.progress = [&](const std::string& phase, double f) {
    EXPECT_GE(f, 0.0);
    EXPECT_LE(f, 1.0);
    if (seen.empty() || seen.back() != phase) seen.push_back(phase);
  };
  ground(in, *eng, o);
  EXPECT_NE(std::find(seen.begin(), seen.end(), "closure"), seen.end());
  EXPECT_NE(std::find(seen.begin(), seen.end(), "consolidate"), seen.end());
  o.progress = [](const std::string& phase, double) {
    if (phase == "clauses") throw gpu::EngineError(gpu::EngineError::Kind::Cancelled, "cancelled");
  };
  EXPECT_THROW(ground(in, *eng, o), gpu::EngineError);
}

}  // namespace
}  // namespace mln::ground::test
