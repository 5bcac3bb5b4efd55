// Per-target helpers of the SIMD microkernels (kernels_forward-inl.h, kernels_backward.cpp, kernels_rows.cpp): how
// lanes are laid out, loaded and stored in each dtype. Included once per Highway target (after foreach_target.h),
// hence the toggling guard.
#if defined(POOLKIT_CPU_KERNELS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POOLKIT_CPU_KERNELS_INL_H_
#undef POOLKIT_CPU_KERNELS_INL_H_
#else
#define POOLKIT_CPU_KERNELS_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include "poolkit/dtype.hpp"
#include "src/cpu/convert-inl.h"
#include "src/cpu/kernels.hpp"

HWY_BEFORE_NAMESPACE();
namespace poolkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

inline int64_t lane_offset(const Lanes& l, int64_t k) {
  return l.group == 1 ? k * l.lane_stride : (k / l.group) * l.lane_stride + k % l.group;
}

inline void store_index(IndexForm form, void* base, int64_t k, int64_t v) {
  switch (form) {
    case IndexForm::U8: static_cast<uint8_t*>(base)[k] = uint8_t(v); return;
    case IndexForm::I16: static_cast<int16_t*>(base)[k] = int16_t(v); return;
    case IndexForm::I32: static_cast<int32_t*>(base)[k] = int32_t(v); return;
    case IndexForm::I64: static_cast<int64_t*>(base)[k] = v; return;
    case IndexForm::None: return;
  }
}

inline int64_t load_index(IndexForm form, const void* base, int64_t k) {
  switch (form) {
    case IndexForm::U8: return static_cast<const uint8_t*>(base)[k];
    case IndexForm::I16: return static_cast<const int16_t*>(base)[k];
    case IndexForm::I32: return static_cast<const int32_t*>(base)[k];
    case IndexForm::I64: return static_cast<const int64_t*>(base)[k];
    case IndexForm::None: return -1;
  }
  return -1;
}

// Storage types: float and double are computed as themselves, bfloat16 and float16 as float (widened exactly on
// load, rounded as dtype.hpp on store).
template <class S> using compute_t = std::conditional_t<sizeof(S) == 8, double, float>;

// How a vector of lanes [k, k + N) is loaded (see Lanes): contiguous, every other element, every other pair,
// contiguous within one output's group of lanes (groups of a multiple of N lanes), or (float32, x86) every other
// block of 4 or 8 lanes. Groups that divide N and follow one another (channels-last channels, stride 1) are
// contiguous too.
enum LoadMode { kScalarOnly, kUnit, kPair, kPair64, kGroup, kBlocks4, kBlocks8 };
template <class S>
constexpr bool kBlockLoads = std::is_same_v<S, float> && HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2;

template <class S>
LoadMode load_mode(const Lanes& l) {
  const int64_t N = int64_t(hn::Lanes(hn::ScalableTag<compute_t<S>>()));
  if (l.group == 1 && l.lane_stride == 1) return kUnit;
  if (l.group % N == 0) return kGroup;
  if (N % l.group == 0 && l.lane_stride == l.group) return kUnit;
#if HWY_TARGET != HWY_SCALAR
  if (l.group == 1 && l.lane_stride == 2) return kPair;
  if ((sizeof(S) == 4 || sizeof(S) == 2) && l.group == 2 && l.lane_stride == 4) return kPair64;
#endif
  if (kBlockLoads<S> && l.lane_stride == 2 * l.group && N % l.group == 0) {
    if (l.group == 4) return kBlocks4;
    if (l.group == 8) return kBlocks8;
  }
  return kScalarOnly;
}

// Where load_lanes<M> reads lanes [k, k + N): kGroup vectors start at their first lane's element.
template <int M>
HWY_INLINE int64_t load_at(const Lanes& l, int64_t k) {
  return M == kGroup ? (k / l.group) * l.lane_stride + k % l.group : k;
}
// The same for lane k's vector of U, given `at0`: where walk_vectors says one vector of a channels-last group
// reads (other modes: the lane itself, which may have moved back from `at0`'s to overlap the vectors before).
template <int M, int U>
HWY_INLINE int64_t vector_at(const Lanes& l, int64_t lane, int64_t at0) {
  return M == kGroup && U == 1 ? at0 : load_at<M>(l, lane);
}
template <int M> constexpr int kLoadAs = M == kGroup ? kUnit : M;
template <class S> constexpr bool kHalf = sizeof(S) == 2;

