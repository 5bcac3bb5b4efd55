// The max-pooling cases of shared/BENCH_CASES.md that the standalone C++ bench programs time (channels-last:
// bench/plain_loop_nhwc_max.cpp, bench/onednn/onednn_vs_poolkit.cpp, bench/group_prefetch.cpp; channels-first:
// bench/plain_loop_nchw_max.cpp, bench/row_prefetch.cpp), and the choice of some of them by name from a program's
// arguments.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "poolkit/poolkit.hpp"

struct MaxCase {
  const char* name;
  std::vector<int64_t> shape;  // N, C, then 2 or 3 spatial sizes
  int64_t k, s, p;             // window, stride and padding, the same along every spatial axis
  bool bf16;                   // bfloat16, else float32
  int rank() const { return int(shape.size()) - 2; }
  poolkit::Geometry geometry() const {
    const size_t r = size_t(rank());
    return poolkit::torch_geometry(std::vector<int64_t>(shape.begin() + 2, shape.end()), std::vector<int64_t>(r, k),
                                   std::vector<int64_t>(r, s), std::vector<int64_t>(r, p),
                                   std::vector<int64_t>(r, 1), false);
  }
  std::vector<int64_t> out_shape() const {  // N, C, then the geometry's output sizes
    std::vector<int64_t> o(shape.begin(), shape.begin() + 2);
    for (int64_t n : geometry().output_size()) o.push_back(n);
    return o;
  }
};

inline const std::vector<MaxCase> kMaxCases = {{"seed", {16384, 2, 32, 32}, 2, 2, 0, false},
                                               {"vgg", {32, 128, 112, 112}, 2, 2, 0, false},
                                               {"resnet-stem", {32, 64, 112, 112}, 3, 2, 1, false},
                                               {"pool3d", {8, 64, 32, 32, 32}, 2, 2, 0, false},
                                               {"half-bf16", {32, 64, 112, 112}, 3, 2, 1, true}};

// A case's input in its dtype (float32, or bfloat16 where c.bf16), the same values in every program here:
// (i * 2654435761) % 1000 at flat position i (bfloat16: the float's top half); its output and both argmax forms
// (int64 indices, uint8 codes), zeroed; all in one layout.
struct CaseTensors {
  poolkit::Tensor x, y, idx, codes;
  explicit CaseTensors(const MaxCase& c, poolkit::Layout layout = poolkit::Layout::ChannelsFirst) {
    using namespace poolkit;
    const DType dt = c.bf16 ? DType::bf16 : DType::f32;
    const Shape xs(c.shape), ys(c.out_shape());
    x = Tensor(dt, xs, layout), y = Tensor(dt, ys, layout);
    idx = Tensor(DType::i64, ys, layout), codes = Tensor(DType::u8, ys, layout);
    const size_t es = size_t(dtype_size(dt));
    char* p = x.data<char>();
    for (size_t i = 0; i < size_t(x.numel()); ++i) {
      const float v = float((i * 2654435761u) % 1000);
      std::memcpy(p + i * es, reinterpret_cast<const char*>(&v) + 4 - es, es);
    }
  }
};

// run(case) for each of the cases `names` that argv names, every one of them where argv names none, in kMaxCases'
// order; a name not among them is a usage error (status 2). Returns the OR of run's statuses.
template <class F>
int run_named_cases(int argc, char** argv, const std::vector<std::string>& names, F&& run) {
  auto named = [&](const std::string& n) {
    for (int a = 1; a < argc; ++a)
      if (n == argv[a]) return true;
    return argc == 1;
  };
  for (int a = 1; a < argc; ++a) {
    bool known = false;
    for (const std::string& n : names) known = known || n == argv[a];
    if (!known) {
      std::string usage;
      for (const std::string& n : names) usage += (usage.empty() ? "" : "|") + n;
      return std::fprintf(stderr, "usage: %s [%s]...\n", argv[0], usage.c_str()), 2;
    }
  }
  int rc = 0;
  for (const MaxCase& c : kMaxCases)
    for (const std::string& n : names)
      if (n == c.name && named(n)) rc |= run(c);
  return rc;
}
