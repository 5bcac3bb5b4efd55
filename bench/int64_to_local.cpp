// The pass that turns PyTorch's int64 argmax into poolkit's checked window-local codes before a backward, timed
// alone beside a plain OpenMP sum of the same int64 array (what reading it costs) and beside the two backwards,
// from int64 and from the codes, on resnet-stem (32x64x112x112 float32, 3x3 stride 2 pad 1). A C++ loop of 15
// rounds, the four calls in turn, medians; the pass is internal (src/cpu/argmax_local.hpp), so this links the
// static library. x86-64; from the repository root, after a release build, then run with [threads] [nchw|nhwc]:
//   g++ -O2 -march=native -fopenmp -std=c++17 -Iinclude -Isrc bench/int64_to_local.cpp build/release/src/libpoolkit.a
//       -lhwy -o /tmp/int64_to_local && /tmp/int64_to_local 2 nhwc
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "cpu/argmax_local.hpp"
#include "cpu/common.hpp"
#include "poolkit/poolkit.hpp"
#include "poolkit/threads.hpp"

using namespace poolkit;

namespace {
double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const Layout lay = argc > 2 && std::strcmp(argv[2], "nchw") == 0 ? Layout::ChannelsFirst : Layout::ChannelsLast;
  set_num_threads(threads);
  const int64_t N = 32, C = 64, H = 112, W = 112;
  const Geometry g = torch_geometry({H, W}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false);
  const Shape xs{N, C, H, W}, ys{N, C, 56, 56};
  Tensor x(DType::f32, xs, lay), y(DType::f32, ys, lay), dx(DType::f32, xs, lay), dy(DType::f32, ys, lay);
  Tensor flat(DType::i64, ys, lay), local(DType::u8, ys, lay);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  for (Tensor* t : {&x, &dy}) {
    float* p = t->data<float>();
    for (int64_t i = 0, n = t->numel(); i < n; ++i) p[i] = normal(rng);
  }
  max_pool_forward(g, x, y, flat);
  const Geometry g3 = cpu::as3d(g);
  const int64_t* f = flat.data<int64_t>();
  const int64_t count = flat.numel();
  [[maybe_unused]] volatile int64_t sink = 0;  // (keeps the sum)
  const char* names[4] = {"int64 -> uint8 codes", "sum of the int64 array", "backward from int64",
                          "backward from the codes"};
  std::vector<double> t[4];
  for (int round = 0; round < 15; ++round) {
    const double t0 = now_ms();
    if (!cpu::flat_argmax_to_local(g3, flat, local)) return std::puts("the conversion refused valid indices"), 1;
    const double t1 = now_ms();
    int64_t s = 0;
#pragma omp parallel for reduction(+ : s) num_threads(threads)
    for (int64_t i = 0; i < count; ++i) s += f[i];
    sink = s;
    const double t2 = now_ms();
    max_pool_backward(g, dy, flat, TensorView{}, dx);
    const double t3 = now_ms();
    max_pool_backward(g, dy, local, TensorView{}, dx);
    const double t4 = now_ms();
    t[0].push_back(t1 - t0), t[1].push_back(t2 - t1), t[2].push_back(t3 - t2), t[3].push_back(t4 - t3);
  }
  std::printf("resnet-stem %s, %d thread(s), medians of 15:\n", lay == Layout::ChannelsLast ? "nhwc" : "nchw", threads);
  for (int k = 0; k < 4; ++k) {
    std::sort(t[k].begin(), t[k].end());
    std::printf("  %-24s %.3f ms\n", names[k], t[k][7]);
  }
  return 0;
}
