#pragma once
// Division of non-negative int32 values by a divisor fixed for a launch: a multiply-high, an add and a shift, with
// the divisor's magic number computed once on the host. A run-time integer division is a subroutine of some twenty
// instructions on the GPU, and the generic kernels' index arithmetic was bound by them.
#include <cstdint>

#include "poolkit/config.hpp"

namespace poolkit::cuda::detail {

POOLKIT_HD inline uint32_t mul_hi(uint32_t a, uint32_t b) {
#ifdef __CUDA_ARCH__
  return __umulhi(a, b);
#else
  return uint32_t((uint64_t(a) * b) >> 32);
#endif
}

struct FastDiv {
  int32_t d = 1;
  uint32_t magic = 1, shift = 0;

  FastDiv() = default;
  // divisor in [1, 2^31): shift = ceil(log2 d), magic = floor(2^32 (2^shift - d) / d) + 1, so that
  // n / d = (mul_hi(n, magic) + n) >> shift for every n in [0, 2^31).
  explicit FastDiv(int64_t divisor) {
    if (divisor < 1) divisor = 1;  // an empty extent: no thread divides by it
    d = int32_t(divisor);
    while ((uint64_t(1) << shift) < uint64_t(divisor)) ++shift;
    magic = uint32_t((uint64_t(1) << 32) * ((uint64_t(1) << shift) - uint64_t(divisor)) / uint64_t(divisor) + 1);
  }
  POOLKIT_HD int32_t div(int32_t n) const { return int32_t((mul_hi(uint32_t(n), magic) + uint32_t(n)) >> shift); }
};

}  // namespace poolkit::cuda::detail
