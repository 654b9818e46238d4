// Rule learning (extension/rules): coverage on the engine against a
// top-down reference prover on random clauses, and planted rules recovered
// from generated data (grandparent, recursive ancestor, Michalski-style
// trains), checked by what the learned theory derives, not by its text.
// CPU engine always, CUDA where a device is.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "ground_util.hpp"
#include "rules/fixpoint.hpp"
#include "rules/refine.hpp"
#include "rules/rules.hpp"

namespace mln::rules {
namespace {

using Tuple = std::vector<int32_t>;
using Set = std::set<Tuple>;

Set rows_of(const gpu::HostTable& t) {
  Set s;
  for (size_t i = 0; i < t.rows(); ++i) {
    Tuple r;
    for (const auto& c : t.cols) r.push_back(c[i]);
    s.insert(r);
  }
  return s;
}

gpu::HostTable table_of(const Set& s, int arity) {
  gpu::HostTable t;
  t.cols.assign(static_cast<size_t>(arity), {});
  for (const Tuple& r : s)
    for (int c = 0; c < arity; ++c) t.cols[static_cast<size_t>(c)].push_back(r[static_cast<size_t>(c)]);
  return t;
}

// ------------------------------------------------------------- reference

// Proves a clause's body for one head tuple by backtracking, literal by
// literal, over the relations' rows (the target literal reads `target`).
class Prover {
 public:
  Prover(const Task& t, const Set& target) : target_(target) {
    for (const Predicate& p : t.background) bg_.push_back(rows_of(p.rows));
  }
  bool proves(const Clause& c, const Tuple& head) const {
    std::vector<int32_t> val(c.var_types.size(), 0);
    std::vector<char> bound(c.var_types.size(), 0);
    for (size_t i = 0; i < head.size(); ++i) {
      val[i] = head[i];
      bound[i] = 1;
    }
    return prove(c, 0, val, bound);
  }

