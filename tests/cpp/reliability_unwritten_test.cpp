// No unwritten output: outputs are poisoned (NaN for values, an impossible index for argmax) before each run of
// the dispatching operators; with finite inputs every output cell must come back finite and every index inside
// its window. Channels-first, channels-last and a strided view; every floating dtype.
#include <cmath>

// GCC 12 reports a false -Wrestrict inside std::string operator+ when bits_equal is inlined at -O3 (GCC bug 105329).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include "op_cases.hpp"
#include "test_util.hpp"

namespace poolkit::test {
namespace {

int64_t count_nan(const TensorView& t) {
  int64_t n = 0;
  for_each_index(t.shape, [&](const int64_t* i) { n += std::isnan(get(t, i)); });
  return n;
}

enum class Kind { ChannelsFirst, ChannelsLast, Strided };

TEST(ReliabilityUnwritten, EveryOperatorWritesEveryOutputCell) {
  for (const OpCase& c : all_op_cases())
    for (DType dt : {DType::f32, DType::f64, DType::bf16, DType::f16})
      for (Kind kind : {Kind::ChannelsFirst, Kind::ChannelsLast, Kind::Strided}) {
        SCOPED_TRACE(c.name + " " + dtype_name(dt) + " layout " + std::to_string(int(kind)));
        Tensor x0 = distinct_tensor(dt, c.x_shape, 5, c.positive_input, Layout::ChannelsFirst, 0.125);
        Tensor dy0 = uniform_tensor(dt, c.y_shape, 6);
        Layout lay = kind == Kind::ChannelsLast ? Layout::ChannelsLast : Layout::ChannelsFirst;
        Tensor x = copy(x0, lay), dy = copy(dy0, lay);
        Tensor yn = filled(dt, c.y_shape, std::nan(""), lay), dxn = filled(dt, c.x_shape, std::nan(""), lay);
        if (kind == Kind::Strided) {
          Strided y = strided_copy(yn), dx = strided_copy(dxn);
          c.forward(x, y.view);
          c.backward(x, dy, dx.view);
          EXPECT_EQ(count_nan(y.view), 0) << "forward left cells unwritten";
          EXPECT_EQ(count_nan(dx.view), 0) << "backward left cells unwritten";
          // The gaps between a strided view's cells are not the operator's to write.
          EXPECT_EQ(count_nan(y.storage), y.storage.numel() - y.view.numel()) << "forward wrote between cells";
          EXPECT_EQ(count_nan(dx.storage), dx.storage.numel() - dx.view.numel()) << "backward wrote between cells";
          continue;
        }
        c.forward(x, yn);
        c.backward(x, dy, dxn);
        EXPECT_EQ(count_nan(yn), 0) << "forward left cells unwritten";
        EXPECT_EQ(count_nan(dxn), 0) << "backward left cells unwritten";
      }
}

// Argmax poisoned with a value no window can produce: every index must be overwritten with one inside its window,
// equal to the reference's.
TEST(ReliabilityUnwritten, EveryArgmaxFormIsWrittenEverywhere) {
  Shape xs{2, 3, 9, 10};
  std::vector<Geometry> geoms{torch_geometry({9, 10}, {3}, {2}, {1}, {1}, true), adaptive_geometry({9, 10}, {4, 3}),
                              global_geometry({9, 10})};
  for (const Geometry& g : geoms)
    for (DType dt : {DType::f32, DType::f64, DType::bf16, DType::f16})
      for (DType form : {DType::i64, DType::u8, DType::i16, DType::i32})
        for (Layout lay : {Layout::ChannelsFirst, Layout::ChannelsLast}) {
          SCOPED_TRACE(std::string(dtype_name(dt)) + " " + dtype_name(form));
          Shape ys = out_shape(g, xs);
          Tensor x = copy(distinct_tensor(dt, xs, 9), lay);
          Tensor y = filled(dt, ys, std::nan(""), lay), am = filled(form, ys, form == DType::u8 ? 255 : -1, lay);
          Tensor yr(dt, ys), amr(form, ys);
          max_pool_forward(g, x, y, am);
          ref::max_pool_forward(g, x, yr, amr);
          EXPECT_EQ(count_nan(y), 0);
          EXPECT_TRUE(bits_equal(am, amr));
          EXPECT_TRUE(bits_equal(y, yr));
        }
}

}  // namespace
}  // namespace poolkit::test
