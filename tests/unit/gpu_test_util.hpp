// Shared helpers of the gpu_* tests: backend parametrisation, random tables
// with duplicates and hot keys, and std::map/std::set reference operators.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <ostream>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "mln/relation.hpp"

namespace mln::gpu::testing {

// One row of at most kMaxCols values, stored inline (2M-row references would
// otherwise spend their time in the allocator).
class Row {
 public:
  static constexpr int kMaxCols = 8;
  Row() = default;
  explicit Row(int n) : n_(n) {}
  Row(std::initializer_list<int32_t> v) {
    for (int32_t x : v) push_back(x);
  }
  void push_back(int32_t x) { v_.at(n_++) = x; }
  int32_t& operator[](size_t i) { return v_[i]; }
  int32_t operator[](size_t i) const { return v_[i]; }
  size_t size() const { return n_; }
  bool operator<(const Row& o) const {
    return std::lexicographical_compare(v_.begin(), v_.begin() + n_, o.v_.begin(), o.v_.begin() + o.n_);
  }
  bool operator==(const Row& o) const { return n_ == o.n_ && std::equal(v_.begin(), v_.begin() + n_, o.v_.begin()); }
  // Printed by gtest on mismatch.
  friend std::ostream& operator<<(std::ostream& os, const Row& r) {
    os << '(';
    for (size_t i = 0; i < r.n_; ++i) os << (i ? "," : "") << r.v_[i];
    return os << ')';
  }

 private:
  std::array<int32_t, kMaxCols> v_{};
  size_t n_ = 0;
};
using Rows = std::vector<Row>;

// The sizes every operator is tried on: empty, warp and block edges, larger.
inline const std::vector<size_t> kSizes = {0, 1, 31, 32, 33, 255, 256, 257, 1025};

// True when MLN_REQUIRE_GPU=1 is set.
inline bool gpu_required() {
  const char* v = std::getenv("MLN_REQUIRE_GPU");
  return v && std::string(v) == "1";
}

// True when a CUDA device is usable.
inline bool gpu_present() {
  static const bool present = query_device().device_count > 0;
  return present;
}

// Printable backend name for parametrised test names.
inline std::string backend_name(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::CPU ? "cpu" : "cuda";
}

// Engine for a backend, created with the given options.
inline std::unique_ptr<Engine> make_engine(Backend b, const EngineOptions& o = {}) {
  return b == Backend::CPU ? make_cpu_engine(o) : make_cuda_engine(o);
}

// Fixture for tests run once per backend.  The CUDA instance is skipped when
// no device is present, and fails instead when MLN_REQUIRE_GPU=1.
class BackendTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::CUDA && !gpu_present()) {
      if (gpu_required()) {
        FAIL() << "MLN_REQUIRE_GPU=1 but no usable CUDA device: " << query_device().error;
      }
      GTEST_SKIP() << "no CUDA device: " << query_device().error;
    }
    eng_ = make_engine(GetParam());
  }
  Engine& eng() { return *eng_; }
  std::unique_ptr<Engine> eng_;
};

#define MLN_BACKEND_SUITE(Suite)                                                             \
  INSTANTIATE_TEST_SUITE_P(Backends, Suite, ::testing::Values(Backend::CPU, Backend::CUDA), \
                           ::mln::gpu::testing::backend_name)

// Random table: values in [0, domain), with probability `hot` one of 3 hot values.
inline HostTable random_table(std::mt19937& rng, size_t rows, int ncols, int32_t domain, double hot = 0.0) {
  HostTable t;
  t.cols.assign(ncols, std::vector<int32_t>(rows));
  std::uniform_int_distribution<int32_t> val(0, std::max(domain, 1) - 1);
  std::uniform_int_distribution<int32_t> hotv(0, 2);
  std::bernoulli_distribution is_hot(hot);
  for (int c = 0; c < ncols; ++c)
    for (size_t r = 0; r < rows; ++r) t.cols[c][r] = (hot > 0 && is_hot(rng)) ? hotv(rng) * 7 : val(rng);
  return t;
}

// Row-major copy of a host table.
inline Rows to_rows(const HostTable& t) {
  Rows out(t.rows(), Row(t.ncols()));
  for (int c = 0; c < t.ncols(); ++c)
    for (size_t r = 0; r < t.rows(); ++r) out[r][c] = t.cols[c][r];
  return out;
}

// Rows sorted, for order-insensitive comparison.
inline Rows sorted(Rows r) {
  std::sort(r.begin(), r.end());
  return r;
}

// Downloaded, sorted rows of a relation.
inline Rows fetch(Engine& e, const Relation& r) { return sorted(to_rows(e.download(r))); }

// Key of a row restricted to the given columns.
inline Row key_of(const Row& r, const std::vector<int>& cols) {
  Row k;
  for (int c : cols) k.push_back(r[c]);
  return k;
}

