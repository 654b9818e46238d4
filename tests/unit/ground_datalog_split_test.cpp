// Datalog rules evaluated in pieces (docs/datalog.md, "Large joins"): with
// a split threshold of a few rows (EvalOptions::split_rows), every join past
// it is counted by the engine and the rule's rest runs on slices of one side.
// The results must equal those without pieces and the naive reference's
// (datalog_reference.hpp), on random programs (recursion, negation,
// comparisons, arithmetic, aggregates) and on same generation over a graph
// with hubs; a counting engine shows that pieces really ran.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

#include "datalog_reference.hpp"

namespace mln::ground::datalog {
namespace {

using namespace reference;

// The CPU engine, counting the joins the engine refused to materialise (past
// the cap) and the slices taken.
class CountingEngine final : public gpu::Engine {
 public:
  int over_cap = 0, slices = 0;
  gpu::Backend backend() const override { return e_->backend(); }
  std::string name() const override { return "counting " + e_->name(); }
  size_t peak_memory_bytes() const override { return e_->peak_memory_bytes(); }
  void reset_peak_memory() override { e_->reset_peak_memory(); }
  void release_cached_memory() override { e_->release_cached_memory(); }
  size_t memory_budget_bytes() override { return e_->memory_budget_bytes(); }
  size_t host_memory_limit_bytes() const override { return e_->host_memory_limit_bytes(); }
  void poll_cancel() const override { e_->poll_cancel(); }
  gpu::Relation upload(const gpu::HostTable& t) override { return e_->upload(t); }
  gpu::HostTable download(const gpu::Relation& r) override { return e_->download(r); }
  void download_rows(const gpu::Relation& r, size_t row0, size_t n, int32_t* const* dst) override {
    e_->download_rows(r, row0, n, dst);
  }
  gpu::Relation empty(int ncols) override { return e_->empty(ncols); }
  gpu::Relation slice(const gpu::Relation& r, size_t row0, size_t n) override {
    ++slices;
    return e_->slice(r, row0, n);
  }
  gpu::Relation select(const gpu::Relation& in, const std::vector<gpu::Predicate>& p) override {
    return e_->select(in, p);
  }
  gpu::Relation project(const gpu::Relation& in, const std::vector<int>& cols) override {
    return e_->project(in, cols);
  }
  gpu::Relation join(const gpu::Relation& l, const gpu::Relation& r, const std::vector<int>& lk,
                     const std::vector<int>& rk, const std::vector<gpu::OutCol>& out) override {
    return e_->join(l, r, lk, rk, out);
  }
  gpu::Relation join_at_most(const gpu::Relation& l, const gpu::Relation& r, const std::vector<int>& lk,
                             const std::vector<int>& rk, const std::vector<gpu::OutCol>& out, size_t max_rows,
                             size_t* rows) override {
    gpu::Relation res = e_->join_at_most(l, r, lk, rk, out, max_rows, rows);
    over_cap += res.impl() ? 0 : 1;
    return res;
  }
  gpu::Relation semi_join(const gpu::Relation& l, const gpu::Relation& r, const std::vector<int>& lk,
                          const std::vector<int>& rk) override {
    return e_->semi_join(l, r, lk, rk);
  }
  gpu::Relation anti_join(const gpu::Relation& l, const gpu::Relation& r, const std::vector<int>& lk,
                          const std::vector<int>& rk) override {
    return e_->anti_join(l, r, lk, rk);
  }
  gpu::Relation union_all(const gpu::Relation& a, const gpu::Relation& b) override { return e_->union_all(a, b); }
  gpu::Relation distinct(const gpu::Relation& in) override { return e_->distinct(in); }
  gpu::Relation difference(const gpu::Relation& a, const gpu::Relation& b) override {
    return e_->difference(a, b);
  }

