// Per-target vector forms of dtype.hpp's bfloat16 / float16 conversions, one 32-bit lane per element, shared by
// the whole-array conversions (convert.cpp) and the kernels that load and store 16-bit values (kernels-inl.h).
// Included once per Highway target (after foreach_target.h), hence the toggling guard.
#if defined(POOLKIT_CPU_CONVERT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POOLKIT_CPU_CONVERT_INL_H_
#undef POOLKIT_CPU_CONVERT_INL_H_
#else
#define POOLKIT_CPU_CONVERT_INL_H_
#endif

#include <hwy/highway.h>

#include "src/cpu/cpu_features.hpp"

HWY_BEFORE_NAMESPACE();
namespace poolkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// 16-bit patterns (bfloat16 when bf, else float16) in the low half of 32-bit lanes, to float: exact.
template <class DF, class VI>
HWY_INLINE hn::Vec<DF> widen_lanes(DF df, VI u, bool bf) {
  const hn::RebindToSigned<DF> di;
  if (bf) return hn::BitCast(df, hn::ShiftLeft<16>(u));
  auto sign = hn::ShiftLeft<16>(hn::And(u, hn::Set(di, 0x8000)));
  auto e = hn::And(hn::ShiftRight<10>(u), hn::Set(di, 0x1f));
  auto m = hn::And(u, hn::Set(di, 0x3ff));
  auto normal = hn::Or(hn::ShiftLeft<23>(hn::Add(e, hn::Set(di, 112))), hn::ShiftLeft<13>(m));
  auto special = hn::Or(hn::Set(di, 0x7f800000), hn::ShiftLeft<13>(m));
  auto tiny = hn::BitCast(di, hn::Mul(hn::ConvertTo(df, m), hn::Set(df, 5.9604644775390625e-8f)));
  auto mag = hn::IfThenElse(hn::Eq(e, hn::Zero(di)), tiny, hn::IfThenElse(hn::Eq(e, hn::Set(di, 31)), special, normal));
  return hn::BitCast(df, hn::Or(sign, mag));
}

// float to 16-bit patterns in 32-bit lanes: round to nearest even, NaN kept quiet, as dtype.hpp.
template <class DF>
HWY_INLINE hn::Vec<hn::RebindToSigned<DF>> narrow_lanes(DF df, hn::Vec<DF> v, bool bf) {
  const hn::RebindToSigned<DF> di;
  const hn::RebindToUnsigned<DF> du;
  auto u = hn::BitCast(di, v);
  auto a = hn::And(u, hn::Set(di, 0x7fffffff));
  auto nan = hn::Gt(a, hn::Set(di, 0x7f800000));
  if (bf) {
    // (u + 0x7fff + lsb) >> 16 as unsigned: wrap-around only for NaN patterns, which are replaced
    auto uu = hn::BitCast(du, u);
    auto lsb = hn::And(hn::ShiftRight<16>(uu), hn::Set(du, 1u));
    auto rounded = hn::BitCast(di, hn::ShiftRight<16>(hn::Add(hn::Add(uu, hn::Set(du, 0x7fffu)), lsb)));
    auto quiet = hn::Or(hn::BitCast(di, hn::ShiftRight<16>(uu)), hn::Set(di, 0x40));
    return hn::IfThenElse(nan, quiet, rounded);
  }
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
  return hn::Or(sign, mag);
}

// bfloat16 rounded by VCVTNEPS2BF16 where the CPU has AVX512_BF16 (cpu_bf16_insn): one instruction for the
// dozen of narrow_lanes. It rounds to nearest even and quiets NaN as dtype.hpp, but flushes denormals to zero, so
// a vector holding one (fpclass category 0x20) is left to narrow_lanes: false, `out` untouched.
#undef POOLKIT_BF16_INSN  // this file is compiled once per target
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3 && (defined(__GNUC__) || defined(__clang__))
#define POOLKIT_BF16_INSN 1
template <class DF>
HWY_INLINE bool bf16_by_insn(DF, hn::Vec<DF> v, hn::Vec<hn::Rebind<uint16_t, DF>>& out) {
  if (!cpu_bf16_insn) return false;
  constexpr size_t kBytes = sizeof(v.raw);
  if constexpr (kBytes == 64) {
    if (_mm512_fpclass_ps_mask(v.raw, 0x20)) return false;
  } else if constexpr (kBytes == 32) {
    if (_mm256_fpclass_ps_mask(v.raw, 0x20)) return false;
  } else {
    if (_mm_fpclass_ps_mask(v.raw, 0x20)) return false;  // (lanes past a partial vector's end may only say no)
  }
  asm("vcvtneps2bf16 %1, %0" : "=v"(out.raw) : "v"(v.raw));
  return true;
}

// Two 512-bit vectors a, b as 32 bfloat16 patterns, a's 16 then b's, by one VCVTNE2PS2BF16. False, `out`
// untouched, as bf16_by_insn.
template <class DF>
HWY_INLINE bool bf16_halves_by_insn(DF, hn::Vec<DF> a, hn::Vec<DF> b, hn::Vec<hn::RebindToUnsigned<DF>>& out) {
  if constexpr (sizeof(a.raw) != 64) {
    return false;
  } else {
    if (!cpu_bf16_insn || (_mm512_fpclass_ps_mask(a.raw, 0x20) | _mm512_fpclass_ps_mask(b.raw, 0x20))) return false;
    asm("vcvtne2ps2bf16 %2, %1, %0" : "=v"(out.raw) : "v"(b.raw), "v"(a.raw));
    return true;
  }
}

// a, b as bfloat16 pairs (a[i] in the low half of 32-bit lane i, b[i] in the high half): bf16_halves_by_insn and
// one word permute, where two conversions, two widenings, a shift and an or had made them (the row backwards of
// 16-bit dx store their two cells per output so). False, `out` untouched, as bf16_by_insn.
template <class DF>
HWY_INLINE bool bf16_pairs_by_insn(DF df, hn::Vec<DF> a, hn::Vec<DF> b, hn::Vec<hn::RebindToUnsigned<DF>>& out) {
  if constexpr (sizeof(a.raw) != 64) {
    return false;
  } else {
    hn::Vec<hn::RebindToUnsigned<DF>> halves;
    if (!bf16_halves_by_insn(df, a, b, halves)) return false;
    alignas(64) static constexpr uint16_t kPairs[32] = {0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,  21, 6,  22, 7,  23,
                                                        8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
    out.raw = _mm512_permutexvar_epi16(_mm512_load_si512(kPairs), halves.raw);
    return true;
  }
}
#else
#define POOLKIT_BF16_INSN 0
#endif

// float to 16-bit patterns in 16-bit lanes, as narrow_lanes.
template <class DF>
HWY_INLINE hn::Vec<hn::Rebind<uint16_t, DF>> narrow16(DF df, hn::Vec<DF> v, bool bf) {
  const hn::Rebind<uint16_t, DF> d16;
#if POOLKIT_BF16_INSN
  hn::Vec<decltype(d16)> r;
  if (bf && bf16_by_insn(df, v, r)) return r;
#endif
  return hn::DemoteTo(d16, narrow_lanes(df, v, bf));
}

}  // namespace poolkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // toggle guard