// Where the maximum so far, `best`, stays against v by the reference's rule (v replaces it where greater, or NaN:
// ties keep the first maximum, the last NaN wins). On x86 one compare: v at most best capped at +inf (x86's min
// gives its second operand, +inf, for a NaN best, so that only a NaN v replaces that).
template <class D>
HWY_INLINE hn::Mask<D> stays(D d, hn::Vec<D> v, hn::Vec<D> best) {
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
  return hn::Le(v, hn::Min(best, hn::Inf(d)));
#else
  (void)d;
  return hn::Not(hn::Or(hn::Gt(v, best), hn::IsNaN(v)));
#endif
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
// 16-bit floats (bfloat16, float16) compared as 16-bit integer keys without widening: the magnitude, negated where
// the sign is set but the value is no NaN (as a 16-bit integer, at most -infinity's bits), so that -0 and +0 tie
// and a NaN, whatever its sign, keeps its magnitude, above infinity's.
template <class S> constexpr uint16_t kHalfInf = std::is_same_v<S, bfloat16> ? 0x7F80 : 0x7C00;
#endif
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
template <class S>
HWY_INLINE __m512i half_key(__m512i v) {
  const __m512i mag = _mm512_and_si512(v, _mm512_set1_epi16(0x7FFF));
  const __mmask32 negative = _mm512_cmple_epi16_mask(v, _mm512_set1_epi16(short(0x8000 | kHalfInf<S>)));
  return _mm512_mask_sub_epi16(mag, negative, _mm512_setzero_si512(), mag);
}
// Where key k replaces the maximum's key `best` by the reference's rule (greater, or NaN: the first maximum, the
// last NaN): k above best capped at infinity's key.
template <class S>
HWY_INLINE __mmask32 half_key_replaces(__m512i k, __m512i best) {
  return _mm512_cmpgt_epi16_mask(k, _mm512_min_epi16(best, _mm512_set1_epi16(short(kHalfInf<S>))));
}
// The bits of values whose keys these are, as a maximum stores them: a NaN quiet, as dtype.hpp's rounding leaves
// it.
template <class S>
HWY_INLINE __m512i half_quiet(__m512i bits, __m512i key) {
  const short quiet = std::is_same_v<S, bfloat16> ? 0x0040 : 0x0200;
  const __mmask32 nan = _mm512_cmpgt_epi16_mask(key, _mm512_set1_epi16(short(kHalfInf<S>)));
  return _mm512_mask_mov_epi16(bits, nan, _mm512_or_si512(bits, _mm512_set1_epi16(quiet)));
}
#endif
#if HWY_ARCH_X86 && HWY_TARGET == HWY_AVX2
// The same keys and rules in 16-bit lanes of AVX2 vectors (masks as vectors of all-ones lanes).
template <class S>
HWY_INLINE __m256i half_key(__m256i v) {
  const __m256i mag = _mm256_and_si256(v, _mm256_set1_epi16(0x7FFF));
  const __m256i negative = _mm256_cmpgt_epi16(_mm256_set1_epi16(short(0x8000 | (kHalfInf<S> + 1))), v);
  return _mm256_sign_epi16(mag, _mm256_or_si256(negative, _mm256_set1_epi16(1)));  // (-1 or +1 a lane)
}
template <class S>
HWY_INLINE __m256i half_key_replaces(__m256i k, __m256i best) {
  return _mm256_cmpgt_epi16(k, _mm256_min_epi16(best, _mm256_set1_epi16(short(kHalfInf<S>))));
}
template <class S>
HWY_INLINE __m256i half_quiet(__m256i bits, __m256i key) {
  const short quiet = std::is_same_v<S, bfloat16> ? 0x0040 : 0x0200;
  const __m256i nan = _mm256_cmpgt_epi16(key, _mm256_set1_epi16(short(kHalfInf<S>)));
  return _mm256_or_si256(bits, _mm256_and_si256(nan, _mm256_set1_epi16(quiet)));
}
#endif
template <class S> constexpr bool kBF16 = std::is_same_v<S, bfloat16>;

// float16 converted by the F16C instructions where the target has them. Widening is exact for every value but
// NaN, whose quiet bit it may set, which the rounding on store sets anyway (dtype.hpp keeps NaN quiet);
// narrowing rounds to nearest even and keeps a NaN's top payload bits with the quiet bit set, as dtype.hpp.
#undef POOLKIT_F16C  // this file is compiled once per target
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
#define POOLKIT_F16C 1
#else
#define POOLKIT_F16C 0
#endif

// float lanes as the 16-bit patterns of S.
template <class S, class D>
HWY_INLINE hn::Vec<hn::Rebind<uint16_t, D>> bits16(D d, hn::Vec<D> v) {
  const hn::Rebind<uint16_t, D> d16;
  if constexpr (!kBF16<S> && POOLKIT_F16C) {
    return hn::BitCast(d16, hn::DemoteTo(hn::Rebind<hwy::float16_t, D>(), v));
  } else {
    return narrow16(d, v, kBF16<S>);
  }
}

template <class D, class S>
HWY_INLINE void store_values(D d, hn::Vec<D> v, S* p) {
  if constexpr (kHalf<S>) hn::StoreU(bits16<S>(d, v), hn::Rebind<uint16_t, D>(), reinterpret_cast<uint16_t*>(p));
  else hn::StoreU(v, d, p);
}
// The first n lanes of v (0 < n <= lanes) as S to p, by one masked store.
template <class S, class D>
HWY_INLINE void store_first(D d, hn::Vec<D> v, S* p, int64_t n) {
  if constexpr (kHalf<S>) {
    const hn::Rebind<uint16_t, D> du;
    hn::BlendedStore(bits16<S>(d, v), hn::FirstN(du, size_t(n)), du, reinterpret_cast<uint16_t*>(p));
  } else {
    hn::BlendedStore(v, hn::FirstN(d, size_t(n)), d, p);
  }
}
// The lanes i < N (N <= 64) of a load from cell c on that lie inside a row of n cells, 0 <= c + i < n, as bits.
inline uint64_t lanes_inside(int64_t c, int64_t n, int64_t N) {
  const int64_t lo = std::clamp<int64_t>(-c, 0, N), hi = std::clamp<int64_t>(n - c, 0, N);
  if (hi <= lo) return 0;
  const uint64_t below_hi = hi == 64 ? ~uint64_t(0) : (uint64_t(1) << hi) - 1;
  return below_hi & ~((uint64_t(1) << lo) - 1);
}

// Whether streaming stores may write rows of `count` elements of esize bytes from p, `step` elements apart, by
// vectors of N elements: every store whole and aligned (a line written partly by streaming stores and partly by
// ordinary ones is read back from memory at once, far slower than either).
inline bool whole_aligned_rows(const void* p, int64_t step, int64_t count, int64_t N, int64_t esize) {
  const int64_t vbytes = N * esize;
  return count % N == 0 && reinterpret_cast<uintptr_t>(p) % vbytes == 0 && step * esize % vbytes == 0;
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// Streams 64-byte vectors that follow one another in memory from a start inside a line (an array of malloc's,
// 16 bytes past a line): each whole line is made of the last lanes of one vector and the first lanes of the next
// and stored past the cache; the lanes before the first whole line and after the last go by ordinary (masked)
// stores. A vector that does not continue the run ends it and starts another. 4-byte lanes. Callers keep runs
// long (their rows back to back): the line where one run ends and another begins is written partly by ordinary
// and partly by streaming stores, and such lines cost far more than either (pool3d's max backward, runs of two
// rows: 21x slower, see tiled_backward).
class LineStreamer {
 public:
  static constexpr bool kOn = true;
  void put(void* at, __m512i v) {
    char* p = static_cast<char*>(at);
    if (p != next_) {
      flush();
      const int m = int(reinterpret_cast<uintptr_t>(p) % 64 / 4);  // p's lanes into its line
      head_ = __mmask16((1u << (16 - m)) - 1);
      idx_ = _mm512_add_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                              _mm512_set1_epi32(16 - m));
      shift_ = 4 * m;
      if (m == 0) _mm512_stream_si512(reinterpret_cast<__m512i*>(p), v);
      else _mm512_mask_storeu_epi32(p, head_, v);
    } else {  // the line that last_ began: its last lanes, then v's first
      _mm512_stream_si512(reinterpret_cast<__m512i*>(p - shift_), _mm512_permutex2var_epi32(last_, idx_, v));
    }
    last_ = v;
    next_ = p + 64;
  }
  void flush() {  // the last vector's lanes past its line
    if (next_ && shift_) _mm512_mask_storeu_epi32(next_ - 64, __mmask16(~head_), last_);
    next_ = nullptr;
  }

 private:
  char* next_ = nullptr;  // where a vector continues the run
  __m512i last_, idx_;  // (set by the put that starts a run)
  __mmask16 head_ = 0;
  int shift_ = 0;  // bytes from a run's vector back to the line it completes
};
#else
struct LineStreamer {  // (never used: kOn)
  static constexpr bool kOn = false;
  template <class V>
  void put(void*, V) {}
  void flush() {}
};
#endif

// v to p, by a streaming store (past the cache; p aligned to the vector) with `stream` where v is a whole
// register (a streaming store of a part of one would write the whole).
template <class D>
HWY_INLINE void put(D d, hn::Vec<D> v, hn::TFromD<D>* p, bool stream) {
  constexpr bool kWhole = hn::MaxLanes(D()) * sizeof(hn::TFromD<D>) >= 16;
  if (kWhole && stream) hn::Stream(v, d, p);
  else hn::StoreU(v, d, p);
}
template <class D, class S>
HWY_INLINE void put_values(D d, hn::Vec<D> v, S* p, bool stream) {
  if constexpr (kHalf<S>) put(hn::Rebind<uint16_t, D>(), bits16<S>(d, v), reinterpret_cast<uint16_t*>(p), stream);
  else put(d, v, p, stream);
}

// a, then b, to p as S: 16-bit types narrowed into one register of both (bfloat16 by one VCVTNE2PS2BF16 where the
// CPU has it, see bf16_halves_by_insn) and stored at once.
template <class D, class S>
HWY_INLINE void put_values2(D d, hn::Vec<D> a, hn::Vec<D> b, S* p, bool stream) {
#if HWY_TARGET != HWY_SCALAR  // (no Combine there)
  if constexpr (kHalf<S>) {
    const hn::Repartition<uint16_t, D> d16;
    uint16_t* to = reinterpret_cast<uint16_t*>(p);
#if POOLKIT_BF16_INSN
    if constexpr (kBF16<S>) {
      hn::Vec<hn::RebindToUnsigned<D>> both;
      if (bf16_halves_by_insn(d, a, b, both)) return put(d16, hn::BitCast(d16, both), to, stream);
    }
#endif
    return put(d16, hn::Combine(d16, bits16<S>(d, b), bits16<S>(d, a)), to, stream);
  }
#endif
  put_values(d, a, p, stream);
  put_values(d, b, p + hn::Lanes(d), stream);
}

// float lanes as the 16-bit patterns of S in the low half of 32-bit lanes (upper half zero).
template <class S, class D>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> bits16_in_32(D d, hn::Vec<D> v) {
  const hn::RebindToUnsigned<D> du;
  if constexpr (!kBF16<S> && POOLKIT_F16C) {
    return hn::PromoteTo(du, bits16<S>(d, v));
  } else {
#if POOLKIT_BF16_INSN
    if constexpr (kBF16<S>) {
      hn::Vec<hn::Rebind<uint16_t, D>> r;
      if (bf16_by_insn(d, v, r)) return hn::PromoteTo(du, r);
    }
#endif
    return hn::BitCast(du, narrow_lanes(d, v, kBF16<S>));
  }
}

// a[0], b[0], a[1], b[1], ... as the 16-bit patterns of S, each pair one 32-bit lane (little-endian)
template <class S, class D>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> interleaved16(D d, hn::Vec<D> a, hn::Vec<D> b) {
#if POOLKIT_BF16_INSN
  if constexpr (kBF16<S>) {
    hn::Vec<hn::RebindToUnsigned<D>> pairs;
    if (bf16_pairs_by_insn(d, a, b, pairs)) return pairs;
  }
#endif
  return hn::Or(bits16_in_32<S>(d, a), hn::ShiftLeft<16>(bits16_in_32<S>(d, b)));
}

// a[0], b[0], a[1], b[1], ... from p on
template <class D, class S>
HWY_INLINE void store_interleaved(D d, hn::Vec<D> a, hn::Vec<D> b, S* p) {
  if constexpr (kHalf<S>) {
    hn::StoreU(interleaved16<S>(d, a, b), hn::RebindToUnsigned<D>(), reinterpret_cast<uint32_t*>(p));
  } else {
    hn::StoreInterleaved2(a, b, d, p);
  }
}

// 16-bit patterns of S (in u16 lanes) widened to float.
template <class D, class S, class V16>
HWY_INLINE hn::Vec<D> widen16(D d, V16 bits) {
  const hn::RebindToSigned<D> di;
  const hn::RebindToUnsigned<D> du;
  if constexpr (!kBF16<S> && POOLKIT_F16C) {
    return hn::PromoteTo(d, hn::BitCast(hn::Rebind<hwy::float16_t, D>(), bits));
  } else {
    return widen_lanes(d, hn::BitCast(di, hn::PromoteTo(du, bits)), kBF16<S>);
  }
}

#if HWY_TARGET != HWY_SCALAR
// The even and the odd cells of 2N cells from p, widened (16-bit types: one load of 32-bit pairs, the even cell
// the low half).
template <class D, class S>
HWY_INLINE void load_pairs(D d, const S* p, hn::Vec<D>& even, hn::Vec<D>& odd) {
  if constexpr (kHalf<S>) {
    const hn::RebindToUnsigned<D> du;
    const auto pair = hn::LoadU(du, reinterpret_cast<const uint32_t*>(p));
    if constexpr (kBF16<S>) {
      even = hn::BitCast(d, hn::ShiftLeft<16>(pair));
      odd = hn::BitCast(d, hn::And(pair, hn::Set(du, 0xffff0000u)));
    } else {
      const hn::Rebind<uint16_t, D> d16;
      even = widen16<D, S>(d, hn::TruncateTo(d16, pair));
      odd = widen16<D, S>(d, hn::TruncateTo(d16, hn::ShiftRight<16>(pair)));
    }
  } else {
    const int64_t N = int64_t(hn::Lanes(d));
    const auto lo = hn::LoadU(d, p), hi = hn::LoadU(d, p + N);
    even = hn::ConcatEven(d, hi, lo), odd = hn::ConcatOdd(d, hi, lo);
  }
}
#endif

template <int M, class D, class S>
HWY_INLINE hn::Vec<D> load_lanes(D d, const S* p, int64_t k) {
#if HWY_TARGET != HWY_SCALAR  // (pair modes on the scalar target: not reached, load_mode() gives kScalarOnly)
  if constexpr (M == kPair) {
    hn::Vec<D> even, odd;  // (the odd cells unused: no instructions for them)
    load_pairs(d, p + 2 * k, even, odd);
    return even;
  }
  if constexpr (M == kPair64 && !kHalf<S>) {
    const int64_t N = int64_t(hn::Lanes(d));
    const hn::Repartition<uint64_t, D> d64;
    const uint64_t* q = reinterpret_cast<const uint64_t*>(p + 2 * k);
    return hn::BitCast(d, hn::ConcatEven(d64, hn::LoadU(d64, q + N / 2), hn::LoadU(d64, q)));
  }
  if constexpr (M == kPair64 && kHalf<S>) {  // two 16-bit channels: 32-bit units, every other one, widened
    const hn::Repartition<uint32_t, D> d32;
    const auto units = hn::LoadU(d32, reinterpret_cast<const uint32_t*>(p + 2 * k));
    const auto even = hn::LowerHalf(hn::ConcatEven(d32, units, units));
    return widen16<D, S>(d, hn::BitCast(hn::Rebind<uint16_t, D>(), even));
  }
#endif
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if constexpr (M == kBlocks4 || M == kBlocks8) {  // float32: the even blocks of the 2N elements from 2k on
    const int64_t N = int64_t(hn::Lanes(d));
    const auto lo = hn::LoadU(d, p + 2 * k), hi = hn::LoadU(d, p + 2 * k + N);
#if HWY_TARGET <= HWY_AVX3
    constexpr int kBlocks = M == kBlocks4 ? _MM_SHUFFLE(2, 0, 2, 0) : _MM_SHUFFLE(1, 0, 1, 0);
    return hn::Vec<D>{_mm512_shuffle_f32x4(lo.raw, hi.raw, kBlocks)};
#else
    if constexpr (M == kBlocks8) return lo;  // (N = 8: load_mode gives kGroup)
    return hn::Vec<D>{_mm256_permute2f128_ps(lo.raw, hi.raw, 0x20)};
#endif
  }
#endif
  if constexpr (kHalf<S>) {
    const hn::Rebind<uint16_t, D> d16;
    return widen16<D, S>(d, hn::LoadU(d16, reinterpret_cast<const uint16_t*>(p) + k));
  } else {
    return hn::LoadU(d, p + k);
  }
}

// Argmax lanes [c, c + N) widened to the signed lane type of the values: U8, I16, I32 for 4-byte lanes; U8, I32,
// I64 for 8-byte lanes.
template <class DI>
HWY_INLINE hn::Vec<DI> load_argmax(DI di, IndexForm form, const void* p, int64_t c) {
  using TI = hn::TFromD<DI>;
  const hn::Rebind<uint8_t, DI> d8;
  if constexpr (sizeof(TI) == 4) {
    switch (form) {
      case IndexForm::U8: return hn::PromoteTo(di, hn::LoadU(d8, static_cast<const uint8_t*>(p) + c));
      case IndexForm::I16: return hn::PromoteTo(di, hn::LoadU(hn::Rebind<int16_t, DI>(), static_cast<const int16_t*>(p) + c));
      default: return hn::LoadU(di, static_cast<const int32_t*>(p) + c);
    }
  } else {
    const hn::Rebind<int32_t, DI> d32;
    switch (form) {
      case IndexForm::U8: return hn::PromoteTo(di, hn::PromoteTo(d32, hn::LoadU(d8, static_cast<const uint8_t*>(p) + c)));
      case IndexForm::I32: return hn::PromoteTo(di, hn::LoadU(d32, static_cast<const int32_t*>(p) + c));
      default: return hn::LoadU(di, static_cast<const int64_t*>(p) + c);
    }
  }
}

// Where the U vectors from cell a start: N apart, but none past `end` - N (those overlap the ones before and
// give their cells the same sums again).
template <class D>
HWY_INLINE void vector_starts(D d, int64_t a, int64_t end, int64_t* at, int U) {
  const int64_t N = int64_t(hn::Lanes(d));
  for (int v = 0; v < U; ++v) at[v] = std::min(a + v * N, end - N) - a;
}

}  // namespace poolkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // per-target guard

// One exported kernel per target and its dispatching entry point of kernels.hpp (after the last target).
#ifndef POOLKIT_KERNEL_DISPATCH
#define POOLKIT_KERNEL_DISPATCH(Name, fn, Job) \
  HWY_EXPORT(Name);                            \
  void fn(const Job& j) { HWY_DYNAMIC_DISPATCH(Name)(j); }
#endif