 private:
  std::unique_ptr<gpu::Engine> e_ = gpu::make_cpu_engine();
};

// Edges of a small power-law-like graph: a few hubs with many children
// (their pairs dominate same generation's first join) and random edges.
Set graph_with_hubs(std::mt19937& rng) {
  Set e = random_rel(rng, 2, 120, 60);
  for (int hub = 0; hub < 3; ++hub)
    for (int c = 0; c < 25 - 6 * hub; ++c) e.insert({hub, 10 + (c * 7 + hub) % 50});
  return e;
}

const char* kSameGeneration =
    "sg(X,Y) :- e(P,X), e(P,Y), X != Y.\n"
    "sg(X,Y) :- e(A,X), sg(A,B), e(B,Y), X != Y.";

TEST(DatalogSplit, SameGenerationInPiecesEqualsWhole) {
  std::mt19937 rng(5);
  const Set e = graph_with_hubs(rng);
  CountingEngine counting;
  auto got = check(kSameGeneration, {{"e", e}}, {0, 2, 40}, &counting);
  EXPECT_GT(got["sg"].size(), 1000u);
  // Both thresholds split joins on the counting engine.
  EXPECT_GT(counting.over_cap, 3);
  EXPECT_GT(counting.slices, 100);
}

// Joins chained after a split join, negation, a cross product, constants in
// the head, assignments and aggregates over pieces (their bindings merged
// before grouping).
TEST(DatalogSplit, ChainsNegationCrossProductsAndAggregates) {
  std::mt19937 rng(9);
  const Set e = graph_with_hubs(rng);
  const Set a = random_rel(rng, 1, 12, 40), b = random_rel(rng, 1, 9, 40);
  CountingEngine counting;
  check("path3(X, W) :- e(X, Y), e(Y, Z), e(Z, W), !e(X, W).\n"
        "pairs(X, Y, 7) :- a(X), b(Y), X < Y.\n"
        "sib(X, Y, S) :- e(P, X), e(P, Y), S = (X + Y) % 5, S != 1.\n"
        "deg2(X, count(Y), max(Y)) :- e(P, X), e(P, Y), X != Y.\n"
        "tot(sum(X), count(W)) :- e(X, Y), e(Y, Z), e(Z, W).",
        {{"e", e}, {"a", a}, {"b", b}}, {0, 1, 2, 7, 100}, &counting);
  EXPECT_GT(counting.over_cap, 5);
}

// max_rows keeps its meaning: it bounds a whole join's output even where
// the join runs in pieces that each fit.
TEST(DatalogSplit, MaxRowsStillBoundsTheWholeJoin) {
  std::mt19937 rng(5);
  const Set e = graph_with_hubs(rng);
  dl::Program p = dl::parse(kSameGeneration);
  for (auto& rel : p.rels)
    if (rel.input) rel.types.assign(rel.arity, dl::ColType::Int);
  dl::infer_types(p);
  std::map<int32_t, uint64_t> out_degree;
  for (const Tuple& t : e) ++out_degree[t[0]];
  uint64_t pairs = 0;  // e(P,X), e(P,Y): the first join's rows
  for (const auto& [node, d] : out_degree) pairs += d * d;
  auto eng = gpu::make_cpu_engine();
  std::vector<gpu::Relation> in(p.rels.size());
  for (size_t r = 0; r < p.rels.size(); ++r)
    if (p.rels[r].input) in[r] = eng->upload(to_table(e, 2));
  EvalOptions o;
  o.split_rows = 4;
  o.max_rows = pairs - 1;
  EXPECT_THROW(evaluate(*eng, p, in, o), LimitExceeded);
  o.max_rows = 0;
  EXPECT_NO_THROW(evaluate(*eng, p, in, o));
}

// The random programs of ground_datalog_test.cpp, in pieces of 1, 2 and 5
// rows, against the reference and the whole evaluation.
TEST(DatalogSplit, RandomProgramsInPiecesMatchTheReference) {
  std::mt19937 rng(20240541);
  CountingEngine counting;
  int checked = 0;
  for (int trial = 0; trial < 250; ++trial) {
    const std::string text = random_program(rng);
    std::map<std::string, Set> in = {{"e0", random_rel(rng, 2, 1 + trial % 25, 8)},
                                     {"e1", random_rel(rng, 2, 1 + trial % 17, 8)},
                                     {"e2", random_rel(rng, 1, 1 + trial % 5, 8)}};
    try {
      dl::parse(text);
    } catch (const lang::LangError&) {
      continue;  // as in ground_datalog_test.cpp
    }
    check(text, in, {0, 1, 2, 5}, &counting);
    ++checked;
    if (HasFailure()) break;
  }
  EXPECT_GE(checked, 180);
  EXPECT_GT(counting.over_cap, 1000);
}

}  // namespace
}  // namespace mln::ground::datalog
