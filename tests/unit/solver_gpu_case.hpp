// The solver's GPU cases' fixture: skipped without a usable GPU, failed
// instead when MLN_REQUIRE_GPU=1 (the GPU host's runs, tests/gpu_run.sh).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/map/solve_map.hpp"

namespace mln::solver::testing {

class GpuCase : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (gpu_available(&why)) return;
    const char* req = std::getenv("MLN_REQUIRE_GPU");
    if (req && std::string(req) == "1") FAIL() << "MLN_REQUIRE_GPU=1 but no usable GPU: " << why;
    GTEST_SKIP() << "no usable GPU: " << why;
  }
};

}  // namespace mln::solver::testing
