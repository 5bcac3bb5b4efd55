// store_from_double into integer dtypes: truncation toward zero, wrap modulo 2^bits, NaN as 0, saturation past
// int64 (values C++ would leave undefined; the sanitizer build checks that none is).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "poolkit/tensor.hpp"

namespace poolkit::test {
namespace {

template <typename T>
T stored(DType dt, double v) {
  T cell{};
  TensorView view{};
  view.data = &cell;
  view.dtype = dt;
  store_from_double(view, 0, v);
  return cell;
}

TEST(TensorStore, IntegersTruncateAndWrap) {
  EXPECT_EQ(stored<uint8_t>(DType::u8, -1), 255);
  EXPECT_EQ(stored<uint8_t>(DType::u8, -2.9), 254);
  EXPECT_EQ(stored<uint8_t>(DType::u8, 300.5), 44);
  EXPECT_EQ(stored<int8_t>(DType::i8, 200), -56);
  EXPECT_EQ(stored<int8_t>(DType::i8, -2.7), -2);
  EXPECT_EQ(stored<int16_t>(DType::i16, 40000), -25536);
  EXPECT_EQ(stored<int32_t>(DType::i32, 4294967297.0), 1);
  EXPECT_EQ(stored<int64_t>(DType::i64, -12345.99), -12345);
}

TEST(TensorStore, NanIsZeroAndHugeSaturates) {
  EXPECT_EQ(stored<int32_t>(DType::i32, std::nan("")), 0);
  EXPECT_EQ(stored<uint8_t>(DType::u8, std::nan("")), 0);
  EXPECT_EQ(stored<int64_t>(DType::i64, std::nan("")), 0);
  EXPECT_EQ(stored<int64_t>(DType::i64, 1e30), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(stored<int64_t>(DType::i64, -1e30), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(stored<int64_t>(DType::i64, -0x1p63), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(stored<int64_t>(DType::i64, INFINITY), std::numeric_limits<int64_t>::max());
}

}  // namespace
}  // namespace poolkit::test
