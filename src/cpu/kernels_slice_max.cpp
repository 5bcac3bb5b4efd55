// A later slice's window maxima merged into those of the slices before it (SliceMaxJob, kernels.hpp): where the
// slice's maximum replaces the one so far by the reference's rule (greater, or NaN: the first maximum, the last
// NaN), it and its code (plus the slice's code offset) are taken. 16-bit floats are compared as float32 and
// their bits selected as they are; integers have no NaN. Merging a lane twice gives what merging it once gave,
// so a row's last vector may overlap the one before.
#include "kernels.hpp"

#include <type_traits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/kernels_slice_max.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "src/cpu/kernels-inl.h"

HWY_BEFORE_NAMESPACE();
namespace poolkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// (kHalf of kernels-inl.h holds for int16 too)
template <class S> constexpr bool kHalfFloat = std::is_same_v<S, bfloat16> || std::is_same_v<S, float16>;
template <class S> constexpr bool kFloat = std::is_floating_point_v<S> || kHalfFloat<S>;
// Lanes compared: float32 for the 16-bit floats, the type itself otherwise.
template <class S> using lane_t = std::conditional_t<kHalfFloat<S>, float, S>;
// Lanes stored: the 16-bit floats as their bits.
template <class S> using bits_t = std::conditional_t<kHalfFloat<S>, uint16_t, S>;

// m as a mask of dn's lanes (the same count, any width), through its bits (this Highway's TruncateTo of mask
// vectors to bytes gave wrong lanes).
template <class DN, class D>
HWY_INLINE hn::Mask<DN> rebind_mask(DN dn, D d, hn::Mask<D> m) {
  if constexpr (sizeof(hn::TFromD<DN>) == sizeof(hn::TFromD<D>)) {
    return hn::RebindMask(dn, m);
  } else {
    alignas(8) uint8_t bits[8] = {};
    hn::StoreMaskBits(d, m, bits);
    return hn::LoadMaskBits(dn, bits);
  }
}

template <class S, class D>
HWY_INLINE void merge_at(D d, const SliceMaxJob& j, S* dst, const S* src, uint8_t* dst_code, const uint8_t* src_code,
                         int64_t a) {
  const hn::Rebind<bits_t<S>, D> db;
  const hn::Rebind<uint8_t, D> d8;
  hn::Mask<D> keep;
  if constexpr (kFloat<S>) {
    keep = stays(d, load_lanes<kUnit>(d, src, a), load_lanes<kUnit>(d, dst, a));
  } else {
    keep = hn::Not(hn::Gt(hn::LoadU(d, src + a), hn::LoadU(d, dst + a)));
  }
  auto* out = reinterpret_cast<bits_t<S>*>(dst) + a;
  const auto* in = reinterpret_cast<const bits_t<S>*>(src) + a;
  hn::StoreU(hn::IfThenElse(rebind_mask(db, d, keep), hn::LoadU(db, out), hn::LoadU(db, in)), db, out);
  if (dst_code) {
    const auto taken = hn::Add(hn::LoadU(d8, src_code + a), hn::Set(d8, j.code_add));
    hn::StoreU(hn::IfThenElse(rebind_mask(d8, d, keep), hn::LoadU(d8, dst_code + a), taken), d8, dst_code + a);
  }
}

template <class S>
void slice_max(const SliceMaxJob& j) {
  const hn::CappedTag<lane_t<S>, 16> d;
  const hn::CappedTag<lane_t<S>, 1> d1;
  const int64_t N = int64_t(hn::Lanes(d));
  for (int64_t r = 0; r < j.rows; ++r) {
    S* dst = static_cast<S*>(j.dst) + r * j.dst_row;
    const S* src = static_cast<const S*>(j.src) + r * j.src_row;
    uint8_t* dc = j.dst_code ? j.dst_code + r * j.dst_row : nullptr;
    const uint8_t* sc = j.src_code ? j.src_code + r * j.src_row : nullptr;
    if (j.cols < N) {
      for (int64_t i = 0; i < j.cols; ++i) merge_at(d1, j, dst, src, dc, sc, i);
    } else {
      for (int64_t i = 0; i < j.cols; i += N) merge_at(d, j, dst, src, dc, sc, std::min(i, j.cols - N));
    }
  }
}

void SliceMaxF32(const SliceMaxJob& j) { slice_max<float>(j); }
void SliceMaxF64(const SliceMaxJob& j) { slice_max<double>(j); }
void SliceMaxBF16(const SliceMaxJob& j) { slice_max<bfloat16>(j); }
void SliceMaxF16(const SliceMaxJob& j) { slice_max<float16>(j); }
void SliceMaxU8(const SliceMaxJob& j) { slice_max<uint8_t>(j); }
void SliceMaxI8(const SliceMaxJob& j) { slice_max<int8_t>(j); }
void SliceMaxI16(const SliceMaxJob& j) { slice_max<int16_t>(j); }
void SliceMaxI32(const SliceMaxJob& j) { slice_max<int32_t>(j); }
void SliceMaxI64(const SliceMaxJob& j) { slice_max<int64_t>(j); }

}  // namespace poolkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolkit::cpu {
HWY_EXPORT(SliceMaxF32);
HWY_EXPORT(SliceMaxF64);
HWY_EXPORT(SliceMaxBF16);
HWY_EXPORT(SliceMaxF16);
HWY_EXPORT(SliceMaxU8);
HWY_EXPORT(SliceMaxI8);
HWY_EXPORT(SliceMaxI16);
HWY_EXPORT(SliceMaxI32);
HWY_EXPORT(SliceMaxI64);
void slice_max_merge(DType t, const SliceMaxJob& j) {
  switch (t) {
    case DType::f32: return HWY_DYNAMIC_DISPATCH(SliceMaxF32)(j);
    case DType::f64: return HWY_DYNAMIC_DISPATCH(SliceMaxF64)(j);
    case DType::bf16: return HWY_DYNAMIC_DISPATCH(SliceMaxBF16)(j);
    case DType::f16: return HWY_DYNAMIC_DISPATCH(SliceMaxF16)(j);
    case DType::u8: return HWY_DYNAMIC_DISPATCH(SliceMaxU8)(j);
    case DType::i8: return HWY_DYNAMIC_DISPATCH(SliceMaxI8)(j);
    case DType::i16: return HWY_DYNAMIC_DISPATCH(SliceMaxI16)(j);
    case DType::i32: return HWY_DYNAMIC_DISPATCH(SliceMaxI32)(j);
    default: return HWY_DYNAMIC_DISPATCH(SliceMaxI64)(j);
  }
}
}  // namespace poolkit::cpu
#endif
