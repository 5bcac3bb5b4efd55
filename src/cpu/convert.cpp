// The 16-bit conversions as integer bit operations on vectors, one lane per element, following dtype.hpp's
// scalar code case by case (NaN, overflow, subnormal, normal) so the results are the same bits.
#include "convert.hpp"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/convert.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

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
    if (bf) {
      hn::StoreU(hn::BitCast(df, hn::ShiftLeft<16>(u)), df, dst + i);
      continue;
    }
    auto sign = hn::ShiftLeft<16>(hn::And(u, hn::Set(di, 0x8000)));
    auto e = hn::And(hn::ShiftRight<10>(u), hn::Set(di, 0x1f));
    auto m = hn::And(u, hn::Set(di, 0x3ff));
    auto normal = hn::Or(hn::ShiftLeft<23>(hn::Add(e, hn::Set(di, 112))), hn::ShiftLeft<13>(m));
    auto special = hn::Or(hn::Set(di, 0x7f800000), hn::ShiftLeft<13>(m));
    auto tiny = hn::BitCast(di, hn::Mul(hn::ConvertTo(df, m), hn::Set(df, 5.9604644775390625e-8f)));
    auto mag = hn::IfThenElse(hn::Eq(e, hn::Zero(di)), tiny, hn::IfThenElse(hn::Eq(e, hn::Set(di, 31)), special, normal));
    hn::StoreU(hn::BitCast(df, hn::Or(sign, mag)), df, dst + i);
  }
  bf ? widen_scalar<bfloat16>(src + i, dst + i, n - i) : widen_scalar<float16>(src + i, dst + i, n - i);
}

void Narrow(DType to, const float* src, void* vdst, int64_t n) {
  uint16_t* dst = static_cast<uint16_t*>(vdst);
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<uint16_t, decltype(df)> d16;
  const int64_t N = int64_t(hn::Lanes(df));
  const bool bf = to == DType::bf16;
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    auto u = hn::BitCast(di, hn::LoadU(df, src + i));
    auto a = hn::And(u, hn::Set(di, 0x7fffffff));
    auto nan = hn::Gt(a, hn::Set(di, 0x7f800000));
    hn::Vec<decltype(di)> r;
    if (bf) {
      // (u + 0x7fff + lsb) >> 16 as unsigned: wrap-around only for NaN patterns, which are replaced
      auto lsb = hn::And(hn::ShiftRight<16>(hn::BitCast(hn::RebindToUnsigned<decltype(df)>(), u)),
                         hn::Set(hn::RebindToUnsigned<decltype(df)>(), 1u));
      auto sum = hn::Add(hn::Add(hn::BitCast(hn::RebindToUnsigned<decltype(df)>(), u),
                                 hn::Set(hn::RebindToUnsigned<decltype(df)>(), 0x7fffu)),
                         lsb);
      auto rounded = hn::BitCast(di, hn::ShiftRight<16>(sum));
      auto quiet = hn::Or(hn::BitCast(di, hn::ShiftRight<16>(hn::BitCast(hn::RebindToUnsigned<decltype(df)>(), u))),
                          hn::Set(di, 0x40));
      r = hn::IfThenElse(nan, quiet, rounded);
    } else {
      auto sign = hn::And(hn::ShiftRight<16>(u), hn::Set(di, 0x8000));
      auto quiet = hn::Or(hn::Set(di, 0x7e00), hn::And(hn::ShiftRight<13>(a), hn::Set(di, 0x3ff)));
      auto scaled = hn::Mul(hn::BitCast(df, a), hn::Set(df, 16777216.0f));
      auto tiny = hn::ConvertTo(di, hn::Sub(hn::Add(scaled, hn::Set(df, 8388608.0f)), hn::Set(df, 8388608.0f)));
      auto lsb = hn::And(hn::ShiftRight<13>(a), hn::Set(di, 1));
      auto normal = hn::ShiftRight<13>(hn::Sub(hn::Add(hn::Add(a, hn::Set(di, 0xfff)), lsb), hn::Set(di, 0x38000000)));
      auto mag = hn::IfThenElse(nan, quiet,
                                hn::IfThenElse(hn::Lt(a, hn::Set(di, 0x477ff000)),
                                               hn::IfThenElse(hn::Lt(a, hn::Set(di, 0x38800000)), tiny, normal),
                                               hn::Set(di, 0x7c00)));
      r = hn::Or(sign, mag);
    }
    hn::StoreU(hn::DemoteTo(d16, r), d16, dst + i);
  }
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
