// The pieces of rule learning that the backend (mln.learn_rules_from) and
// the worker (rule learning jobs) share: the task built from a program's
// evidence (rules/program_task.hpp) over an in-memory evidence source, and
// the options reader (rules/options.hpp) both refuse bad options with.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <utility>

#include "rules/options.hpp"
#include "rules/program_task.hpp"

namespace mln::rules {
namespace {

using Tuple = std::vector<int32_t>;

gpu::HostTable table_of(const std::vector<Tuple>& rows, size_t arity) {
  gpu::HostTable t;
  t.cols.assign(arity, {});
  for (const Tuple& r : rows)
    for (size_t c = 0; c < arity; ++c) t.cols[c].push_back(r[c]);
  return t;
}

std::set<Tuple> rows_of(const gpu::HostTable& t) {
  std::set<Tuple> s;
  for (size_t i = 0; i < t.rows(); ++i) {
    Tuple r;
    for (const auto& c : t.cols) r.push_back(c[i]);
    s.insert(r);
  }
  return s;
}

// A program's evidence in memory: per predicate its true and false atoms.
class MemoryEvidence : public EvidenceSource {
 public:
  std::map<std::string, std::pair<std::vector<Tuple>, std::vector<Tuple>>> atoms_of;
  std::vector<std::pair<int32_t, std::string>> names{{1, "Anna"}, {2, "Bob"}, {3, "Carl"}, {4, "Dora"}};
  std::vector<std::pair<std::string, bool>> reads;  // what the builder asked for

