// Every operator on CUDA tensors against the CPU reference: bit-identical for the max family (and stochastic
// draws), within a few ulps for sums; outputs poisoned (NaN) before each run; repeated runs bit-identical.
// POOLKIT_CUDA_TESTS_REDUCED=1 keeps one dtype and layout (for compute-sanitizer runs).
#include <cstdlib>

#include "device_tensor.hpp"
#include "op_cases.hpp"

namespace poolkit::test {
namespace {

bool reduced() { return std::getenv("POOLKIT_CUDA_TESTS_REDUCED") != nullptr; }

// Max-family outputs select input values: they must match bit for bit. Sums may differ by the device's rounding.
bool exact(const std::string& name) {
  return name.find("max") != std::string::npos || name.find("training") != std::string::npos;
}

::testing::AssertionResult close(const TensorView& got, const TensorView& want, bool bits) {
  if (bits) return bits_equal(got, want);
  double tol = (got.dtype == DType::f32) ? 4e-6 : (got.dtype == DType::f64) ? 1e-13 : 1.6e-2;
  int64_t bad = 0;
  std::string first;
  for_each_index(got.shape, [&](const int64_t* i) {
    double a = get(got, i), b = get(want, i);
    if (!(std::abs(a - b) <= tol * (1 + std::abs(b))) && bad++ == 0) first = std::to_string(a) + " vs " + std::to_string(b);
  });
  if (bad) return ::testing::AssertionFailure() << bad << " cells differ, first " << first;
  return ::testing::AssertionSuccess();
}

std::vector<DType> dtypes() {
  if (reduced()) return {DType::f32};
  return {DType::f32, DType::f64, DType::bf16, DType::f16};
}
std::vector<Layout> layouts() {
  if (reduced()) return {Layout::ChannelsFirst};
  return {Layout::ChannelsFirst, Layout::ChannelsLast};
}

TEST(CudaOps, EveryOperatorMatchesTheReference) {
  for (const OpCase& c : all_op_cases()) {
    if (c.name == "max_unpool2d") continue;  // its indices live on the host: see the unpool tests below
    for (DType dt : dtypes())
      for (Layout layout : layouts()) {
        SCOPED_TRACE(c.name + " " + dtype_name(dt) + (layout == Layout::ChannelsLast ? " channels-last" : ""));
        Tensor x = copy(distinct_tensor(dt, c.x_shape, 17, c.positive_input, Layout::ChannelsFirst, 0.125), layout);
        Tensor dy = copy(uniform_tensor(dt, c.y_shape, 23), layout);
        Tensor y_ref(dt, c.y_shape), dx_ref(dt, c.x_shape);
        c.forward(x, y_ref);
        c.backward(x, dy, dx_ref);
        DeviceTensor xd = to_device(x), dyd = to_device(dy);
        Tensor first_y, first_dx;
        for (int run = 0; run < 2; ++run) {
          DeviceTensor yd = poisoned(dt, c.y_shape, layout), dxd = poisoned(dt, c.x_shape, layout);
          c.forward(xd, yd);
          c.backward(xd, dyd, dxd);
          Tensor y = to_host(yd, layout), dx = to_host(dxd, layout);
          EXPECT_TRUE(close(y, y_ref, exact(c.name))) << "forward";
          EXPECT_TRUE(close(dx, dx_ref, exact(c.name))) << "backward";
          if (run == 0) {
            first_y = y;
            first_dx = dx;
          } else {  // no atomics in a backward: every run gives the same bits
            EXPECT_TRUE(bits_equal(y, first_y));
            EXPECT_TRUE(bits_equal(dx, first_dx));
          }
        }
      }
  }
}

// The benchmark's seed shape (smaller N) through the tiled path, with every argmax form.
TEST(CudaOps, SeedCaseEveryArgmaxForm) {
  Shape xs{reduced() ? 64 : 1024, 2, 32, 32}, ys{xs[0], 2, 16, 16};
  Geometry g = torch_geometry({32, 32}, {2}, {2}, {0}, {1}, false);
  for (DType dt : dtypes())
    for (Layout layout : layouts())
      for (DType am : {DType::i64, DType::u8, DType::i16, DType::i32}) {
        SCOPED_TRACE(std::string(dtype_name(dt)) + " argmax " + dtype_name(am));
        Tensor x = copy(uniform_tensor(dt, xs, 5), layout), dy = copy(uniform_tensor(dt, ys, 6), layout);
        Tensor y_ref(dt, ys), a_ref(am, ys), dx_ref(dt, xs);
        ref::max_pool_forward(g, x, y_ref, a_ref);
        ref::max_pool_backward(g, dy, a_ref, x, dx_ref);
        DeviceTensor xd = to_device(x), dyd = to_device(dy);
        DeviceTensor yd = poisoned(dt, ys, layout), ad = poisoned(am, ys, layout), dxd = poisoned(dt, xs, layout);
        max_pool_forward(g, xd, yd, ad);
        max_pool_backward(g, dyd, ad, {}, dxd);
        EXPECT_TRUE(bits_equal(to_host(yd, layout), y_ref));
        EXPECT_TRUE(bits_equal(to_host(ad, layout), a_ref));
        EXPECT_TRUE(bits_equal(to_host(dxd, layout), dx_ref));
        Tensor avg_ref(dt, ys);
        ref::avg_pool_forward(g, AvgOptions{}, x, avg_ref);
        DeviceTensor avg = poisoned(dt, ys, layout);
        avg_pool_forward(g, AvgOptions{}, xd, avg);
        EXPECT_TRUE(close(to_host(avg, layout), avg_ref, false));
      }
}

TEST(CudaOps, UnpoolLastInputWinsAndBadIndicesAreIndexErrors) {
  Shape xs{2, 3, 4, 3}, big{2, 3, 8, 6};
  Tensor x = uniform_tensor(DType::f32, xs, 2), idx(DType::i64, xs);
  std::mt19937_64 rng(3);
  for (int64_t k = 0; k < idx.numel(); ++k) idx.data<int64_t>()[k] = int64_t(rng() % 20);  // many duplicates
  Tensor y_ref(DType::f32, big), dy = uniform_tensor(DType::f32, big, 4), dx_ref(DType::f32, xs);
  ref::max_unpool_forward(x, idx, y_ref);
  ref::max_unpool_backward(dy, idx, dx_ref);
  DeviceTensor xd = to_device(x), id = to_device(idx), dyd = to_device(dy);
  DeviceTensor yd = poisoned(DType::f32, big), dxd = poisoned(DType::f32, xs);
  max_unpool_forward(xd, id, yd);
  max_unpool_backward(dyd, id, dxd);
  EXPECT_TRUE(bits_equal(to_host(yd), y_ref));
  EXPECT_TRUE(bits_equal(to_host(dxd), dx_ref));

  idx.data<int64_t>()[5] = 48;
  DeviceTensor bad = to_device(idx), untouched = poisoned(DType::f32, big);
  try {
    max_unpool_forward(xd, bad, untouched);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Index);
    EXPECT_EQ(e.argument(), "indices");
  }
  Tensor after = to_host(untouched);  // y is written only after every index passed
  uint32_t bits;
  std::memcpy(&bits, after.data<float>(), 4);
  EXPECT_EQ(bits, 0xffffffffu);
  EXPECT_THROW(max_unpool_backward(dyd, bad, dxd), Error);
}

TEST(CudaOps, BadSavedArgmaxIsAnIndexError) {
  Geometry g = torch_geometry({6, 6}, {3}, {3}, {0}, {1}, false);
  Tensor am = filled(DType::u8, Shape{1, 1, 2, 2}, 4);
  am.data<uint8_t>()[3] = 9;
  DeviceTensor ad = to_device(am), dyd = to_device(uniform_tensor(DType::f32, Shape{1, 1, 2, 2}, 1));
  DeviceTensor dxd = poisoned(DType::f32, Shape{1, 1, 6, 6});
  try {
    max_pool_backward(g, dyd, ad, {}, dxd);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Index);
  }
}

}  // namespace
}  // namespace poolkit::test
