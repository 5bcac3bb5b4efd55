// The 16-bit conversions of whole arrays, as integer bit operations on vectors (convert-inl.h), following
// dtype.hpp's scalar code case by case (NaN, overflow, subnormal, normal) so the results are the same bits.
#include "convert.hpp"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/convert.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "src/cpu/convert-inl.h"

HWY_BEFORE_NAMESPACE();
namespace poolkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class T>
void widen_scalar(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    T v;
    v.bits = src[i];
    dst[i] = float(v);
  }
}
template <class T>
void narrow_scalar(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = T(src[i]).bits;
}

void Widen(DType from, const void* vsrc, float* dst, int64_t n) {
  const uint16_t* src = static_cast<const uint16_t*>(vsrc);
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<uint16_t, decltype(df)> d16;
  const int64_t N = int64_t(hn::Lanes(df));
  const bool bf = from == DType::bf16;
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    auto u = hn::BitCast(di, hn::PromoteTo(hn::RebindToUnsigned<decltype(df)>(), hn::LoadU(d16, src + i)));
    hn::StoreU(widen_lanes(df, u, bf), df, dst + i);
  }
  bf ? widen_scalar<bfloat16>(src + i, dst + i, n - i) : widen_scalar<float16>(src + i, dst + i, n - i);
}

void Narrow(DType to, const float* src, void* vdst, int64_t n) {
  uint16_t* dst = static_cast<uint16_t*>(vdst);
  const hn::ScalableTag<float> df;
  const hn::Rebind<uint16_t, decltype(df)> d16;
  const int64_t N = int64_t(hn::Lanes(df));
  const bool bf = to == DType::bf16;
  int64_t i = 0;
  for (; i + N <= n; i += N) hn::StoreU(narrow16(df, hn::LoadU(df, src + i), bf), d16, dst + i);
  bf ? narrow_scalar<bfloat16>(src + i, dst + i, n - i) : narrow_scalar<float16>(src + i, dst + i, n - i);
}

}  // namespace poolkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolkit::cpu {
HWY_EXPORT(Widen);
HWY_EXPORT(Narrow);
void widen_to_f32(DType from, const void* src, float* dst, int64_t n) { HWY_DYNAMIC_DISPATCH(Widen)(from, src, dst, n); }
void narrow_from_f32(DType to, const float* src, void* dst, int64_t n) {
  HWY_DYNAMIC_DISPATCH(Narrow)(to, src, dst, n);
}
}  // namespace poolkit::cpu
#endif