 private:
  bool prove(const Clause& c, size_t l, std::vector<int32_t>& val, std::vector<char>& bound) const {
    if (l == c.body.size()) return true;
    const Literal& lit = c.body[l];
    const Set& rel = lit.pred == kTarget ? target_ : bg_[static_cast<size_t>(lit.pred)];
    for (const Tuple& row : rel) {
      std::vector<int32_t> v2 = val;
      std::vector<char> b2 = bound;
      bool ok = true;
      for (size_t i = 0; ok && i < lit.args.size(); ++i) {
        const Arg& a = lit.args[i];
        if (a.var < 0) {
          ok = row[i] == a.value;
        } else if (b2[static_cast<size_t>(a.var)]) {
          ok = v2[static_cast<size_t>(a.var)] == row[i];
        } else {
          v2[static_cast<size_t>(a.var)] = row[i];
          b2[static_cast<size_t>(a.var)] = 1;
        }
      }
      if (ok && prove(c, l + 1, v2, b2)) return true;
    }
    return false;
  }
  std::vector<Set> bg_;
  const Set& target_;
};

Coverage reference_cover(const Task& t, const Clause& c) {
  Set target = rows_of(t.pos);
  Prover pr(t, target);
  Coverage cov;
  for (size_t i = 0; i < t.pos.rows(); ++i) {
    Tuple h;
    for (const auto& col : t.pos.cols) h.push_back(col[i]);
    cov.pos += pr.proves(c, h);
  }
  for (size_t i = 0; i < t.neg.rows(); ++i) {
    Tuple h;
    for (const auto& col : t.neg.cols) h.push_back(col[i]);
    cov.neg += pr.proves(c, h);
  }
  return cov;
}

// What a theory derives over every tuple of `domain`^arity: its rules
// applied until nothing is new (a recursive rule reads what is derived).
Set derive(const Task& t, const std::vector<LearnedRule>& theory, int32_t domain) {
  Set derived;
  const size_t k = t.target.types.size();
  for (bool changed = true; changed;) {
    changed = false;
    Prover pr(t, derived);
    Tuple h(k, 0);
    for (;;) {
      if (!derived.count(h))
        for (const LearnedRule& r : theory)
          if (pr.proves(r.clause, h)) {
            derived.insert(h);
            changed = true;
            break;
          }
      size_t i = 0;
      while (i < k && ++h[i] == domain) h[i++] = 0;
      if (i == k) break;
    }
  }
  return derived;
}

// What a theory says of itself holds when it is run as Datalog: every rule
// binds its head (mln.datalog refuses a rule that does not), each rule's
// coverage is what its body holds of the examples where the target reads
// the theory's fixpoint, and the new positives add up to the positives the
// fixpoint holds.
void expect_sound(const Task& t, const std::vector<LearnedRule>& theory, int32_t domain) {
  const Set derived = derive(t, theory, domain);
  Prover pr(t, derived);
  int64_t claimed = 0, held = 0;
  for (const LearnedRule& r : theory) {
    EXPECT_TRUE(binds_head(r.clause, t.target.types.size())) << r.text;
    Coverage want;
    for (const Tuple& e : rows_of(t.pos)) want.pos += pr.proves(r.clause, e);
    for (const Tuple& e : rows_of(t.neg)) want.neg += pr.proves(r.clause, e);
    EXPECT_EQ(r.on_all.pos, want.pos) << r.text;
    EXPECT_EQ(r.on_all.neg, want.neg) << r.text;
    claimed += r.new_pos;
  }
  for (const Tuple& e : rows_of(t.pos)) held += derived.count(e);
  EXPECT_EQ(claimed, held);
}

std::string theory_text(const std::vector<LearnedRule>& theory) {
  std::string s;
  for (const LearnedRule& r : theory) s += r.text + " (" + std::to_string(r.on_all.pos) + ", " + std::to_string(r.on_all.neg) + ")\n";
  return s;
}

// ------------------------------------------------------------- coverage

// A random clause built as the search builds one: each literal shares a
// variable with the clause; new variables numbered in order of use.
Clause random_clause(const Task& t, std::mt19937& rng) {
  Clause c;
  c.var_types = t.target.types;
  const int n = 1 + static_cast<int>(rng() % 3);
  for (int l = 0; l < n; ++l) {
    const int p = static_cast<int>(rng() % t.background.size());
    Literal lit;
    lit.pred = p;
    bool linked = false;
    const int before = static_cast<int>(c.var_types.size());
    for (size_t i = 0; i < t.background[static_cast<size_t>(p)].types.size(); ++i) {
      const int r = static_cast<int>(rng() % 4);
      if (r == 0 && c.var_types.size() < 5) {
        c.var_types.push_back(0);
        lit.args.push_back({static_cast<int>(c.var_types.size()) - 1, 0});
      } else if (r == 1) {
        lit.args.push_back({-1, static_cast<int32_t>(rng() % 6)});
      } else {
        lit.args.push_back({static_cast<int>(rng() % c.var_types.size()), 0});
        linked = linked || lit.args.back().var < before;
      }
    }
    if (!linked) {  // not linked: drop its new variables and draw again
      c.var_types.resize(static_cast<size_t>(before));
      --l;
      continue;
    }
    c.body.push_back(lit);
  }
  return c;
}

Task random_task(std::mt19937& rng) {
  Task t;
  t.type_names = {"n"};
  t.target = {"goal", {0, 0}, {}};
  const int32_t dom = 6 + static_cast<int32_t>(rng() % 6);
  for (int p = 0; p < 3; ++p) {
    const int arity = 1 + p % 3;
    Set s;
    const int n = 2 + static_cast<int>(rng() % 25);
    for (int i = 0; i < n; ++i) {
      Tuple r;
      for (int c = 0; c < arity; ++c) r.push_back(static_cast<int32_t>(rng() % static_cast<uint32_t>(dom)));
      s.insert(r);
    }
    t.background.push_back({"p" + std::to_string(p), std::vector<int>(static_cast<size_t>(arity), 0), table_of(s, arity)});
  }
  Set pos, neg;
  for (int i = 0; i < 30; ++i) {
    Tuple e{static_cast<int32_t>(rng() % static_cast<uint32_t>(dom)), static_cast<int32_t>(rng() % static_cast<uint32_t>(dom))};
    (rng() % 2 ? pos : neg).insert(e);
  }
  for (const Tuple& e : pos) neg.erase(e);
  t.pos = table_of(pos, 2);
  t.neg = table_of(neg, 2);
  return t;
}

// The fix for new variables in a random clause: they must appear in order.
bool well_numbered(const Clause& c, size_t head) {
  int next = static_cast<int>(head);
  for (const Literal& l : c.body)
    for (const Arg& a : l.args)
      if (a.var >= next) {
        if (a.var != next) return false;
        ++next;
      }
  return true;
}

TEST(RulesCoverage, EqualsTheReferenceProverOnRandomClauses) {
  for (auto& eng : ground::test::engines()) {
    std::mt19937 rng(7);
    int checked = 0;
    for (int task_no = 0; task_no < 40; ++task_no) {
      Task t = random_task(rng);
      CoverageEngine ce(*eng, t, 1u << 30);
      for (int k = 0; k < 15; ++k) {
        Clause c = random_clause(t, rng);
        if (!well_numbered(c, 2)) continue;
        const Coverage want = reference_cover(t, c);
        Coverage got;
        try {
          got = ce.cover(c, {});
        } catch (const TaskError& e) {
          FAIL() << render(t, c) << ": " << e.what();
        }
        ASSERT_EQ(got.pos, want.pos) << eng->name() << ": " << render(t, c);
        ASSERT_EQ(got.neg, want.neg) << eng->name() << ": " << render(t, c);
        ++checked;
      }
    }
    EXPECT_GT(checked, 300) << eng->name();
  }
}

// ------------------------------------------------------------- planted rules

// People 0..n-1 in generations of `width`; each person of generation g+1
// has one or two parents in generation g.
Set family(int generations, int width, std::mt19937& rng) {
  Set parent;
  for (int g = 1; g < generations; ++g)
    for (int i = 0; i < width; ++i) {
      const int32_t child = g * width + i;
      const int np = 1 + static_cast<int>(rng() % 2);
      for (int k = 0; k < np; ++k) parent.insert({(g - 1) * width + static_cast<int32_t>(rng() % static_cast<uint32_t>(width)), child});
    }
  return parent;
}

Set compose(const Set& a, const Set& b) {
  Set out;
  for (const Tuple& x : a)
    for (const Tuple& y : b)
      if (x[1] == y[0]) out.insert({x[0], y[1]});
  return out;
}

// Negatives: pairs of the domain not in `truth`, at most `n` of them.
Set negatives(const Set& truth, int32_t domain, size_t n, std::mt19937& rng) {
  Set neg;
  for (size_t tries = 0; neg.size() < n && tries < 50 * n; ++tries) {
    Tuple e{static_cast<int32_t>(rng() % static_cast<uint32_t>(domain)), static_cast<int32_t>(rng() % static_cast<uint32_t>(domain))};
    if (!truth.count(e)) neg.insert(e);
  }
  return neg;
}

Task family_task(const Set& parent, const std::string& target, const Set& truth, int32_t domain, std::mt19937& rng) {
  Task t;
  t.type_names = {"person"};
  t.background.push_back({"parent", {0, 0}, table_of(parent, 2)});
  Set male;
  for (int32_t p = 0; p < domain; p += 2) male.insert({p});
  t.background.push_back({"male", {0}, table_of(male, 1)});
  t.target = {target, {0, 0}, {}};
  t.pos = table_of(truth, 2);
  t.neg = table_of(negatives(truth, domain, 3 * truth.size(), rng), 2);
  return t;
}

TEST(RulesPlanted, GrandparentFromParent) {
  for (auto& eng : ground::test::engines()) {
    std::mt19937 rng(11);
    const int gens = 4, width = 12;
    Set parent = family(gens, width, rng);
    Set gp = compose(parent, parent);
    Task t = family_task(parent, "grandparent", gp, gens * width, rng);
    SearchOptions o;
    std::vector<LearnedRule> theory = learn_rules(*eng, t, o);
    ASSERT_FALSE(theory.empty()) << eng->name();
    EXPECT_EQ(theory.size(), 1u) << theory.back().text;
    EXPECT_EQ(theory[0].clause.body.size(), 2u) << theory[0].text;
    EXPECT_EQ(derive(t, theory, gens * width), gp) << eng->name() << ": " << theory[0].text;
    EXPECT_EQ(theory[0].on_all.pos, static_cast<int64_t>(gp.size()));
    EXPECT_EQ(theory[0].on_all.neg, 0);
  }
}

// Without negative examples: closed-world negatives sampled from the domain.
TEST(RulesPlanted, GrandparentWithClosedWorldNegatives) {
  auto eng = gpu::make_cpu_engine();
  std::mt19937 rng(19);
  Set parent = family(4, 12, rng);
  Set gp = compose(parent, parent);
  Task t = family_task(parent, "grandparent", gp, 48, rng);
  t.neg = sample_negatives(t, 3 * gp.size(), 7);
  ASSERT_EQ(t.neg.rows(), 3 * gp.size());
  for (size_t i = 0; i < t.neg.rows(); ++i) ASSERT_FALSE(gp.count({t.neg.cols[0][i], t.neg.cols[1][i]}));
  std::vector<LearnedRule> theory = learn_rules(*eng, t, SearchOptions{});
  ASSERT_EQ(theory.size(), 1u);
  EXPECT_EQ(derive(t, theory, 48), gp) << theory[0].text;
  // A domain smaller than asked: every free tuple, no more.
  Task tiny;
  tiny.type_names = {"n"};
  tiny.background = {{"p", {0}, table_of({{1}, {2}, {3}}, 1)}};
  tiny.target = {"goal", {0}, {}};
  tiny.pos = table_of({{1}}, 1);
  EXPECT_EQ(sample_negatives(tiny, 100, 1).rows(), 2u);
}

// A type as wide as SQL's text holds values no column of the target takes
// (colours beside people): closed-world negatives are drawn from the
// target's own columns' values, so the sample is one an over-general rule
// over people covers.
TEST(RulesPlanted, ClosedWorldNegativesComeFromTheTargetsValues) {
  auto eng = gpu::make_cpu_engine();
  std::mt19937 rng(19);
  Set parent = family(4, 12, rng);
  Set gp = compose(parent, parent);
  Task t = family_task(parent, "grandparent", gp, 48, rng);
  Set colours;
  for (int32_t c = 1000; c < 3000; ++c) colours.insert({c});
  t.background.push_back({"colour", {0}, table_of(colours, 1)});
  t.neg = sample_negatives(t, 3 * gp.size(), 7);
  ASSERT_GT(t.neg.rows(), gp.size());
  for (const Tuple& e : rows_of(t.neg)) ASSERT_TRUE(e[0] < 48 && e[1] < 48) << e[0] << ", " << e[1];
  std::vector<LearnedRule> theory = learn_rules(*eng, t, SearchOptions{});
  ASSERT_EQ(theory.size(), 1u) << theory_text(theory);
  EXPECT_EQ(derive(t, theory, 48), gp) << theory[0].text;
}

// An empty negatives table is no negatives: the search then takes any rule
// that covers min_pos positives, so the caller is warned.
TEST(RulesPlanted, AnEmptyNegativesTableIsWarnedOf) {
  std::mt19937 rng(11);
  Set parent = family(4, 12, rng);
  Task t = family_task(parent, "grandparent", compose(parent, parent), 48, rng);
  EXPECT_TRUE(task_warnings(t).empty());
  t.neg = table_of({}, 2);
  t.negatives_source = "gp_neg";
  const std::vector<Warning> w = task_warnings(t);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].message.find("gp_neg are empty"), std::string::npos) << w[0].message;
  EXPECT_NE(w[0].message.find("no negatives were given"), std::string::npos) << w[0].message;
  EXPECT_NE(w[0].message.find("over-general"), std::string::npos) << w[0].message;
  EXPECT_NE(w[0].hint.find("NULL"), std::string::npos) << w[0].hint;
  t.negatives_source.clear();  // none sampled: the closed world had none left
  ASSERT_EQ(task_warnings(t).size(), 1u);
  EXPECT_NE(task_warnings(t)[0].message.find("no negative example of \"grandparent\""), std::string::npos);
}

