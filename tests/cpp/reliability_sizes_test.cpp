// Hostile sizes: shape arithmetic near the int64 limit raises poolkit::Error (kind Overflow, naming the argument)
// instead of overflowing; absurd geometries are refused quickly rather than looped over; zero-size batch and
// channel dimensions give zero-size outputs without error.
#include <chrono>
#include <cmath>
#include <limits>

#include "op_cases.hpp"
#include "test_util.hpp"

namespace poolkit::test {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

template <class F>
void expect_overflow(F&& f, const std::string& argument) {
  try {
    f();
    ADD_FAILURE() << "no error; expected an overflow naming " << argument;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Overflow) << e.what();
    EXPECT_EQ(e.argument(), argument) << e.what();
  }
}

TEST(ReliabilitySizes, GeometryArithmeticNearTheInt64LimitRaises) {
  expect_overflow([] { global_geometry({kMax}); }, "input size");
  expect_overflow([] { torch_geometry({5}, {3}, {1}, {0}, {kMax / 2 + 1}, false); }, "dilation");
  expect_overflow([] { regular_geometry({5}, RegularParams{{1}, {1}, {}, {kMax - 2}, {}, false}); }, "padding");
  expect_overflow([] { regular_geometry({5}, RegularParams{{2}, {kMax - 1}, {}, {}, {}, false}); }, "stride");
  expect_overflow([] { regular_geometry({5}, RegularParams{{2}, {1}, {kMax / 2}, {}, {}, false}); }, "dilation");
  expect_overflow([] { adaptive_geometry({int64_t(1) << 40}, {int64_t(1) << 40}); }, "output_size");
  expect_overflow([] { unpool_output_size({kMax / 2}, {2}, {4}, {0}, std::nullopt); }, "stride");
  expect_overflow([] { unpool_output_size({4}, {2}, {2}, {kMax}, std::nullopt); }, "padding");
  expect_overflow([] { fractional_geometry({(int64_t(1) << 53) + 2}, {2}, {2}); }, "input size[0]");
  expect_overflow([] { global_geometry({int64_t(1) << 30, int64_t(1) << 30, int64_t(1) << 4}); }, "input");
  // 'same' padding of an input near the limit: the conventions' own arithmetic must not overflow either.
  try {
    keras_geometry({kMax - 1}, {2}, {3}, "same");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Overflow) << e.what();
  }
  try {
    OnnxParams p;
    p.kernel_shape = {3};
    p.dilations = {kMax / 4};
    p.auto_pad = "SAME_UPPER";
    onnx_geometry({kMax / 4}, p);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Overflow) << e.what();
  }
}

TEST(ReliabilitySizes, TensorSizesWhoseProductOverflowsAreRefused) {
  Geometry g = global_geometry({2, 2});
  Tensor small(DType::f32, Shape{1, 1, 2, 2}), out(DType::f32, Shape{1, 1, 1, 1});
  // A data pointer, but sizes no memory can hold: refused before anything is read.
  TensorView x(small.view().data, DType::f32, Shape{int64_t(1) << 62, 4, 2, 2}, Strides{0, 0, 2, 1});
  TensorView y(out.view().data, DType::f32, Shape{int64_t(1) << 62, 4, 1, 1}, Strides{0, 0, 1, 1});
  expect_overflow([&] { max_pool_forward(g, x, y, {}); }, "x");
  expect_overflow([&] { avg_pool_backward(g, AvgOptions{}, y, x); }, "grad_input");
}

