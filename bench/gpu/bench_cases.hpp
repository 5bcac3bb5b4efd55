#pragma once
// The cases of BENCH_CASES.md, shared by the poolkit and cuDNN GPU benchmarks.
#include <cstdint>
#include <string>
#include <vector>

namespace poolkit_bench {

enum class Kind { Max, Avg, AdaptiveAvg };

struct BenchCase {
  std::string name;
  std::vector<int64_t> shape;  // N, C, spatial...
  Kind kind;
  int64_t kernel = 0, stride = 0, pad = 0;
  bool count_include_pad = true;
  std::vector<int64_t> out;  // adaptive output size
  std::string dtype = "float32";
  std::vector<std::string> ops;  // what to time: fwd, fwd_idx, bwd
};

inline std::vector<BenchCase> bench_cases() {
  std::vector<BenchCase> c = {
      {"seed-max", {16384, 2, 32, 32}, Kind::Max, 2, 2, 0, true, {}, "float32", {"fwd", "fwd_idx", "bwd"}},
      {"seed-avg", {16384, 2, 32, 32}, Kind::Avg, 2, 2, 0, true, {}, "float32", {"fwd", "bwd"}},
      {"resnet-stem", {32, 64, 112, 112}, Kind::Max, 3, 2, 1, true, {}, "float32", {"fwd", "fwd_idx", "bwd"}},
      {"vgg", {32, 128, 112, 112}, Kind::Max, 2, 2, 0, true, {}, "float32", {"fwd_idx", "bwd"}},
      {"overlap-avg", {32, 64, 56, 56}, Kind::Avg, 3, 1, 1, false, {}, "float32", {"fwd", "bwd"}},
      {"gap", {256, 2048, 7, 7}, Kind::AdaptiveAvg, 0, 0, 0, true, {1, 1}, "float32", {"fwd", "bwd"}},
      {"adaptive", {64, 256, 13, 13}, Kind::AdaptiveAvg, 0, 0, 0, true, {7, 7}, "float32", {"fwd", "bwd"}},
      {"pool3d", {8, 64, 32, 32, 32}, Kind::Max, 2, 2, 0, true, {}, "float32", {"fwd_idx", "bwd"}},
      {"half-bf16", {32, 64, 112, 112}, Kind::Max, 3, 2, 1, true, {}, "bfloat16", {"fwd", "bwd"}},
      {"half-f16", {32, 64, 112, 112}, Kind::Max, 3, 2, 1, true, {}, "float16", {"fwd", "bwd"}},
  };
  return c;
}

}  // namespace poolkit_bench