TEST(RulesPlanted, RecursiveAncestorFromParent) {
  for (auto& eng : ground::test::engines()) {
    std::mt19937 rng(5);
    const int gens = 5, width = 8;
    Set parent = family(gens, width, rng);
    Set anc = parent;
    for (Set step = parent; !step.empty();) {
      Set next;
      for (const Tuple& e : compose(step, parent))
        if (anc.insert(e).second) next.insert(e);
      step = next;
    }
    Task t = family_task(parent, "ancestor", anc, gens * width, rng);
    SearchOptions o;
    o.recursion = true;
    std::vector<LearnedRule> theory = learn_rules(*eng, t, o);
    ASSERT_GE(theory.size(), 2u) << eng->name();
    std::string text;
    for (const LearnedRule& r : theory) text += r.text + "\n";
    EXPECT_EQ(derive(t, theory, gens * width), anc) << eng->name() << ":\n" << text;
  }
}

// Trains of 2-4 cars; a car is short or long, open or closed, has 2 or 3
// wheels and a load shape 0-2.  Eastbound: some car is short and closed.
struct Trains {
  Set has_car, short_car, long_car, closed, open, wheels, load, east, west;
};

Trains trains(int n, int32_t first_car, std::mt19937& rng) {
  Trains tr;
  int32_t car = first_car;
  for (int32_t train = 0; train < n; ++train) {
    bool east = false;
    const int cars = 2 + static_cast<int>(rng() % 3);
    for (int k = 0; k < cars; ++k, ++car) {
      tr.has_car.insert({train, car});
      const bool is_short = rng() % 2, is_closed = rng() % 3 == 0;
      (is_short ? tr.short_car : tr.long_car).insert({car});
      (is_closed ? tr.closed : tr.open).insert({car});
      tr.wheels.insert({car, static_cast<int32_t>(2 + rng() % 2)});
      tr.load.insert({car, static_cast<int32_t>(rng() % 3)});
      east = east || (is_short && is_closed);
    }
    (east ? tr.east : tr.west).insert({train});
  }
  return tr;
}

