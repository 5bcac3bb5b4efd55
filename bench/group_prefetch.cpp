// The float32 channels-last max forward with its groups asking for each tap's input ahead (cpu_group_prefetch,
// src/cpu/cpu_features.hpp) and without: the two timed in turn in one process, each timed call after an untimed
// one of the same kind (the VM's memory pace moves within seconds), median of 25: no index, the compact uint8
// argmax and int64 indices.
// Cases of shared/BENCH_CASES.md: pool3d (8x64x32^3, 2x2x2 s2), resnet-stem (32x64x112x112, 3x3 s2 p1), vgg
// (32x128x112x112, 2x2 s2). From the repository root, after a release build:
//   g++ -O2 -fopenmp -std=c++17 -Iinclude bench/group_prefetch.cpp build/release/src/libpoolkit.a -lhwy \
//       -o /tmp/group_prefetch && /tmp/group_prefetch pool3d [threads]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "poolkit/poolkit.hpp"
#include "poolkit/threads.hpp"

namespace poolkit::cpu {
extern bool cpu_group_prefetch;  // (the library's internal switch; see src/cpu/cpu_features.hpp)
}

namespace {
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
}  // namespace

int main(int argc, char** argv) {
  using namespace poolkit;
  const std::string name = argc > 1 ? argv[1] : "pool3d";
  set_num_threads(argc > 2 ? std::atoi(argv[2]) : 2);
  Shape xs, ys;
  Geometry g;
  if (name == "pool3d") {
    xs = Shape{8, 64, 32, 32, 32}, ys = Shape{8, 64, 16, 16, 16};
    g = torch_geometry({32, 32, 32}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, false);
  } else if (name == "vgg") {
    xs = Shape{32, 128, 112, 112}, ys = Shape{32, 128, 56, 56};
    g = torch_geometry({112, 112}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false);
  } else if (name == "resnet-stem") {
    xs = Shape{32, 64, 112, 112}, ys = Shape{32, 64, 56, 56};
    g = torch_geometry({112, 112}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false);
  } else {
    return std::fprintf(stderr, "usage: %s pool3d|resnet-stem|vgg [threads]\n", argv[0]), 2;
  }
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
  for (int index = 0; index < 3; ++index) {
    const TensorView am = index == 0 ? TensorView{} : index == 1 ? cv : iv;
    std::vector<double> ms[2];
    std::vector<float> first;
    for (int rep = -1; rep < 25; ++rep)
      for (int k = 0; k < 2; ++k) {
        const int mode = (k + rep + 1) % 2;  // which goes first alternates
        cpu::cpu_group_prefetch = mode == 0;
        max_pool_forward(g, xv, yv, am);
        const double t0 = now();
        max_pool_forward(g, xv, yv, am);
        if (rep >= 0) ms[mode].push_back(1e3 * (now() - t0));
        if (first.empty()) first.assign(y, y + yn);
        else if (!std::equal(first.begin(), first.end(), y)) return std::puts("the two modes' outputs differ"), 1;
      }
    for (auto& m : ms) std::sort(m.begin(), m.end());
    const double with = ms[0][ms[0].size() / 2], without = ms[1][ms[1].size() / 2];
    std::printf("%-12s %-6s prefetch %.3f ms  none %.3f ms  speed-up without %.2f\n", name.c_str(),
                index_names[index], with, without, with / without);
  }
  std::free(x), std::free(y), std::free(idx), std::free(codes);
}
