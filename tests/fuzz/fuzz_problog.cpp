// libFuzzer target for the ProbLog parser and its checks (stratification,
// evidence, probabilities): a LangError is the expected outcome of bad
// input; anything else (another exception, a crash, a sanitizer report, a
// stack overflow) is a bug.
#include <cstdint>
#include <string_view>

#include "lang/problog.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  try {
    (void)mln::lang::problog::parse(input);
  } catch (const mln::lang::LangError& e) {
    (void)e.where_what();
  }
  return 0;
}
