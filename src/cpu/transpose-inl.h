// Transposes k x k tiles of 128-bit vectors in registers (k = the vector's lanes): included by the Highway
// files that need it, once per target.
#if defined(POOLKIT_CPU_TRANSPOSE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POOLKIT_CPU_TRANSPOSE_INL_H_
#undef POOLKIT_CPU_TRANSPOSE_INL_H_
#else
#define POOLKIT_CPU_TRANSPOSE_INL_H_
#endif

#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace poolkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR
// Rows r[0..k) of a k x k tile become its columns: afterwards r[j] holds lane j of every row before, in row
// order. Each round takes the even lanes of rows 2j and 2j + 1 into row j and their odd lanes into row
// j + k / 2, which rotates the bits of (row, column) right by one: log2(k) rounds swap row and column. (Even/odd
// rather than interleaving halves: the global average from memory ran 1.16x faster with it, Zen 4.)
template <class D, class V>
HWY_INLINE void transpose_tile(D d, V* r) {
  constexpr int64_t k = int64_t(hn::MaxLanes(d));
  for (int64_t round = 1; round < k; round *= 2) {
    V t[k];
#pragma GCC unroll 16
    for (int64_t j = 0; j < k / 2; ++j) {
      t[j] = hn::ConcatEven(d, r[2 * j + 1], r[2 * j]);
      t[j + k / 2] = hn::ConcatOdd(d, r[2 * j + 1], r[2 * j]);
    }
#pragma GCC unroll 16
    for (int64_t j = 0; j < k; ++j) r[j] = t[j];  // not std::copy: GCC then spilled the rows
  }
}
#endif

}  // namespace poolkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // toggle guard
