// The key-matching operators (join, semi/anti join, distinct, difference)
// with each algorithm forced (hash table, sort, and direct addressing of
// dense keys, which falls back to the others where keys are not dense), on
// both backends,
// against the reference: boundary sizes, heavy skew, all-distinct keys,
// multi-column keys (including the key whose hash-table word is special:
// two key columns both -1), empty sides and zero-column relations; join_at_most's
// cap and slices.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <numeric>
#include <tuple>

#include "gpu_test_util.hpp"

namespace mln::gpu::testing {
namespace {

using Param = std::tuple<Backend, Algorithm>;

class AlgorithmTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    const Backend b = std::get<0>(GetParam());
    if (b == Backend::CUDA && !gpu_present()) {
      if (gpu_required()) FAIL() << "MLN_REQUIRE_GPU=1 but no usable CUDA device: " << query_device().error;
      GTEST_SKIP() << "no CUDA device: " << query_device().error;
    }
    EngineOptions o;
    o.join_algorithm = o.distinct_algorithm = std::get<1>(GetParam());
    eng_ = make_engine(b, o);
  }
  Engine& eng() { return *eng_; }
  // The same backend and algorithm under a 4 KiB memory budget.
  std::unique_ptr<Engine> budget_engine() const {
    EngineOptions o;
    o.join_algorithm = o.distinct_algorithm = std::get<1>(GetParam());
    o.memory_budget_bytes = 4096;
    return make_engine(std::get<0>(GetParam()), o);
  }
  std::unique_ptr<Engine> eng_;
};

// Test-name suffix: backend and algorithm.
std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const Algorithm alg = std::get<1>(info.param);
  const char* a = alg == Algorithm::Hash ? "hash" : alg == Algorithm::Sort ? "sort" : "dense";
  return std::string(std::get<0>(info.param) == Backend::CPU ? "cpu_" : "cuda_") + a;
}

INSTANTIATE_TEST_SUITE_P(Algorithms, AlgorithmTest,
                         ::testing::Combine(::testing::Values(Backend::CPU, Backend::CUDA),
                                            ::testing::Values(Algorithm::Hash, Algorithm::Sort, Algorithm::Dense)),
                         param_name);

// Distinct and difference of (a, b) against the reference.
void check_dedup(Engine& e, const HostTable& at, const HostTable& bt, const std::string& what) {
  Rows arows = to_rows(at), brows = to_rows(bt);
  Relation a = e.upload(at), b = e.upload(bt);
  EXPECT_EQ(fetch(e, e.distinct(a)), ref_distinct(arows)) << "distinct " << what;
  EXPECT_EQ(fetch(e, e.difference(a, b)), ref_difference(arows, brows)) << "difference " << what;
}

TEST_P(AlgorithmTest, JoinsAllSizePairsOneTwoThreeKeys) {
  join_all_size_pairs(eng(), 101);
}

TEST_P(AlgorithmTest, JoinHeavySkewOneKeyHundredThousandTimes) {
  // Right: 10^5 rows of key 7 plus 1000 other rows; left: 3 rows of key 7
  // among 5000 rows, so the join emits 3 * 10^5 rows from the hot key.
  std::mt19937 rng(102);
  HostTable rt = random_table(rng, 101000, 2, 100000);
  for (size_t i = 0; i < 100000; ++i) rt.cols[0][i] = 7;
  for (size_t i = 100000; i < rt.rows(); ++i) rt.cols[0][i] += 8;  // never 7
  HostTable lt = random_table(rng, 5000, 2, 2000);
  for (auto& v : lt.cols[0]) v += 8;
  lt.cols[0][0] = lt.cols[0][2500] = lt.cols[0][4999] = 7;
  check_joins(eng(), lt, rt, {0}, {0}, "hot right key");
  // And the other way round: the hot key on the probe side.
  check_joins(eng(), rt, lt, {0}, {0}, "hot left key");
  check_dedup(eng(), rt, lt, "hot rows");
}

