// Operators on 2,000,000-row inputs against the reference.
#include <gtest/gtest.h>

#include "gpu_test_util.hpp"

namespace mln::gpu::testing {
namespace {

constexpr size_t kLarge = 2000000;

class LargeTest : public BackendTest {
 protected:
  // One shared 2M x 2 input (domain 1M, 5% hot keys) and a 200k x 2 right side.
  static void SetUpTestSuite() {
    std::mt19937 rng(41);
    big_ = new HostTable(random_table(rng, kLarge, 2, 1000000, 0.05));
    small_ = new HostTable(random_table(rng, 200000, 2, 1000000));
    // Hot keys on the right side are rare: keeps the join output near 2M rows.
    big_rows_ = new Rows(to_rows(*big_));
    small_rows_ = new Rows(to_rows(*small_));
  }
  static void TearDownTestSuite() {
    delete big_;
    delete small_;
    delete big_rows_;
    delete small_rows_;
  }
  static HostTable* big_;
  static HostTable* small_;
  static Rows* big_rows_;
  static Rows* small_rows_;
};
HostTable* LargeTest::big_ = nullptr;
HostTable* LargeTest::small_ = nullptr;
Rows* LargeTest::big_rows_ = nullptr;
Rows* LargeTest::small_rows_ = nullptr;
MLN_BACKEND_SUITE(LargeTest);

TEST_P(LargeTest, SelectTwoMillion) {
  std::vector<Predicate> p = {{0, CmpOp::LT, false, 400000, 0}, {1, CmpOp::GE, true, 0, 0}};
  EXPECT_EQ(fetch(eng(), eng().select(eng().upload(*big_), p)), ref_select(*big_rows_, p));
}

TEST_P(LargeTest, JoinTwoMillionBySmall) {
  std::vector<OutCol> out = {{0, 0}, {0, 1}, {1, 0}};
  Relation j = eng().join(eng().upload(*big_), eng().upload(*small_), {1}, {1}, out);
  EXPECT_EQ(fetch(eng(), j), ref_join(*big_rows_, *small_rows_, {1}, {1}, out));
}

TEST_P(LargeTest, DistinctTwoMillion) {
  EXPECT_EQ(fetch(eng(), eng().distinct(eng().upload(*big_))), ref_distinct(*big_rows_));
}

TEST_P(LargeTest, AntiJoinTwoMillionTwoKeys) {
  Relation l = eng().upload(*big_);
  Relation r = eng().project(eng().upload(*small_), {1, 0});
  Rows rr;
  for (const Row& x : *small_rows_) rr.push_back({x[1], x[0]});
  EXPECT_EQ(fetch(eng(), eng().anti_join(l, r, {0, 1}, {1, 0})), ref_semi(*big_rows_, rr, {0, 1}, {1, 0}, false));
}

}  // namespace
}  // namespace mln::gpu::testing
