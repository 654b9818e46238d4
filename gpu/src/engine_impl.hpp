// Engine implementation shared by both backends: argument checks, error
// translation and dispatch to the operator templates in operators.hpp.
#pragma once

#include <thrust/system_error.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <utility>

#include "operators.hpp"

namespace mln::gpu {

template <class Exec>
class EngineImpl final : public Engine {
 public:
  explicit EngineImpl(Exec ex) : ex_(std::move(ex)) {}

  Backend backend() const override { return Exec::kBackend; }
  std::string name() const override { return ex_.name(); }
  size_t peak_memory_bytes() const override { return ex_.peak_bytes(false); }
  void reset_peak_memory() override { ex_.peak_bytes(true); }
  void release_cached_memory() override { ex_.release_cached(); }
  size_t memory_budget_bytes() override {
    return guarded("memory_budget", [&] {
      const size_t b = ex_.budget();
      return b == SIZE_MAX ? size_t(0) : b;  // the CPU's "no budget"
    });
  }

  size_t host_memory_limit_bytes() const override { return ex_.opts.host_memory_limit_bytes; }
  void poll_cancel() const override { ex_.check_cancel(); }

  // Copies a host table into backend memory.
  Relation upload(const HostTable& t) override {
    return guarded("upload", [&] {
      const size_t rows = t.rows();
      std::vector<Column> cols;
      for (const auto& c : t.cols) {
        MLN_EXPECTS(c.size() == rows, "upload: columns differ in length");
        Column d = ex_.template alloc<int32_t>(rows);
        if (rows) ex_.upload(d.data(), c.data(), rows);
        cols.push_back(std::move(d));
      }
      return wrap(ops::make_rel(Exec::kBackend, rows, std::move(cols)));
    });
  }

  // Copies a relation back into a host table.
  HostTable download(const Relation& r) override {
    return guarded("download", [&] {
      const auto& in = check(r, "download");
      HostTable t;
      t.cols.resize(in.cols.size());
      for (size_t c = 0; c < in.cols.size(); ++c) {
        t.cols[c].resize(in.rows);
        if (in.rows) ex_.download(t.cols[c].data(), in.cols[c].data(), in.rows);
      }
      return t;
    });
  }

  void download_rows(const Relation& r, size_t row0, size_t n, int32_t* const* dst) override {
    guarded("download_rows", [&] {
      const auto& in = check(r, "download_rows");
      MLN_EXPECTS(row0 <= in.rows && n <= in.rows - row0, "download_rows: rows out of range");
      for (size_t c = 0; c < in.cols.size() && n > 0; ++c) ex_.download(dst[c], in.cols[c].data() + row0, n);
      return n;
    });
  }

  // A relation with `ncols` columns and no rows.
  Relation empty(int ncols) override {
    MLN_EXPECTS(ncols >= 0, "empty: negative arity");
    return wrap(ops::make_rel(Exec::kBackend, 0, std::vector<Column>(ncols)));
  }

  Relation select(const Relation& in, const std::vector<Predicate>& preds) override {
    return guarded("select", [&] {
      const auto& r = check(in, "select");
      for (const auto& p : preds) {
        check_col(r, p.col, "select");
        if (p.rhs_is_col) check_col(r, p.rhs_col, "select");
        MLN_EXPECTS(static_cast<int>(p.op) >= 0 && static_cast<int>(p.op) <= 5, "select: bad operator");
      }
      return wrap(ops::select(ex_, r, preds));
    });
  }

  Relation project(const Relation& in, const std::vector<int>& cols) override {
    return guarded("project", [&] {
      const auto& r = check(in, "project");
      std::vector<Column> out;
      for (int c : cols) {
        check_col(r, c, "project");
        out.push_back(r.cols[c]);  // columns are immutable: share, do not copy
      }
      return wrap(ops::make_rel(Exec::kBackend, r.rows, std::move(out)));
    });
  }

  Relation join(const Relation& l, const Relation& r, const std::vector<int>& lkeys,
                const std::vector<int>& rkeys, const std::vector<OutCol>& out) override {
    return join_at_most(l, r, lkeys, rkeys, out, SIZE_MAX, nullptr);
  }

  Relation join_at_most(const Relation& l, const Relation& r, const std::vector<int>& lkeys,
                        const std::vector<int>& rkeys, const std::vector<OutCol>& out, size_t max_rows,
                        size_t* rows) override {
    return guarded("join", [&] {
      const auto& a = check(l, "join");
      const auto& b = check(r, "join");
      check_keys(a, b, lkeys, rkeys, "join");
      for (const auto& oc : out) {
        MLN_EXPECTS(oc.side == 0 || oc.side == 1, "join: output side must be 0 or 1");
        check_col(oc.side == 0 ? a : b, oc.col, "join");
      }
      ops::JoinCap cap;
      cap.max_rows = max_rows;
      RelPtr res = ops::join_driver(ex_, a, b, lkeys, rkeys, out, -1, true, &cap);
      if (rows) *rows = cap.rows;
      return cap.over() ? Relation() : wrap(std::move(res));
    });
  }

