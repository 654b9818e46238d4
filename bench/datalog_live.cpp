// Datalog maintenance against evaluation from scratch (issue #62;
// bench/datalog_live.sh, bench/results/<machine>/datalog_live.md):
//
//   mln_datalog_live EDGES [changes=20] [engine=cpu|cuda] [seed=1] [programs=tc,pt]
//
// Transitive closure over a random directed graph of EDGES edges on
// EDGES / 0.9 nodes (out-degree 0.9: below the giant component, so the
// closure stays near 10 x the edges), and Andersen's points-to over a
// generated program of EDGES / 4 statements.  After one evaluation, for
// `changes` random single edges (half inserted, half deleted; statements
// for points-to): maintain() and evaluate() of the changed input, timed.
// Prints a markdown table: program, input rows, derived rows, from scratch
// (s), maintained p50 and p99 (ms) for inserts and deletes, the ratio of
// the medians; and checks that both give the same rows.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ground/datalog_maintain.hpp"

namespace {

namespace dl = mln::lang::datalog;
namespace ev = mln::ground::datalog;
using mln::gpu::HostTable;
using mln::gpu::Relation;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double pct(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

HostTable table(const std::vector<std::pair<int32_t, int32_t>>& rows) {
  HostTable t;
  t.cols.assign(2, {});
  for (const auto& [a, b] : rows) t.cols[0].push_back(a), t.cols[1].push_back(b);
  return t;
}

struct Workload {
  const char* name;
  const char* text;
  std::map<std::string, std::vector<std::pair<int32_t, int32_t>>> inputs;
  std::string changed;  // the input whose rows change
  int32_t domain_a, domain_b;
};

void run(mln::gpu::Engine& eng, Workload w, int changes, uint32_t seed) {
  dl::Program p = dl::parse(w.text);
  for (auto& rel : p.rels)
    if (rel.input)
      for (auto& t : rel.types) t = dl::ColType::Int;
  dl::infer_types(p);
  std::vector<Relation> in(p.rels.size());
  uint64_t in_rows = 0;
  for (const auto& [name, rows] : w.inputs) in[static_cast<size_t>(p.find(name))] = eng.upload(table(rows)), in_rows += rows.size();
  const ev::EvalOptions o;
  auto t0 = Clock::now();
  std::vector<Relation> state = ev::evaluate(eng, p, in, o);
  const double first_s = since(t0);
  uint64_t derived = 0;
  for (size_t r = 0; r < p.rels.size(); ++r)
    if (p.rels[r].derived) derived += state[r].rows();
  std::mt19937 rng(seed);
  const size_t cr = static_cast<size_t>(p.find(w.changed));
  auto& rows = w.inputs[w.changed];
  std::vector<double> ins_ms, del_ms, scratch_s;
  bool same = true;
  for (int k = 0; k < changes; ++k) {
    std::vector<ev::RelationChange> change(p.rels.size());
    const bool insert = k % 2 == 0;
    std::pair<int32_t, int32_t> row;
    if (insert) {
      row = {static_cast<int32_t>(rng() % static_cast<uint32_t>(w.domain_a)),
             static_cast<int32_t>(rng() % static_cast<uint32_t>(w.domain_b))};
      rows.push_back(row);
      change[cr].ins = eng.upload(table({row}));
    } else {
      const size_t i = rng() % rows.size();
      row = rows[i];
      rows.erase(std::remove(rows.begin(), rows.end(), row), rows.end());
      change[cr].del = eng.upload(table({row}));
    }
    t0 = Clock::now();
    ev::maintain(eng, p, state, change, o);
    (insert ? ins_ms : del_ms).push_back(1000 * since(t0));
    in[cr] = eng.upload(table(rows));
    t0 = Clock::now();
    const std::vector<Relation> want = ev::evaluate(eng, p, in, o);
    scratch_s.push_back(since(t0));
    for (size_t r = 0; r < p.rels.size(); ++r)
      if (p.rels[r].derived && want[r].rows() != state[r].rows()) same = false;
  }
  const double scratch = pct(scratch_s, 0.5);
  std::printf("| %s | %llu | %llu | %.3f (first %.3f) | %.2f / %.2f | %.2f / %.2f | %.0fx / %.0fx | %s |\n", w.name,
              static_cast<unsigned long long>(in_rows), static_cast<unsigned long long>(derived), scratch, first_s,
              pct(ins_ms, 0.5), pct(ins_ms, 0.99), pct(del_ms, 0.5), pct(del_ms, 0.99),
              1000 * scratch / std::max(1e-9, pct(ins_ms, 0.5)), 1000 * scratch / std::max(1e-9, pct(del_ms, 0.5)),
              same ? "yes" : "NO");
  std::fflush(stdout);
}

std::vector<std::pair<int32_t, int32_t>> random_pairs(std::mt19937& rng, size_t n, int32_t a, int32_t b) {
  std::vector<std::pair<int32_t, int32_t>> out(n);
  for (auto& e : out)
    e = {static_cast<int32_t>(rng() % static_cast<uint32_t>(a)), static_cast<int32_t>(rng() % static_cast<uint32_t>(b))};
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: mln_datalog_live EDGES [changes=20] [engine=cpu|cuda] [seed=1]\n");
    return 2;
  }
  const int64_t edges = std::atoll(argv[1]);
  int changes = 20;
  std::string engine = "cpu";
  uint32_t seed = 1;
  std::string programs = "tc,pt";
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("changes=", 0) == 0) changes = std::atoi(a.c_str() + 8);
    else if (a.rfind("engine=", 0) == 0) engine = a.substr(7);
    else if (a.rfind("seed=", 0) == 0) seed = static_cast<uint32_t>(std::atoll(a.c_str() + 5));
    else if (a.rfind("programs=", 0) == 0) programs = a.substr(9);
  }
  auto eng = engine == "cuda" ? mln::gpu::make_cuda_engine() : mln::gpu::make_cpu_engine();
  std::printf("engine: %s; %d single-row changes per program, seed %u\n\n", eng->name().c_str(), changes, seed);
  std::printf("| program | input rows | derived rows | from scratch, s (median) | insert p50 / p99, ms | "
              "delete p50 / p99, ms | speedup insert / delete | same rows |\n|---|---|---|---|---|---|---|---|\n");
  std::mt19937 rng(seed);
  const int32_t nodes = static_cast<int32_t>(static_cast<double>(edges) / 0.9);
  Workload tc{"transitive closure", "tc(X,Y) :- e(X,Y). tc(X,Y) :- tc(X,Z), e(Z,Y).", {}, "e", nodes, nodes};
  tc.inputs["e"] = random_pairs(rng, static_cast<size_t>(edges), nodes, nodes);
  if (programs.find("tc") != std::string::npos) run(*eng, tc, changes, seed);
  // Points-to: V variables, O objects; addr V -> O, assign/load/store V -> V.
  const int64_t stmts = edges / 4;
  const int32_t vars = static_cast<int32_t>(std::max<int64_t>(16, stmts / 2)), objs = std::max(4, vars / 8);
  Workload pt{"points-to (Andersen)",
              "pt(V,O) :- addr(V,O). pt(V,O) :- assign(V,W), pt(W,O).\n"
              "pt(V,O) :- load(V,W), pt(W,P), hpt(P,O). hpt(P,O) :- store(W,V), pt(W,P), pt(V,O).",
              {}, "assign", vars, vars};
  pt.inputs["addr"] = random_pairs(rng, static_cast<size_t>(stmts), vars, objs);
  pt.inputs["assign"] = random_pairs(rng, static_cast<size_t>(stmts), vars, vars);
  pt.inputs["load"] = random_pairs(rng, static_cast<size_t>(stmts / 8), vars, vars);
  pt.inputs["store"] = random_pairs(rng, static_cast<size_t>(stmts / 8), vars, vars);
  if (programs.find("pt") != std::string::npos) run(*eng, pt, changes, seed);
  return 0;
}
