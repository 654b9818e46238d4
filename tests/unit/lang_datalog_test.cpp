// The Datalog front end: parsing, directives, safety, stratification and
// types, with every error's kind, line and column.
#include <gtest/gtest.h>

#include "lang/datalog.hpp"

namespace mln::lang::datalog {
namespace {

using K = LangError::Kind;

struct Want {
  K kind;
  int line, col;
  std::string in_message;
};

void expect_error(const std::string& text, const Want& want, bool types = false) {
  SCOPED_TRACE(text);
  try {
    Program p = parse(text);
    if (types) {
      for (Relation& r : p.rels)
        if (r.input)
          for (ColType& t : r.types)
            if (t == ColType::Unknown) t = ColType::Int;
      infer_types(p);
    }
    ADD_FAILURE() << "no error";
  } catch (const LangError& e) {
    EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(want.kind)) << e.where_what();
    EXPECT_EQ(e.line(), want.line) << e.where_what();
    EXPECT_EQ(e.col(), want.col) << e.where_what();
    EXPECT_NE(std::string(e.what()).find(want.in_message), std::string::npos) << e.what();
  }
}

TEST(Datalog, ParsesRulesAndStrata) {
  Program p = parse(
      "// transitive closure, then the pairs it misses\n"
      ".input edge(a int, b int) from public.edges(src, dst)\n"
      "tc(X, Y) :- edge(X, Y).\n"
      "tc(X, Y) :- tc(X, Z), edge(Z, Y).\n"
      "node(X) :- edge(X, _). node(Y) :- edge(_, Y).\n"
      "gap(X, Y) :- node(X), node(Y), !tc(X, Y), X != Y.\n");
  ASSERT_EQ(p.rules.size(), 5u);
  const int edge = p.find("edge"), tc = p.find("tc"), gap = p.find("gap");
  ASSERT_GE(edge, 0);
  EXPECT_TRUE(p.rels[edge].input);
  EXPECT_EQ(p.rels[edge].source.schema, "public");
  EXPECT_EQ(p.rels[edge].source.table, "edges");
  EXPECT_EQ(p.rels[edge].source.columns, (std::vector<std::string>{"src", "dst"}));
  EXPECT_EQ(p.rels[edge].cols, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(p.rels[tc].derived);
  // tc and node before gap, each its own stratum.
  ASSERT_EQ(p.strata.size(), 3u);
  EXPECT_EQ(p.strata.back(), std::vector<int>{gap});
  infer_types(p);
  EXPECT_EQ(p.rels[gap].types, (std::vector<ColType>{ColType::Int, ColType::Int}));
}

TEST(Datalog, ExpressionsAndAssignments) {
  Program p = parse("q(1). p(X, Y) :- q(X), Y = X*2 - -3, Y % 2 = 1, X-1 >= 0.");
  const Rule& r = p.rules[1];
  ASSERT_EQ(r.cmps.size(), 3u);
  EXPECT_EQ(r.cmps[0].assigns, 1);  // Y
  EXPECT_EQ(r.cmps[0].lhs.op, '-');
  EXPECT_EQ(r.cmps[1].assigns, -1);
  EXPECT_EQ(r.cmps[2].op, Cmp::Ge);
}

TEST(Datalog, MutualRecursionIsOneStratum) {
  Program p = parse("e(1,2). a(X) :- e(X,_). a(X) :- b(X). b(Y) :- a(X), e(X,Y).");
  // e (facts) first, then {a, b} together.
  ASSERT_EQ(p.strata.size(), 2u);
  EXPECT_EQ(p.strata[1].size(), 2u);
}

TEST(Datalog, TextConstantsAndTypes) {
  Program p = parse("p(\"a\", 1). p('b', 2). q(X) :- p(X, N), N > 1, X != \"a\".");
  infer_types(p);
  EXPECT_EQ(p.rels[p.find("q")].types, std::vector<ColType>{ColType::Text});
  Symbols s;
  encode_constants(p, s);
  EXPECT_EQ(s.size(), 2u);
  EXPECT_EQ(s.text(static_cast<int32_t>(p.rules[1].head.args[0].ival)), "b");
}

TEST(Datalog, Errors) {
  expect_error("p(X) :- q(X)", {K::Syntax, 1, 13, "expected \".\""});
  expect_error("p(X) :- q(X).\np(X) :-\n  q(X) & r(X).", {K::Syntax, 3, 8, "at or near \"&\""});
  expect_error("p(X) :- q(X, 1.", {K::Syntax, 1, 15, "at or near \".\""});
  expect_error("p(\"abc) :- q(X).", {K::Syntax, 1, 3, "unterminated string"});
  expect_error("p(X) :- q(X).\np(X, Y) :- q(X).", {K::ArityMismatch, 2, 1, "has 1 argument(s) (line 1), not 2"});
  expect_error("p(X) :- q(X), r(X + 1).", {K::Syntax, 1, 19, "arithmetic is not allowed inside an atom"});
  expect_error("p(9999999999).", {K::BadValue, 1, 3, "out of range"});
  expect_error("p() :- q(1).", {K::ArityMismatch, 1, 1, "no arguments"});
  expect_error("", {K::EmptyProgram, 1, 1, "no rules"});
  expect_error(".input e(a int)\ne(1).", {K::DuplicateDeclaration, 1, 8, "declared .input and also derived"});
  expect_error(".decl e(a int)\n.decl e(b int)\ne(1).", {K::DuplicateDeclaration, 2, 7, "declared twice"});
  expect_error(".decl p(a float)\np(1).", {K::Syntax, 1, 11, "column types are int"});
}

TEST(Datalog, SafetyErrors) {
  expect_error("p(X, Y) :- q(X).", {K::UnsafeVariable, 1, 6, "variable \"Y\" in the head"});
  expect_error("p(X) :- q(X),\n  !r(X, Z).", {K::UnsafeVariable, 2, 9, "variable \"Z\" in a negated atom"});
  expect_error("p(X) :- q(X), Y > X.", {K::UnsafeVariable, 1, 15, "variable \"Y\" in a comparison"});
  expect_error("p(X) :- q(X), Y = Z.", {K::UnsafeVariable, 1, 15, "variable \"Y\" in a comparison"});
  expect_error("p(_) :- q(X).", {K::UnsafeVariable, 1, 3, "_ cannot appear"});
  expect_error("p(X) :- !q(X).", {K::UnsafeVariable, 1, 12, "in a negated atom"});
  // Bound through an assignment chain: no error.
  EXPECT_NO_THROW(parse("p(X, Z) :- q(X), Z = Y * 2, Y = X + 1."));
  EXPECT_NO_THROW(parse("p(X, _x) :- q(X), !r(X, _), _x = 3."));
}

TEST(Datalog, UnstratifiableNamesTheCycle) {
  expect_error("p(X) :- q(X), !p(X).", {K::BadValue, 1, 16, "cycle p -> !p"});
  expect_error("a(X) :- e(X), !b(X).\nb(X) :- c(X).\nc(X) :- a(X).",
               {K::BadValue, 1, 16, "cycle a -> !b -> c -> a"});
  // Negation of a lower stratum is fine.
  EXPECT_NO_THROW(parse("a(X) :- e(X), !b(X).\nb(X) :- c(X).\nc(X) :- e(X)."));
}

TEST(Datalog, TypeErrors) {
  expect_error("p(\"a\"). p(1).", {K::TypeClash, 1, 11, "used as integer here but as text"}, true);
  expect_error("p(\"a\"). q(X) :- p(X), X > 1.", {K::TypeClash, 1, 23, "\"X\" is used as integer here but as text"}, true);
  expect_error("p(\"a\"). q(Y) :- p(X), Y = X + 1.", {K::TypeClash, 1, 27, "used as integer here but as text"}, true);
  expect_error("p(\"a\"). p(\"b\"). q(X) :- p(X), p(Y), X < Y.", {K::TypeClash, 1, 37, "only with = and !="}, true);
}

TEST(Datalog, Aggregates) {
  Program p = parse("deg(X, count(Y)) :- edge(X, Y).\nstats(sum(W), min(W), max(W)) :- cost(_, W).\n"
                    "big(X) :- deg(X, N), N > 2.\nt(\"a\", 1). tc(count(S)) :- t(S, _).");
  const Rule& r = p.rules[0];
  EXPECT_TRUE(r.aggregates());
  EXPECT_FALSE(p.rules[2].aggregates());
  EXPECT_EQ(r.head.args[1].agg, Agg::Count);
  EXPECT_EQ(r.head.args[1].var, 1);  // Y
  EXPECT_EQ(p.rules[1].head.args[2].agg, Agg::Max);
  for (Relation& rel : p.rels)
    if (rel.input)
      for (ColType& t : rel.types) t = ColType::Int;
  infer_types(p);
  EXPECT_EQ(p.rels[p.find("tc")].types, std::vector<ColType>{ColType::Int});  // count over text: an integer
  // deg is below big: the aggregate's relation in a lower stratum.
  auto stratum = [&](const char* n) {
    for (size_t s = 0; s < p.strata.size(); ++s)
      for (int rel : p.strata[s])
        if (p.rels[rel].name == n) return static_cast<int>(s);
    return -1;
  };
  EXPECT_LT(stratum("deg"), stratum("big"));
}

TEST(Datalog, AggregateErrors) {
  // Through recursion: refused with the cycle named.
  expect_error("p(X, count(Y)) :- e(X, Y), p(Y, _).", {K::BadValue, 1, 28, "\"p\" is aggregated (count) inside its own recursion (cycle p -> count(p))"});
  expect_error("a(X, sum(N)) :- b(X, N).\nb(X, N) :- c(X, N).\nc(X, N) :- a(X, N).",
               {K::BadValue, 1, 17, "cycle a -> sum(b) -> c -> a"});
  // sum, min and max take integers; count anything.
  expect_error("n(\"a\", 1). s(sum(X)) :- n(X, _).", {K::TypeClash, 1, 14, "sum(X) over text"}, true);
  expect_error("n(\"a\", 1). s(Y, max(X)) :- n(X, Y).", {K::TypeClash, 1, 17, "max(X) over text"}, true);
  EXPECT_NO_THROW(parse("n(\"a\", 1). s(count(X)) :- n(X, _)."));
  // Only in a head, over a bound variable.
  expect_error("p(X) :- q(X, count(Y)).", {K::Syntax, 1, 14, "aggregates appear only in a rule's head"});
  expect_error("p(X, N) :- q(X, Y), N = count(Y).", {K::Syntax, 1, 25, "aggregates appear only in a rule's head"});
  expect_error("p(X, count(_)) :- q(X, Y).", {K::Syntax, 1, 12, "expected a variable"});
  expect_error("p(X, sum(Z)) :- q(X, Y).", {K::UnsafeVariable, 1, 6, "variable \"Z\" in the head"});
  // A column that is text in one rule and an aggregate in another.
  expect_error("p(\"a\"). p(count(X)) :- q(X).", {K::TypeClash, 1, 11, "used as integer here but as text"}, true);
}

// Hostile input (issue #59): nesting and expression size are bounded with
// an error at the place they pass the limit (10,000 parentheses crashed the
// backend), and stratification walks a dependency chain of any length
// without recursion.
TEST(Datalog, DeepAndLongInputsAreRefusedWhereTheyPassTheLimit) {
  const std::string head = "q(1). p(Y) :- q(X), Y = ";
  expect_error(head + std::string(10000, '(') + "X" + std::string(10000, ')') + ".",
               {K::Syntax, 1, static_cast<int>(head.size()) + 201, "nesting deeper than 200 levels"});
  expect_error(head + std::string(100000, '-') + "X.",
               {K::Syntax, 1, static_cast<int>(head.size()) + 201, "nesting deeper than 200 levels"});
  std::string sum = head + "X";
  for (int i = 0; i < 2000; ++i) sum += " + X";
  expect_error(sum + ".", {K::Syntax, 1, static_cast<int>(head.size()) + 1 + 4 * 1000, "more than 1000 terms"});
  // Within the limits: parsed.
  EXPECT_NO_THROW(parse(head + std::string(150, '(') + "X" + std::string(150, ')') + "."));
  std::string chain = "p0(1).\n";
  for (int i = 0; i < 200000; ++i) chain += "p" + std::to_string(i + 1) + "(X) :- p" + std::to_string(i) + "(X).\n";
  const Program p = parse(chain);
  EXPECT_EQ(p.rels.size(), 200001u);
}

}  // namespace
}  // namespace mln::lang::datalog
