// libFuzzer target for the job options' JSON reader and validator
// (options/src/options.cpp, which the worker and the command line run): an
// OptionError is the expected outcome of bad input; anything else (another
// exception, a crash, a sanitizer report, a stack overflow on nesting) is a
// bug.  Each input is read as the options of every task.
#include <cstdint>
#include <string_view>

#include "options/options.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  for (unsigned bits : {mln::options::kMap, mln::options::kMarginal, mln::options::kInfer, mln::options::kLearn}) {
    try {
      (void)mln::options::decode(bits, input);
    } catch (const mln::options::OptionError& e) {
      (void)e.what();
    }
  }
  return 0;
}