TEST(RulesPlanted, MichalskiTrains) {
  for (auto& eng : ground::test::engines()) {
    std::mt19937 rng(3);
    Trains tr = trains(60, 1000, rng);
    Task t;
    t.type_names = {"train", "car", "count"};
    t.background = {{"has_car", {0, 1}, table_of(tr.has_car, 2)}, {"short", {1}, table_of(tr.short_car, 1)},
                    {"long", {1}, table_of(tr.long_car, 1)},       {"closed", {1}, table_of(tr.closed, 1)},
                    {"open", {1}, table_of(tr.open, 1)},           {"wheels", {1, 2}, table_of(tr.wheels, 2)},
                    {"load", {1, 2}, table_of(tr.load, 2)}};
    t.target = {"eastbound", {0}, {}};
    t.pos = table_of(tr.east, 1);
    t.neg = table_of(tr.west, 1);
    ASSERT_GE(tr.east.size(), 10u);
    std::vector<LearnedRule> theory = learn_rules(*eng, t, SearchOptions{});
    ASSERT_EQ(theory.size(), 1u) << eng->name();
    EXPECT_EQ(theory[0].on_all.pos, static_cast<int64_t>(tr.east.size())) << theory[0].text;
    EXPECT_EQ(theory[0].on_all.neg, 0) << theory[0].text;
    // Held out: fresh trains, classified by the theory as the planted rule does.
    Trains test = trains(200, 100000, rng);
    Task held = t;
    held.background = {{"has_car", {0, 1}, table_of(test.has_car, 2)}, {"short", {1}, table_of(test.short_car, 1)},
                       {"long", {1}, table_of(test.long_car, 1)},       {"closed", {1}, table_of(test.closed, 1)},
                       {"open", {1}, table_of(test.open, 1)},           {"wheels", {1, 2}, table_of(test.wheels, 2)},
                       {"load", {1, 2}, table_of(test.load, 2)}};
    held.pos = table_of(test.east, 1);
    held.neg = table_of(test.west, 1);
    const Coverage c = reference_cover(held, theory[0].clause);
    EXPECT_EQ(c.pos, static_cast<int64_t>(test.east.size())) << theory[0].text;
    EXPECT_EQ(c.neg, 0) << theory[0].text;
  }
}

