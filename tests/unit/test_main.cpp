// The test programs' main: GoogleTest's, under OpenMP's passive wait policy
// whatever starts them (ctest, a shell, a debugger).  Spinning waits made a
// case run directly up to 13 times slower than under ctest, which sets the
// policy for cases run side by side.  libgomp reads the variable when it is
// loaded, before any code of the program runs, so the program starts itself
// again with it set.
#include <gtest/gtest.h>

#include <cstdlib>
#include <unistd.h>

int main(int argc, char** argv) {
  if (!std::getenv("OMP_WAIT_POLICY")) {
    setenv("OMP_WAIT_POLICY", "passive", 1);
    execv("/proc/self/exe", argv);  // returns only when it fails: the run goes on as it is
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
