// The stored clause chunks (format/clause_chunks.hpp): each chunk within its
// row's bytes and 255 distinct weights, a clause too long for a row alone,
// and the weights decoded from the dictionaries and codes equal to the
// clauses', bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <cstring>
#include <limits>
#include <vector>

#include "format/clause_chunks.hpp"

namespace mln {
namespace {

// A row's bytes as the writer counts them, less its fixed part: 4 per
// clause, 4 per literal, 8 per weight, a code byte per clause.
size_t row_bytes(size_t n, size_t lits, size_t d) { return 4 * n + 4 * lits + 8 * d + n; }

// Decodes every chunk's weights and checks them and the plan's shape.
void expect_round_trip(const ClauseSet& cs, const chunks::Plan& p, size_t max_bytes) {
  ASSERT_EQ(p.start.front(), 0u);
  ASSERT_EQ(p.start.back(), cs.size());
  ASSERT_EQ(p.dict_start.size(), p.start.size());
  std::vector<double> w(cs.size());
  for (size_t k = 0; k < p.chunks(); ++k) {
    const size_t c0 = p.start[k], c1 = p.start[k + 1], d = p.dict_start[k + 1] - p.dict_start[k];
    ASSERT_LT(c0, c1) << "chunk " << k << " is empty";
    EXPECT_LE(d, chunks::kMaxWeights);
    EXPECT_LE(c1 - c0, p.most);
    const size_t lits = static_cast<size_t>(cs.offsets[c1] - cs.offsets[c0]);
    if (c1 - c0 > 1) EXPECT_LE(row_bytes(c1 - c0, lits, d), max_bytes) << "chunk " << k;
    ASSERT_TRUE(chunks::decode_weights(&p.dict[p.dict_start[k]], d, &p.code[c0], c1 - c0, &w[c0]));
  }
  for (size_t c = 0; c < cs.size(); ++c)
    EXPECT_EQ(chunks::weight_bits(w[c]), chunks::weight_bits(cs.weights[c])) << "clause " << c;
}

ClauseSet clauses(size_t m, size_t len, const std::vector<double>& ws) {
  ClauseSet cs;
  std::vector<int32_t> lits(len, 1);
  for (size_t c = 0; c < m; ++c) cs.add(lits.data(), len, ws[c % ws.size()]);
  return cs;
}

// A few weights: chunks cut by the row's bytes, a dictionary of the few.
TEST(ClauseChunks, AFewWeightsFillEachRow) {
  const ClauseSet cs = clauses(10000, 3, {1.0, -2.5, 0.25});
  const chunks::Plan p = chunks::plan(cs, 8000, row_bytes);
  expect_round_trip(cs, p, 8000);
  EXPECT_EQ(p.dict.size(), 3 * p.chunks());
  EXPECT_GT(p.most, 300u);  // 8,000 bytes: 17 a clause, 24 for the dictionary
}

// All weights distinct: a chunk closes at 255 of them, whatever room is left.
TEST(ClauseChunks, AChunkHoldsAtMost255Weights) {
  std::vector<double> ws;
  for (int i = 0; i < 1000; ++i) ws.push_back(0.5 + i);
  const ClauseSet cs = clauses(1000, 1, ws);
  const chunks::Plan p = chunks::plan(cs, 1 << 20, row_bytes);
  expect_round_trip(cs, p, 1 << 20);
  ASSERT_EQ(p.chunks(), 4u);
  EXPECT_EQ(p.start[1], 255u);
}

// Weights equal as numbers but not as bits stay apart; a clause longer
// than a row is a chunk of its own; a NaN weight round-trips.
TEST(ClauseChunks, BitsLongClausesAndNaN) {
  ClauseSet cs;
  std::vector<int32_t> lits(5000, 2);
  cs.add(lits.data(), 2, 0.0);
  cs.add(lits.data(), 2, -0.0);
  cs.add(lits.data(), 5000, 1.0);
  cs.add(lits.data(), 2, std::numeric_limits<double>::quiet_NaN());
  const chunks::Plan p = chunks::plan(cs, 8000, row_bytes);
  expect_round_trip(cs, p, 8000);
  ASSERT_EQ(p.chunks(), 3u);
  EXPECT_EQ(p.start[1], 2u);  // the long clause starts a chunk, and ends it
  EXPECT_EQ(p.start[2], 3u);
  EXPECT_EQ(p.dict_start[1], 2u);  // 0.0 and -0.0: two entries
}

// Ranges planned one after another (the store of a network still being
// consolidated) cover the clauses with every chunk inside its range, and
// their codes decode to the weights as the whole set's plan does.
TEST(ClauseChunks, RangesPlannedInTurnCoverTheClauses) {
  std::vector<double> ws;
  for (int i = 0; i < 40; ++i) ws.push_back(0.5 * i);
  const ClauseSet cs = clauses(5000, 2, ws);
  const size_t cuts[] = {0, 1, 700, 701, 2999, 5000};
  std::vector<size_t> starts;
  for (size_t r = 0; r + 1 < std::size(cuts); ++r) {
    const chunks::Plan p = chunks::plan(cs.offsets.data(), cs.weights.data(), cuts[r], cuts[r + 1], 800, row_bytes);
    ASSERT_EQ(p.start.front(), cuts[r]);
    ASSERT_EQ(p.start.back(), cuts[r + 1]);
    ASSERT_EQ(p.code.size(), cuts[r + 1] - cuts[r]);
    for (size_t k = 0; k < p.chunks(); ++k) {
      const size_t c0 = p.start[k], c1 = p.start[k + 1], d = p.dict_start[k + 1] - p.dict_start[k];
      ASSERT_LT(c0, c1);
      if (c1 - c0 > 1) EXPECT_LE(row_bytes(c1 - c0, static_cast<size_t>(cs.offsets[c1] - cs.offsets[c0]), d), 800u);
      std::vector<double> w(c1 - c0);
      ASSERT_TRUE(chunks::decode_weights(&p.dict[p.dict_start[k]], d, &p.code[c0 - cuts[r]], c1 - c0, w.data()));
      for (size_t c = c0; c < c1; ++c) EXPECT_EQ(w[c - c0], cs.weights[c]) << "clause " << c;
      starts.push_back(c0);
    }
  }
  EXPECT_EQ(starts.front(), 0u);
  EXPECT_TRUE(std::is_sorted(starts.begin(), starts.end()));
}

// An empty clause set has no chunks; a code past the dictionary is refused.
TEST(ClauseChunks, EmptyAndCorrupt) {
  const chunks::Plan p = chunks::plan(ClauseSet(), 8000, row_bytes);
  EXPECT_EQ(p.chunks(), 0u);
  const double dict[2] = {1.0, 2.0};
  const uint8_t good[3] = {0, 1, 1}, bad[3] = {0, 2, 1};
  double out[3];
  EXPECT_TRUE(chunks::decode_weights(dict, 2, good, 3, out));
  EXPECT_EQ(out[2], 2.0);
  EXPECT_FALSE(chunks::decode_weights(dict, 2, bad, 3, out));
}

}  // namespace
}  // namespace mln