// ------------------------------------------------------------- soundness

// A target literal is read as what the theory derives, never as the
// examples: a body of target literals that rereads the example it proves
// derives nothing from this background, so no rule covers two positives.
TEST(RulesRecursion, ATargetLiteralReadsTheFixpointNotTheExamples) {
  for (auto& eng : ground::test::engines()) {
    Task t;
    t.type_names = {"n"};
    t.background.push_back({"e", {0, 0}, table_of({{1, 3}, {2, 4}}, 2)});
    t.target = {"t", {0, 0}, {}};
    t.pos = table_of({{1, 2}, {3, 4}}, 2);
    t.neg = table_of({{1, 4}, {3, 2}}, 2);
    SearchOptions o;
    o.recursion = true;
    const std::vector<LearnedRule> theory = learn_rules(*eng, t, o);
    EXPECT_TRUE(theory.empty()) << eng->name() << ":\n" << theory_text(theory);
    expect_sound(t, theory, 5);
  }
}

// A random recursive clause with a random base clause: the engine's
// coverage of each equals the reference prover's over what the two derive.
TEST(RulesRecursion, CoverageEqualsTheReferenceFixpointOnRandomTheories) {
  for (auto& eng : ground::test::engines()) {
    std::mt19937 rng(23);
    int checked = 0, derived_some = 0;
    for (int task_no = 0; task_no < 60; ++task_no) {
      Task t = random_task(rng);
      Clause base = random_clause(t, rng), rec = random_clause(t, rng);
      Literal lit{kTarget, {Arg{static_cast<int>(rng() % rec.var_types.size()), 0},
                            Arg{static_cast<int>(rng() % rec.var_types.size()), 0}}};
      rec.body.push_back(lit);
      if (!well_numbered(base, 2) || !well_numbered(rec, 2) || !binds_head(base, 2) || !binds_head(rec, 2) ||
          is_tautology(rec, 2))
        continue;
      std::vector<LearnedRule> theory(2);
      theory[0].clause = base;
      theory[1].clause = rec;
      const Set derived = derive(t, theory, 12);
      CoverageEngine ce(*eng, t, 1u << 30);
      ASSERT_TRUE(ce.set_theory({base, rec}));
      Prover pr(t, derived);
      for (const Clause& c : {base, rec}) {
        Coverage want;
        for (const Tuple& e : rows_of(t.pos)) want.pos += pr.proves(c, e);
        for (const Tuple& e : rows_of(t.neg)) want.neg += pr.proves(c, e);
        const Coverage got = ce.cover(c, {});
        ASSERT_EQ(got.pos, want.pos) << eng->name() << ": " << render(t, base) << " " << render(t, rec);
        ASSERT_EQ(got.neg, want.neg) << eng->name() << ": " << render(t, base) << " " << render(t, rec);
      }
      const std::vector<char> pos = ce.derived_pos();
      int64_t held = 0;
      for (const Tuple& e : rows_of(t.pos)) held += derived.count(e);
      EXPECT_EQ(std::count(pos.begin(), pos.end(), 1), held);
      ++checked;
      derived_some += derived.size() > 0;
    }
    EXPECT_GT(checked, 10) << eng->name();
    EXPECT_GT(derived_some, 5) << eng->name();
  }
}

