// Rule learning's search and coverage on a generated family task (issue
// #42; bench/rules.sh, bench/results/<machine>/rules.md):
//
//   mln_rules_bench FACTS [engines=cpu,cpu1,cuda] [aleph=FILE.pl] [seed=1]
//
// Six generations of people, one or two parents each, and `male` for every
// other person: about FACTS background facts.  The target is grandparent
// (parent(A, C), parent(C, B)); positives are grandparent pairs, negatives
// as many random pairs that are not, each min(#grandparents, FACTS / 20).
// For each engine (cpu: every thread; cpu1: one thread; cuda: the GPU)
// prints one line: the rule found, whether it is the planted one, its
// coverage, the candidates evaluated, the seconds in coverage and in all,
// and candidates x examples per second of coverage.  aleph=FILE.pl writes
// the same task for Aleph in SWI-Prolog (bench/rules.sh runs it).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "rules/rules.hpp"

namespace {

using mln::gpu::HostTable;

struct Family {
  HostTable parent, male, pos, neg;
  int32_t people = 0;
};

Family generate(int64_t facts, uint32_t seed) {
  Family f;
  std::mt19937 rng(seed);
  const int gens = 6;
  // Per column of people: about 1.5 parent facts in 5 of 6 generations and
  // half a male fact in each, 10.5 facts in all.
  const int32_t width = static_cast<int32_t>(std::max<int64_t>(4, facts * 10 / 105));
  f.people = gens * width;
  f.parent.cols.assign(2, {});
  std::vector<std::vector<int32_t>> kids(static_cast<size_t>(f.people));
  for (int g = 1; g < gens; ++g)
    for (int32_t i = 0; i < width; ++i) {
      const int32_t child = g * width + i;
      const int32_t p1 = (g - 1) * width + static_cast<int32_t>(rng() % static_cast<uint32_t>(width));
      int32_t p2 = rng() % 2 ? (g - 1) * width + static_cast<int32_t>(rng() % static_cast<uint32_t>(width)) : p1;
      f.parent.cols[0].push_back(p1), f.parent.cols[1].push_back(child), kids[static_cast<size_t>(p1)].push_back(child);
      if (p2 != p1)
        f.parent.cols[0].push_back(p2), f.parent.cols[1].push_back(child), kids[static_cast<size_t>(p2)].push_back(child);
    }
  f.male.cols.assign(1, {});
  for (int32_t p = 0; p < f.people; p += 2) f.male.cols[0].push_back(p);
  const size_t want = static_cast<size_t>(std::max<int64_t>(50, facts / 20));
  std::set<std::pair<int32_t, int32_t>> pos;
  for (size_t tries = 0; pos.size() < want && tries < 20 * want; ++tries) {
    const int32_t a = static_cast<int32_t>(rng() % static_cast<uint32_t>((gens - 2) * width));
    const auto& k = kids[static_cast<size_t>(a)];
    if (k.empty()) continue;
    const auto& gk = kids[static_cast<size_t>(k[rng() % k.size()])];
    if (!gk.empty()) pos.insert({a, gk[rng() % gk.size()]});
  }
  auto is_gp = [&](int32_t a, int32_t b) {
    for (int32_t c : kids[static_cast<size_t>(a)])
      for (int32_t d : kids[static_cast<size_t>(c)])
        if (d == b) return true;
    return false;
  };
  std::set<std::pair<int32_t, int32_t>> neg;
  while (neg.size() < pos.size()) {
    const int32_t a = static_cast<int32_t>(rng() % static_cast<uint32_t>(f.people));
    const int32_t b = static_cast<int32_t>(rng() % static_cast<uint32_t>(f.people));
    if (!is_gp(a, b)) neg.insert({a, b});
  }
  f.pos.cols.assign(2, {});
  f.neg.cols.assign(2, {});
  for (auto [a, b] : pos) f.pos.cols[0].push_back(a), f.pos.cols[1].push_back(b);
  for (auto [a, b] : neg) f.neg.cols[0].push_back(a), f.neg.cols[1].push_back(b);
  return f;
}

void write_aleph(const Family& f, const std::string& path) {
  std::ofstream o(path);
  o << ":- use_module(library(aleph)).\n:- aleph.\n:- style_check(-discontiguous).\n"
       ":- aleph_set(clauselength, 4).\n:- aleph_set(i, 2).\n:- aleph_set(noise, 0).\n:- aleph_set(minpos, 2).\n"
       ":- aleph_set(nodes, 100000).\n"
       ":- modeh(1, grandparent(+person, +person)).\n:- modeb(*, parent(+person, -person)).\n"
       ":- modeb(*, parent(-person, +person)).\n:- modeb(1, male(+person)).\n"
       ":- determination(grandparent/2, parent/2).\n:- determination(grandparent/2, male/1).\n:- begin_bg.\n";
  for (int32_t p = 0; p < f.people; ++p) o << "person(p" << p << ").\n";
  for (size_t i = 0; i < f.parent.rows(); ++i) o << "parent(p" << f.parent.cols[0][i] << ", p" << f.parent.cols[1][i] << ").\n";
  for (int32_t p : f.male.cols[0]) o << "male(p" << p << ").\n";
  o << ":- end_bg.\n:- begin_in_pos.\n";
  for (size_t i = 0; i < f.pos.rows(); ++i) o << "grandparent(p" << f.pos.cols[0][i] << ", p" << f.pos.cols[1][i] << ").\n";
  o << ":- end_in_pos.\n:- begin_in_neg.\n";
  for (size_t i = 0; i < f.neg.rows(); ++i) o << "grandparent(p" << f.neg.cols[0][i] << ", p" << f.neg.cols[1][i] << ").\n";
  o << ":- end_in_neg.\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: mln_rules_bench FACTS [engines=cpu,cpu1,cuda] [aleph=FILE.pl] [seed=1]\n");
    return 2;
  }
  const int64_t facts = std::atoll(argv[1]);
  std::string engines = "cpu,cpu1,cuda", aleph;
  uint32_t seed = 1;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("engines=", 0) == 0) engines = a.substr(8);
    if (a.rfind("aleph=", 0) == 0) aleph = a.substr(6);
    if (a.rfind("seed=", 0) == 0) seed = static_cast<uint32_t>(std::atoi(a.c_str() + 5));
  }
  const auto t0 = std::chrono::steady_clock::now();
  Family f = generate(facts, seed);
  const double gen_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  mln::rules::Task task;
  task.type_names = {"person"};
  task.background = {{"parent", {0, 0}, f.parent}, {"male", {0}, f.male}};
  task.target = {"grandparent", {0, 0}, {}};
  task.pos = f.pos;
  task.neg = f.neg;
  const size_t bg = f.parent.rows() + f.male.rows(), examples = f.pos.rows() + f.neg.rows();
  std::printf("task family: %zu background facts, %zu positives, %zu negatives (generated in %.2f s)\n", bg,
              f.pos.rows(), f.neg.rows(), gen_s);
  if (!aleph.empty()) write_aleph(f, aleph);
  size_t from = 0;
  while (from <= engines.size()) {
    size_t to = engines.find(',', from);
    if (to == std::string::npos) to = engines.size();
    const std::string name = engines.substr(from, to - from);
    from = to + 1;
    std::unique_ptr<mln::gpu::Engine> eng;
    try {
      mln::gpu::EngineOptions eo;
      if (name == "cpu1") eo.cpu_threads = 1;
      eng = name == "cuda" ? mln::gpu::make_cuda_engine(eo) : mln::gpu::make_cpu_engine(eo);
    } catch (const std::exception& e) {
      std::printf("engine %s: absent (%s)\n", name.c_str(), e.what());
      continue;
    }
    mln::rules::SearchStats st;
    const auto t1 = std::chrono::steady_clock::now();
    std::vector<mln::rules::LearnedRule> th = mln::rules::learn_rules(*eng, task, mln::rules::SearchOptions{}, &st);
    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    const bool planted = th.size() == 1 && th[0].clause.body.size() == 2 && th[0].on_all.neg == 0 &&
                         th[0].on_all.pos == static_cast<int64_t>(f.pos.rows());
    std::printf("engine %s (%s): rule %s | planted %s | P %lld N %lld | candidates %lld | coverage %.3f s | "
                "total %.3f s | %.3g candidate-examples/s\n",
                name.c_str(), eng->name().c_str(), th.empty() ? "(none)" : th[0].text.c_str(), planted ? "yes" : "NO",
                th.empty() ? 0LL : (long long)th[0].on_all.pos, th.empty() ? 0LL : (long long)th[0].on_all.neg,
                (long long)st.candidates, st.coverage_s, total,
                static_cast<double>(st.candidates) * static_cast<double>(examples) / std::max(st.coverage_s, 1e-9));
  }
  return 0;
}
