// `poolkit demo`: the worked examples of the seed documents, computed by the library and printed step by step.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "commands.hpp"
#include "poolkit/poolkit.hpp"

namespace poolkit::cli {
namespace {

Tensor matrix(int64_t h, int64_t w, const std::vector<double>& v) {
  Tensor t(DType::f32, {1, 1, h, w});
  for (int64_t i = 0; i < h; ++i)
    for (int64_t j = 0; j < w; ++j) t.set({0, 0, i, j}, v[size_t(i * w + j)]);
  return t;
}

void print(const char* title, const Tensor& t, const char* indent = "    ") {
  std::printf("  %s\n", title);
  for (int64_t i = 0; i < t.shape()[2]; ++i) {
    std::printf("%s[", indent);
    for (int64_t j = 0; j < t.shape()[3]; ++j) std::printf(j ? " %5g" : "%5g", t.get({0, 0, i, j}));
    std::printf(" ]\n");
  }
}

void textbook_max() {
  std::printf("1. Max pooling, 2x2 windows, stride 2, on a 4x4 feature map\n\n");
  Tensor x = matrix(4, 4, {1, 3, 2, 4, 5, 6, 1, 2, 7, 2, 3, 1, 4, 8, 5, 6});
  print("input:", x);
  Geometry g = torch_geometry({4, 4}, {2}, {2}, {0}, {1}, false);
  Tensor y(DType::f32, {1, 1, 2, 2}), idx(DType::i64, {1, 1, 2, 2});
  max_pool_forward(g, x, y, idx);
  std::printf("\n  window (i, j)   cells              max   argmax (flat index in the plane)\n");
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 2; ++j) {
      std::printf("  (%ld, %ld)          [[%g, %g], [%g, %g]]   %-5g %ld\n", long(i), long(j),
                  x.get({0, 0, 2 * i, 2 * j}), x.get({0, 0, 2 * i, 2 * j + 1}), x.get({0, 0, 2 * i + 1, 2 * j}),
                  x.get({0, 0, 2 * i + 1, 2 * j + 1}), y.get({0, 0, i, j}), long(idx.get({0, 0, i, j})));
    }
  std::printf("\n");
  print("result:", y);
  std::printf("\n");
}

void backward_examples() {
  std::printf("2. Backward through one 2x2 window: the gradient is routed (max) or spread (average)\n\n");
  Tensor x = matrix(2, 2, {1, 3, 2, 0.5});
  print("window:", x);
  Geometry g = torch_geometry({2, 2}, {2}, {}, {0}, {1}, false);
  Tensor y(DType::f32, {1, 1, 1, 1}), dx(DType::f32, {1, 1, 2, 2});
  Tensor am(local_argmax_dtype(g), {1, 1, 1, 1});
  max_pool_forward(g, x, y, am);
  std::printf("  max = %g, at window cell %g (1 byte saved per output)\n", y.get({0, 0, 0, 0}), am.get({0, 0, 0, 0}));
  Tensor dy(DType::f32, {1, 1, 1, 1});
  dy.set({0, 0, 0, 0}, 2.5);
  max_pool_backward(g, dy, am, {}, dx);
  print("max backward of grad_output 2.5: only the maximum receives it", dx);
  dy.set({0, 0, 0, 0}, 2.0);
  avg_pool_forward(g, AvgOptions{}, x, y);
  avg_pool_backward(g, AvgOptions{}, dy, dx);
  std::printf("  average = %g\n", y.get({0, 0, 0, 0}));
  print("average backward of grad_output 2.0: every cell receives 2.0 / 4", dx);
  std::printf("\n  Overlapping windows add up: 3x3 input, 2x2 windows, stride 1, grad_output all ones\n");
  Tensor x3 = matrix(3, 3, {1, 2, 3, 4, 9, 5, 6, 7, 8});
  Geometry g3 = torch_geometry({3, 3}, {2}, {1}, {0}, {1}, false);
  Tensor y3(DType::f32, {1, 1, 2, 2}), dy3(DType::f32, {1, 1, 2, 2}), dx3(DType::f32, {1, 1, 3, 3});
  for (int64_t i = 0; i < 4; ++i) dy3.set({0, 0, i / 2, i % 2}, 1);
  max_pool_forward(g3, x3, y3, {});
  max_pool_backward(g3, dy3, {}, x3, dx3);
  print("input:", x3);
  print("max of each window:", y3);
  print("grad_input: the centre 9 wins all four windows", dx3);
  std::printf("\n");
}

void shape_table() {
  std::printf("3. Output sizes: floor((I + 2P - K) / S) + 1, or ceil(...) in ceil mode\n\n");
  std::printf("  %-4s %-3s %-3s %-3s %-5s -> output\n", "I", "K", "S", "P", "ceil");
  struct Row { int64_t i, k, s, p; bool ceil; };
  for (Row r : {Row{28, 2, 2, 0, false}, Row{7, 2, 2, 0, false}, Row{7, 7, 1, 0, false}, Row{32, 3, 2, 1, false},
                Row{4, 2, 1, 0, false}, Row{7, 2, 2, 0, true}}) {
    Geometry g = torch_geometry({r.i}, {r.k}, {r.s}, {r.p}, {1}, r.ceil);
    std::printf("  %-4ld %-3ld %-3ld %-3ld %-5s -> %ld\n", long(r.i), long(r.k), long(r.s), long(r.p),
                r.ceil ? "yes" : "no", long(g.axes[0].out));
  }
  Geometry gap = global_geometry({7, 7});
  std::printf("  global pooling of a 7x7 map -> %ldx%ld\n\n", long(gap.axes[0].out), long(gap.axes[1].out));
}

}  // namespace

int demo(int argc, char** argv) {
  if (argc > 1 && (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h"))) {
    std::printf("usage: poolkit demo\n\nPrints the worked examples: the 4x4 max pooling example, the backward of max\n"
                "and average pooling on a 2x2 window, and a table of output sizes.\n");
    return 0;
  }
  textbook_max();
  backward_examples();
  shape_table();
  return 0;
}

}  // namespace poolkit::cli