// Inputs the fuzzers found (each once overflowed int64 or hung in the geometry builders).
TEST(ReliabilitySizes, FuzzFindingsStayFixed) {
  // ceil mode added stride - 1 to the padded span without a check
  expect_overflow([] { regular_geometry({5}, RegularParams{{1}, {kMax - 3}, {}, {}, {}, true}); }, "stride");
  // unpool: the bounds default -/+ stride overflowed in the message and the check
  expect_overflow([] { unpool_output_size({1}, {2}, {kMax - 2}, {3}, std::vector<int64_t>{5}); }, "stride");
  expect_overflow([] { unpool_output_size({2}, {kMax - 6}, {kMax - 6}, {0}, std::vector<int64_t>{5}); }, "kernel_size");
  // fractional: output + kernel - 1 overflowed before the comparison with the input
  try {
    fractional_geometry({10}, {kMax - 1}, {kMax - 1});
    ADD_FAILURE() << "accepted an output larger than the input";
  } catch (const Error& e) {
    EXPECT_EQ(e.argument(), "output_size[0]") << e.what();
  }
  // keras 'same' formed in + stride - 1
  try {
    keras_geometry({kMax - 2}, {1}, {kMax - 1}, "same");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Overflow) << e.what();
  }
  // a dilated geometry with ~2^61 windows was checked window by window (a hang)
  auto t0 = std::chrono::steady_clock::now();
  Geometry g = regular_geometry({kMax / 4}, RegularParams{{2}, {1}, {2}, {}, {}, false});
  EXPECT_EQ(g.axes[0].out, kMax / 4 - 2);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
}

// Huge but valid sizes are answered in constant time, not by a loop over every window.
TEST(ReliabilitySizes, HugeValidGeometriesAreBuiltQuickly) {
  auto t0 = std::chrono::steady_clock::now();
  Geometry a = adaptive_geometry({3}, {int64_t(1) << 50});
  EXPECT_EQ(a.axes[0].kernel, 2);  // 3 cells over 2^50 bins: each bin holds 1 or 2 cells
  Geometry b = adaptive_geometry({int64_t(1) << 50}, {3});
  // n = 2^50 = 3q + 1: bins [0, q+1), [q, 2q+1), [2q, n) all hold q + 1 cells.
  EXPECT_EQ(b.axes[0].kernel, (int64_t(1) << 50) / 3 + 1);
  // Dilation larger than the input with far too many windows starting in the padding: refused, not iterated.
  try {
    regular_geometry({1}, RegularParams{{2}, {1}, {int64_t(1) << 40}, {int64_t(1) << 40}, {int64_t(1) << 40}, false});
    ADD_FAILURE() << "accepted a geometry whose middle windows read nothing";
  } catch (const Error& e) {
    EXPECT_EQ(e.argument(), "dilation[0]") << e.what();
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(seconds, 1.0);
}

// PyTorch gives an empty output for an empty batch; poolkit does the same for N = 0 and C = 0 in every operator.
TEST(ReliabilitySizes, ZeroBatchOrChannelsGiveEmptyOutputs) {
  for (const OpCase& c : all_op_cases()) {
    if (c.name.rfind("fractional", 0) == 0 || c.name.rfind("max_unpool", 0) == 0) continue;  // fixed N, C: below
    for (int axis : {0, 1}) {
      SCOPED_TRACE(c.name + (axis ? " C = 0" : " N = 0"));
      Shape xs = c.x_shape, ys = c.y_shape;
      xs[axis] = 0;
      ys[axis] = 0;
      Tensor x(DType::f32, xs), y(DType::f32, ys), dy(DType::f32, ys), dx(DType::f32, xs);
      EXPECT_NO_THROW(c.forward(x, y));
      EXPECT_NO_THROW(c.backward(x, dy, dx));
    }
  }
  Geometry g = fractional_geometry({6, 5}, {3, 3}, {2});
  Geometry pool = torch_geometry({6, 5}, {2}, {2}, {0}, {1}, false);
  for (Shape xs : {Shape{0, 2, 6, 5}, Shape{2, 0, 6, 5}}) {
    Shape ys{xs[0], xs[1], 3, 3}, ps{xs[0], xs[1], 3, 2};
    Tensor x(DType::f32, xs), y(DType::f32, ys), dy(DType::f32, ys), dx(DType::f32, xs), s(DType::f64, Shape{xs[0], xs[1], 2});
    Tensor am(DType::i64, ys), pooled(DType::f32, ps), idx(DType::i64, ps);
    EXPECT_NO_THROW(fractional_max_pool_forward(g, s, x, y, am));
    EXPECT_NO_THROW(fractional_max_pool_backward(g, s, dy, am, x, dx));
    EXPECT_NO_THROW(max_pool_forward(pool, x, pooled, idx));
    EXPECT_NO_THROW(max_unpool_forward(pooled, idx, x));
    EXPECT_NO_THROW(max_unpool_backward(x, idx, pooled));
  }
}

}  // namespace
}  // namespace poolkit::test
