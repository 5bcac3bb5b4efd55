// POOLKIT_TEST_SIMD_TARGET=<name> (a Highway target name: AVX2, SSE4, SCALAR, ...) runs the suite's SIMD kernels
// on that target alone instead of the best one here, so that each ISA compiled is tested on a machine that has
// the best (tests/CMakeLists.txt registers the fast-path tests once per target this way).
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

class SimdTarget : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* want = std::getenv("POOLKIT_TEST_SIMD_TARGET");
    if (!want || !*want) return;
    const std::vector<int64_t> here = hwy::SupportedAndGeneratedTargets();  // the best first
    if (!here.empty() && want == std::string(hwy::TargetName(here.front())))
      GTEST_SKIP() << "POOLKIT_TEST_SIMD_TARGET=" << want << ": the best target here, which the suite's own run takes";
    for (int64_t t : here)
      if (want == std::string(hwy::TargetName(t))) {
        hwy::SetSupportedTargetsForTest(t);
        std::printf("SIMD kernels on target %s\n", want);
        return;
      }
    bool compiled = false;
    for (int bit = 0; bit < 63; ++bit) {
      const int64_t target = int64_t(1) << bit;
      compiled |= (HWY_TARGETS & target) != 0 && want == std::string(hwy::TargetName(target));
    }
    if (compiled) GTEST_SKIP() << "POOLKIT_TEST_SIMD_TARGET=" << want << ": this machine lacks that instruction set";
    FAIL() << "POOLKIT_TEST_SIMD_TARGET=" << want << " names no SIMD target compiled into this build";
  }
  void TearDown() override { hwy::SetSupportedTargetsForTest(0); }
};

const auto* const kRegistered = ::testing::AddGlobalTestEnvironment(new SimdTarget);

}  // namespace