// q(B) holds of every positive's B and no negative's, but t(A, B) :- q(B)
// leaves A unbound; the rule returned binds both.
TEST(RulesSearch, EveryHeadVariableIsBoundByTheBody) {
  for (auto& eng : ground::test::engines()) {
    Task t;
    t.type_names = {"n"};
    t.background.push_back({"q", {0}, table_of({{10}, {11}, {12}}, 1)});
    t.background.push_back({"r", {0}, table_of({{1}, {2}, {3}, {4}}, 1)});
    t.target = {"t", {0, 0}, {}};
    t.pos = table_of({{1, 10}, {2, 11}, {3, 12}, {4, 10}}, 2);
    t.neg = table_of({{1, 20}, {2, 21}, {3, 22}}, 2);
    SearchOptions o;
    o.max_constants = 0;
    const std::vector<LearnedRule> theory = learn_rules(*eng, t, o);
    ASSERT_EQ(theory.size(), 1u) << eng->name() << ":\n" << theory_text(theory);
    EXPECT_EQ(theory[0].on_all.pos, 4) << theory[0].text;
    EXPECT_EQ(theory[0].on_all.neg, 0) << theory[0].text;
    expect_sound(t, theory, 23);
  }
}

// sameCat relates items of one class, each item to itself too: the target
// read through it rereads the example it proves.  Positives pair a class-1
// item with a class-0 one, negatives the other way round, which sameCat
// cannot tell apart; so there is no rule, recursive or not.
TEST(RulesRecursion, NoTautologyThroughAnIdentityLikeRelation) {
  for (auto& eng : ground::test::engines()) {
    Set same, pos, neg;
    for (int32_t a = 0; a < 12; ++a)
      for (int32_t b = 0; b < 12; ++b)
        if (a / 6 == b / 6) same.insert({a, b});
    std::mt19937 rng(29);
    for (int i = 0; i < 20; ++i) {
      pos.insert({6 + static_cast<int32_t>(rng() % 6), static_cast<int32_t>(rng() % 6)});
      neg.insert({static_cast<int32_t>(rng() % 6), 6 + static_cast<int32_t>(rng() % 6)});
    }
    Task t;
    t.type_names = {"item"};
    t.background.push_back({"sameCat", {0, 0}, table_of(same, 2)});
    t.target = {"t", {0, 0}, {}};
    t.pos = table_of(pos, 2);
    t.neg = table_of(neg, 2);
    SearchOptions o;
    o.recursion = true;
    const std::vector<LearnedRule> theory = learn_rules(*eng, t, o);
    EXPECT_TRUE(theory.empty()) << eng->name() << ":\n" << theory_text(theory);
    expect_sound(t, theory, 12);
  }
  Clause taut;
  taut.var_types = {0, 0};
  taut.body = {{kTarget, {Arg{0, 0}, Arg{1, 0}}}};
  EXPECT_TRUE(is_tautology(taut, 2));
  taut.body[0].args = {Arg{1, 0}, Arg{0, 0}};
  EXPECT_FALSE(is_tautology(taut, 2));
}