TEST_P(AlgorithmTest, JoinRunLengthsAroundTheWarpExpandLimit) {
  // Right key v occurs len[v] times, with run lengths on both sides of the
  // CUDA backend's limit for writing runs warp by warp (256; longer runs take
  // the gather-map form) and of a warp's 32 rows.  Each left key appears a
  // few times, scattered, so a warp's 32 left rows mix long and short runs.
  // The first join has every run <= 256, the second adds one of 257.
  const std::vector<int32_t> len = {0, 1, 2, 31, 32, 33, 63, 100, 255, 256};
  for (int32_t extra : {0, 257}) {
    std::mt19937 rng(106 + extra);
    HostTable rt;
    rt.cols.assign(2, {});
    auto add_run = [&](int32_t key, int32_t m) {
      for (int32_t j = 0; j < m; ++j) rt.cols[0].push_back(key), rt.cols[1].push_back(key * 1000 + j);
    };
    for (size_t v = 0; v < len.size(); ++v) add_run(static_cast<int32_t>(v), len[v]);
    if (extra) add_run(static_cast<int32_t>(len.size()), extra);
    HostTable lt = random_table(rng, 3000, 2, static_cast<int32_t>(len.size()) + 2);
    check_joins(eng(), lt, rt, {0}, {0}, "runs up to " + std::to_string(extra ? extra : 256));
  }
}

TEST_P(AlgorithmTest, JoinWithMoreOutputColumnsThanOneExpandPass) {
  // 20 output columns (the expand writes 16 per pass): column k is column
  // (k/2) % 3 of the left (k even) or right side, so column k repeats
  // column k % 6.  The first six are checked against the reference (whose
  // rows hold 8 values at most), the others against them, row by row.
  std::mt19937 rng(107);
  HostTable lt = random_table(rng, 5000, 3, 700, 0.1), rt = random_table(rng, 4000, 3, 700, 0.1);
  std::vector<OutCol> out;
  for (int k = 0; k < 20; ++k) out.push_back({k % 2, (k / 2) % 3});
  Relation j = eng().join(eng().upload(lt), eng().upload(rt), {0}, {1}, out);
  EXPECT_EQ(fetch(eng(), eng().project(j, {0, 1, 2, 3, 4, 5})),
            ref_join(to_rows(lt), to_rows(rt), {0}, {1}, std::vector<OutCol>(out.begin(), out.begin() + 6)));
  HostTable h = eng().download(j);
  ASSERT_EQ(h.ncols(), 20);
  for (int k = 6; k < 20; ++k) EXPECT_EQ(h.cols[k], h.cols[k % 6]) << "output column " << k;
}

TEST_P(AlgorithmTest, JoinAllDistinctKeys) {
  // Both sides hold a permutation of 0..n-1: every left row matches exactly once.
  std::mt19937 rng(103);
  const size_t n = 100000;
  HostTable lt, rt;
  lt.cols.assign(2, std::vector<int32_t>(n));
  rt.cols.assign(2, std::vector<int32_t>(n));
  std::iota(lt.cols[0].begin(), lt.cols[0].end(), 0);
  std::iota(rt.cols[0].begin(), rt.cols[0].end(), 0);
  std::shuffle(lt.cols[0].begin(), lt.cols[0].end(), rng);
  std::shuffle(rt.cols[0].begin(), rt.cols[0].end(), rng);
  for (size_t i = 0; i < n; ++i) lt.cols[1][i] = static_cast<int32_t>(rng()), rt.cols[1][i] = -static_cast<int32_t>(i);
  Relation j = eng().join(eng().upload(lt), eng().upload(rt), {0}, {0}, {{0, 0}});
  EXPECT_EQ(j.rows(), n);
  check_joins(eng(), lt, rt, {0}, {0}, "permutation");
  // Half of the right keys shifted out of range: half the left rows match.
  for (auto& v : rt.cols[0]) v = v % 2 ? v + static_cast<int32_t>(n) : v;
  check_joins(eng(), lt, rt, {0}, {0}, "half matching");
  check_dedup(eng(), lt, rt, "distinct rows");
}

