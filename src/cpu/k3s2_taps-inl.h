// The taps of 3x3 stride-2 windows along a channels-first row by AVX-512 permutes, for the 8-bit and 16-bit lanes
// of kernels_int.cpp (BytePlane) and kernels_k3s2_forward.cpp (HalfPlane). Included once per Highway target (after
// foreach_target.h), hence the toggling guard; empty below the AVX-512 targets.
#if defined(POOLKIT_CPU_K3S2_TAPS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POOLKIT_CPU_K3S2_TAPS_INL_H_
#undef POOLKIT_CPU_K3S2_TAPS_INL_H_
#else
#define POOLKIT_CPU_K3S2_TAPS_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <hwy/highway.h>

#include "src/cpu/kernels-inl.h"  // lanes_inside

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// (the target's region only where it holds code: clang rejects an empty one, -Wpragma-clang-attribute)
HWY_BEFORE_NAMESPACE();
namespace poolkit::cpu::HWY_NAMESPACE {

// The windows o0 + i (i < N, N = 64 / sizeof(L) lanes of L) of a row `width` cells wide whose first window starts
// at cell q = 2 o0 - pad: two masked loads from q give the 2N cells of taps 0 and 1 (cells 2i and 2i + 1, one
// permute each), two from q + 2 those of tap 2; cells outside the row read as `fill`. uint8_t lanes need VBMI.
template <class L>
class RowTaps {
 public:
  static constexpr int64_t N = 64 / int64_t(sizeof(L));
  using Mask = std::conditional_t<N == 64, __mmask64, __mmask32>;

  RowTaps(int64_t o0, int64_t pad, int64_t width) : q_(2 * o0 - pad), width_(width) {
    alignas(64) L even[N], odd[N];
    for (int64_t i = 0; i < N; ++i) even[i] = L(2 * i), odd[i] = L(2 * i + 1);
    even_ = _mm512_load_si512(even), odd_ = _mm512_load_si512(odd);
    a_ = inside(q_), b_ = inside(q_ + N), a2_ = inside(q_ + 2), b2_ = inside(q_ + N + 2);
    left_ = Mask(q_ < 0 ? 1 : 0);
  }
  int64_t first_cell() const { return q_; }
  Mask left() const { return left_; }  // lane 0 when its tap 0 is the padding cell before the row

  void load(const L* row, __m512i fill, __m512i& t0, __m512i& t1, __m512i& t2) const {
    if constexpr (N == 64) {
      const __m512i a = _mm512_mask_loadu_epi8(fill, a_, row + q_), b = _mm512_mask_loadu_epi8(fill, b_, row + q_ + N),
                    a2 = _mm512_mask_loadu_epi8(fill, a2_, row + q_ + 2),
                    b2 = _mm512_mask_loadu_epi8(fill, b2_, row + q_ + N + 2);
      t0 = _mm512_permutex2var_epi8(a, even_, b), t1 = _mm512_permutex2var_epi8(a, odd_, b);
      t2 = _mm512_permutex2var_epi8(a2, even_, b2);
    } else {
      const __m512i a = _mm512_mask_loadu_epi16(fill, a_, row + q_),
                    b = _mm512_mask_loadu_epi16(fill, b_, row + q_ + N),
                    a2 = _mm512_mask_loadu_epi16(fill, a2_, row + q_ + 2),
                    b2 = _mm512_mask_loadu_epi16(fill, b2_, row + q_ + N + 2);
      t0 = _mm512_permutex2var_epi16(a, even_, b), t1 = _mm512_permutex2var_epi16(a, odd_, b);
      t2 = _mm512_permutex2var_epi16(a2, even_, b2);
    }
  }

 private:
  // lanes i of a load from cell c on that lie inside the row: 0 <= c + i < width
  Mask inside(int64_t c) const { return Mask(lanes_inside(c, width_, N)); }

  int64_t q_, width_;
  __m512i even_, odd_;
  Mask a_, b_, a2_, b2_, left_;
};

// Lanes [0, n) of a vector of N.
template <class Mask>
Mask first_lanes(int64_t n) {
  return Mask(n >= 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1);
}

}  // namespace poolkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
#endif

#endif  // per-target guard
