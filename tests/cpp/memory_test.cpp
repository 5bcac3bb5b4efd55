// poolkit's memory cache: alignment, reuse of freed blocks of the same rounded size, the limit.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "poolkit/memory.hpp"
#include "poolkit/tensor.hpp"

namespace poolkit::test {
namespace {

TEST(Memory, BlocksAreAlignedAndWritable) {
  for (size_t n : {size_t(1), size_t(100), size_t(300) << 10, size_t(5) << 20}) {
    void* p = allocate(n);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << n;
    std::memset(p, 0x5a, n);
    release(p);
  }
}

TEST(Memory, FreedBigBlockIsReusedForTheSameSize) {
  set_cache_limit(0);  // empty, so that no block of this size freed by an earlier test is handed out instead
  set_cache_limit(size_t(1) << 30);
  const size_t n = size_t(3) << 20;
  void* a = allocate(n);
  const size_t before = cached_bytes();
  release(a);
  EXPECT_GE(cached_bytes(), before + n);
  void* b = allocate(n - 100);  // same rounded size
  EXPECT_EQ(a, b);
  EXPECT_EQ(cached_bytes(), before);
  release(b);
}

TEST(Memory, LimitFreesWhatIsAboveIt) {
  set_cache_limit(size_t(1) << 30);
  void* a = allocate(size_t(4) << 20);
  release(a);
  EXPECT_GE(cached_bytes(), size_t(4) << 20);
  set_cache_limit(0);
  EXPECT_EQ(cached_bytes(), 0u);
  void* b = allocate(size_t(4) << 20);  // not cached: released straight back
  release(b);
  EXPECT_EQ(cached_bytes(), 0u);
  set_cache_limit(size_t(1) << 30);
  EXPECT_EQ(cache_limit(), size_t(1) << 30);
}

TEST(Memory, OwningTensorStartsZeroedEvenFromAReusedBlock) {
  void* p = allocate(size_t(1) << 20);
  std::memset(p, 0xff, size_t(1) << 20);
  release(p);
  Tensor t(DType::f32, {1, 1, 512, 512});
  const float* v = static_cast<const float*>(t.view().data);
  for (int64_t i = 0; i < t.numel(); ++i) ASSERT_EQ(v[i], 0.0f) << i;
}

}  // namespace
}  // namespace poolkit::test