  gpu::HostTable atoms(const DeclaredPredicate& p, bool truth) override {
    reads.emplace_back(p.name, truth);
    const auto& a = atoms_of[p.name];
    return table_of(truth ? a.first : a.second, p.types.size());
  }
  std::vector<std::pair<int32_t, std::string>> symbols() override { return names; }
};

// parent(person, person), male(person), age(person, int_years),
// height(person, float_m) and grandparent(person, person).
std::vector<DeclaredPredicate> family() {
  return {declared_predicate("parent", "person,person", "symbol,symbol", "a1,a2"),
          declared_predicate("male", "person", "symbol", "a1"),
          declared_predicate("age", "person,int_years", "symbol,int", "a1,a2"),
          declared_predicate("height", "person,float_m", "symbol,float", "a1,a2"),
          declared_predicate("grandparent", "person,person", "symbol,symbol", "a1,a2")};
}

MemoryEvidence family_evidence() {
  MemoryEvidence ev;
  ev.atoms_of["parent"] = {{{1, 2}, {2, 3}, {2, 4}}, {}};
  ev.atoms_of["male"] = {{{1}, {3}}, {{2}}};
  ev.atoms_of["age"] = {{{1, 70}, {2, 40}}, {}};
  ev.atoms_of["grandparent"] = {{{1, 3}, {1, 4}}, {{3, 1}}};
  return ev;
}

TEST(RulesProgramTask, ExamplesBackgroundAndTypesFromTheEvidence) {
  MemoryEvidence ev = family_evidence();
  const Task t = program_task(family(), "fam", "grandparent", ev, 3, 1);
  EXPECT_EQ(t.target.name, "grandparent");
  EXPECT_EQ(rows_of(t.pos), (std::set<Tuple>{{1, 3}, {1, 4}}));
  EXPECT_EQ(rows_of(t.neg), (std::set<Tuple>{{3, 1}})) << "the false atoms given are the negatives, none sampled";
  ASSERT_EQ(t.background.size(), 3u) << "every other predicate but the one with a float argument";
  EXPECT_EQ(t.background[0].name, "parent");
  EXPECT_EQ(t.background[1].name, "male");
  EXPECT_EQ(t.background[2].name, "age");
  EXPECT_EQ(rows_of(t.background[1].rows), (std::set<Tuple>{{1}, {3}})) << "the background is the true atoms only";
  // One type per declared name: person links every column of it; int_years is its own.
  const int person = t.target.types[0];
  EXPECT_EQ(t.target.types, (std::vector<int>{person, person}));
  EXPECT_EQ(t.background[0].types, (std::vector<int>{person, person}));
  EXPECT_NE(t.background[2].types[1], person);
  EXPECT_EQ(t.type_names[static_cast<size_t>(t.background[2].types[1])], "int_years");
  // Constants: a symbol by its id's name (ids start at 1), an int as itself.
  EXPECT_EQ(t.show(person, 2), "\"Bob\"");
  EXPECT_EQ(t.show(t.background[2].types[1], 40), "40");
  for (const auto& r : ev.reads) EXPECT_NE(r.first, "height") << "a predicate left out is not read";
}

TEST(RulesProgramTask, ClosedWorldNegativesWhenTheTargetHasNoFalseAtom) {
  MemoryEvidence ev = family_evidence();
  ev.atoms_of["grandparent"].second.clear();
  const Task a = program_task(family(), "fam", "grandparent", ev, 2, 7);
  const Task b = program_task(family(), "fam", "grandparent", ev, 2, 7);
  EXPECT_GT(a.neg.rows(), 0u);
  EXPECT_LE(a.neg.rows(), 2 * a.pos.rows());
  for (const Tuple& n : rows_of(a.neg)) {
    EXPECT_EQ(rows_of(a.pos).count(n), 0u) << "a sampled negative is never a positive";
    for (int32_t v : n) EXPECT_TRUE(v >= 1 && v <= 4) << "drawn from the people of the evidence";
  }
  EXPECT_EQ(rows_of(a.neg), rows_of(b.neg)) << "the sample is a function of the seed";
}

TEST(RulesProgramTask, RefusesAnUnknownTargetAndOneWithoutExamples) {
  MemoryEvidence ev = family_evidence();
  auto kind_of = [&](const std::string& target) {
    try {
      program_task(family(), "fam", target, ev, 3, 1);
    } catch (const ProgramError& e) {
      return e.kind;
    }
    ADD_FAILURE() << target << " was accepted";
    return ProgramError::Kind::kNoExamples;
  };
  EXPECT_EQ(kind_of("uncle"), ProgramError::Kind::kNoPredicate);
  EXPECT_EQ(kind_of("height"), ProgramError::Kind::kNoPredicate) << "a float argument: not a relation of ids";
  ev.atoms_of["grandparent"].first.clear();
  EXPECT_EQ(kind_of("grandparent"), ProgramError::Kind::kNoExamples);
  try {
    find_target(family(), "fam", "uncle");
    ADD_FAILURE();
  } catch (const ProgramError& e) {
    EXPECT_STREQ(e.what(), "program \"fam\" has no predicate \"uncle\"");
  }
}

TEST(RulesProgramTask, TheSqlBothReadersRun) {
  EXPECT_EQ(atoms_sql("\"s\".\"p\"", {"a1", "\"A 2\""}, false), "SELECT DISTINCT a1, \"A 2\" FROM \"s\".\"p\" WHERE truth = false");
  const DeclaredPredicate p = declared_predicate("p", "t,u", "symbol,int", "a1,a2");
  EXPECT_EQ(p.columns, (std::vector<std::string>{"a1", "a2"}));
  EXPECT_THROW(declared_predicate("p", "t,u", "symbol", "a1,a2"), TaskError);
}

LearnOptions read(std::vector<OptionEntry> entries) {
  return read_options(OptionEntries(std::move(entries), "mln.f", kRulesOptions));
}

std::string refusal(std::vector<OptionEntry> entries) {
  try {
    read(std::move(entries));
  } catch (const OptionEntryError& e) {
    return e.what();
  }
  return "";
}

TEST(RulesOptions, OneReaderForTheBackendAndTheWorker) {
  const LearnOptions o = read({{"score", "string", "wpll"}, {"beam", "number", "3"}, {"noise", "number", "0"},
                               {"l2", "number", "0.5"}, {"device", "string", "cpu"}, {"seed", "null", ""}});
  EXPECT_TRUE(o.search.wpll);
  EXPECT_EQ(o.search.beam, 3);
  EXPECT_EQ(o.search.noise, 0);
  EXPECT_DOUBLE_EQ(o.search.l2, 0.5);
  EXPECT_EQ(o.device, "cpu");
  EXPECT_EQ(o.seed, 1) << "null: the default";
  EXPECT_EQ(refusal({{"beam", "number", "0"}}), "option \"beam\" of mln.f must be a whole number >= 1");
  EXPECT_EQ(refusal({{"beam", "string", "2"}}), "option \"beam\" of mln.f must be a whole number >= 1");
  EXPECT_EQ(refusal({{"score", "string", "auc"}}), "option \"score\" of mln.f must be 'coverage' or 'wpll'");
  EXPECT_EQ(refusal({{"depth", "number", "2"}}), "unknown option \"depth\" of mln.f");
  EXPECT_EQ(refusal({{"l2", "number", "1e999"}}), "option \"l2\" of mln.f must be a number >= 0");
  EXPECT_THROW(check_search_options(read({{"score", "string", "wpll"}, {"recursion", "boolean", "true"}}).search, 2),
               TaskError);
  EXPECT_THROW(check_search_options(read({{"max_vars", "number", "1"}}).search, 2), TaskError);
  EXPECT_NO_THROW(check_search_options(read({}).search, 2));
}

}  // namespace
}  // namespace mln::rules
