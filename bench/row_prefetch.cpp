// The channels-first forwards with their rows asked for ahead into the outer caches only (cpu_row_prefetch_far,
// src/cpu/cpu_features.hpp: prefetcht2) and into the first-level cache (prefetcht0): the two timed in turn in one
// process, each timed call after an untimed one of the same kind (the VM's memory pace moves within seconds),
// median of 25: the max forward without an index, with the compact uint8 argmax and with int64 indices, and the
// average forward. The cases of bench/max_cases.hpp: seed, resnet-stem, vgg, pool3d (float32), half-bf16 (resnet-
// stem in bfloat16). From the repository root, after a release build:
//   g++ -O2 -fopenmp -std=c++17 -Iinclude bench/row_prefetch.cpp build/release/src/libpoolkit.a -lhwy
//       -o /tmp/row_prefetch && /tmp/row_prefetch [seed|resnet-stem|vgg|pool3d|half-bf16]...
// (2 threads, or OMP_NUM_THREADS)
#include <cstdio>
#include <cstdlib>

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
  const Geometry g = c.geometry();
  const CaseTensors t(c);
  const char* names[4] = {"max", "max uint8", "max int64", "avg"};
  for (int op = 0; op < 4; ++op) {
    const TensorView am = op == 1 ? t.codes.view() : op == 2 ? t.idx.view() : TensorView{};
    const size_t bytes = size_t(t.y.numel() * dtype_size(t.y.dtype()));
    const auto ms = medians_both_ways(cpu::cpu_row_prefetch_far, 25, t.y.data<char>(), bytes, [&] {
      if (op == 3) avg_pool_forward(g, AvgOptions{}, t.x, t.y);
      else max_pool_forward(g, t.x, t.y, am);
    });
    if (!ms) return 1;
    const auto [far, near] = *ms;
    std::printf("%-12s %-9s outer caches %.3f ms  first level %.3f ms  speed-up of the outer caches %.2f\n", c.name,
                names[op], far, near, near / far);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  poolkit::set_num_threads(std::getenv("OMP_NUM_THREADS") ? std::atoi(std::getenv("OMP_NUM_THREADS")) : 2);
  return run_named_cases(argc, argv, {"seed", "resnet-stem", "vgg", "pool3d", "half-bf16"}, run);
}