// Clauses equal up to the order of their literals and the names of their
// non-head variables are one candidate, and a rule of the theory is not
// found again under other names.
TEST(RulesSearch, ClausesEqualUpToRenamingAreOne) {
  auto lit = [](int pred, std::vector<int> vars) {
    Literal l;
    l.pred = pred;
    for (int v : vars) l.args.push_back(Arg{v, 0});
    return l;
  };
  Clause a, b, c;
  a.var_types = b.var_types = c.var_types = {0, 0, 0, 0};
  a.body = {lit(0, {0, 2}), lit(1, {2, 3}), lit(0, {3, 1})};  // p(A, C), q(C, D), p(D, B)
  b.body = {lit(0, {3, 1}), lit(0, {0, 2}), lit(1, {2, 3})};  // the same, reordered
  c.body = {lit(0, {0, 3}), lit(1, {3, 2}), lit(0, {2, 1})};  // the same, C and D swapped
  EXPECT_EQ(Refiner::key(a, 2), Refiner::key(b, 2));
  EXPECT_EQ(Refiner::key(a, 2), Refiner::key(c, 2));
  Clause d = a;
  d.body[1] = lit(1, {3, 2});  // q(D, C): another clause
  EXPECT_NE(Refiner::key(a, 2), Refiner::key(d, 2));
  Clause e = a;
  e.body[0] = lit(0, {2, 0});  // p(C, A): another clause
  EXPECT_NE(Refiner::key(a, 2), Refiner::key(e, 2));
}

TEST(RulesSearch, RefusesBadOptions) {
  auto eng = gpu::make_cpu_engine();
  std::mt19937 rng(1);
  Task t = random_task(rng);
  SearchOptions o;
  o.max_vars = 1;
  EXPECT_THROW(learn_rules(*eng, t, o), TaskError);
  o = SearchOptions{};
  o.beam = 0;
  EXPECT_THROW(learn_rules(*eng, t, o), TaskError);
}

TEST(RulesSearch, NoRuleWhenNoneMeetsTheNoiseBound) {
  auto eng = gpu::make_cpu_engine();
  Task t;
  t.type_names = {"n"};
  t.background.push_back({"p", {0}, table_of({{1}, {2}, {3}, {4}}, 1)});
  t.target = {"goal", {0}, {}};
  t.pos = table_of({{1}, {2}}, 1);
  t.neg = table_of({{3}, {4}}, 1);  // p holds for both: no clause separates them
  SearchOptions o;
  o.max_constants = 0;
  EXPECT_TRUE(learn_rules(*eng, t, o).empty());
}

}  // namespace
}  // namespace mln::rules

