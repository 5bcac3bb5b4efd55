// The worked examples of the seed documents, with the expected values written by hand from the text.
#include "test_util.hpp"

namespace poolkit::test {
namespace {

Tensor matrix(int64_t h, int64_t w, const std::vector<double>& v, DType dt = DType::f32) {
  Tensor t(dt, {1, 1, h, w});
  for (int64_t i = 0; i < h * w; ++i) t.set({0, 0, i / w, i % w}, v[size_t(i)]);
  return t;
}

void expect_matrix(const Tensor& t, const std::vector<double>& want) {
  int64_t w = t.shape()[3];
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(t.get({0, 0, int64_t(i) / w, int64_t(i) % w}), want[i]) << "cell " << i;
}

// Seed 001: the 4x4 map, 2x2 windows, stride 2 -> [[6, 4], [8, 6]].
TEST(SeedExamples, TextbookMaxPool4x4) {
  Tensor x = matrix(4, 4, {1, 3, 2, 4, 5, 6, 1, 2, 7, 2, 3, 1, 4, 8, 5, 6});
  Geometry g = torch_geometry({4, 4}, {2}, {2}, {0}, {1}, false);
  Tensor y(DType::f32, {1, 1, 2, 2}), idx(DType::i64, {1, 1, 2, 2});
  for (auto* op : {&max_pool_forward, &ref::max_pool_forward}) {
    op(g, x, y, idx);
    expect_matrix(y, {6, 4, 8, 6});
    expect_matrix(idx, {5, 3, 13, 15});  // flat positions of 6, 4, 8, 6 in the 4x4 plane
  }
}

// Seed 002: max backward routes 2.5 to the 3.0 at (0, 1); average spreads 2.0 as 0.5 each.
TEST(SeedExamples, BackwardOfOneWindow) {
  Tensor x = matrix(2, 2, {1.0, 3.0, 2.0, 0.5});
  Geometry g = torch_geometry({2, 2}, {2}, {}, {0}, {1}, false);
  Tensor y(DType::f32, {1, 1, 1, 1}), dy(DType::f32, {1, 1, 1, 1}), dx(DType::f32, {1, 1, 2, 2});
  max_pool_forward(g, x, y, {});
  EXPECT_EQ(y.get({0, 0, 0, 0}), 3.0);
  dy.set({0, 0, 0, 0}, 2.5);
  max_pool_backward(g, dy, {}, x, dx);
  expect_matrix(dx, {0, 2.5, 0, 0});
  dy.set({0, 0, 0, 0}, 2.0);
  avg_pool_backward(g, AvgOptions{}, dy, dx);
  expect_matrix(dx, {0.5, 0.5, 0.5, 0.5});
}

// Seed 002: overlapping windows add up.
TEST(SeedExamples, OverlappingWindowsAccumulate) {
  Tensor x = matrix(3, 3, {1, 2, 3, 4, 9, 5, 6, 7, 8});
  Geometry g = torch_geometry({3, 3}, {2}, {1}, {0}, {1}, false);
  Tensor dy = filled(DType::f32, {1, 1, 2, 2}, 1.0), dx(DType::f32, {1, 1, 3, 3});
  max_pool_backward(g, dy, {}, x, dx);
  expect_matrix(dx, {0, 0, 0, 0, 4, 0, 0, 0, 0});
  avg_pool_backward(g, AvgOptions{}, dy, dx);
  expect_matrix(dx, {0.25, 0.5, 0.25, 0.5, 1.0, 0.5, 0.25, 0.5, 0.25});
}

// Seed 001's table of output sizes.
TEST(SeedExamples, ShapeTable) {
  struct Row { int64_t in, k, s, p; bool ceil; int64_t out; };
  for (Row r : {Row{28, 2, 2, 0, false, 14}, Row{7, 2, 2, 0, false, 3}, Row{7, 7, 1, 0, false, 1},
                Row{32, 3, 2, 1, false, 16}, Row{4, 2, 1, 0, false, 3}, Row{7, 2, 2, 0, true, 4}}) {
    Geometry g = torch_geometry({r.in, r.in}, {r.k}, {r.s}, {r.p}, {1}, r.ceil);
    EXPECT_EQ(g.axes[0].out, r.out) << r.in << " k" << r.k << " s" << r.s << " p" << r.p;
    EXPECT_EQ(g.axes[1].out, r.out);
  }
  EXPECT_EQ(global_geometry({7, 7}).output_size(), (std::vector<int64_t>{1, 1}));
  // Seed 001's exercise: (1, 3, 28, 28) through MaxPool2d(3, 2, 1) -> (1, 3, 14, 14).
  EXPECT_EQ(torch_geometry({28, 28}, {3}, {2}, {1}, {1}, false).output_size(), (std::vector<int64_t>{14, 14}));
}

// Seed 001: GAP = AdaptiveAvgPool2d(1) = mean over the plane.
TEST(SeedExamples, GlobalAveragePoolIsTheMean) {
  Tensor x = matrix(2, 3, {1, 2, 3, 4, 5, 9});
  Tensor y(DType::f32, {1, 1, 1, 1});
  avg_pool_forward(global_geometry({2, 3}), AvgOptions{}, x, y);
  EXPECT_EQ(y.get({0, 0, 0, 0}), 4.0);
  avg_pool_forward(adaptive_geometry({2, 3}, {1, 1}), AvgOptions{}, x, y);
  EXPECT_EQ(y.get({0, 0, 0, 0}), 4.0);
  max_pool_forward(global_geometry({2, 3}), x, y, {});
  EXPECT_EQ(y.get({0, 0, 0, 0}), 9.0);
}

}  // namespace
}  // namespace poolkit::test
