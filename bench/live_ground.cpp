// Live answers on entity resolution (issue #62): after each change to the
// records, the live path (LiveGrounder::update, the network, MAP on the
// touched components from the previous answer) beside the path from
// scratch (ground() and solve_map() with the defaults) on the same data.
//
//   mln_live_ground RECORDS.tsv [CHANGES] [SEED] [SCRATCH_EVERY] [BATCHES]
//
// RECORDS.tsv: bench/gen/er_gen.py records (id, eid, name, zip).  Sim and
// SameZip are computed as issue #62's views define them (same first letter
// and Levenshtein distance <= 1; same zip and first two letters; a != b),
// the pairs of a changed record again after each change.  Changes: a third
// each of UPDATE (a typo in the name, or another zip), INSERT (a new record
// near an existing one) and DELETE.  Prints Markdown.
#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/components.hpp"
#include "core/base/network_cost.hpp"
#include "core/map/map_touched.hpp"
#include "core/marginal/marginal_touched.hpp"
#include "core/map/solve_map.hpp"
#include "ground/grounder.hpp"
#include "ground/live.hpp"
#include "lang/parser.hpp"
#include "mln/relation.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

const char* kProgram =
    "*Sim(rec, rec)\n*SameZip(rec, rec)\nSame(rec, rec)\n2.0  Sim(a, b) => Same(a, b)\n"
    "1.0  SameZip(a, b) => Same(a, b)\n-1.5 Same(a, b)\n3.0  Same(a, b), Same(b, c) => Same(a, c)\n"
    "Same(a, b) => Same(b, a).\n";

struct Rec {
  std::string name, zip;
};

