// Workload generators for the grounding benchmarks: enlarged versions of the
// Tuffy samples in Tuffy's file formats.  Header-only so that mln_gen and
// bench_ground share it.  Deterministic for a seed (std::mt19937_64 output
// is fixed by the standard; no std distributions, whose output is not).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace mln::bench {

// A generated workload: the three Tuffy input files as text.
struct Workload {
  std::string prog, evidence, query;
  size_t tuples = 0;  // evidence lines
};

// samples/smoke/prog.mln.
inline const char* smoke_program() {
  return "*Friends(person, person)\nSmokes(person)\nCancer(person)\n"
         "0.5  !Smokes(a1) v Cancer(a1)\n"
         "0.4  !Friends(a1,a2) v !Smokes(a1) v Smokes(a2)\n"
         "0.4  !Friends(a1,a2) v !Smokes(a2) v Smokes(a1)\n";
}

// samples/class/prog.mln.
inline const char* class_program() {
  return "*wrote(person,paper)\n*refers(paper,paper)\ncategory(paper,cat)\n*sameCat(cat,cat)\n"
         "1  !wrote(a1,a3) v !wrote(a1,a2) v category(a3,a4) v !category(a2,a4)\n"
         "2  !refers(a1,a2) v category(a2,a3) v !category(a1,a3)\n"
         "2  !refers(a1,a2) v category(a1,a3) v !category(a2,a3)\n"
         "10  sameCat(a2,a3) v !category(a1,a3) v !category(a1,a2)\n"
         "-3  category(a,Networking)\n"
         "0.14  category(a1,Programming)\n"
         "0.09  category(a1,Operating_Systems)\n"
         "0.04  category(a1,Hardware_and_Architecture)\n"
         "0.11  category(a1,Data_Structures__Algorithms_and_Theory)\n"
         "0.04  category(a1,Encryption_and_Compression)\n"
         "0.02  category(a1,Information_Retrieval)\n"
         "0.05  category(a1,Databases)\n"
         "0.39  category(a1,Artificial_Intelligence)\n"
         "0.06  category(a1,Human_Computer_Interaction)\n"
         "0.06  category(a,Networking)\n";
}

// The class program with its four structural rules hard (Tuffy: a rule
// that ends with '.' and has no weight); the unit priors stay soft.  On
// evidence where cited or co-written papers carry different labels the
// hard rules cannot all hold: MAP must then minimise the hard violations
// first (issue #25's hard-conflict workloads).
inline std::string class_program_hard() {
  // class_program() line by line: declarations (4 lines), the four
  // structural rules ("W  clause"), then the unit priors.
  std::string in = class_program(), out;
  size_t line = 0;
  for (size_t at = 0; at < in.size(); ++line) {
    size_t end = in.find('\n', at);
    std::string l = in.substr(at, end - at);
    at = end + 1;
    if (line >= 4 && line < 8) l = l.substr(l.find("  ") + 2) + ".";  // drop the weight, end with '.'
    out += l + "\n";
  }
  return out;
}

// Uniform integer in [0, n).
inline uint64_t below(std::mt19937_64& rng, uint64_t n) { return rng() % n; }

