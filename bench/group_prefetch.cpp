// The float32 channels-last max forward with its groups asking for each tap's input ahead (cpu_group_prefetch,
// src/cpu/cpu_features.hpp) and without: the two timed in turn in one process, each timed call after an untimed
// one of the same kind (the VM's memory pace moves within seconds), median of 25: no index, the compact uint8
// argmax and int64 indices.
// The cases of bench/max_cases.hpp: pool3d, resnet-stem, vgg. From the repository root, after a release build:
//   g++ -O2 -fopenmp -std=c++17 -Iinclude bench/group_prefetch.cpp build/release/src/libpoolkit.a -lhwy
//       -o /tmp/group_prefetch && /tmp/group_prefetch [pool3d|resnet-stem|vgg]...
// (2 threads, or OMP_NUM_THREADS)
#include <cstdio>
#include <cstdlib>

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
  const Geometry g = c.geometry();
  const CaseTensors t(c, Layout::ChannelsLast);
  const char* index_names[3] = {"none", "uint8", "int64"};
  for (int index = 0; index < 3; ++index) {
    const TensorView am = index == 0 ? TensorView{} : index == 1 ? t.codes.view() : t.idx.view();
    const auto ms = medians_both_ways(cpu::cpu_group_prefetch, 25, t.y.data<char>(), size_t(t.y.numel() * 4),
                                      [&] { max_pool_forward(g, t.x, t.y, am); });
    if (!ms) return 1;
    const auto [with, without] = *ms;
    std::printf("%-12s %-6s prefetch %.3f ms  none %.3f ms  speed-up without %.2f\n", c.name, index_names[index],
                with, without, with / without);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  poolkit::set_num_threads(std::getenv("OMP_NUM_THREADS") ? std::atoi(std::getenv("OMP_NUM_THREADS")) : 2);
  return run_named_cases(argc, argv, {"pool3d", "resnet-stem", "vgg"}, run);
}
