// One test per rule an argument can break: the error names the argument, and its kind is the right one.
#include "test_util.hpp"

namespace poolkit::test {
namespace {

using V = std::vector<int64_t>;

template <class F>
void expect_error(F&& f, ErrorKind kind, const std::string& argument, const std::string& words = "") {
  try {
    f();
    ADD_FAILURE() << "no error; expected one naming '" << argument << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.argument(), argument) << e.what();
    EXPECT_EQ(int(e.kind()), int(kind)) << e.what();
    EXPECT_NE(std::string(e.what()).find(argument), std::string::npos) << e.what();
    if (!words.empty()) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  }
}
constexpr auto Value = ErrorKind::Value;
constexpr auto Type = ErrorKind::Type;
constexpr auto Index = ErrorKind::Index;
constexpr auto Overflow = ErrorKind::Overflow;

Geometry g2() { return torch_geometry({4, 4}, {2}, {2}, {0}, {1}, false); }

TEST(Errors, InputRank) {
  expect_error([] { torch_geometry({}, {2}, {}, {}, {}, false); }, Value, "input", "spatial dimensions");
  expect_error([] { torch_geometry({4, 4, 4, 4}, {2}, {}, {}, {}, false); }, Value, "input");
}
TEST(Errors, InputSizeZeroOrNegative) {
  expect_error([] { torch_geometry({4, 0}, {2}, {}, {}, {}, false); }, Value, "input size[1]", ">= 1");
}
TEST(Errors, KernelSizeCount) {
  expect_error([] { torch_geometry({4, 4}, {2, 2, 2}, {}, {}, {}, false); }, Value, "kernel_size", "entries");
}
TEST(Errors, KernelSizeNotPositive) {
  expect_error([] { torch_geometry({4}, {0}, {}, {}, {}, false); }, Value, "kernel_size", ">= 1");
}
TEST(Errors, StrideNotPositive) {
  expect_error([] { torch_geometry({4}, {2}, {0}, {}, {}, false); }, Value, "stride", ">= 1");
  expect_error([] { torch_geometry({4}, {2}, {-1}, {}, {}, false); }, Value, "stride");
}
TEST(Errors, DilationNotPositive) {
  expect_error([] { torch_geometry({4}, {2}, {}, {}, {0}, false); }, Value, "dilation", ">= 1");
}
TEST(Errors, PaddingNegative) {
  expect_error([] { torch_geometry({4}, {2}, {}, {-1}, {}, false); }, Value, "padding", ">= 0");
}
TEST(Errors, TorchPaddingAtMostHalfTheKernelDilationNotCounted) {
  expect_error([] { torch_geometry({9}, {3}, {}, {2}, {}, false); }, Value, "padding[0]", "half");
  // effective kernel 5, but PyTorch checks the kernel size: padding 2 refused, 1 allowed
  expect_error([] { torch_geometry({9}, {3}, {}, {2}, {2}, false); }, Value, "padding[0]", "half");
  EXPECT_NO_THROW(torch_geometry({9}, {3}, {}, {1}, {2}, false));
}
TEST(Errors, KernelLargerThanPaddedInput) {
  expect_error([] { torch_geometry({3, 3}, {2, 4}, {}, {}, {}, false); }, Value, "kernel_size[1]", "larger");
}
TEST(Errors, PaddingSoLargeAWindowReadsNothing) {
  expect_error([] { regular_geometry({4}, RegularParams{{2}, {1}, {}, {3}, {0}, false}); }, Value, "padding[0]",
               "reads no input");
}
TEST(Errors, DilationSteppingOverTheInput) {
  expect_error([] { regular_geometry({2}, RegularParams{{2}, {1}, {3}, {2}, {2}, false}); }, Value, "dilation[0]",
               "reads no input");
}
TEST(Errors, KerasPaddingWord) {
  expect_error([] { keras_geometry({4}, {2}, {}, "full"); }, Value, "padding", "'valid' or 'same'");
}
TEST(Errors, OnnxArguments) {
  OnnxParams p;
  p.kernel_shape = {2};
  expect_error([&] { onnx_geometry({4, 4}, p); }, Value, "kernel_shape");
  p.kernel_shape = {2, 2};
  p.pads = {1, 1};
  expect_error([&] { onnx_geometry({4, 4}, p); }, Value, "pads", "2 entries per spatial axis");
  p.pads = {0, 0, -1, 0};
  expect_error([&] { onnx_geometry({4, 4}, p); }, Value, "pads", ">= 0");
  p.pads = {};
  p.auto_pad = "SAME";
  expect_error([&] { onnx_geometry({4, 4}, p); }, Value, "auto_pad");
}
TEST(Errors, AdaptiveOutputSize) {
  expect_error([] { adaptive_geometry({4, 4}, {2}); }, Value, "output_size", "one entry per spatial axis");
  expect_error([] { adaptive_geometry({4, 4}, {2, 0}); }, Value, "output_size[1]", ">= 1");
}
TEST(Errors, FractionalOutputTooLarge) {
  expect_error([] { fractional_geometry({5}, {4}, {3}); }, Value, "output_size[0]", "output_size + kernel_size - 1");
  expect_error([] { fractional_output_size({5}, {-0.5}, {2}); }, Value, "output_ratio", "negative output size");
}
TEST(Errors, FractionalSamplesOutOfRange) {
  double u = 1.0;
  expect_error([&] { with_fractional_samples(fractional_geometry({5}, {2}, {2}), &u); }, Value, "_random_samples");
  Geometry g = fractional_geometry({5, 5}, {2, 2}, {2});
  Tensor x(DType::f32, {1, 1, 5, 5}), y(DType::f32, {1, 1, 2, 2}), s(DType::f32, {1, 1, 3});
  expect_error([&] { fractional_max_pool_forward(g, s, x, y, {}); }, Value, "_random_samples", "shape");
  Tensor bad = filled(DType::f32, {1, 1, 2}, -0.5);
  expect_error([&] { fractional_max_pool_forward(g, bad, x, y, {}); }, Value, "_random_samples", "[0, 1)");
}
TEST(Errors, UnpoolOutputSizeOutOfRange) {
  expect_error([] { unpool_output_size({4}, {2}, {2}, {0}, V{10}); }, Value, "output_size[0]", "between 6 and 10");
}
TEST(Errors, SizesOverflowingInt64) {
  expect_error([] { torch_geometry({4}, {int64_t(1) << 62}, {1}, {0}, {8}, false); }, Overflow, "dilation");
  expect_error([] { Shape{int64_t(1) << 40, int64_t(1) << 40}.numel(); }, Overflow, "shape");
}
TEST(Errors, InputTensorRankAndSize) {
  Tensor x(DType::f32, {1, 4, 4}), y(DType::f32, {1, 1, 2, 2});
  expect_error([&] { max_pool_forward(g2(), x, y, {}); }, Value, "x", "spatial dims");
  Tensor x5(DType::f32, {1, 1, 5, 4});
  expect_error([&] { max_pool_forward(g2(), x5, y, {}); }, Value, "x", "differs from the geometry");
}
TEST(Errors, InputDtype) {
  Tensor x(DType::i32, {1, 1, 4, 4}), y(DType::i32, {1, 1, 2, 2});
  expect_error([&] { avg_pool_forward(g2(), AvgOptions{}, x, y); }, Type, "x", "float32");
}
TEST(Errors, OutputShapeAndDtype) {
  Tensor x(DType::f32, {1, 1, 4, 4}), y(DType::f32, {1, 1, 2, 3}), y64(DType::f64, {1, 1, 2, 2});
  expect_error([&] { avg_pool_forward(g2(), AvgOptions{}, x, y); }, Value, "y", "(1, 1, 2, 2)");
  expect_error([&] { avg_pool_forward(g2(), AvgOptions{}, x, y64); }, Type, "y", "float32");
}
TEST(Errors, NegativeSizesAndMissingData) {
  TensorView neg(nullptr, DType::f32, Shape{1, -1, 4, 4}, Shape{16, 16, 4, 1});
  Tensor y(DType::f32, {1, 1, 2, 2});
  expect_error([&] { max_pool_forward(g2(), neg, y, {}); }, Value, "x", ">= 0");
  TensorView null(nullptr, DType::f32, Shape{1, 1, 4, 4});
  expect_error([&] { max_pool_forward(g2(), null, y, {}); }, Value, "x", "no data");
}
TEST(Errors, ArgmaxShapeAndWidth) {
  Tensor x(DType::f32, {1, 1, 4, 4}), y(DType::f32, {1, 1, 2, 2}), a(DType::i64, {1, 1, 2, 1});
  expect_error([&] { max_pool_forward(g2(), x, y, a); }, Value, "argmax", "shape");
  Geometry big = torch_geometry({40, 40}, {20}, {}, {0}, {1}, false);  // 400 cells do not fit in uint8
  Tensor xb(DType::f32, {1, 1, 40, 40}), yb(DType::f32, {1, 1, 2, 2}), a8(DType::u8, {1, 1, 2, 2});
  expect_error([&] { max_pool_forward(big, xb, yb, a8); }, Type, "argmax", "int16");
}
TEST(Errors, BackwardShapesAndDtypes) {
  Tensor dy(DType::f32, {1, 1, 2, 3}), dx(DType::f32, {1, 1, 4, 4}), dy64(DType::f64, {1, 1, 2, 2});
  expect_error([&] { avg_pool_backward(g2(), AvgOptions{}, dy, dx); }, Value, "grad_output", "shape");
  expect_error([&] { avg_pool_backward(g2(), AvgOptions{}, dy64, dx); }, Type, "grad_output", "float32");
  Tensor dyok(DType::f32, {1, 1, 2, 2});
  expect_error([&] { max_pool_backward(g2(), dyok, {}, {}, dx); }, Value, "x", "recompute");
  Tensor x64(DType::f64, {1, 1, 4, 4});
  expect_error([&] { lp_pool_backward(g2(), LpOptions{}, dyok, x64, dx); }, Type, "x");
}
TEST(Errors, ArgmaxValuesOutOfRangeInBackward) {
  Tensor dy(DType::f32, {1, 1, 2, 2}), dx(DType::f32, {1, 1, 4, 4});
  Tensor flat = filled(DType::i64, {1, 1, 2, 2}, 16);
  expect_error([&] { max_pool_backward(g2(), dy, flat, {}, dx); }, Index, "argmax", "outside the input plane");
  Tensor not_in_window = filled(DType::i64, {1, 1, 2, 2}, 15);  // cell 15 lies only in window (1, 1)
  expect_error([&] { max_pool_backward(g2(), dy, not_in_window, {}, dx); }, Index, "argmax", "inside its window");
  Tensor local = filled(DType::u8, {1, 1, 2, 2}, 4);  // a 2x2 window has taps 0..3
  expect_error([&] { max_pool_backward(g2(), dy, local, {}, dx); }, Index, "argmax");
}
TEST(Errors, OptionValues) {
  Tensor x(DType::f32, {1, 1, 4, 4}), y(DType::f32, {1, 1, 2, 2});
  expect_error([&] { avg_pool_forward(g2(), AvgOptions{true, 0}, x, y); }, Value, "divisor_override", "> 0");
  expect_error([&] { lp_pool_forward(g2(), LpOptions{0, LpConvention::Torch}, x, y); }, Value, "norm_type", "non-zero");
  expect_error([&] { lp_pool_forward(g2(), LpOptions{-1, LpConvention::Onnx}, x, y); }, Value, "norm_type", "> 0");
  expect_error([&] { lp_pool_forward(g2(), LpOptions{INFINITY, LpConvention::Onnx}, x, y); }, Value, "norm_type");
  expect_error([&] { mixed_pool_forward(g2(), MixedOptions{NAN, {}}, x, y); }, Value, "lambda", "finite");
}
TEST(Errors, UnpoolIndices) {
  Tensor x(DType::f32, {1, 2, 2, 2}), y(DType::f32, {1, 2, 4, 4});
  Tensor idx = filled(DType::i64, {1, 2, 2, 2}, 3);
  idx.set({0, 1, 1, 1}, 16);
  y.set({0, 0, 0, 0}, 7);
  expect_error([&] { max_unpool_forward(x, idx, y); }, Index, "indices", "invalid max index 16");
  EXPECT_EQ(y.get({0, 0, 0, 0}), 7);  // nothing written before the check
  idx.set({0, 1, 1, 1}, -1);
  expect_error([&] { max_unpool_backward(y, idx, x); }, Index, "indices", "invalid max index -1");
  Tensor idx_small(DType::i64, {1, 2, 2, 1});
  expect_error([&] { max_unpool_forward(x, idx_small, y); }, Value, "indices", "shape");
  Tensor i32(DType::i32, {1, 2, 2, 2});
  expect_error([&] { max_unpool_forward(x, i32, y); }, Type, "indices", "int64");
  Tensor yc(DType::f32, {1, 3, 4, 4});
  expect_error([&] { max_unpool_forward(x, idx, yc); }, Value, "y", "N, C and rank");
  Tensor y64(DType::f64, {1, 2, 4, 4});
  expect_error([&] { max_unpool_forward(x, idx, y64); }, Type, "y", "dtype");
}
TEST(Errors, CudaTensorsWithoutTheCudaBackend) {
  Tensor x(DType::f32, {1, 1, 4, 4}), y(DType::f32, {1, 1, 2, 2});
  TensorView xd = x.view(), yd = y.view();
  xd.device = yd.device = Device::CUDA;
  TensorView ycpu = y.view();
  expect_error([&] { max_pool_forward(g2(), xd, ycpu, {}); }, Type, "y", "same device");
  expect_error([&] { ref::max_pool_forward(g2(), xd, yd, {}); }, Value, "x", "host memory");
}

}  // namespace
}  // namespace poolkit::test
