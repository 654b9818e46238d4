// Loads every program, query and evidence file of the bundled Tuffy samples
// ($MLN_DATASETS, default the repository's examples/, MLN_EXAMPLES_DIR).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "lang/program.hpp"

namespace mln::lang {
namespace {

std::string datasets() {
  const char* env = std::getenv("MLN_DATASETS");
  return env && *env ? env : MLN_EXAMPLES_DIR;
}

// Contents of a sample file; fails the test when it cannot be read.
std::string slurp(const std::string& rel) {
  std::ifstream in(datasets() + "/" + rel, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << datasets() << "/" << rel;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> listing(const Program& p) {
  std::vector<std::string> out;
  for (const Clause& c : p.clauses) out.push_back(format_clause(c));
  return out;
}

TEST(LangSamples, Smoke) {
  Program p = parse_program(slurp("smoke/prog.mln"));
  ASSERT_EQ(p.preds.size(), 3u);
  EXPECT_EQ(p.preds[0].name, "Friends");
  EXPECT_TRUE(p.preds[0].closed_world);
  EXPECT_FALSE(p.preds[1].closed_world);
  EXPECT_EQ(listing(p), (std::vector<std::string>{
                            "0.5000 !Smokes(a1) v Cancer(a1)",
                            "0.4000 !Friends(a1,a2) v !Smokes(a1) v Smokes(a2)",
                            "0.4000 !Friends(a1,a2) v !Smokes(a2) v Smokes(a1)",
                        }));
  // The query file ends with a "//" comment and no newline (Tuffy warns, goes on).
  auto q = parse_queries(p, slurp("smoke/query.db"));
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].pred, p.find_pred("Cancer"));
  ASSERT_EQ(q[0].args.size(), 1u);
  EXPECT_TRUE(q[0].args[0].is_var());

  std::vector<EvidenceAtom> ev;
  parse_evidence(p, slurp("smoke/evidence.db"), [&](const EvidenceAtom& a) { ev.push_back(a); });
  int friends = 0, false_friends = 0, smokes = 0;
  for (const EvidenceAtom& a : ev) {
    if (a.pred == 0) ++(a.truth ? friends : false_friends);
    if (a.pred == 1) ++smokes;
  }
  // §5.9: five true Friends, !Friends(Gary,Frank), Smokes(Anna), Smokes(Edward).
  EXPECT_EQ(friends, 5);
  EXPECT_EQ(false_friends, 1);
  EXPECT_EQ(smokes, 2);
  EXPECT_EQ(ev.size(), 8u);
}

TEST(LangSamples, Class) {
  Program p = parse_program(slurp("class/prog.mln"));
  ASSERT_EQ(p.preds.size(), 4u);
  EXPECT_EQ(p.preds[2].name, "category");
  EXPECT_FALSE(p.preds[2].closed_world);
  // No two rules share a signature: the unit rules differ in their constant,
  // and the two category(a,Networking) rules differ in weight sign (§2.6).
  EXPECT_EQ(listing(p), (std::vector<std::string>{
                            "1.0000 !wrote(a1,a3) v !wrote(a1,a2) v category(a3,a4) v !category(a2,a4)",
                            "2.0000 !refers(a1,a2) v category(a2,a3) v !category(a1,a3)",
                            "2.0000 !refers(a1,a2) v category(a1,a3) v !category(a2,a3)",
                            "10.0000 sameCat(a2,a3) v !category(a1,a3) v !category(a1,a2)",
                            "-3.0000 category(a,Networking)",
                            "0.1400 category(a1,Programming)",
                            "0.0900 category(a1,Operating_Systems)",
                            "0.0400 category(a1,Hardware_and_Architecture)",
                            "0.1100 category(a1,Data_Structures__Algorithms_and_Theory)",
                            "0.0400 category(a1,Encryption_and_Compression)",
                            "0.0200 category(a1,Information_Retrieval)",
                            "0.0500 category(a1,Databases)",
                            "0.3900 category(a1,Artificial_Intelligence)",
                            "0.0600 category(a1,Human_Computer_Interaction)",
                            "0.0600 category(a,Networking)",
                        }));
  EXPECT_EQ(p.clauses[4].lits[0].args[1].kind, Term::Kind::Constant);
  EXPECT_TRUE(p.clauses[4].lits[0].args[0].is_var());

  auto q = parse_queries(p, slurp("class/query.db"));
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].pred, p.find_pred("category"));

  std::vector<size_t> per_pred(p.preds.size(), 0);
  size_t n = parse_evidence(p, slurp("class/evidence.db"), [&](const EvidenceAtom& a) {
    ASSERT_EQ(a.args.size(), static_cast<size_t>(p.preds[a.pred].arity()));
    ++per_pred[a.pred];
  });
  EXPECT_EQ(n, 82684u);
  size_t sum = 0;
  for (size_t c : per_pred) sum += c;
  EXPECT_EQ(sum, 82684u);
}

}  // namespace
}  // namespace mln::lang
