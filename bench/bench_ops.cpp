// Operator throughput of the relational engine on every available backend,
// with the backend's plain copy bandwidth alongside (design.md, "Performance
// model": report achieved bandwidth as a fraction of a copy).
//
//   bench_ops [--benchmark_format=json]      sizes 10^6 and 10^7 rows
//   MLN_BENCH_MAX_ROWS=100000000 bench_ops   adds 10^8 (GPU memory permitting)
//
// join, join2key, anti_join, distinct and fixpoint_step run with the default
// algorithm (Auto); their
// _hash and _sort twins force EngineOptions::join_algorithm /
// distinct_algorithm, so the two forms are compared in one run.
//
// bytes_per_second counts bytes read plus bytes written by the operator
// (inputs, outputs); the copy benchmark counts its read plus its write, so
// op_bandwidth / copy_bandwidth is the fraction of the roofline achieved.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mln/device_copy.hpp"
#include "mln/relation.hpp"

namespace {

using namespace mln::gpu;

// Fast deterministic pseudo-random table: values in [0, domain).
HostTable make_table(size_t rows, int ncols, uint32_t domain, uint64_t seed) {
  HostTable t;
  t.cols.assign(ncols, std::vector<int32_t>(rows));
  uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
  for (int c = 0; c < ncols; ++c)
    for (size_t r = 0; r < rows; ++r) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64
      t.cols[c][r] = static_cast<int32_t>(x % domain);
    }
  return t;
}

// Bytes held by a relation.
double rel_bytes(const Relation& r) { return static_cast<double>(r.rows()) * r.ncols() * 4; }

struct Backendy {
  std::string label;
  Backend backend;
  std::shared_ptr<Engine> engine;  // default options
  std::shared_ptr<Engine> hash;    // join_algorithm = distinct_algorithm = Hash
  std::shared_ptr<Engine> sort;    // join_algorithm = distinct_algorithm = Sort
};

// Engine of backend `b` with both key-matching algorithms set to `a`.
std::shared_ptr<Engine> engine_with(Backend b, Algorithm a) {
  EngineOptions o;
  o.join_algorithm = o.distinct_algorithm = a;
  return std::shared_ptr<Engine>(b == Backend::CPU ? make_cpu_engine(o) : make_cuda_engine(o));
}

// Records rows/s (input rows) and bytes/s (bytes read + written per iteration).
void report(benchmark::State& st, size_t rows, double bytes, const std::string& label) {
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(rows));
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * bytes));
  st.counters["rows"] = static_cast<double>(rows);
  st.SetLabel(label);
}

// Runs `op` under the benchmark loop after checking that it succeeds.
template <class Op>
void run_op(benchmark::State& st, const Backendy& b, size_t rows, Op op) {
  try {
    double bytes = 0;
    for (auto _ : st) bytes = op();
    report(st, rows, bytes, b.engine->name());
  } catch (const EngineError& e) {
    st.SkipWithError(e.what());
  }
}

