// Parser tests: declarations, rules, weights, conditions, labels, Datalog
// and scoping rules, lexical details (Tuffy §2.1-§2.5, §2.7).
#include <gtest/gtest.h>

#include <cmath>

#include "lang/program.hpp"
#include "format/network.hpp"

namespace mln::lang {
namespace {

// Texts of all clauses, in program order.
std::vector<std::string> texts(const Program& p) {
  std::vector<std::string> out;
  for (const Clause& c : p.clauses) out.push_back(c.text);
  return out;
}

TEST(LangParse, DeclarationsWithPrefixesNamesAndMarkers) {
  Program p = parse_program(
      "*Friends(person, person)\n"
      "**Known(person)\n"
      "+@Foo*(person who, paper what!)\n"
      "Label(doc, cls!)\n"
      "Wt(person, float_)\n"
      "Cnt(int_ n, double_)\n"
      "1 Known(x)\n");
  ASSERT_EQ(p.preds.size(), 6u);
  const PredicateDecl& f = p.preds[0];
  EXPECT_EQ(f.name, "Friends");
  EXPECT_TRUE(f.closed_world);
  EXPECT_FALSE(f.completely_specified);
  EXPECT_EQ(f.arg_names, (std::vector<std::string>{"person1", "person2"}));
  EXPECT_EQ(f.pos.line, 1);
  EXPECT_EQ(f.pos.col, 1);
  EXPECT_TRUE(p.preds[1].completely_specified);
  EXPECT_FALSE(p.preds[1].closed_world);
  const PredicateDecl& foo = p.preds[2];
  EXPECT_EQ(foo.name, "Foo");
  EXPECT_FALSE(foo.closed_world);  // '+', '@' and a '*' suffix are ignored
  EXPECT_EQ(foo.arg_types, (std::vector<std::string>{"person", "paper"}));
  EXPECT_EQ(foo.arg_names, (std::vector<std::string>{"who", "what"}));
  EXPECT_EQ(foo.dependent, (std::vector<bool>{false, true}));
  EXPECT_TRUE(foo.has_key_constraint());
  EXPECT_TRUE(p.preds[3].has_key_constraint());
  EXPECT_EQ(p.preds[4].arg_kinds, (std::vector<TypeKind>{TypeKind::Symbol, TypeKind::Float}));
  EXPECT_EQ(p.preds[5].arg_kinds, (std::vector<TypeKind>{TypeKind::Int, TypeKind::Float}));
  EXPECT_EQ(p.preds[5].arg_names, (std::vector<std::string>{"n", "double_2"}));
}

TEST(LangParse, FunctionalDependencyIsAWarning) {
  Program p = parse_program("P(t a, t b)\nFD: a -> b; a, b -> a\nFUNCTIONAL DEPENDENCY: a -> b\n1 P(x,y)\n");
  ASSERT_EQ(p.warnings.size(), 2u);
  EXPECT_NE(p.warnings[0].find("FD is still in development"), std::string::npos);
  EXPECT_EQ(p.clauses.size(), 1u);
}

TEST(LangParse, SoftHardFixedNegativeAndSignedWeights) {
  Program p = parse_program(
      "P(t)\nQ(t)\n"
      "0.5 !P(a1) v Q(a1)\n"
      "@1.5 P(x) v Q(x)\n"
      "-2 Q(x)\n"
      "+2 P(x)\n"
      "P(A).\n"
      "1e1 !Q(x) v !P(x)\n");
  ASSERT_EQ(p.clauses.size(), 6u);
  EXPECT_EQ(p.clauses[0].text, "!P(a1) v Q(a1)");
  EXPECT_DOUBLE_EQ(p.clauses[0].weight, 0.5);
  EXPECT_FALSE(p.clauses[0].hard);
  EXPECT_DOUBLE_EQ(p.clauses[1].weight, 1.5);
  EXPECT_DOUBLE_EQ(p.clauses[2].weight, -2);
  EXPECT_DOUBLE_EQ(p.clauses[3].weight, 2);
  EXPECT_TRUE(p.clauses[4].hard);
  EXPECT_DOUBLE_EQ(p.clauses[4].weight, kHardWeight);
  EXPECT_EQ(p.clauses[4].text, "P(A)");
  EXPECT_EQ(p.clauses[4].lits[0].args[0].kind, Term::Kind::Constant);
  EXPECT_DOUBLE_EQ(p.clauses[5].weight, 10);
  EXPECT_EQ(p.clauses[0].pos.line, 3);
  EXPECT_EQ(p.clauses[0].lits[1].pos.line, 3);
  EXPECT_EQ(p.clauses[0].lits[1].pos.col, 14);
}

TEST(LangParse, EmbeddedWeight) {
  Program p = parse_program("Wt(person, float_)\nS(person)\nw: Wt(x, w) => S(x)\n");
  ASSERT_EQ(p.clauses.size(), 1u);
  EXPECT_EQ(p.clauses[0].weight_var, "w");
  EXPECT_EQ(p.clauses[0].text, "!Wt(x,w) v S(x)");
  EXPECT_EQ(format_clause(p.clauses[0]), "w: !Wt(x,w) v S(x)");
}

TEST(LangParse, ExistPrefix) {
  Program p = parse_program("Student(p)\nPub(p, q)\n1.2 EXIST y, z !Student(x) v Pub(x,y) v Pub(x,z)\n");
  ASSERT_EQ(p.clauses.size(), 1u);
  EXPECT_EQ(p.clauses[0].exist_vars, (std::vector<std::string>{"y", "z"}));
  EXPECT_EQ(p.clauses[0].text, "EXIST y, z !Student(x) v Pub(x,y) v Pub(x,z)");
}

TEST(LangParse, ImplicationKeepsBodyThenHeadOrder) {
  Program p = parse_program("F(t,t)\nS(t)\nC(t)\n0.4 F(x,y), S(x) => S(y) v C(y)\n");
  ASSERT_EQ(p.clauses.size(), 1u);
  EXPECT_EQ(p.clauses[0].text, "!F(x,y) v !S(x) v S(y) v C(y)");
  EXPECT_TRUE(p.clauses[0].conditions.empty());
}

TEST(LangParse, BodyConditionsAsIsHeadConditionsNegated) {
  Program p = parse_program("F(t,t)\nS(t)\n1 F(x,y), [x != y] => S(y)\n1 F(x,y) => S(x) v x = y\n");
  ASSERT_EQ(p.clauses.size(), 2u);
  ASSERT_EQ(p.clauses[0].conditions.size(), 1u);
  const Expr& c0 = p.clauses[0].conditions[0];
  EXPECT_EQ(c0.kind, Expr::Kind::Binary);
  EXPECT_EQ(c0.text, "!=");
  EXPECT_EQ(c0.args[0].kind, Expr::Kind::Var);
  EXPECT_EQ(c0.args[0].text, "x");
  // The head disjunct "x = y" is stored negated: ground only where x != y.
  ASSERT_EQ(p.clauses[1].conditions.size(), 1u);
  EXPECT_EQ(p.clauses[1].conditions[0].text, "!=");
  EXPECT_EQ(format_expr(p.clauses[1].conditions[0]), "x != y");
  EXPECT_EQ(p.clauses[1].text, "!F(x,y) v S(x) v [x = y]");
}

TEST(LangParse, BareComparisonsArithmeticAndPrecedence) {
  Program p = parse_program("Age(t, int_)\nOld(t)\n1 Age(x, a), a + 2 * 3 > 10 % 4 => Old(x)\n");
  ASSERT_EQ(p.clauses[0].conditions.size(), 1u);
  const Expr& e = p.clauses[0].conditions[0];
  EXPECT_EQ(e.text, ">");
  EXPECT_EQ(e.args[0].text, "+");
  EXPECT_EQ(e.args[0].args[1].text, "*");
  EXPECT_EQ(e.args[1].text, "%");
  EXPECT_EQ(format_expr(e), "(a + (2 * 3)) > (10 % 4)");
}

TEST(LangParse, BracketedBooleanExpressionsAndBuiltins) {
  Program p = parse_program(
      "Name(t, s)\nP(t)\n"
      "1 Name(x, n), [contains(n, \"foo\") && startsWith(n, \"f\") || NOT (n = \"bar\") AND length(n) > 3] => P(x)\n"
      "1 Name(x, n), [~len(n) << 1 >= abs(-2) ^ 3 | 1 & 2 >> 1 && 3! = 6 && n <> Bob] => P(x)\n");
  ASSERT_EQ(p.clauses.size(), 2u);
  const Expr& e = p.clauses[0].conditions[0];
  EXPECT_EQ(e.text, "||");
  EXPECT_EQ(e.args[0].text, "&&");
  EXPECT_EQ(e.args[0].args[0].kind, Expr::Kind::Call);
  EXPECT_EQ(e.args[0].args[0].text, "contains");
  EXPECT_EQ(e.args[0].args[1].text, "startswith");  // lower-cased
  EXPECT_EQ(e.args[1].text, "&&");
  EXPECT_EQ(e.args[1].args[0].text, "!");
  const Expr& f = p.clauses[1].conditions[0];
  EXPECT_EQ(f.text, "&&");
  // n <> Bob: "<>" reads as "!=", Bob is a constant string.
  EXPECT_EQ(f.args[1].text, "!=");
  EXPECT_EQ(f.args[1].args[1].kind, Expr::Kind::Str);
  EXPECT_EQ(f.args[1].args[1].text, "Bob");
  EXPECT_EQ(f.args[0].args[1].args[0].text, "fact");  // 3! = 6
}

TEST(LangParse, SignedNumberInsideBracketsIsAnOperator) {
  Program p = parse_program("Age(t, int_)\nOld(t)\n1 Age(x, a), [a -1 > 2] => Old(x)\n");
  EXPECT_EQ(format_expr(p.clauses[0].conditions[0]), "(a - 1) > 2");
}

TEST(LangParse, BareConditionDoesNotSwallowTheNextRuleWeight) {
  Program p = parse_program("Age(t, int_)\nOld(t)\n1 Old(x) v Age(x, a) v a > 3\n-2 Old(x)\n");
  ASSERT_EQ(p.clauses.size(), 2u);
  EXPECT_DOUBLE_EQ(p.clauses[1].weight, -2);
  EXPECT_EQ(format_expr(p.clauses[0].conditions[0]), "a <= 3");
}

TEST(LangParse, LabelsAttachToTheNextRuleOrStick) {
  Program p = parse_program(
      "P(t)\nQ(t)\nR(t)\nS(t)\n"
      "[Label] \"one\" 1 P(x)\n2 Q(x)\n"
      "[+Label] \"many\" 1 R(x)\n1 S(x)\n"
      "[Label+] \"other\" P(A).\n");
  ASSERT_EQ(p.clauses.size(), 5u);
  EXPECT_EQ(p.clauses[0].label, "one");
  EXPECT_EQ(p.clauses[1].label, "");
  EXPECT_EQ(p.clauses[2].label, "many");
  EXPECT_EQ(p.clauses[3].label, "many");
  EXPECT_EQ(p.clauses[4].label, "other");
}

TEST(LangParse, DatalogAndScopingRules) {
  Program p = parse_program(
      "F(t,t)\nG(t)\nK(t,t)\n*C(t)\n"
      "K(x,y) :- F(x,y), !G(x), x != y.\n"
      "@$ K(x,y) :- F(x,y).\n"
      "# +K(x,y) :- F(y,x), [x = y].\n"
      "$K(x,z) :- F(x,y), F(y,z).\n"
      "G(x) := F(x,y).\n"
      "[priorProb = 0.3] C(x) := F(x,x).\n");
  EXPECT_TRUE(p.clauses.empty());
  ASSERT_EQ(p.rules.size(), 6u);
  const Rule& r0 = p.rules[0];
  EXPECT_FALSE(r0.scoping);
  EXPECT_EQ(r0.prefix, 0);
  EXPECT_EQ(r0.head.pred, 2);
  ASSERT_EQ(r0.body.size(), 2u);
  EXPECT_TRUE(r0.body[0].positive);
  EXPECT_FALSE(r0.body[1].positive);
  ASSERT_EQ(r0.conditions.size(), 1u);
  EXPECT_EQ(r0.conditions[0].text, "!=");  // body conditions are kept as written
  EXPECT_TRUE(std::isnan(r0.prior));
  EXPECT_EQ(p.rules[1].prefix, '@');
  EXPECT_EQ(p.rules[2].prefix, '#');
  EXPECT_TRUE(p.rules[2].head_plus);
  EXPECT_EQ(p.rules[3].body.size(), 2u);
  EXPECT_TRUE(p.rules[4].scoping);
  EXPECT_TRUE(std::isnan(p.rules[4].prior));
  EXPECT_TRUE(p.rules[5].scoping);
  EXPECT_DOUBLE_EQ(p.rules[5].prior, 0.3);
  EXPECT_EQ(p.rules[5].pos.line, 10);
}

TEST(LangParse, StringsNumbersAndEscapesAreConstants) {
  Program p = parse_program(
      "P(t)\nN(int_)\n"
      "1 P(\"Anna\")\n1 P(Anna)\n"            // same constant: merged
      "1 P(\"a\\\"b\\u0041\\n\")\n"
      "1 N(-3)\n1 N(+4)\n1 N(\"7\")\n");
  ASSERT_EQ(p.clauses.size(), 5u);
  EXPECT_DOUBLE_EQ(p.clauses[0].weight, 2);
  EXPECT_EQ(p.clauses[0].text, "P(Anna)");
  EXPECT_EQ(p.clauses[1].lits[0].args[0].text, "a\"bA\n");
  EXPECT_EQ(p.clauses[1].text, "P(\"a\\\"bA\\n\")");
  EXPECT_TRUE(p.clauses[2].lits[0].args[0].is_number);
  EXPECT_EQ(p.clauses[2].lits[0].args[0].text, "-3");
  EXPECT_EQ(p.clauses[3].lits[0].args[0].text, "4");
  EXPECT_FALSE(p.clauses[4].lits[0].args[0].is_number);
}

TEST(LangParse, CommentsCaseConventionAndDashedNames) {
  Program p = parse_program(
      "// line comment\n/* block\n comment */ P(t-type)\n"
      "1 P(x-1) v P(Some-Thing) // trailing comment without a newline");
  ASSERT_EQ(p.clauses.size(), 1u);
  EXPECT_EQ(p.preds[0].arg_types[0], "t-type");
  const Literal& a = p.clauses[0].lits[0];
  EXPECT_EQ(a.args[0].text, "x-1");
  EXPECT_TRUE(a.args[0].is_var());
  EXPECT_EQ(p.clauses[0].lits[1].args[0].text, "Some-Thing");
  EXPECT_FALSE(p.clauses[0].lits[1].args[0].is_var());
  EXPECT_EQ(p.clauses[0].lits[1].pos.line, 4);
}

TEST(LangParse, SeveralFilesEachDeclareFirst) {
  Program p = parse_program("P(t)\n1 P(x)\n");
  parse_program_into(p, "Q(t)\n2 Q(x) v P(x)\n1 P(y)\n");
  ASSERT_EQ(p.preds.size(), 2u);
  ASSERT_EQ(p.clauses.size(), 2u);
  EXPECT_DOUBLE_EQ(p.clauses[0].weight, 2);  // merged across files
  EXPECT_EQ(p.clauses[1].text, "Q(x) v P(x)");
}

TEST(LangParse, PlusOnALiteralHasNoEffect) {
  Program p = parse_program("P(t)\nQ(t)\n1 +P(x) v !Q(x)\n");
  EXPECT_EQ(p.clauses[0].text, "P(x) v !Q(x)");
}

TEST(LangParse, RuleSpanningLinesAndNoRulesWarning) {
  Program p = parse_program("P(t)\nQ(t)\n1\n  P(x)\n  v\n  Q(x)\n");
  EXPECT_EQ(p.clauses[0].text, "P(x) v Q(x)");
  Program q = parse_program("P(t)\n");
  EXPECT_TRUE(q.clauses.empty());
  ASSERT_EQ(q.warnings.size(), 1u);
}

TEST(LangParse, TuffyModeRejectsAlchemySyntax) {
  ParseOptions tuffy;
  tuffy.alchemy = false;
  const char* decl = "P(t)\nQ(t)\n";
  for (const char* rule : {"1 P(x) ^ Q(x)\n", "1 P(x) <=> Q(x)\n", "1 !(P(x) v Q(x))\n",
                           "1 FORALL x P(x)\n", "1 P(x) v EXIST y Q(y)\n", "1 (P(x) v Q(x))\n"}) {
    EXPECT_THROW(parse_program(std::string(decl) + rule, tuffy), LangError) << rule;
    EXPECT_NO_THROW(parse_program(std::string(decl) + rule)) << rule;
  }
  EXPECT_NO_THROW(parse_program("P(t)\nQ(t,t)\n1 EXIST y P(x) v Q(x,y)\n", tuffy));
}

TEST(LangParse, LongClausesAndModerateNestingAreFine) {
  std::string rule = "1 P(x0)";
  for (int i = 1; i < 20000; ++i) rule += " v P(x" + std::to_string(i) + ")";
  Program p = parse_program("P(t)\n" + rule + "\n");
  ASSERT_EQ(p.clauses.size(), 1u);
  EXPECT_EQ(p.clauses[0].lits.size(), 20000u);
  std::string nested = "1 ";
  for (int i = 0; i < 40; ++i) nested += "(";
  nested += "P(x)";
  for (int i = 0; i < 40; ++i) nested += ")";
  EXPECT_EQ(parse_program("P(t)\n" + nested + "\n").clauses.size(), 1u);
}

TEST(LangParse, ConditionNegationFlipsEveryComparison) {
  Program p = parse_program(
      "N(t, int_)\nP(t)\n"
      "1 N(x,a) => P(x) v a = 1 v a != 2 v a < 3 v a <= 4 v a > 5 v a >= 6 v contains(x, \"q\")\n");
  std::vector<std::string> got;
  for (const Expr& e : p.clauses[0].conditions) got.push_back(format_expr(e));
  EXPECT_EQ(got, (std::vector<std::string>{"a != 1", "a = 2", "a >= 3", "a > 4", "a <= 5", "a < 6",
                                           "!(contains(x, \"q\"))"}));
}

}  // namespace
}  // namespace mln::lang
