// mln_gen: writes an enlarged Tuffy workload (prog.mln, evidence.db,
// query.db) into a directory.
//   mln_gen smokers|rc|rc-hard|mis N OUTDIR [SEED]
//   mln_gen class-hard 0 OUTDIR   (the class program, structural rules hard;
//                                  use it with examples/class's evidence)
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <sys/stat.h>

#include "generate.hpp"

namespace {

// Writes `text` to `path`; false on failure.
bool write(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  return static_cast<bool>(f);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s smokers|rc|rc-hard|class-hard|mis N OUTDIR [SEED]\n", argv[0]);
    return 2;
  }
  std::string kind = argv[1];
  size_t n = std::strtoull(argv[2], nullptr, 10);
  std::string dir = argv[3];
  uint64_t seed = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 1;
  mln::bench::Workload w;
  if (kind == "smokers") w = mln::bench::smokers(n, seed);
  else if (kind == "rc") w = mln::bench::rc(n, seed);
  else if (kind == "rc-hard") w = mln::bench::rc_hard(n, seed);
  else if (kind == "mis") w = mln::bench::mis(n, seed);
  else if (kind == "class-hard") w.prog = mln::bench::class_program_hard();
  else {
    std::fprintf(stderr, "unknown workload '%s' (smokers, rc, rc-hard, class-hard or mis)\n", kind.c_str());
    return 2;
  }
  mkdir(dir.c_str(), 0755);
  const bool prog_only = kind == "class-hard";
  if (!write(dir + "/prog.mln", w.prog) ||
      (!prog_only && (!write(dir + "/evidence.db", w.evidence) || !write(dir + "/query.db", w.query)))) {
    std::fprintf(stderr, "cannot write into %s\n", dir.c_str());
    return 1;
  }
  std::printf("%s: %zu evidence tuples in %s\n", kind.c_str(), w.tuples, dir.c_str());
  return 0;
}