// Smokers: n people, each with `friends` distinct random friends, a
// `smoker_share` of them smokers (evidence); query Cancer(x).
inline Workload smokers(size_t n, uint64_t seed, int friends = 3, double smoker_share = 0.3) {
  std::mt19937_64 rng(seed);
  Workload w;
  w.prog = smoke_program();
  w.query = "Cancer(x)\n";
  std::string& e = w.evidence;
  for (size_t i = 0; i < n; ++i) {
    std::vector<size_t> fs;
    for (int k = 0; k < friends && n > 1 && fs.size() + 1 < n; ++k) {
      size_t j;
      bool dup;
      do {
        j = below(rng, n);
        dup = j == i;
        for (size_t f : fs) dup |= f == j;
      } while (dup);
      fs.push_back(j);
      e += "Friends(P" + std::to_string(i) + ", P" + std::to_string(j) + ")\n";
      ++w.tuples;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (static_cast<double>(below(rng, 1000000)) < smoker_share * 1e6) {
      e += "Smokes(P" + std::to_string(i) + ")\n";
      ++w.tuples;
    }
  }
  return w;
}

// RC (class-like): n papers, n/3 authors, 1-2 authors per paper (wrote),
// 2-3 citations per paper (refers, avg 2.8), a `labelled` share of papers
// with their category as evidence; query category(p,x).
inline Workload rc(size_t n, uint64_t seed, double labelled = 0.1) {
  static const char* cats[] = {"Programming", "Operating_Systems", "Hardware_and_Architecture",
                               "Data_Structures__Algorithms_and_Theory", "Encryption_and_Compression",
                               "Information_Retrieval", "Databases", "Artificial_Intelligence",
                               "Human_Computer_Interaction", "Networking"};
  std::mt19937_64 rng(seed);
  Workload w;
  w.prog = class_program();
  w.query = "category(p,x)\n";
  std::string& e = w.evidence;
  size_t authors = n / 3 + 1;
  for (size_t p = 0; p < n; ++p) {
    size_t k = 1 + below(rng, 2), first = below(rng, authors);
    for (size_t a = 0; a < k; ++a) {
      e += "wrote(A" + std::to_string((first + a * 7919) % authors) + ", Paper" + std::to_string(p) + ")\n";
      ++w.tuples;
    }
  }
  for (size_t p = 0; p < n && n > 1; ++p) {
    size_t k = below(rng, 5) == 0 ? 2 : 3;
    std::vector<size_t> cited;
    for (size_t c = 0; c < k && cited.size() + 1 < n; ++c) {
      size_t q;
      bool dup;
      do {
        q = below(rng, n);
        dup = q == p;
        for (size_t x : cited) dup |= x == q;
      } while (dup);
      cited.push_back(q);
      e += "refers(Paper" + std::to_string(p) + ", Paper" + std::to_string(q) + ")\n";
      ++w.tuples;
    }
  }
  for (size_t p = 0; p < n; ++p) {
    if (static_cast<double>(below(rng, 1000000)) < labelled * 1e6) {
      e += "category(Paper" + std::to_string(p) + ", " + cats[below(rng, 10)] + ")\n";
      ++w.tuples;
    }
  }
  for (const char* c : cats) {
    e += std::string("sameCat(") + c + ", " + c + ")\n";
    ++w.tuples;
  }
  return w;
}

// RC whose evidence contradicts its hard rules: class_program_hard() over
// rc()'s evidence with a larger labelled share, so that citations between
// papers labelled differently force a paper into two categories, which the
// hard sameCat rule forbids.
inline Workload rc_hard(size_t n, uint64_t seed, double labelled = 0.3) {
  Workload w = rc(n, seed, labelled);
  w.prog = class_program_hard();
  return w;
}

// A network whose LP relaxation is far from its optimum (issue #39's
// "large gap" workload): weighted independent set on a random graph of n
// nodes and n * degree / 2 links.  Each node gains 1 when selected, each
// link between two selected nodes costs 2.  Every fractional Sel = 0.5
// satisfies the links, so the LP bound is n / 2, while an integral answer
// must leave out a vertex cover (about 70% of the nodes at degree 6).
inline Workload mis(size_t n, uint64_t seed, int degree = 6) {
  std::mt19937_64 rng(seed);
  Workload w;
  w.prog = "*Link(node, node)\nSel(node)\n1  Sel(a1)\n2  !Link(a1,a2) v !Sel(a1) v !Sel(a2)\n";
  w.query = "Sel(x)\n";
  const size_t links = n > 1 ? n * static_cast<size_t>(degree) / 2 : 0;
  for (size_t k = 0; k < links; ++k) {
    const size_t a = below(rng, n), b = below(rng, n);
    if (a == b) continue;
    w.evidence += "Link(N" + std::to_string(a) + ", N" + std::to_string(b) + ")\n";
    ++w.tuples;
  }
  return w;
}

}  // namespace mln::bench
