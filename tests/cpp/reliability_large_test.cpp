// A tensor of more than 2^31 elements (bfloat16, one plane of 2^31 + 64 cells: 4 GiB) pooled correctly, with the
// cells past the 2^31 boundary checked: window offsets, the int64 flat argmax and the window-local argmax there.
#include <cstring>

#include "test_util.hpp"

namespace poolkit::test {
namespace {

TEST(ReliabilityLarge, PlaneOfMoreThan2Pow31CellsIsIndexedIn64Bits) {
  const int64_t n = (int64_t(1) << 31) + 64, big = int64_t(1) << 31;
  Tensor x(DType::bf16, Shape{1, 1, n});  // zero-filled
  auto* p = x.data<bfloat16>();
  p[int64_t(1) << 30] = bfloat16(3.0f);
  p[big + 1] = bfloat16(5.0f);
  p[big + 2] = bfloat16(7.0f);
  p[big + 40] = bfloat16(9.0f);

  // Three windows of 3 cells starting at 0, 2^30 and 2^31.
  Geometry g = regular_geometry({n}, RegularParams{{3}, {int64_t(1) << 30}, {}, {}, {}, false});
  ASSERT_EQ(g.axes[0].out, 3);
  Tensor y(DType::bf16, Shape{1, 1, 3}), flat(DType::i64, Shape{1, 1, 3}), local(DType::u8, Shape{1, 1, 3});
  max_pool_forward(g, x, y, flat);
  EXPECT_EQ(y.get({0, 0, 2}), 7.0);
  EXPECT_EQ(y.get({0, 0, 1}), 3.0);
  EXPECT_EQ(flat.data<int64_t>()[2], big + 2);
  EXPECT_EQ(flat.data<int64_t>()[1], int64_t(1) << 30);
  max_pool_forward(g, x, y, local);
  EXPECT_EQ(local.data<uint8_t>()[2], 2);
  avg_pool_forward(g, AvgOptions{}, x, y);
  EXPECT_EQ(y.get({0, 0, 2}), 4.0);  // (0 + 5 + 7) / 3

  // One window over the whole plane: the maximum lies past 2^31.
  Geometry all = global_geometry({n});
  Tensor m(DType::bf16, Shape{1, 1, 1}), am(DType::i64, Shape{1, 1, 1});
  max_pool_forward(all, x, m, am);
  EXPECT_EQ(m.get({0, 0, 0}), 9.0);
  EXPECT_EQ(am.data<int64_t>()[0], big + 40);
}

}  // namespace
}  // namespace poolkit::test
