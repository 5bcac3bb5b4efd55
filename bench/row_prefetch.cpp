// The channels-first forwards with their rows asked for ahead into the outer caches only (cpu_row_prefetch_far,
// src/cpu/cpu_features.hpp: prefetcht2) and into the first-level cache (prefetcht0): the two timed in turn in one
// process, each timed call after an untimed one of the same kind (the VM's memory pace moves within seconds),
// median of 25: the max forward without an index, with the compact uint8 argmax and with int64 indices, and the
// average forward. The cases of bench/max_cases.hpp: seed, resnet-stem, vgg, pool3d (float32), half-bf16 (resnet-
// stem in bfloat16). From the repository root, after a release build:
//   g++ -O2 -fopenmp -std=c++17 -Iinclude bench/row_prefetch.cpp build/release/src/libpoolkit.a -lhwy
//       -o /tmp/row_prefetch && /tmp/row_prefetch [seed|resnet-stem|vgg|pool3d|half-bf16]...
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
extern bool cpu_row_prefetch_far;  // (the library's internal switch; see src/cpu/cpu_features.hpp)
}

namespace {

int run(const MaxCase& c) {
  using namespace poolkit;
  const Shape xs(c.shape), ys(c.out_shape());
  const Geometry g = c.geometry();
  const size_t xn = size_t(xs.numel()), yn = size_t(ys.numel()), es = c.bf16 ? 2 : 4;
  const DType dt = c.bf16 ? DType::bf16 : DType::f32;
  char* x = static_cast<char*>(std::aligned_alloc(64, xn * es));
  char* y = static_cast<char*>(std::aligned_alloc(64, yn * es));
  int64_t* idx = static_cast<int64_t*>(std::aligned_alloc(64, yn * 8));
  uint8_t* codes = static_cast<uint8_t*>(std::aligned_alloc(64, yn));
  for (size_t i = 0; i < xn; ++i) {
    const float v = float((i * 2654435761u) % 1000);
    std::memcpy(x + i * es, reinterpret_cast<const char*>(&v) + 4 - es, es);  // (bfloat16: the float's top half)
  }
  std::memset(y, 0, yn * es), std::memset(idx, 0, yn * 8), std::memset(codes, 0, yn);
  const TensorView xv(x, dt, xs), yv(y, dt, ys), iv(idx, DType::i64, ys), cv(codes, DType::u8, ys);
  const char* names[4] = {"max", "max uint8", "max int64", "avg"};
  int rc = 0;
  for (int op = 0; op < 4 && rc == 0; ++op) {
    auto call = [&] {
      if (op == 3) avg_pool_forward(g, AvgOptions{}, xv, yv);
      else max_pool_forward(g, xv, yv, op == 0 ? TensorView{} : op == 1 ? cv : iv);
    };
    std::vector<char> first;
    const auto ms = times_in_turn(2, 25, [&](int mode) {
      cpu::cpu_row_prefetch_far = mode == 0;
      call();
      if (first.empty()) return first.assign(y, y + yn * es), true;
      if (std::equal(first.begin(), first.end(), y)) return true;
      rc = std::puts("the two modes' outputs differ");
      return false;
    });
    if (rc) break;
    const double far = ms[0][ms[0].size() / 2], near = ms[1][ms[1].size() / 2];
    std::printf("%-12s %-9s outer caches %.3f ms  first level %.3f ms  speed-up of the outer caches %.2f\n", c.name,
                names[op], far, near, near / far);
  }
  std::free(x), std::free(y), std::free(idx), std::free(codes);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  poolkit::set_num_threads(std::getenv("OMP_NUM_THREADS") ? std::atoi(std::getenv("OMP_NUM_THREADS")) : 2);
  return run_named_cases(argc, argv, {"seed", "resnet-stem", "vgg", "pool3d", "half-bf16"}, run);
}
