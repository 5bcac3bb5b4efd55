// Rules of docs/errors.md not exercised by errors_test.cpp: each request breaks one rule and must raise
// poolkit::Error of the documented kind, naming the documented argument, before touching memory.
#include <cmath>

#include "test_util.hpp"

namespace poolkit::test {
namespace {

template <class F>
void expect_error(F&& f, ErrorKind kind, const std::string& argument, const std::string& words) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one naming " << argument;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_EQ(e.argument(), argument) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

using ErrorKind::Index;
using ErrorKind::Overflow;
using ErrorKind::Type;
using ErrorKind::Value;

TEST(ReliabilityErrors, RequiredListsMustBeGiven) {
  expect_error([] { torch_geometry({4}, {}, {}, {}, {}, false); }, Value, "kernel_size", "must be given");
  expect_error([] { keras_geometry({4}, {}, {}, "valid"); }, Value, "pool_size", "must be given");
  expect_error([] { fractional_geometry({4}, {2}, {}); }, Value, "kernel_size", "must be given");
  expect_error([] { unpool_output_size({4}, {}, {}, {}, std::nullopt); }, Value, "kernel_size", "must be given");
  expect_error([] { fractional_output_size({8, 8}, {0.5, 0.5, 0.5}, {2}); }, Value, "output_ratio", "one entry per");
  expect_error([] { fractional_output_size({8}, {std::nan("")}, {2}); }, Value, "output_ratio", "finite");
  expect_error([] { fractional_geometry({8, 8}, {4}, {2}); }, Value, "output_size", "one entry per spatial axis");
  expect_error([] { unpool_output_size({4}, {2}, {2}, {0}, std::vector<int64_t>{1, 2, 3, 4}); }, Value, "output_size",
               "one entry per spatial axis");
}

// A window of more than 2^31 - 1 cells has no compact argmax: int64 flat indices are the only form.
TEST(ReliabilityErrors, CompactArgmaxOfAHugeWindowIsAnOverflow) {
  Geometry g = global_geometry({2048, 2048, 1024});
  float one = 1;
  TensorView x(&one, DType::f32, Shape{1, 1, 2048, 2048, 1024}, Strides{0, 0, 0, 0, 0});  // every cell is `one`
  Tensor y(DType::f32, Shape{1, 1, 1, 1, 1}), a32(DType::i32, Shape{1, 1, 1, 1, 1});
  expect_error([&] { max_pool_forward(g, x, y, a32); }, Overflow, "argmax", "no compact form");
  expect_error([&] { local_argmax_dtype(g); }, Overflow, "argmax", "use int64");
}

TEST(ReliabilityErrors, BackwardGradInputMustMatchTheGeometry) {
  Geometry g = torch_geometry({6, 6}, {2}, {}, {0}, {1}, false);
  Tensor dy(DType::f32, Shape{1, 2, 3, 3}), dx3(DType::f32, Shape{1, 2, 6}), dx(DType::f32, Shape{1, 2, 6, 6});
  Tensor dxi(DType::i32, Shape{1, 2, 6, 6}), x5(DType::f32, Shape{1, 2, 6, 5});
  expect_error([&] { avg_pool_backward(g, AvgOptions{}, dy, dx3); }, Value, "grad_input", "spatial dims");
  expect_error([&] { avg_pool_backward(g, AvgOptions{}, dy, dxi); }, Type, "grad_input", "float32");
  expect_error([&] { avg_pool_backward(g, AvgOptions{}, dy, TensorView{}); }, Value, "grad_input", "must be given");
  expect_error([&] { lp_pool_backward(g, LpOptions{}, dy, x5, dx); }, Value, "x", "must have shape");
  expect_error([&] { stochastic_pool_backward(g, StochasticOptions{}, dy, TensorView{}, dx); }, Value, "x", "must be given");
  expect_error([&] { mixed_pool_backward(g, MixedOptions{}, dy, x5, dx, nullptr); }, Value, "x", "must have shape");
}

TEST(ReliabilityErrors, UnpoolTensorsMustAgree) {
  Tensor x(DType::f32, Shape{1, 2, 2, 2}), idx(DType::i64, Shape{1, 2, 2, 2}), y(DType::f32, Shape{1, 2, 4, 4});
  Tensor y_c(DType::f32, Shape{1, 3, 4, 4}), y_rank(DType::f32, Shape{1, 2, 16}), y_empty(DType::f32, Shape{1, 2, 0, 4});
  Tensor y_f64(DType::f64, Shape{1, 2, 4, 4}), x_int(DType::i32, Shape{1, 2, 2, 2}), x2(DType::f32, Shape{1, 2});
  Tensor idx32(DType::i32, Shape{1, 2, 2, 2});
  expect_error([&] { max_unpool_forward(x, idx, y_c); }, Value, "y", "N, C and rank");
  expect_error([&] { max_unpool_forward(x, idx, y_rank); }, Value, "y", "N, C and rank");
  expect_error([&] { max_unpool_forward(x, idx, y_empty); }, Value, "y", "spatial sizes must be >= 1");
  expect_error([&] { max_unpool_forward(x, idx, y_f64); }, Type, "y", "dtype of x");
  expect_error([&] { max_unpool_forward(x_int, idx, y); }, Type, "y", "dtype of x");  // (integers unpool)
  expect_error([&] { max_unpool_forward(x2, idx, y); }, Value, "x", "1 to 3 spatial dims");
  expect_error([&] { max_unpool_forward(x, idx32, y); }, Type, "indices", "int64");
  expect_error([&] { max_unpool_backward(y_c, idx, x); }, Value, "grad_output", "N, C and rank");
}

TEST(ReliabilityErrors, FractionalSamplesTensor) {
  Geometry g = fractional_geometry({6, 6}, {3, 3}, {2});
  Tensor x(DType::f32, Shape{1, 2, 6, 6}), y(DType::f32, Shape{1, 2, 3, 3});
  Tensor s_half(DType::f16, Shape{1, 2, 2}), s_shape(DType::f64, Shape{1, 2, 3}), s(DType::f64, Shape{1, 2, 2});
  expect_error([&] { fractional_max_pool_forward(g, s_half, x, y, {}); }, Type, "_random_samples", "float32 or float64");
  expect_error([&] { fractional_max_pool_forward(g, s_shape, x, y, {}); }, Value, "_random_samples", "must have shape");
  expect_error([&] { fractional_max_pool_forward(g, TensorView{}, x, y, {}); }, Value, "_random_samples", "must be given");
  TensorView on_device = s.view();
  on_device.device = Device::CUDA;
  expect_error([&] { fractional_max_pool_forward(g, on_device, x, y, {}); }, Value, "_random_samples", "host memory");
  s.set({0, 1, 1}, -0.0);  // -0 is inside [0, 1)
  EXPECT_NO_THROW(fractional_max_pool_forward(g, s, x, y, {}));
}

TEST(ReliabilityErrors, TensorShapesAndElementAccess) {
  expect_error([] { Shape(std::vector<int64_t>{1, 1, 1, 1, 1, 1}); }, Value, "shape", "rank must be at most 5");
  Tensor t(DType::f32, Shape{2, 3});
  expect_error([&] { t.get({2, 0}); }, Index, "index", "out of range");
  expect_error([&] { t.get({0}); }, Index, "index", "one entry per dimension");
  Geometry g = global_geometry({4});
  Tensor y(DType::f32, Shape{1, 1, 1});
  TensorView x_null(nullptr, DType::f32, Shape{1, 1, 4}, Strides{4, 4, 1});
  expect_error([&] { max_pool_forward(g, x_null, y, {}); }, Value, "x", "has no data pointer");
}

}  // namespace
}  // namespace poolkit::test
