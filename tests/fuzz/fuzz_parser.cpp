// libFuzzer target for the MLN language: parse_program (Alchemy and Tuffy
// modes), parse_queries and EvidenceReader.  A LangError is the expected
// outcome of bad input; any other exception, a crash, a sanitizer report or
// a clause text that does not parse back is a bug.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "lang/program.hpp"

namespace {

using mln::lang::Clause;
using mln::lang::EvidenceAtom;
using mln::lang::LangError;
using mln::lang::ParseOptions;
using mln::lang::Program;

// Declarations used when the input itself declares nothing usable.
const char* kBaseProgram =
    "*Friends(person, person)\nSmokes(person)\nCancer(person)\nAge(person, int_)\n"
    "Wt(person, float_ w)\nLabel(doc, cls!)\n1 Smokes(x)\n";

[[noreturn]] void bug(const char* what, const std::string& detail) {
  std::fprintf(stderr, "BUG: %s: %s\n", what, detail.c_str());
  std::abort();
}

// Every clause's text must parse back (as a soft rule) into one clause.
void check_round_trip(const Program& prog) {
  Program decls;
  decls.preds = prog.preds;
  for (const Clause& c : prog.clauses) {
    if (!std::string(mln::lang::format_clause(c)).size()) bug("empty listing", c.text);
    Program again = decls;
    try {
      mln::lang::parse_program_into(again, (c.weight_var.empty() ? "1 " : c.weight_var + ": ") + c.text + "\n");
    } catch (const LangError& e) {
      bug("clause text does not parse back", c.text + " -> " + e.where_what());
    }
    if (again.clauses.size() != 1 || again.clauses[0].text != c.text)
      bug("clause text changes when parsed back", c.text);
  }
}

// Parses a program; returns true and fills `out` when it is valid.
bool try_program(std::string_view text, const ParseOptions& opts, Program& out) {
  try {
    out = mln::lang::parse_program(text, opts);
    return true;
  } catch (const LangError& e) {
    (void)e.where_what();
    return false;
  }
}

void try_evidence(const Program& prog, std::string_view text) {
  try {
    size_t n = mln::lang::parse_evidence(prog, text, [&](const EvidenceAtom& a) {
      if (a.pred < 0 || a.pred >= static_cast<int>(prog.preds.size())) bug("evidence pred", "");
      if (a.args.size() != prog.preds[a.pred].arg_types.size()) bug("evidence arity", "");
      if (!(a.prior != a.prior) && (a.prior <= 0 || a.prior >= 1)) bug("evidence prior", "");
    });
    (void)n;
  } catch (const LangError& e) {
    (void)e.where_what();
  }
}

void try_queries(const Program& prog, std::string_view text) {
  try {
    auto q = mln::lang::parse_queries(prog, text);
    if (q.empty()) bug("no queries but no error", "");
  } catch (const LangError& e) {
    (void)e.where_what();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Program base = mln::lang::parse_program(kBaseProgram);
  std::string_view input(reinterpret_cast<const char*>(data), size);

  // Whole input as a program, in both modes.
  Program prog;
  ParseOptions tuffy;
  tuffy.alchemy = false;
  if (try_program(input, {}, prog)) check_round_trip(prog);
  Program tuffy_prog;
  if (try_program(input, tuffy, tuffy_prog) && !try_program(input, {}, prog))
    bug("Tuffy mode accepts what Alchemy mode rejects", std::string(input));

  // Whole input as evidence and as queries over the base program.
  try_evidence(base, input);
  try_queries(base, input);

  // "program \0 evidence \0 queries": the parts over the parsed program.
  size_t a = input.find('\0');
  if (a != std::string_view::npos) {
    std::string_view rest = input.substr(a + 1);
    size_t b = rest.find('\0');
    std::string_view ev = rest.substr(0, b);
    std::string_view qs = b == std::string_view::npos ? std::string_view() : rest.substr(b + 1);
    Program p;
    const Program& use = try_program(input.substr(0, a), {}, p) ? p : base;
    try_evidence(use, ev);
    try_queries(use, qs);
  }
  return 0;
}
