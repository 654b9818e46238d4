// One small program per grounding rule of reference §5, with the expected
// network worked out by hand from the §5.4/§5.5 tables.
#include <cmath>

#include "ground_util.hpp"

namespace mln::ground::test {
namespace {

constexpr double H = kHardWeight;

// Grounds a program given as text on every engine and checks atoms and clauses.
void expect_network(const std::string& prog, const std::string& ev, const std::string& q,
                    const std::vector<std::string>& atoms, const NetSet& clauses, GroundOptions opts = {},
                    const std::function<void(const Loaded&, const GroundInput&, const GroundOutput&)>& more = {}) {
  Loaded l = load_text(prog, ev, q);
  GroundInput in = make_input(*l.prog, l.queries, l.evidence);
  // The networks worked out by hand are Tuffy's, before hard-clause unit
  // propagation (that is tested in ground_unit_prop_test.cpp).
  opts.unit_propagate = false;
  std::vector<std::string> want = atoms;
  std::sort(want.begin(), want.end());
  for (auto& eng : engines()) {
    SCOPED_TRACE(eng->name());
    GroundOutput g = ground(in, *eng, opts);
    EXPECT_EQ(atom_set(*l.prog, in.symbols, g), want);
    EXPECT_TRUE(same_net(net_set(*l.prog, in.symbols, g), clauses));
    if (more) more(l, in, g);
  }
}

TEST(GroundRules, NegativeWeightActivatesNegativeLiterals) {
  // -2 !S(x) v C(x): penalised when true.  S(C) is unknown, so !S(C) v C(C)
  // can change; S(A) is true evidence and gives an empty ground clause.
  expect_network("Smokes(person)\nCancer(person)\n*Knows(person)\n-2 !Smokes(x) v Cancer(x)\n",
                 "Smokes(A)\n!Smokes(B)\nKnows(C)\n", "Cancer(x)\n", {"Smokes(C)"},
                 {{{"+Smokes(C)"}, 2.0}});  // [-S(C)],-2 flipped to [S(C)],2
}

TEST(GroundRules, NegativeUnitClauseNeedsNoAtoms) {
  // A negative clause with no negative literal is never worth activating.
  expect_network("Cancer(person)\n*Knows(person)\n-1 Cancer(x)\n", "Knows(A)\nKnows(B)\n", "Cancer(x)\n", {}, {});
}

TEST(GroundRules, HardClauseStaysHardWhenMerged) {
  expect_network("Smokes(person)\nCancer(person)\nSmokes(x) => Cancer(x).\n0.5 !Smokes(x) v Cancer(x)\n",
                 "Smokes(A)\n!Smokes(B)\n", "Cancer(x)\n", {"Cancer(A)"}, {{{"+Cancer(A)"}, H + 0.5}},
                 {}, [](const Loaded&, const GroundInput&, const GroundOutput& g) {
                   ASSERT_EQ(g.network.clauses.size(), 1u);
                   EXPECT_GE(g.network.clauses.weights[0], H);
                 });
}

TEST(GroundRules, ExtraClosedWorldPredicate) {
  // With -cw Smokes, Smokes is immutable: C2 and C3 are never relevant.
  std::string prog = read_file(datasets_dir() + "/smoke/prog.mln");
  std::string ev = read_file(datasets_dir() + "/smoke/evidence.db");
  Loaded l = load_text(prog, ev, "Cancer(x)");
  GroundOptions o;
  o.extra_closed_world = {l.prog->find_pred("Smokes")};
  expect_network(prog, ev, "Cancer(x)", {"Cancer(Anna)", "Cancer(Edward)"},
                 {{{"+Cancer(Anna)"}, 0.5}, {{"+Cancer(Edward)"}, 0.5}}, o,
                 [](const Loaded&, const GroundInput&, const GroundOutput& g) {
                   EXPECT_EQ(g.relevant_clauses, std::vector<int>{0});
                 });
}

TEST(GroundRules, CompletelySpecifiedDropsAbsentTuples) {
  const char* ev = "Knows(A,B)\nKnows(A,C)\n!Likes(A,B)\n";
  // ** Likes: the grounding through the absent Likes(A,C) is dropped.
  expect_network("*Knows(person,person)\n**Likes(person,person)\nHappy(person)\n"
                 "1 !Knows(x,y) v Likes(x,y) v Happy(x)\n",
                 ev, "Happy(x)", {"Happy(A)"}, {{{"+Happy(A)"}, 1.0}});
  // Plain open-world Likes: KBMC materialises it and Likes(A,C) is active.
  expect_network("*Knows(person,person)\nLikes(person,person)\nHappy(person)\n"
                 "1 !Knows(x,y) v Likes(x,y) v Happy(x)\n",
                 ev, "Happy(x)", {"Happy(A)", "Likes(A,C)"},
                 {{{"+Happy(A)"}, 1.0}, {{"+Happy(A)", "+Likes(A,C)"}, 1.0}});
}

TEST(GroundRules, SoftEvidenceUnitClauses) {
  expect_network("Smokes(person)\nCancer(person)\n0.5 !Smokes(x) v Cancer(x)\n",
                 "0.8 Smokes(A)\nSmokes(B)\n0.3 !Smokes(C)\n1 Smokes(D)\n", "Cancer(x)",
                 {"Smokes(A)", "Smokes(C)", "Cancer(A)", "Cancer(B)", "Cancer(C)", "Cancer(D)"},
                 {{{"+Cancer(A)", "-Smokes(A)"}, 0.5},
                  {{"+Cancer(B)"}, 0.5},
                  {{"+Cancer(C)", "-Smokes(C)"}, 0.5},
                  {{"+Cancer(D)"}, 0.5},
                  {{"+Smokes(A)"}, std::log(0.8 / 0.2)},
                  {{"+Smokes(C)"}, std::log(0.7 / 0.3)}},
                 {}, [](const Loaded& l, const GroundInput& in, const GroundOutput& g) {
                   for (const auto& a : g.atoms) {
                     if (atom_text(*l.prog, in.symbols, a) != "Smokes(A)") continue;
                     EXPECT_EQ(a.evidence, 1);
                     EXPECT_DOUBLE_EQ(a.prior, 0.8);
                   }
                 });
}

TEST(GroundRules, KeyConstraintsOverActiveAtoms) {
  // Label(D1,Sports) is true evidence, yet the existence clause of D1 forces
  // one of its active labels (Tuffy's behaviour, §5.7).  Each mutex pair once.
  expect_network("Label(doc, cls!)\n0.5 Label(d, Sports)\n0.3 Label(d, Politics)\n",
                 "Label(D1, Sports)\n!Label(D2, Weather)\n", "Label(d, c)",
                 {"Label(D2,Sports)", "Label(D1,Politics)", "Label(D2,Politics)"},
                 {{{"+Label(D2,Sports)"}, 0.5},
                  {{"+Label(D1,Politics)"}, H + 0.3},
                  {{"+Label(D2,Politics)"}, 0.3},
                  {{"-Label(D2,Politics)", "-Label(D2,Sports)"}, H},
                  {{"+Label(D2,Politics)", "+Label(D2,Sports)"}, H}});
}

TEST(GroundRules, ExistGroupsAreSatisfiedByAnyTrueInstance) {
  // Correct EXIST semantics: Pub(Ann,P1) is true, so Ann's ground clause is
  // satisfied and dropped (Tuffy's bug would keep [Pub(Ann,P2)]).
  expect_network("*Student(person)\nPub(person, paper)\n1.2 EXIST p !Student(x) v Pub(x,p)\n",
                 "Student(Ann)\nStudent(Bob)\nPub(Ann,P1)\n!Pub(Bob,P2)\n", "Pub(x,p)", {"Pub(Bob,P1)"},
                 {{{"+Pub(Bob,P1)"}, 1.2}});
}

TEST(GroundRules, ExistGroupConcatenatesInstances) {
  expect_network("*Student(person)\nPub(person, paper)\n*Paper(paper)\n1 EXIST p !Student(x) v Pub(x,p)\n",
                 "Student(Ann)\nPaper(P1)\nPaper(P2)\n", "Pub(x,p)", {"Pub(Ann,P1)", "Pub(Ann,P2)"},
                 {{{"+Pub(Ann,P1)", "+Pub(Ann,P2)"}, 1.0}});
}

TEST(GroundRules, SymbolicConditionAsSelection) {
  expect_network("*Friends(person,person)\nSmokes(person)\nCancer(person)\n"
                 "0.4 Friends(x,y), Smokes(x), [x != y] => Cancer(y)\n",
                 "Friends(A,A)\nFriends(A,B)\nSmokes(A)\n", "Cancer(x)", {"Cancer(B)"}, {{{"+Cancer(B)"}, 0.4}});
}

TEST(GroundRules, NumericConditionOnRawIntegers) {
  expect_network("*Age(person, int_)\nOld(person)\n1 Age(x, a), [a > 30] => Old(x)\n",
                 "Age(A, 40)\nAge(B, 20)\nAge(C, 31)\n", "Old(x)", {"Old(A)", "Old(C)"},
                 {{{"+Old(A)"}, 1.0}, {{"+Old(C)"}, 1.0}});
}

TEST(GroundRules, FunctionConditionOnSymbolText) {
  expect_network("Smokes(person)\nCancer(person)\n1 Smokes(x), [contains(x, \"nn\") && length(x) > 3] => Cancer(x)\n",
                 "Smokes(Anna)\nSmokes(Bob)\nSmokes(Ann)\n", "Cancer(x)", {"Cancer(Anna)"},
                 {{{"+Cancer(Anna)"}, 1.0}});
}

TEST(GroundRules, DatalogRuleDerivesTrueEvidence) {
  // False evidence still matches a Datalog body (Tuffy, §2.7).
  expect_network("*Friends(person,person)\n*Knows(person,person)\nLikes(person,person)\n"
                 "Knows(x,y) :- Friends(x,y).\n1 !Knows(x,y) v Likes(x,y)\n",
                 "Friends(A,B)\n!Friends(A,C)\n", "Likes(x,y)", {"Likes(A,B)", "Likes(A,C)"},
                 {{{"+Likes(A,B)"}, 1.0}, {{"+Likes(A,C)"}, 1.0}});
}

TEST(GroundRules, ScopingRuleRestrictsAtoms) {
  expect_network("*Friends(person,person)\nLikes(person,person)\n*Smokes(person)\n"
                 "Likes(x,y) := Friends(x,y).\n1 !Smokes(x) v Likes(x,y)\n",
                 "Friends(A,B)\nFriends(B,C)\nSmokes(A)\nSmokes(B)\n", "Likes(x,y)", {"Likes(A,B)", "Likes(B,C)"},
                 {{{"+Likes(A,B)"}, 1.0}, {{"+Likes(B,C)"}, 1.0}});
}

TEST(GroundRules, ActivateAllOnSmoke) {
  GroundOptions o;
  o.activate_all = true;
  expect_network(read_file(datasets_dir() + "/smoke/prog.mln"), read_file(datasets_dir() + "/smoke/evidence.db"),
                 "Cancer(x)",
                 {"Cancer(Anna)", "Cancer(Bob)", "Cancer(Edward)", "Cancer(Frank)", "Cancer(Gary)", "Cancer(Helen)",
                  "Smokes(Bob)", "Smokes(Frank)", "Smokes(Gary)", "Smokes(Helen)"},
                 {{{"+Cancer(Anna)"}, 0.5},
                  {{"+Cancer(Edward)"}, 0.5},
                  {{"+Cancer(Bob)", "-Smokes(Bob)"}, 0.5},
                  {{"+Cancer(Frank)", "-Smokes(Frank)"}, 0.5},
                  {{"+Cancer(Gary)", "-Smokes(Gary)"}, 0.5},
                  {{"+Cancer(Helen)", "-Smokes(Helen)"}, 0.5},
                  {{"+Smokes(Bob)"}, 0.4},
                  {{"+Smokes(Frank)"}, 0.8},
                  {{"+Smokes(Helen)", "-Smokes(Gary)"}, 0.4},
                  {{"+Smokes(Gary)", "-Smokes(Helen)"}, 0.4}},
                 o);
}

TEST(GroundRules, EmbeddedWeights) {
  expect_network("*Wt(person, float_)\nSmokes(person)\nw: !Wt(x, w) v Smokes(x)\n",
                 "Wt(A, 1.5)\nWt(B, -2)\nWt(C, 0)\n", "Smokes(x)", {"Smokes(A)"}, {{{"+Smokes(A)"}, 1.5}});
}

TEST(GroundRules, DuplicateEvidenceIsDeduplicated) {
  // Tuffy would double every weight joined through the duplicated line.
  std::string ev = read_file(datasets_dir() + "/smoke/evidence.db");
  expect_network(read_file(datasets_dir() + "/smoke/prog.mln"), ev + "\nSmokes(Anna)\nFriends(Anna, Bob)\n",
                 "Cancer(x)",
                 {"Cancer(Anna)", "Cancer(Bob)", "Cancer(Edward)", "Cancer(Frank)", "Smokes(Bob)", "Smokes(Frank)"},
                 {{{"+Cancer(Frank)", "-Smokes(Frank)"}, 0.5},
                  {{"+Cancer(Anna)"}, 0.5},
                  {{"+Smokes(Bob)"}, 0.4},
                  {{"+Smokes(Frank)"}, 0.8},
                  {{"+Cancer(Edward)"}, 0.5},
                  {{"+Cancer(Bob)", "-Smokes(Bob)"}, 0.5}});
}

TEST(GroundRules, ContradictoryEvidenceKeepsTheLastLine) {
  Loaded l = load_text("Smokes(person)\nCancer(person)\n0.5 !Smokes(x) v Cancer(x)\n",
                       "Smokes(A)\n!Smokes(A)\n!Smokes(B)\nSmokes(B)\n", "Cancer(x)");
  GroundInput in = make_input(*l.prog, l.queries, l.evidence);
  const PredEvidence& pe = in.evidence[l.prog->find_pred("Smokes")];
  ASSERT_EQ(pe.rows(), 2u);
  EXPECT_EQ(pe.truth[0], 0);  // A: last line is !Smokes(A)
  EXPECT_EQ(pe.truth[1], 1);  // B: last line is Smokes(B)
  auto eng = gpu::make_cpu_engine();
  GroundOutput g = ground(in, *eng);
  EXPECT_TRUE(same_net(net_set(*l.prog, in.symbols, g), {{{"+Cancer(B)"}, 0.5}}));
}

TEST(GroundRules, MakeInputInternsInTuffyOrder) {
  Loaded l = load_text("Smokes(person)\nCancer(person)\n*Age(person, int_)\n1 Cancer(Zed)\n",
                       "Smokes(Bob)\nAge(Amy, 41)\n", "Smokes(Cat)");
  GroundInput in = make_input(*l.prog, l.queries, l.evidence);
  std::vector<std::string> want = {"", "Zed", "Cat", "Bob", "Amy"};
  EXPECT_EQ(in.symbols.names, want);
  const PredEvidence& age = in.evidence[l.prog->find_pred("Age")];
  ASSERT_EQ(age.rows(), 1u);
  EXPECT_EQ(age.args[1][0], 41);  // raw integer, not a symbol id
  ASSERT_EQ(in.type_domains.size(), 1u);
  EXPECT_EQ(in.type_domains[0].first, "person");
  EXPECT_EQ(in.type_domains[0].second, (std::vector<int32_t>{1, 2, 3, 4}));
  ASSERT_EQ(in.queries.size(), 1u);
  EXPECT_EQ(in.queries[0].args, std::vector<int32_t>{2});
}

}  // namespace
}  // namespace mln::ground::test