namespace mln::rules {
namespace {

// An MLN over people with known clauses and weights:
//   -1.0  cancer(x)
//    2.5  smokes(x) => cancer(x)
//   -2.0  exercises(x) => cancer(x)
//    0.0  friends(x, y) ^ smokes(y) => cancer(x)   (friends carry no signal)
// Each person's cancer drawn from its conditional probability given the
// evidence; WPLL learning must find the two clauses with their signs and
// weights near the true ones, and nothing about friends.
TEST(RulesWpll, RecoversThePlantedClausesAndTheSignsOfTheirWeights) {
  for (auto& eng : ground::test::engines()) {
    std::mt19937 rng(17);
    const int32_t n = 3000;
    Set smokes, exercises, friends, pos, neg;
    std::uniform_real_distribution<double> u(0, 1);
    for (int32_t p = 0; p < n; ++p) {
      if (u(rng) < 0.4) smokes.insert({p});
      if (u(rng) < 0.4) exercises.insert({p});
      const int nf = static_cast<int>(rng() % 6);
      for (int k = 0; k < nf; ++k) friends.insert({p, static_cast<int32_t>(rng() % n)});
    }
    for (int32_t p = 0; p < n; ++p) {
      const double z = -1.0 + 2.5 * smokes.count({p}) - 2.0 * exercises.count({p});
      (u(rng) < 1 / (1 + std::exp(-z)) ? pos : neg).insert({p});
    }
    Task t;
    t.type_names = {"person"};
    t.background = {{"smokes", {0}, table_of(smokes, 1)},
                    {"exercises", {0}, table_of(exercises, 1)},
                    {"friends", {0, 0}, table_of(friends, 2)}};
    t.target = {"cancer", {0}, {}};
    t.pos = table_of(pos, 1);
    t.neg = table_of(neg, 1);
    SearchOptions o;
    o.wpll = true;
    o.max_body = 2;
    std::vector<LearnedRule> th = learn_mln_rules(*eng, t, o);
    std::string text;
    for (const LearnedRule& r : th) text += r.text + "\n";
    ASSERT_EQ(th.size(), 3u) << eng->name() << ":\n" << text;
    EXPECT_NEAR(th[0].weight, -1.0, 0.3) << text;  // the unit clause
    std::map<std::string, double> w;
    for (size_t i = 1; i < th.size(); ++i) {
      ASSERT_EQ(th[i].clause.body.size(), 1u) << text;
      w[t.background[static_cast<size_t>(th[i].clause.body[0].pred)].name] = th[i].weight;
    }
    ASSERT_EQ(w.count("smokes"), 1u) << text;
    ASSERT_EQ(w.count("exercises"), 1u) << text;
    EXPECT_NEAR(w["smokes"], 2.5, 0.4) << text;
    EXPECT_NEAR(w["exercises"], -2.0, 0.4) << text;
    EXPECT_EQ(th[1].text.substr(th[1].text.find(' ') + 1).find("=> cancer(a)") != std::string::npos, true) << text;
  }
}

// The fitted weights are the maximum of the penalised log-likelihood: on a
// model with the chosen clauses, no small move of any weight does better.
TEST(RulesWpll, WeightsAreTheLikelihoodsMaximum) {
  auto eng = gpu::make_cpu_engine();
  std::mt19937 rng(23);
  Set a, b, pos, neg;
  std::uniform_real_distribution<double> u(0, 1);
  for (int32_t p = 0; p < 800; ++p) {
    if (u(rng) < 0.5) a.insert({p});
    if (u(rng) < 0.3) b.insert({p});
    const double z = 0.5 + 1.5 * a.count({p}) - 1.0 * b.count({p});
    (u(rng) < 1 / (1 + std::exp(-z)) ? pos : neg).insert({p});
  }
  Task t;
  t.type_names = {"n"};
  t.background = {{"a", {0}, table_of(a, 1)}, {"b", {0}, table_of(b, 1)}};
  t.target = {"goal", {0}, {}};
  t.pos = table_of(pos, 1);
  t.neg = table_of(neg, 1);
  SearchOptions o;
  o.wpll = true;
  o.max_body = 1;
  o.l2 = 0.5;
  std::vector<LearnedRule> th = learn_mln_rules(*eng, t, o);
  ASSERT_EQ(th.size(), 3u);
  // The penalised log-likelihood, computed here from the data directly.
  auto pll = [&](const std::vector<double>& w) {
    double ll = 0;
    for (int32_t p = 0; p < 800; ++p) {
      double z = w[0];
      for (size_t i = 1; i < th.size(); ++i)
        z += w[i] * (t.background[static_cast<size_t>(th[i].clause.body[0].pred)].name == "a" ? a.count({p}) : b.count({p}));
      ll += pos.count({p}) ? -std::log1p(std::exp(-z)) : -std::log1p(std::exp(z));
    }
    for (size_t i = 1; i < w.size(); ++i) ll -= 0.5 * o.l2 * w[i] * w[i];
    return ll;
  };
  std::vector<double> w;
  for (const LearnedRule& r : th) w.push_back(r.weight);
  const double at = pll(w);
  for (size_t i = 0; i < w.size(); ++i)
    for (double d : {-1e-2, 1e-2}) {
      std::vector<double> w2 = w;
      w2[i] += d;
      EXPECT_LE(pll(w2), at + 1e-9) << "weight " << i << " moved by " << d;
    }
}

}  // namespace
}  // namespace mln::rules