TEST_P(AlgorithmTest, MultiColumnKeysWithMinusOnes) {
  // Two key columns both -1 encode to the all-ones key, which the hash table
  // keeps in its extra slot; -1 in one column only must not collide with it.
  std::mt19937 rng(104);
  for (size_t n : {size_t(1), size_t(33), size_t(2000)}) {
    HostTable lt = random_table(rng, n, 3, 3, 0.0), rt = random_table(rng, n + 5, 3, 3, 0.0);
    for (auto* t : {&lt, &rt})
      for (auto& col : t->cols)
        for (auto& v : col) v -= 1;  // values in {-1, 0, 1}
    check_joins(eng(), lt, rt, {0, 1}, {0, 1}, "two keys with -1, n=" + std::to_string(n));
    check_joins(eng(), lt, rt, {1, 2}, {2, 0}, "two keys with -1 crossed, n=" + std::to_string(n));
    check_joins(eng(), lt, rt, {0, 1, 2}, {2, 1, 0}, "three keys with -1, n=" + std::to_string(n));
    check_dedup(eng(), lt, rt, "three columns with -1, n=" + std::to_string(n));
  }
  // The all-ones key on one side only.
  HostTable only_left{{{-1, -1, 0}, {-1, 0, -1}}}, only_right{{{0, 5}, {-1, 5}}};
  check_joins(eng(), only_left, only_right, {0, 1}, {0, 1}, "-1,-1 only left");
  check_joins(eng(), only_right, only_left, {0, 1}, {0, 1}, "-1,-1 only right");
  HostTable both{{{-1, -1, -1, 2}, {-1, -1, 3, 2}}};
  check_joins(eng(), both, both, {0, 1}, {0, 1}, "-1,-1 both sides, repeated");
  check_dedup(eng(), both, only_left, "-1,-1 rows");
  check_dedup(eng(), only_left, both, "-1,-1 rows swapped");
}

TEST_P(AlgorithmTest, EmptySidesAndNoKeys) {
  std::mt19937 rng(105);
  HostTable some = random_table(rng, 300, 3, 10), none;
  none.cols.assign(3, {});
  check_joins(eng(), some, none, {0}, {0}, "empty right");
  check_joins(eng(), none, some, {0}, {0}, "empty left");
  check_joins(eng(), none, none, {0, 1}, {1, 0}, "both empty");
  check_dedup(eng(), some, none, "empty b");
  check_dedup(eng(), none, some, "empty a");
  HostTable a = random_table(rng, 40, 3, 5), b = random_table(rng, 37, 3, 5);
  check_joins(eng(), a, b, {}, {}, "no keys (cross product)");
}

TEST_P(AlgorithmTest, ZeroColumnRelations) {
  std::mt19937 rng(106);
  Relation r = eng().upload(random_table(rng, 50, 2, 5));
  Relation z = eng().project(r, {});  // 50 rows, no columns
  EXPECT_EQ(eng().distinct(z).rows(), 1u);
  EXPECT_EQ(eng().difference(z, eng().project(eng().empty(2), {})).rows(), 1u);
  EXPECT_EQ(eng().difference(z, z).rows(), 0u);
  EXPECT_EQ(eng().semi_join(z, r, {}, {}).rows(), 50u);
  EXPECT_EQ(eng().anti_join(z, r, {}, {}).rows(), 0u);
  EXPECT_EQ(eng().select(z, {}).rows(), 50u);
}

TEST_P(AlgorithmTest, DenseRangesAtIntLimitsAndSparseKeys) {
  // Build sides whose keys are dense next to INT32_MIN and INT32_MAX (the
  // slot arithmetic wraps there), one that spans the whole int32 range (not
  // dense: the hash or sort form takes over), and probe keys outside the
  // build side's range on both ends.
  std::mt19937 rng(105);
  for (int32_t base : {INT32_MIN, -5000, 0, INT32_MAX - 3000}) {
    HostTable rt = random_table(rng, 3000, 2, 3000);
    HostTable lt = random_table(rng, 4000, 2, 3000);
    for (auto& v : rt.cols[0]) v = static_cast<int32_t>(static_cast<int64_t>(base) + v);
    for (size_t i = 0; i < lt.rows(); ++i) {
      const int64_t v = static_cast<int64_t>(base) + lt.cols[0][i] + (i % 7 == 0 ? 1000 : 0) - (i % 11 == 0 ? 500 : 0);
      lt.cols[0][i] = static_cast<int32_t>(std::clamp<int64_t>(v, INT32_MIN, INT32_MAX));
    }
    check_joins(eng(), lt, rt, {0}, {0}, "dense near " + std::to_string(base));
  }
  HostTable rt = random_table(rng, 2000, 2, 1000);
  HostTable lt = random_table(rng, 2000, 2, 1000);
  rt.cols[0][0] = INT32_MIN;
  rt.cols[0][1] = INT32_MAX;
  lt.cols[0][5] = INT32_MAX;
  check_joins(eng(), lt, rt, {0}, {0}, "keys spanning int32");
}

