// Every operator of the engine against the std::map/std::set reference, on
// random inputs of the boundary sizes, with duplicates and hot keys.
#include <gtest/gtest.h>

#include "gpu_test_util.hpp"

namespace mln::gpu::testing {
namespace {

class OpsTest : public BackendTest {};
MLN_BACKEND_SUITE(OpsTest);

TEST_P(OpsTest, UploadDownloadRoundTrip) {
  std::mt19937 rng(1);
  for (size_t n : kSizes) {
    HostTable t = random_table(rng, n, 3, 1000);
    Relation r = eng().upload(t);
    EXPECT_EQ(r.rows(), n);
    EXPECT_EQ(r.ncols(), 3);
    EXPECT_EQ(r.backend(), GetParam());
    HostTable back = eng().download(r);
    EXPECT_EQ(back.cols, t.cols) << "n=" << n;  // download keeps the uploaded order
  }
  Relation e = eng().empty(4);
  EXPECT_EQ(e.rows(), 0u);
  EXPECT_EQ(e.ncols(), 4);
  EXPECT_EQ(eng().download(e).ncols(), 4);
}

TEST_P(OpsTest, SelectEveryComparisonConstAndColumn) {
  std::mt19937 rng(2);
  const CmpOp ops[] = {CmpOp::EQ, CmpOp::NE, CmpOp::LT, CmpOp::LE, CmpOp::GT, CmpOp::GE};
  for (size_t n : kSizes) {
    HostTable t = random_table(rng, n, 3, 20, 0.2);
    Rows rows = to_rows(t);
    Relation r = eng().upload(t);
    for (CmpOp op : ops) {
      Predicate pc{0, op, false, 7, 0};
      EXPECT_EQ(fetch(eng(), eng().select(r, {pc})), ref_select(rows, {pc})) << "const n=" << n;
      Predicate pcol{1, op, true, 0, 2};
      EXPECT_EQ(fetch(eng(), eng().select(r, {pcol})), ref_select(rows, {pcol})) << "col n=" << n;
      std::vector<Predicate> both = {pc, pcol, Predicate{2, CmpOp::NE, false, 3, 0}};
      EXPECT_EQ(fetch(eng(), eng().select(r, both)), ref_select(rows, both)) << "conj n=" << n;
    }
    EXPECT_EQ(fetch(eng(), eng().select(r, {})), sorted(rows));  // no predicate keeps all rows
  }
}

TEST_P(OpsTest, SelectManyPredicatesBeyondOneGroup) {
  std::mt19937 rng(3);
  HostTable t = random_table(rng, 1025, 2, 40);
  std::vector<Predicate> preds;
  for (int k = 0; k < 11; ++k) preds.push_back(Predicate{k % 2, k % 3 ? CmpOp::GE : CmpOp::NE, false, k, 0});
  preds.push_back(Predicate{0, CmpOp::LT, false, 35, 0});
  Rows want = ref_select(to_rows(t), preds);
  ASSERT_FALSE(want.empty());
  EXPECT_EQ(fetch(eng(), eng().select(eng().upload(t), preds)), want);
}

TEST_P(OpsTest, ProjectReordersAndRepeatsColumns) {
  std::mt19937 rng(4);
  for (size_t n : kSizes) {
    HostTable t = random_table(rng, n, 3, 50);
    HostTable got = eng().download(eng().project(eng().upload(t), {2, 0, 2}));
    ASSERT_EQ(got.ncols(), 3);
    EXPECT_EQ(got.cols[0], t.cols[2]);
    EXPECT_EQ(got.cols[1], t.cols[0]);
    EXPECT_EQ(got.cols[2], t.cols[2]);
  }
}

TEST_P(OpsTest, JoinsAllSizePairsOneTwoThreeKeys) {
  join_all_size_pairs(eng(), 5);
}

TEST_P(OpsTest, JoinHotKeysAndNegativeValues) {
  std::mt19937 rng(6);
  HostTable lt = random_table(rng, 2000, 3, 500, 0.5);
  HostTable rt = random_table(rng, 1500, 3, 500, 0.5);
  for (auto& v : lt.cols[1]) v = -v;  // negative values must encode correctly
  for (auto& v : rt.cols[2]) v = -v;
  check_joins(eng(), lt, rt, {0}, {0}, "hot single key");
  check_joins(eng(), lt, rt, {0, 1}, {1, 2}, "hot two keys with negatives");
  check_joins(eng(), lt, rt, {1, 0, 0}, {2, 0, 1}, "hot three keys");
}

TEST_P(OpsTest, JoinWithoutKeysIsCrossProduct) {
  std::mt19937 rng(7);
  HostTable lt = random_table(rng, 33, 3, 9), rt = random_table(rng, 31, 3, 9);
  check_joins(eng(), lt, rt, {}, {}, "cross");
  EXPECT_EQ(eng().join(eng().upload(lt), eng().upload(rt), {}, {}, {{0, 0}}).rows(), 33u * 31u);
}

TEST_P(OpsTest, JoinEmptySidesKeepArity) {
  std::mt19937 rng(8);
  Relation some = eng().upload(random_table(rng, 100, 3, 10));
  Relation none = eng().empty(3);
  Relation j = eng().join(some, none, {0}, {0}, {{0, 1}, {1, 2}});
  EXPECT_EQ(j.rows(), 0u);
  EXPECT_EQ(j.ncols(), 2);
  EXPECT_EQ(eng().join(none, some, {0}, {0}, {{0, 1}}).ncols(), 1);
  EXPECT_EQ(eng().semi_join(some, none, {0}, {0}).rows(), 0u);
  EXPECT_EQ(eng().anti_join(some, none, {0}, {0}).rows(), 100u);
  EXPECT_EQ(eng().anti_join(none, some, {0}, {0}).ncols(), 3);
}

TEST_P(OpsTest, UnionAllConcatenates) {
  std::mt19937 rng(9);
  for (size_t n : kSizes) {
    HostTable a = random_table(rng, n, 2, 30), b = random_table(rng, n / 2 + 1, 2, 30);
    Rows want = to_rows(a);
    for (const Row& r : to_rows(b)) want.push_back(r);
    EXPECT_EQ(fetch(eng(), eng().union_all(eng().upload(a), eng().upload(b))), sorted(want)) << n;
  }
  EXPECT_EQ(eng().union_all(eng().empty(2), eng().empty(2)).rows(), 0u);
}

TEST_P(OpsTest, DistinctOneToFourColumns) {
  std::mt19937 rng(10);
  for (size_t n : kSizes) {
    for (int nc = 1; nc <= 4; ++nc) {
      HostTable t = random_table(rng, n, nc, nc == 1 ? 50 : 4, 0.3);
      EXPECT_EQ(fetch(eng(), eng().distinct(eng().upload(t))), ref_distinct(to_rows(t)))
          << "n=" << n << " cols=" << nc;
    }
  }
}

TEST_P(OpsTest, DifferenceIsDistinctSetDifference) {
  std::mt19937 rng(11);
  for (size_t n : kSizes) {
    for (int nc : {1, 2, 3}) {
      HostTable a = random_table(rng, n, nc, 5, 0.2), b = random_table(rng, n / 2, nc, 5, 0.2);
      EXPECT_EQ(fetch(eng(), eng().difference(eng().upload(a), eng().upload(b))),
                ref_difference(to_rows(a), to_rows(b)))
          << "n=" << n << " cols=" << nc;
    }
  }
}

}  // namespace
}  // namespace mln::gpu::testing