  Relation slice(const Relation& in, size_t row0, size_t n) override {
    return guarded("slice", [&] {
      const auto& r = check(in, "slice");
      MLN_EXPECTS(row0 <= r.rows && n <= r.rows - row0, "slice: rows out of range");
      std::vector<Column> cols;
      for (const Column& c : r.cols) {
        Column v = c;  // shares the allocation: columns are immutable
        v.ptr = n ? c.ptr + row0 : nullptr;
        v.n = n;
        cols.push_back(std::move(v));
      }
      return wrap(ops::make_rel(Exec::kBackend, n, std::move(cols)));
    });
  }

  Relation semi_join(const Relation& l, const Relation& r, const std::vector<int>& lkeys,
                     const std::vector<int>& rkeys) override {
    return semi_or_anti(l, r, lkeys, rkeys, 1, "semi_join");
  }

  Relation anti_join(const Relation& l, const Relation& r, const std::vector<int>& lkeys,
                     const std::vector<int>& rkeys) override {
    return semi_or_anti(l, r, lkeys, rkeys, 0, "anti_join");
  }

  Relation union_all(const Relation& a, const Relation& b) override {
    return guarded("union_all", [&] {
      const auto& x = check(a, "union_all");
      const auto& y = check(b, "union_all");
      MLN_EXPECTS(x.cols.size() == y.cols.size(), "union_all: arity mismatch");
      ex_.check_cancel();
      return wrap(ops::concat(ex_, {a.impl(), b.impl()}, static_cast<int>(x.cols.size())));
    });
  }

  Relation distinct(const Relation& in) override {
    return guarded("distinct", [&] { return wrap(ops::distinct(ex_, check(in, "distinct"), true)); });
  }

  Relation difference(const Relation& a, const Relation& b) override {
    return guarded("difference", [&] {
      const auto& x = check(a, "difference");
      const auto& y = check(b, "difference");
      MLN_EXPECTS(x.cols.size() == y.cols.size(), "difference: arity mismatch");
      return wrap(ops::difference(ex_, x, y));
    });
  }

 private:
  // Runs `f` with the backend's thread/device settings; maps every failure to
  // EngineError.  With MLN_ENGINE_TRACE set, each operator waits for its
  // device work and prints its name, output rows and milliseconds to stderr
  // (a profile of grounding by operator; off by default: the wait costs).
  template <class F>
  auto guarded(const char* op, F&& f) -> decltype(f()) {
    auto scope = ex_.scope();
    try {
      if (trace_) {
        const auto t0 = std::chrono::steady_clock::now();
        auto r = f();
        ex_.sync();
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        std::fprintf(stderr, "mln-engine-trace %s %s rows=%zu ms=%.4f\n", Exec::kBackend == Backend::CUDA ? "cuda" : "cpu",
                     op, trace_rows(r), ms);
        return r;
      }
      return f();
    } catch (const EngineError&) {
      throw;
    } catch (const std::bad_alloc& e) {
      throw ex_.map_bad_alloc(e);
    } catch (const thrust::system_error& e) {
      throw ex_.map_error(e);
    } catch (const std::exception& e) {
      throw EngineError(EngineError::Kind::DeviceFailure, e.what());
    }
  }

  // Shared body of semi_join and anti_join.
  Relation semi_or_anti(const Relation& l, const Relation& r, const std::vector<int>& lkeys,
                        const std::vector<int>& rkeys, int want, const char* what) {
    return guarded(what, [&] {
      const auto& a = check(l, what);
      const auto& b = check(r, what);
      check_keys(a, b, lkeys, rkeys, what);
      return wrap(ops::join_driver(ex_, a, b, lkeys, rkeys, {}, want, true));
    });
  }

  // The implementation of `r`, after checking it belongs to this backend.
  const Relation::Impl& check(const Relation& r, const char* what) const {
    MLN_EXPECTS(r.impl() != nullptr, std::string(what) + ": null relation");
    MLN_EXPECTS(r.impl()->backend == Exec::kBackend,
                std::string(what) + ": relation belongs to another backend");
    MLN_EXPECTS(r.impl()->rows <= static_cast<size_t>(INT32_MAX),
                std::string(what) + ": relation has more than 2^31-1 rows");
    return *r.impl();
  }

  // Checks that `c` names a column of `r`.
  static void check_col(const Relation::Impl& r, int c, const char* what) {
    MLN_EXPECTS(c >= 0 && c < static_cast<int>(r.cols.size()),
                std::string(what) + ": column " + std::to_string(c) + " out of range");
  }

  // Checks join key lists.
  static void check_keys(const Relation::Impl& a, const Relation::Impl& b, const std::vector<int>& lk,
                         const std::vector<int>& rk, const char* what) {
    MLN_EXPECTS(lk.size() == rk.size(), std::string(what) + ": key lists differ in length");
    for (int c : lk) check_col(a, c, what);
    for (int c : rk) check_col(b, c, what);
  }

  static size_t trace_rows(const Relation& r) { return r.impl() ? r.impl()->rows : 0; }
  static size_t trace_rows(const HostTable& t) { return t.rows(); }
  static size_t trace_rows(size_t n) { return n; }

  // Wraps an implementation pointer as a public Relation.
  static Relation wrap(RelPtr p) { return Relation(std::move(p)); }

  Exec ex_;
  const bool trace_ = std::getenv("MLN_ENGINE_TRACE") != nullptr;
};

}  // namespace mln::gpu