TEST_P(AlgorithmTest, LargeJoinAndDistinctWithDuplicates) {
  // Past the CPU backend's serial threshold (2^15 rows) so blocked paths run.
  std::mt19937 rng(107);
  HostTable lt = random_table(rng, 300000, 2, 50000, 0.02), rt = random_table(rng, 120000, 2, 50000, 0.02);
  // Keep the hot keys of the right side rare so the output stays small.
  for (size_t i = 0; i < rt.rows(); ++i)
    if (rt.cols[0][i] % 7 == 0 && rt.cols[0][i] < 21 && i % 50) rt.cols[0][i] = 49999;
  check_joins(eng(), lt, rt, {0}, {0}, "300k x 120k");
  check_joins(eng(), lt, rt, {0, 1}, {1, 0}, "300k x 120k two keys");
  check_dedup(eng(), lt, rt, "300k");
}

// Engine::join_at_most, with and without a 4 KiB budget (partitioned joins,
// probe chunks): under the cap it equals the reference; past it nothing comes
// back but the exact row count.
TEST_P(AlgorithmTest, JoinAtMostCountsPastTheCapWithoutAResult) {
  std::mt19937 rng(3);
  std::unique_ptr<Engine> small = budget_engine();
  for (Engine* e : {&eng(), small.get()})
    for (size_t rows : {0, 1, 33, 1025, 5000}) {
      const HostTable lt = random_table(rng, rows, 2, 200, 0.2), rt = random_table(rng, rows / 2 + 1, 2, 200, 0.2);
      const std::vector<OutCol> out = {{0, 0}, {0, 1}, {1, 1}};
      const Rows want = ref_join(to_rows(lt), to_rows(rt), {0}, {0}, out);
      const Relation l = e->upload(lt), r = e->upload(rt);
      const size_t n = want.size();
      for (size_t cap : {n, n + 1, n ? n - 1 : 0, n / 3, size_t(0)}) {
        SCOPED_TRACE("rows " + std::to_string(rows) + ", output " + std::to_string(n) + ", cap " + std::to_string(cap));
        size_t counted = 12345;
        const Relation got = e->join_at_most(l, r, {0}, {0}, out, cap, &counted);
        EXPECT_EQ(counted, n);
        ASSERT_EQ(got.impl() != nullptr, n <= cap);
        if (got.impl()) EXPECT_EQ(fetch(*e, got), want);
      }
    }
}

// Engine::slice: the rows it names, read by operators as a relation of its own.
TEST_P(AlgorithmTest, SlicesHoldTheirRowsAndJoinLikeTheirCopies) {
  std::mt19937 rng(4);
  const HostTable t = random_table(rng, 1000, 3, 50);
  const Relation all = eng().upload(t);
  Relation again = eng().empty(3);
  for (size_t row0 = 0; row0 < 1000; row0 += 301) {
    const size_t n = std::min<size_t>(301, 1000 - row0);
    const Relation s = eng().slice(all, row0, n);
    ASSERT_EQ(s.rows(), n);
    const HostTable h = eng().download(s);
    for (int c = 0; c < 3; ++c)
      EXPECT_TRUE(std::equal(h.cols[c].begin(), h.cols[c].end(), t.cols[c].begin() + static_cast<long>(row0)));
    EXPECT_EQ(fetch(eng(), eng().join(s, all, {1}, {0}, {{0, 0}, {1, 2}})),
              ref_join(to_rows(h), to_rows(t), {1}, {0}, {{0, 0}, {1, 2}}));
    again = eng().union_all(again, s);
  }
  EXPECT_EQ(fetch(eng(), again), fetch(eng(), all));
  EXPECT_EQ(eng().slice(all, 1000, 0).rows(), 0u);
  EXPECT_THROW(eng().slice(all, 999, 2), EngineError);
}

}  // namespace
}  // namespace mln::gpu::testing
