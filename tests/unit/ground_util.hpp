// Helpers for the grounder tests: engines to run on, dataset loading with the
// real parser, and a backend-independent view of a ground network.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "ground/grounder.hpp"
#include "lang/program.hpp"
#include "mln/relation.hpp"

namespace mln::ground::test {

// The engines every grounding test runs on: CPU always, CUDA when a device is
// present.  With MLN_REQUIRE_GPU=1 and no usable GPU the calling test fails.
inline std::vector<std::unique_ptr<gpu::Engine>> engines() {
  std::vector<std::unique_ptr<gpu::Engine>> out;
  out.push_back(gpu::make_cpu_engine());
  gpu::DeviceInfo d = gpu::query_device();
  const char* req = std::getenv("MLN_REQUIRE_GPU");
  bool require = req && std::string(req) == "1";
  if (d.device_count > 0) {
    try {
      out.push_back(gpu::make_cuda_engine());
    } catch (const std::exception& e) {
      if (require) ADD_FAILURE() << "MLN_REQUIRE_GPU=1 but the CUDA engine failed: " << e.what();
    }
  } else if (require) {
    ADD_FAILURE() << "MLN_REQUIRE_GPU=1 but no GPU is usable: " << d.error;
  }
  return out;
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline std::string datasets_dir() {
  const char* d = std::getenv("MLN_DATASETS");
  return d && *d ? d : MLN_EXAMPLES_DIR;  // the repository's examples/ (tests/CMakeLists.txt)
}

// A program, its queries and evidence, parsed from text with the real parser.
struct Loaded {
  std::unique_ptr<lang::Program> prog;
  std::vector<lang::Query> queries;
  std::vector<lang::EvidenceAtom> evidence;
};

inline Loaded load_text(const std::string& prog, const std::string& evidence, const std::string& queries) {
  Loaded l;
  l.prog = std::make_unique<lang::Program>(lang::parse_program(prog));
  l.queries = lang::parse_queries(*l.prog, queries);
  lang::parse_evidence(*l.prog, evidence, [&](const lang::EvidenceAtom& a) { l.evidence.push_back(a); });
  return l;
}

inline Loaded load_dir(const std::string& dir) {
  return load_text(read_file(dir + "/prog.mln"), read_file(dir + "/evidence.db"), read_file(dir + "/query.db"));
}

// An atom as text, e.g. "Cancer(Anna)".
inline std::string atom_text(const lang::Program& p, const Symbols& s, const Atom& a) {
  std::string t = p.preds[a.pred].name + "(";
  for (size_t i = 0; i < a.args.size(); ++i) {
    if (i) t += ",";
    bool num = p.preds[a.pred].arg_kinds[i] == lang::TypeKind::Int;
    t += num ? std::to_string(a.args[i]) : s.names.at(a.args[i]);
  }
  return t + ")";
}

// A ground network as a set: sorted literal texts -> summed weight.
using NetSet = std::map<std::vector<std::string>, double>;

inline NetSet net_set(const lang::Program& p, const Symbols& s, const GroundOutput& g) {
  NetSet out;
  const ClauseSet& cs = g.network.clauses;
  for (size_t i = 0; i < cs.size(); ++i) {
    std::vector<std::string> lits;
    for (int64_t k = cs.offsets[i]; k < cs.offsets[i + 1]; ++k) {
      int32_t l = cs.lits[k];
      lits.push_back((l > 0 ? "+" : "-") + atom_text(p, s, g.atoms.at(std::abs(l) - 1)));
    }
    std::sort(lits.begin(), lits.end());
    out[lits] += cs.weights[i];
  }
  return out;
}

inline std::vector<std::string> atom_set(const lang::Program& p, const Symbols& s, const GroundOutput& g) {
  std::vector<std::string> out;
  for (const auto& a : g.atoms) out.push_back(atom_text(p, s, a));
  std::sort(out.begin(), out.end());
  return out;
}

// Compares two network sets with a relative weight tolerance.
inline ::testing::AssertionResult same_net(const NetSet& a, const NetSet& b) {
  for (const auto& [k, w] : a) {
    auto it = b.find(k);
    std::string name;
    for (const auto& s : k) name += s + " ";
    if (it == b.end()) return ::testing::AssertionFailure() << "clause only in first: [" << name << "] " << w;
    if (std::fabs(it->second - w) > 1e-9 * std::max(1.0, std::fabs(w)))
      return ::testing::AssertionFailure() << "weight differs for [" << name << "]: " << w << " vs " << it->second;
  }
  for (const auto& [k, w] : b) {
    if (!a.count(k)) {
      std::string name;
      for (const auto& s : k) name += s + " ";
      return ::testing::AssertionFailure() << "clause only in second: [" << name << "] " << w;
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace mln::ground::test
