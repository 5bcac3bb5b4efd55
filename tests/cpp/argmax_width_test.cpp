// The compact argmax's width limits: uint8 holds windows of up to 255 cells, int16 up to 32,767, int32 up to
// 2^31 - 1; a narrower type than the window needs is refused in the forward and in the backward (a wrapped code
// would send the gradient outside the plane).
#include "test_util.hpp"

namespace poolkit::test {
namespace {

// Runs f, which must throw a poolkit::Error of `kind` naming the argmax.
template <class F>
void expect_argmax_error(F&& f, ErrorKind kind) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one naming 'argmax'";
  } catch (const Error& e) {
    EXPECT_EQ(e.argument(), "argmax") << e.what();
    EXPECT_EQ(int(e.kind()), int(kind)) << e.what();
  }
}

TEST(ArgmaxWidth, NarrowestTypeAtEachLimit) {
  EXPECT_EQ(local_argmax_dtype(global_geometry({255})), DType::u8);
  EXPECT_EQ(local_argmax_dtype(global_geometry({256})), DType::i16);
  EXPECT_EQ(local_argmax_dtype(global_geometry({181, 181})), DType::i16);  // 32,761 cells
  EXPECT_EQ(local_argmax_dtype(global_geometry({32767})), DType::i16);
  EXPECT_EQ(local_argmax_dtype(global_geometry({32768})), DType::i32);
  EXPECT_EQ(local_argmax_dtype(global_geometry({200, 200})), DType::i32);
}

TEST(ArgmaxWidth, Int32LimitReasonedOnGeometriesAlone) {
  // Windows of 2^31 - 1 cells and one more: the limit is checked on the geometry, without allocating a plane.
  EXPECT_EQ(local_argmax_dtype(global_geometry({2147483647})), DType::i32);
  EXPECT_EQ(local_argmax_dtype(global_geometry({46340, 46341})), DType::i32);  // 2,147,441,940 cells
  expect_argmax_error([] { local_argmax_dtype(global_geometry({2147483648})); }, ErrorKind::Overflow);
  expect_argmax_error([] { local_argmax_dtype(global_geometry({46341, 46341})); }, ErrorKind::Overflow);
  // the product of the kernels counts, not a single axis
  expect_argmax_error([] { local_argmax_dtype(global_geometry({2048, 1024, 1024})); }, ErrorKind::Overflow);
}

// A plane whose largest cell is at `hot` (row-major), all others below it.
Tensor plane_with_max_at(const Shape& s, int64_t hot) {
  Tensor x = filled(DType::f32, s, -1.0);
  static_cast<float*>(x.view().data)[hot] = 2.0f;
  return x;
}

TEST(ArgmaxWidth, Int16RefusedPast32767CellsInForwardAndBackward) {
  // 200 x 200 global max: code 39,999 does not fit in int16 (it would wrap to -25,537).
  Geometry g = global_geometry({200, 200});
  Tensor x = plane_with_max_at({1, 1, 200, 200}, 39999), y(DType::f32, {1, 1, 1, 1});
  Tensor a16(DType::i16, {1, 1, 1, 1}), dy = filled(DType::f32, {1, 1, 1, 1}, 1.0), dx(DType::f32, {1, 1, 200, 200});
  expect_argmax_error([&] { max_pool_forward(g, x, y, a16); }, ErrorKind::Type);
  static_cast<int16_t*>(a16.view().data)[0] = int16_t(-25537);
  expect_argmax_error([&] { max_pool_backward(g, dy, a16, {}, dx); }, ErrorKind::Type);
  Tensor a8(DType::u8, {1, 1, 1, 1});
  expect_argmax_error([&] { max_pool_backward(g, dy, a8, {}, dx); }, ErrorKind::Type);
  // int32 holds it: the code is the cell, and the backward puts the gradient there
  Tensor a32(DType::i32, {1, 1, 1, 1});
  max_pool_forward(g, x, y, a32);
  EXPECT_EQ(static_cast<int32_t*>(a32.view().data)[0], 39999);
  max_pool_backward(g, dy, a32, {}, dx);
  EXPECT_EQ(static_cast<float*>(dx.view().data)[39999], 1.0f);
  EXPECT_EQ(static_cast<float*>(dx.view().data)[0], 0.0f);
}

TEST(ArgmaxWidth, Int16AcceptedUpTo32767Cells) {
  // One cell past the limit is refused; at the limit the last code, 32,766, round-trips.
  Tensor xb = plane_with_max_at({1, 1, 32768}, 0), yb(DType::f32, {1, 1, 1}), ab(DType::i16, {1, 1, 1});
  expect_argmax_error([&] { max_pool_forward(global_geometry({32768}), xb, yb, ab); }, ErrorKind::Type);
  Geometry g = global_geometry({32767});
  Tensor x = plane_with_max_at({1, 1, 32767}, 32766), y(DType::f32, {1, 1, 1}), a(DType::i16, {1, 1, 1});
  max_pool_forward(g, x, y, a);
  EXPECT_EQ(static_cast<int16_t*>(a.view().data)[0], 32766);
  Tensor dy = filled(DType::f32, {1, 1, 1}, 3.0), dx(DType::f32, {1, 1, 32767});
  max_pool_backward(g, dy, a, {}, dx);
  EXPECT_EQ(static_cast<float*>(dx.view().data)[32766], 3.0f);
}

}  // namespace
}  // namespace poolkit::test