int levenshtein(const std::string& a, const std::string& b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

bool sim(const Rec& a, const Rec& b) { return a.name[0] == b.name[0] && levenshtein(a.name, b.name) <= 1; }
bool samezip(const Rec& a, const Rec& b) { return a.zip == b.zip && a.name.compare(0, 2, b.name, 0, 2) == 0; }

// The records, the two views' pairs, and the grounder's input over one dictionary.
class Data {
 public:
  explicit Data(const mln::lang::Program& p) : prog_(p) {
    for (size_t i = 0; i < p.preds.size(); ++i) pred_[p.preds[i].name] = static_cast<int>(i);
  }
  std::map<int32_t, Rec> recs;
  std::set<std::pair<int32_t, int32_t>> sim_pairs, zip_pairs;

  int32_t id(const std::string& s) {
    auto [it, fresh] = dict_.emplace(s, static_cast<int32_t>(names_.size()));
    if (fresh) names_.push_back(s);
    return it->second;
  }
  void pairs_of(int32_t r, bool add) {
    for (auto it = sim_pairs.begin(); it != sim_pairs.end();)
      it = it->first == r || it->second == r ? sim_pairs.erase(it) : std::next(it);
    for (auto it = zip_pairs.begin(); it != zip_pairs.end();)
      it = it->first == r || it->second == r ? zip_pairs.erase(it) : std::next(it);
    if (!add) return;
    const Rec& a = recs.at(r);
    for (const auto& [o, b] : recs) {
      if (o == r) continue;
      if (sim(a, b)) { sim_pairs.insert({r, o}); sim_pairs.insert({o, r}); }
      if (samezip(a, b)) { zip_pairs.insert({r, o}); zip_pairs.insert({o, r}); }
    }
  }
  mln::ground::GroundInput input() const {
    mln::ground::GroundInput in;
    in.program = &prog_;
    in.symbols.names = names_;
    in.evidence.resize(prog_.preds.size());
    std::set<int32_t> dom;
    auto fill = [&](const std::set<std::pair<int32_t, int32_t>>& ps, int pred) {
      mln::ground::PredEvidence& e = in.evidence[pred];
      e.args.assign(2, {});
      for (const auto& [a, b] : ps) {
        e.args[0].push_back(a);
        e.args[1].push_back(b);
        e.truth.push_back(1);
        e.prior.push_back(std::nan(""));
        dom.insert(a);
        dom.insert(b);
      }
    };
    fill(sim_pairs, pred_.at("Sim"));
    fill(zip_pairs, pred_.at("SameZip"));
    in.evidence[pred_.at("Same")].args.assign(2, {});
    in.type_domains.push_back({"rec", std::vector<int32_t>(dom.begin(), dom.end())});
    mln::ground::QueryPattern q;
    q.pred = pred_.at("Same");
    q.args = {-1, -2};
    in.queries.push_back(q);
    return in;
  }

 private:
  const mln::lang::Program& prog_;
  std::map<std::string, int> pred_;
  std::map<std::string, int32_t> dict_;
  std::vector<std::string> names_{std::string()};
};

std::string typo(std::mt19937& rng, const std::string& name) {
  const size_t i = 1 + rng() % (name.size() - 1);
  std::string s = name;
  switch (rng() % 3) {
    case 0: s[i] = static_cast<char>('a' + (s[i] - 'a' + 1 + rng() % 25) % 26); break;
    case 1: if (s.size() > 3) s.erase(i, 1); break;
    default: s.insert(i, 1, s[i]);
  }
  return s;
}

// One random single-row change; returns its kind.
const char* change(Data& d, std::mt19937& rng, int& next_id) {
  std::vector<int32_t> keys;
  keys.reserve(d.recs.size());
  for (const auto& kv : d.recs) keys.push_back(kv.first);
  const int32_t r = keys[rng() % keys.size()];
  switch (rng() % 3) {
    case 0: {
      Rec& x = d.recs.at(r);
      if (rng() % 2) x.name = typo(rng, x.name);
      else x.zip = d.recs.at(keys[rng() % keys.size()]).zip;
      d.pairs_of(r, true);
      return "update";
    }
    case 1: {
      const Rec& base = d.recs.at(r);
      Rec x{rng() % 10 < 4 ? typo(rng, base.name) : base.name, rng() % 100 < 85 ? base.zip : "99999"};
      const int32_t n = d.id("r" + std::to_string(next_id++));
      d.recs[n] = x;
      d.pairs_of(n, true);
      return "insert";
    }
    default:
      d.recs.erase(r);
      d.pairs_of(r, false);
      return "delete";
  }
}

struct Scratch {
  double ground_s = 0, solve_s = 0, cost = 0;
  bool optimal = false;
};

Scratch from_scratch(const mln::ground::GroundInput& in) {
  Scratch s;
  auto eng = mln::gpu::make_cpu_engine();
  auto t = Clock::now();
  mln::ground::GroundOutput g = mln::ground::ground(in, *eng);
  s.ground_s = since(t);
  t = Clock::now();
  mln::solver::SolveResult r = mln::solver::solve_map(g.network, {});
  s.solve_s = since(t);
  s.cost = mln::total_cost(g.network.clauses, r.truth);
  s.optimal = r.optimal;
  return s;
}

double pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: mln_live_ground RECORDS.tsv [CHANGES] [SEED] [SCRATCH_EVERY] [BATCHES]\n");
    return 2;
  }
  const int changes = argc > 2 ? std::atoi(argv[2]) : 100;
  const uint32_t seed = argc > 3 ? static_cast<uint32_t>(std::atoi(argv[3])) : 1;
  const int scratch_every = argc > 4 ? std::atoi(argv[4]) : 25;
  std::vector<int> batches{10, 100, 1000};
  if (argc > 5) {
    batches.clear();
    std::istringstream bs(argv[5]);
    for (int b; bs >> b;) batches.push_back(b);
  }
  mln::lang::Program prog = mln::lang::parse_program(kProgram);
  Data d(prog);
  std::ifstream f(argv[1]);
  if (!f) {
    std::perror(argv[1]);
    return 1;
  }
  int next_id = 0;
  for (std::string line; std::getline(f, line);) {
    std::istringstream ls(line);
    std::string id, eid, name, zip;
    std::getline(ls, id, '\t');
    std::getline(ls, eid, '\t');
    std::getline(ls, name, '\t');
    std::getline(ls, zip, '\t');
    d.recs[d.id(id)] = Rec{name, zip};
    ++next_id;
  }
  ++next_id;
  for (const auto& kv : d.recs) d.pairs_of(kv.first, true);
  mln::ground::GroundInput in = d.input();
  std::printf("records: %zu, Sim pairs: %zu, SameZip pairs: %zu\n\n", d.recs.size(), d.sim_pairs.size(),
              d.zip_pairs.size());
  Scratch s0 = from_scratch(in);
  auto t = Clock::now();
  mln::ground::LiveGrounder live(in);
  const double build_s = since(t);
  mln::ground::GroundOutput g = live.output();
  t = Clock::now();
  mln::solver::SolveResult r0 = mln::solver::solve_map(g.network, {});
  const double solve0_s = since(t);
  mln::solver::PreviousAnswer prev{r0.truth, true, r0.cost, r0.bound, r0.optimal};
  {
    mln::solver::Components cc = mln::solver::find_components(g.network, false);
    int64_t big = 0, big_clauses = 0;
    for (int32_t k = 0; k < cc.count; ++k)
      if (cc.num_atoms(k) > big) { big = cc.num_atoms(k); big_clauses = cc.num_clauses(k); }
    std::printf("components: %d, the largest %lld atoms and %lld clauses; first solve: bound %.2f, %d of %d proven, %s\n\n",
                cc.count, static_cast<long long>(big), static_cast<long long>(big_clauses), r0.bound, r0.proven_components,
                r0.solved_components, r0.stop_reason.c_str());
  }
  std::printf("| start | seconds | atoms | clauses | cost |\n|---|---:|---:|---:|---:|\n");
  std::printf("| from scratch: ground() + solve_map() | %.3f + %.3f | %zu | %zu | %.2f%s |\n", s0.ground_s, s0.solve_s,
              g.atoms.size(), g.network.clauses.size(), s0.cost, s0.optimal ? " (optimal)" : "");
  std::printf("| live: the state's build + the first solve | %.3f + %.3f | %lld | %lld | %.2f |\n\n", build_s, solve0_s,
              static_cast<long long>(live.active_atoms()), static_cast<long long>(live.clauses()),
              mln::total_cost(g.network.clauses, r0.truth));
  mln::solver::MarginalOptions mo;  // MC-SAT with MLN_LIVE_SAMPLES samples (default 10^4: sampling error well under 0.02)
  mo.samples = std::getenv("MLN_LIVE_SAMPLES") ? std::atoi(std::getenv("MLN_LIVE_SAMPLES")) : 10000;
  t = Clock::now();
  std::vector<double> marg = mln::solver::solve_marginal(g.network, mo).prob;
  const double marg0_s = since(t);
  std::vector<double> marg_s;
  // The live path for one change: the update, the network, MAP on the touched components.
  struct Step {
    mln::ground::LiveDelta delta;
    mln::solver::TouchedResult map;
    double update_s = 0, network_s = 0, map_s = 0;
  };
  int last_proven = 0, last_solved = 0;
  auto step = [&] {
    Step st;
    auto t1 = Clock::now();
    st.delta = live.update(in);
    st.update_s = since(t1);
    t1 = Clock::now();
    g = live.output();
    st.network_s = since(t1);
    t1 = Clock::now();
    st.map = mln::solver::solve_map_touched(g.network, prev, st.delta.touched_atoms, {});
    st.map_s = since(t1);
    const mln::solver::SolveResult& w = st.map.whole;
    prev = {w.truth, true, w.cost, w.bound, w.optimal};
    last_proven = w.proven_components;
    last_solved = w.solved_components;
    return st;
  };
  std::mt19937 rng(seed);
  std::vector<double> total, upd, net, map;
  std::printf("| change | kind | update ms | network ms | MAP ms | total ms | clauses +/-/w | touched comps (atoms) | "
              "live cost | scratch s | scratch cost | speed-up |\n|---:|---|---:|---:|---:|---:|---|---|---:|---:|---:|---:|\n");
  for (int k = 1; k <= changes; ++k) {
    const char* kind = change(d, rng, next_id);
    in = d.input();
    const Step st = step();
    const mln::ground::LiveDelta& dl = st.delta;
    const mln::solver::TouchedResult& tr = st.map;
    const double u = st.update_s, n = st.network_s, m = st.map_s;
    t = Clock::now();
    marg = mln::solver::solve_marginal_touched(g.network, marg, dl.touched_atoms, mo).prob;
    marg_s.push_back(since(t));
    upd.push_back(u);
    net.push_back(n);
    map.push_back(m);
    total.push_back(u + n + m);
    if (k % scratch_every != 0 && k != 1) continue;
    Scratch s = from_scratch(in);
    std::printf("| %d | %s | %.1f | %.1f | %.1f | %.1f | %lld/%lld/%lld | %lld (%lld) | %.2f | %.2f | %.2f%s | %.0fx |\n", k,
                kind, u * 1e3, n * 1e3, m * 1e3, (u + n + m) * 1e3, static_cast<long long>(dl.clauses_added),
                static_cast<long long>(dl.clauses_removed), static_cast<long long>(dl.clauses_reweighted),
                static_cast<long long>(tr.touched_components), static_cast<long long>(tr.touched_atoms), tr.whole.cost,
                s.ground_s + s.solve_s, s.cost, s.optimal ? " (opt)" : "", (s.ground_s + s.solve_s) / (u + n + m));
  }
  std::printf("\nAfter the %d changes, the live answer: cost %.2f, bound %.2f (composed from the first solve's, "
              "map_touched.hpp), %d of %d components proven.\n", changes, prev.cost, prev.bound,
              total.empty() ? 0 : last_proven, total.empty() ? 0 : last_solved);
  std::printf("\n| %d single-row changes | p50 ms | p99 ms | max ms |\n|---|---:|---:|---:|\n", changes);
  std::printf("| update (delta grounding) | %.1f | %.1f | %.1f |\n", pct(upd, 0.5) * 1e3, pct(upd, 0.99) * 1e3,
              pct(upd, 1.0) * 1e3);
  std::printf("| network (output) | %.1f | %.1f | %.1f |\n", pct(net, 0.5) * 1e3, pct(net, 0.99) * 1e3, pct(net, 1.0) * 1e3);
  std::printf("| MAP on touched components | %.1f | %.1f | %.1f |\n", pct(map, 0.5) * 1e3, pct(map, 0.99) * 1e3,
              pct(map, 1.0) * 1e3);
  std::printf("| **total** | **%.1f** | **%.1f** | %.1f |\n\n", pct(total, 0.5) * 1e3, pct(total, 0.99) * 1e3,
              pct(total, 1.0) * 1e3);
  {  // marginals after the changes: kept and re-sampled on the touched components, against MC-SAT from scratch
    t = Clock::now();
    std::vector<double> fresh = mln::solver::solve_marginal(g.network, mo).prob;
    const double fresh_s = since(t);
    mln::solver::MarginalOptions other = mo;
    other.seed += 1;
    std::vector<double> floor = mln::solver::solve_marginal(g.network, other).prob;
    struct Diff { double mean = 0, worst = 0; int64_t over = 0, n = 0; };
    auto diff = [&](const std::vector<double>& a, const std::vector<double>& b) {
      Diff d;
      for (size_t x = 1; x < a.size(); ++x) {
        if (g.atoms[x - 1].pred < 0) continue;
        const double e = std::fabs(a[x] - b[x]);
        d.worst = std::max(d.worst, e);
        d.mean += e;
        d.over += e > 0.02;
        ++d.n;
      }
      if (d.n) d.mean /= static_cast<double>(d.n);
      return d;
    };
    const Diff live_d = diff(fresh, marg), floor_d = diff(fresh, floor);
    std::printf("Marginals (MC-SAT, %d samples): from scratch %.2f s on the first network; after each change, the touched "
                "components alone: p50 %.1f ms, p99 %.1f ms.\n\n| after the %d changes, against MC-SAT from scratch "
                "(%.2f s) | mean abs difference | max | atoms differing by > 0.02 |\n|---|---:|---:|---:|\n"
                "| live (kept, the touched components sampled again) | %.4f | %.4f | %lld of %lld |\n"
                "| from scratch with the next seed (the sampling noise) | %.4f | %.4f | %lld of %lld |\n\n",
                mo.samples, marg0_s, pct(marg_s, 0.5) * 1e3, pct(marg_s, 0.99) * 1e3, changes, fresh_s, live_d.mean,
                live_d.worst, static_cast<long long>(live_d.over), static_cast<long long>(live_d.n), floor_d.mean,
                floor_d.worst, static_cast<long long>(floor_d.over), static_cast<long long>(floor_d.n));
  }
  std::printf("| batch of changes | tuples changed | live s: update + network + MAP | touched comps | live cost | "
              "scratch s | scratch cost | speed-up |\n|---:|---:|---|---:|---:|---:|---:|---:|\n");
  for (int b : batches) {
    for (int k = 0; k < b; ++k) change(d, rng, next_id);
    in = d.input();
    const Step st = step();
    const mln::ground::LiveDelta& dl = st.delta;
    const mln::solver::TouchedResult& tr = st.map;
    const double u = st.update_s, n = st.network_s, m = st.map_s, l = u + n + m;
    Scratch s = from_scratch(in);
    std::printf("| %d | %lld | %.3f = %.3f + %.3f + %.3f | %lld | %.2f | %.2f | %.2f | %.1fx |\n", b,
                static_cast<long long>(dl.tuples_changed), l, u, n, m, static_cast<long long>(tr.touched_components),
                tr.whole.cost, s.ground_s + s.solve_s, s.cost, (s.ground_s + s.solve_s) / l);
  }
  return 0;
}
