// The float32 channels-last max forward with its groups asking for each tap's input ahead (cpu_group_prefetch,
// src/cpu/cpu_features.hpp) and without: the two timed in turn in one process, each timed call after an untimed
// one of the same kind (the VM's memory pace moves within seconds), median of 25: no index, the compact uint8
// argmax and int64 indices.
// The cases of bench/max_cases.hpp: pool3d, resnet-stem, vgg. From the repository root, after a release build:
//   g++ -O2 -fopenmp -std=c++17 -Iinclude bench/group_prefetch.cpp build/release/src/libpoolkit.a -lhwy
//       -o /tmp/group_prefetch && /tmp/group_prefetch [pool3d|resnet-stem|vgg]...
// (2 threads, or OMP_NUM_THREADS)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "poolkit/poolkit.hpp"
#include "poolkit/threads.hpp"
#include "in_turn.hpp"
#include "max_cases.hpp"

namespace poolkit::cpu {
extern bool cpu_group_prefetch;  // (the library's internal switch; see src/cpu/cpu_features.hpp)
}

namespace {

int run(const MaxCase& c) {
  using namespace poolkit;
  const Shape xs(c.shape), ys(c.out_shape());
  const Geometry g = c.geometry();
  const size_t xn = size_t(xs.numel()), yn = size_t(ys.numel());
  float* x = static_cast<float*>(std::aligned_alloc(64, xn * 4));
  float* y = static_cast<float*>(std::aligned_alloc(64, yn * 4));
  int64_t* idx = static_cast<int64_t*>(std::aligned_alloc(64, yn * 8));
  uint8_t* codes = static_cast<uint8_t*>(std::aligned_alloc(64, yn));
  for (size_t i = 0; i < xn; ++i) x[i] = float((i * 2654435761u) % 1000);
  std::memset(y, 0, yn * 4), std::memset(idx, 0, yn * 8), std::memset(codes, 0, yn);
  const TensorView xv(x, DType::f32, xs, Layout::ChannelsLast), yv(y, DType::f32, ys, Layout::ChannelsLast);
  const TensorView iv(idx, DType::i64, ys, Layout::ChannelsLast), cv(codes, DType::u8, ys, Layout::ChannelsLast);
  const char* index_names[3] = {"none", "uint8", "int64"};
  int rc = 0;
  for (int index = 0; index < 3 && rc == 0; ++index) {
    const TensorView am = index == 0 ? TensorView{} : index == 1 ? cv : iv;
    std::vector<float> first;
    const auto ms = times_in_turn(2, 25, [&](int mode) {
      cpu::cpu_group_prefetch = mode == 0;
      max_pool_forward(g, xv, yv, am);
      if (first.empty()) return first.assign(y, y + yn), true;
      if (std::equal(first.begin(), first.end(), y)) return true;
      rc = std::puts("the two modes' outputs differ");
      return false;
    });
    if (rc) break;
    const double with = ms[0][ms[0].size() / 2], without = ms[1][ms[1].size() / 2];
    std::printf("%-12s %-6s prefetch %.3f ms  none %.3f ms  speed-up without %.2f\n", c.name, index_names[index],
                with, without, with / without);
  }
  std::free(x), std::free(y), std::free(idx), std::free(codes);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  poolkit::set_num_threads(std::getenv("OMP_NUM_THREADS") ? std::atoi(std::getenv("OMP_NUM_THREADS")) : 2);
  return run_named_cases(argc, argv, {"pool3d", "resnet-stem", "vgg"}, run);
}
