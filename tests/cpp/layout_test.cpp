// Layout equivalence: a channels-last tensor, or any strided view, gives exactly the channels-first result.
#include "op_cases.hpp"

namespace poolkit::test {
namespace {

class Layouts : public ::testing::TestWithParam<OpCase> {};

TEST_P(Layouts, ChannelsLastAndStridedViewsMatchChannelsFirst) {
  const OpCase& c = GetParam();
  for (DType dt : {DType::f32, DType::f64, DType::bf16, DType::f16}) {
    Tensor x = uniform_tensor(dt, c.x_shape, 21, c.positive_input ? 0.1 : -1, 1);
    Tensor dy = uniform_tensor(dt, c.y_shape, 22);
    Tensor y = filled(dt, c.y_shape, std::nan("")), dx = filled(dt, c.x_shape, std::nan(""));
    c.forward(x, y);
    c.backward(x, dy, dx);

    Tensor x_cl = copy(x, Layout::ChannelsLast), dy_cl = copy(dy, Layout::ChannelsLast);
    Tensor y_cl = filled(dt, c.y_shape, std::nan(""), Layout::ChannelsLast);
    Tensor dx_cl = filled(dt, c.x_shape, std::nan(""), Layout::ChannelsLast);
    c.forward(x_cl, y_cl);
    c.backward(x_cl, dy_cl, dx_cl);
    EXPECT_TRUE(bits_equal(y, y_cl)) << c.name << " forward, channels-last, " << dtype_name(dt);
    EXPECT_TRUE(bits_equal(dx, dx_cl)) << c.name << " backward, channels-last, " << dtype_name(dt);

    Strided xs = strided_copy(x), dys = strided_copy(dy), ys = strided_copy(y), dxs = strided_copy(dx);
    for_each_index(c.y_shape, [&](const int64_t* i) { set(ys.view, i, std::nan("")); });
    for_each_index(c.x_shape, [&](const int64_t* i) { set(dxs.view, i, std::nan("")); });
    c.forward(xs.view, ys.view);
    c.backward(xs.view, dys.view, dxs.view);
    EXPECT_TRUE(bits_equal(y, ys.view)) << c.name << " forward, strided, " << dtype_name(dt);
    EXPECT_TRUE(bits_equal(dx, dxs.view)) << c.name << " backward, strided, " << dtype_name(dt);
  }
}

INSTANTIATE_TEST_SUITE_P(AllOperators, Layouts, ::testing::ValuesIn(all_op_cases()), [](const auto& info) {
  std::string n = info.param.name;
  for (char& ch : n)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});

// A channels-last result is the permuted channels-first one: checked cell by cell through logical indices,
// and the channels-last output really is laid out with C fastest.
TEST(Layouts, ChannelsLastOutputIsStoredChannelsFastest) {
  Geometry g = torch_geometry({6, 6}, {2}, {2}, {0}, {1}, false);
  Tensor x = distinct_tensor(DType::f32, {1, 3, 6, 6}, 5, false, Layout::ChannelsLast);
  Tensor y(DType::f32, {1, 3, 3, 3}, Layout::ChannelsLast);
  max_pool_forward(g, x, y, {});
  const float* raw = y.data<float>();
  for (int64_t h = 0; h < 3; ++h)
    for (int64_t w = 0; w < 3; ++w)
      for (int64_t c = 0; c < 3; ++c) {
        double want = -1e30;
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 2; ++j) want = std::max(want, x.get({0, c, 2 * h + i, 2 * w + j}));
        EXPECT_EQ(raw[(h * 3 + w) * 3 + c], want);
      }
}

}  // namespace
}  // namespace poolkit::test