// Registers every operator benchmark for one backend and one size.
void register_size(const Backendy& b, size_t n) {
  const std::string suffix = "/" + b.label + "/" + std::to_string(n);
  auto eng = b.engine;
  // Inputs are made lazily by the first benchmark that needs them and shared.
  struct Inputs {
    Relation a, b, half, edges;
  };
  auto in = std::make_shared<Inputs>();
  auto ensure = [eng, in, n] {
    if (in->a.impl()) return;
    in->a = eng->upload(make_table(n, 2, static_cast<uint32_t>(n), 1));
    in->b = eng->upload(make_table(n, 2, static_cast<uint32_t>(n), 2));
    in->half = eng->upload(make_table(n / 2, 2, static_cast<uint32_t>(n), 3));
    in->edges = eng->upload(make_table(n, 2, static_cast<uint32_t>(n / 2), 4));
  };

  benchmark::RegisterBenchmark(("select" + suffix).c_str(), [=](benchmark::State& st) {
    ensure();
    run_op(st, b, n, [&] {
      Relation r = eng->select(in->a, {{0, CmpOp::LT, false, static_cast<int32_t>(n / 2), 0}});
      return rel_bytes(in->a) + rel_bytes(r);
    });
  })->UseRealTime()->Unit(benchmark::kMillisecond);

  // join, anti_join, distinct and fixpoint_step with engine `e`, under names with `tag` appended.
  auto keyed = [=](const std::string& tag, std::shared_ptr<Engine> e) {
    benchmark::RegisterBenchmark(("join" + tag + suffix).c_str(), [=](benchmark::State& st) {
      ensure();
      run_op(st, b, n, [&] {
        Relation r = e->join(in->a, in->b, {0}, {0}, {{0, 0}, {0, 1}, {1, 1}});
        st.counters["out_rows"] = static_cast<double>(r.rows());
        return rel_bytes(in->a) + rel_bytes(in->b) + rel_bytes(r);
      });
    })->UseRealTime()->Unit(benchmark::kMillisecond);

    benchmark::RegisterBenchmark(("join2key" + tag + suffix).c_str(), [=](benchmark::State& st) {
      ensure();
      run_op(st, b, n, [&] {
        Relation r = e->join(in->a, in->edges, {0, 1}, {1, 0}, {{0, 0}, {0, 1}});
        return rel_bytes(in->a) + rel_bytes(in->edges) + rel_bytes(r);
      });
    })->UseRealTime()->Unit(benchmark::kMillisecond);

    benchmark::RegisterBenchmark(("distinct" + tag + suffix).c_str(), [=](benchmark::State& st) {
      ensure();
      run_op(st, b, n, [&] {
        Relation r = e->distinct(in->edges);
        return rel_bytes(in->edges) + rel_bytes(r);
      });
    })->UseRealTime()->Unit(benchmark::kMillisecond);

    benchmark::RegisterBenchmark(("anti_join" + tag + suffix).c_str(), [=](benchmark::State& st) {
      ensure();
      run_op(st, b, n, [&] {
        Relation r = e->anti_join(in->a, in->half, {0}, {1});
        return rel_bytes(in->a) + rel_bytes(in->half) + rel_bytes(r);
      });
    })->UseRealTime()->Unit(benchmark::kMillisecond);

    // One semi-naive round of transitive closure: new = delta |><| edges,
    // fresh = new - full, full = full + fresh (full = delta = edges).
    benchmark::RegisterBenchmark(("fixpoint_step" + tag + suffix).c_str(), [=](benchmark::State& st) {
      ensure();
      run_op(st, b, n, [&] {
        Relation derived = e->join(in->edges, in->edges, {1}, {0}, {{0, 0}, {1, 1}});
        Relation fresh = e->difference(derived, in->edges);
        Relation full = e->union_all(in->edges, fresh);
        st.counters["derived_rows"] = static_cast<double>(derived.rows());
        return 2 * rel_bytes(in->edges) + 2 * rel_bytes(derived) + rel_bytes(fresh) + rel_bytes(full);
      });
    })->UseRealTime()->Unit(benchmark::kMillisecond);
  };
  keyed("", eng);
  keyed("_hash", b.hash);
  keyed("_sort", b.sort);

  // Roofline: copying a relation-sized buffer within backend memory.
  benchmark::RegisterBenchmark(("copy" + suffix).c_str(), [=](benchmark::State& st) {
    const size_t bytes = n * 2 * sizeof(int32_t);
    try {
      for (auto _ : st) st.SetIterationTime(time_backend_copy(b.backend, bytes, 1));
      report(st, n, 2.0 * bytes, b.engine->name());
    } catch (const EngineError& e) {
      st.SkipWithError(e.what());
    }
  })->UseManualTime()->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  size_t max_rows = 10000000;
  if (const char* v = std::getenv("MLN_BENCH_MAX_ROWS")) max_rows = std::strtoull(v, nullptr, 10);
  size_t cpu_max_rows = max_rows;  // the CPU backend's largest size (MLN_BENCH_CPU_MAX_ROWS)
  if (const char* v = std::getenv("MLN_BENCH_CPU_MAX_ROWS")) cpu_max_rows = std::strtoull(v, nullptr, 10);

  std::vector<Backendy> backends;
  backends.push_back({"cpu", Backend::CPU, std::shared_ptr<Engine>(make_cpu_engine()),
                      engine_with(Backend::CPU, Algorithm::Hash), engine_with(Backend::CPU, Algorithm::Sort)});
  DeviceInfo dev = query_device();
  if (dev.device_count > 0)
    backends.push_back({"cuda", Backend::CUDA, std::shared_ptr<Engine>(make_cuda_engine()),
                        engine_with(Backend::CUDA, Algorithm::Hash), engine_with(Backend::CUDA, Algorithm::Sort)});
  benchmark::AddCustomContext("cuda_device", dev.device_count > 0 ? dev.name : ("none: " + dev.error));

  for (const auto& b : backends) {
    for (size_t n = 1000000; n <= max_rows; n *= 10) {
      // 10^8 rows only where device memory allows (inputs ~3.2 GB, joins ~4x).
      if (n >= 100000000 && b.backend == Backend::CUDA && dev.free_memory < 24ull * n * 2 * 4) continue;
      if (b.backend == Backend::CPU && n > cpu_max_rows) continue;
      register_size(b, n);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