// Reference comparison.
inline bool ref_cmp(int32_t a, CmpOp op, int32_t b) {
  switch (op) {
    case CmpOp::EQ: return a == b;
    case CmpOp::NE: return a != b;
    case CmpOp::LT: return a < b;
    case CmpOp::LE: return a <= b;
    case CmpOp::GT: return a > b;
    case CmpOp::GE: return a >= b;
  }
  return false;
}

// Reference selection.
inline Rows ref_select(const Rows& in, const std::vector<Predicate>& preds) {
  Rows out;
  for (const Row& r : in) {
    bool ok = true;
    for (const auto& p : preds) ok = ok && ref_cmp(r[p.col], p.op, p.rhs_is_col ? r[p.rhs_col] : p.rhs_const);
    if (ok) out.push_back(r);
  }
  return sorted(out);
}

// Reference inner join through a std::multimap on the right key.
inline Rows ref_join(const Rows& l, const Rows& r, const std::vector<int>& lk, const std::vector<int>& rk,
                     const std::vector<OutCol>& out) {
  std::multimap<Row, const Row*> index;
  for (const Row& b : r) index.emplace(key_of(b, rk), &b);
  Rows res;
  for (const Row& a : l) {
    auto range = index.equal_range(key_of(a, lk));
    for (auto it = range.first; it != range.second; ++it) {
      Row o;
      for (const auto& oc : out) o.push_back(oc.side == 0 ? a[oc.col] : (*it->second)[oc.col]);
      res.push_back(o);
    }
  }
  return sorted(res);
}

// Reference semi (want=true) / anti (want=false) join through a std::set.
inline Rows ref_semi(const Rows& l, const Rows& r, const std::vector<int>& lk, const std::vector<int>& rk,
                     bool want) {
  std::set<Row> keys;
  for (const Row& b : r) keys.insert(key_of(b, rk));
  Rows res;
  for (const Row& a : l)
    if ((keys.count(key_of(a, lk)) > 0) == want) res.push_back(a);
  return sorted(res);
}

// Reference distinct: sort, then drop adjacent repeats.
inline Rows ref_distinct(Rows in) {
  std::sort(in.begin(), in.end());
  in.erase(std::unique(in.begin(), in.end()), in.end());
  return in;
}

// Reference set difference: distinct rows of a not found in sorted b.
inline Rows ref_difference(const Rows& a, const Rows& b) {
  Rows sb = ref_distinct(b), out;
  for (const Row& r : ref_distinct(a))
    if (!std::binary_search(sb.begin(), sb.end(), r)) out.push_back(r);
  return out;
}


// Join, semi join and anti join of (lt, rt) on keys (lk, rk) against the references.
inline void check_joins(Engine& e, const HostTable& lt, const HostTable& rt, const std::vector<int>& lk,
                 const std::vector<int>& rk, const std::string& what) {
  Rows lrows = to_rows(lt), rrows = to_rows(rt);
  Relation l = e.upload(lt), r = e.upload(rt);
  // Output columns out of order where both sides have three; otherwise every
  // column of the left side, then of the right.
  std::vector<OutCol> out = {{1, 2}, {0, 0}, {0, 1}, {1, 0}, {0, 2}};
  if (lt.ncols() < 3 || rt.ncols() < 3) {
    out.clear();
    for (int c = 0; c < lt.ncols(); ++c) out.push_back({0, c});
    for (int c = 0; c < rt.ncols(); ++c) out.push_back({1, c});
  }
  EXPECT_EQ(fetch(e, e.join(l, r, lk, rk, out)), ref_join(lrows, rrows, lk, rk, out)) << "join " << what;
  EXPECT_EQ(fetch(e, e.semi_join(l, r, lk, rk)), ref_semi(lrows, rrows, lk, rk, true)) << "semi " << what;
  EXPECT_EQ(fetch(e, e.anti_join(l, r, lk, rk)), ref_semi(lrows, rrows, lk, rk, false)) << "anti " << what;
}

// check_joins over every pair of kSizes, with one, two and three key columns
// (small domains so that multi-column keys still match often).
inline void join_all_size_pairs(Engine& e, uint32_t seed) {
  std::mt19937 rng(seed);
  const std::vector<std::vector<int>> lkeys = {{0}, {1, 0}, {0, 2, 1}};
  const std::vector<std::vector<int>> rkeys = {{1}, {0, 2}, {2, 0, 1}};
  for (size_t nl : kSizes) {
    for (size_t nr : kSizes) {
      for (size_t k = 0; k < lkeys.size(); ++k) {
        const int32_t dom = k == 0 ? static_cast<int32_t>(std::max(nl, nr) / 3 + 2) : 4;
        HostTable lt = random_table(rng, nl, 3, dom, 0.15);
        HostTable rt = random_table(rng, nr, 3, dom, 0.15);
        check_joins(e, lt, rt, lkeys[k], rkeys[k],
                    std::to_string(nl) + "x" + std::to_string(nr) + " keys=" + std::to_string(k + 1));
      }
    }
  }
}

}  // namespace mln::gpu::testing
