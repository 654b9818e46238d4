// libFuzzer target for the Datalog parser and its checks (safety,
// stratification): a LangError is the expected outcome of bad input; any
// other exception, a crash, a sanitizer report or a stack overflow (deep
// nesting, long dependency chains) is a bug.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "lang/datalog.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  try {
    const mln::lang::datalog::Program p = mln::lang::datalog::parse(input);
    if (p.rules.empty() && p.rels.empty()) {
      std::fprintf(stderr, "BUG: an empty program accepted\n");
      std::abort();
    }
  } catch (const mln::lang::LangError& e) {
    (void)e.where_what();
  }
  return 0;
}
