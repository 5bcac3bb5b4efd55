// The SIMD microkernels, one source compiled for every x86 ISA Highway targets (SSE4, AVX2, AVX-512) and chosen
// at run time. Max follows PyTorch's rule (replace when greater or NaN: the first maximum and the last NaN win);
// sums run in window order in the element type, as the reference does, so results are bit-identical to it (up
// to which payload a sum of two NaN keeps: IEEE 754 leaves that open, and compilers order operands freely).
#include "kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/kernels.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/aligned_allocator.h>
#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include "poolkit/dtype.hpp"
#include "src/cpu/convert-inl.h"
#include "src/cpu/prefetch.hpp"

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

// How a vector of lanes [k, k + N) is loaded (see Lanes): contiguous, every other element, every other pair, or
// contiguous within one output's group of lanes (groups of a multiple of N lanes).
enum LoadMode { kScalarOnly, kUnit, kPair, kPair64, kGroup };

template <class S>
LoadMode load_mode(const Lanes& l) {
  const int64_t N = int64_t(hn::Lanes(hn::ScalableTag<compute_t<S>>()));
  if (l.group == 1 && l.lane_stride == 1) return kUnit;
  if (l.group % N == 0) return kGroup;
#if HWY_TARGET != HWY_SCALAR
  if (l.group == 1 && l.lane_stride == 2) return kPair;
  if (sizeof(S) == 4 && l.group == 2 && l.lane_stride == 4) return kPair64;
#endif
  return kScalarOnly;
}

// Where load_lanes<M> reads lanes [k, k + N): kGroup vectors start at their first lane's element.
template <int M>
HWY_INLINE int64_t load_at(const Lanes& l, int64_t k) {
  return M == kGroup ? (k / l.group) * l.lane_stride + k % l.group : k;
}
template <int M> constexpr int kLoadAs = M == kGroup ? kUnit : M;
template <class S> constexpr bool kHalf = sizeof(S) == 2;
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
  if constexpr (!kBF16<S> && POOLKIT_F16C) return hn::BitCast(d16, hn::DemoteTo(hn::Rebind<hwy::float16_t, D>(), v));
  else return hn::DemoteTo(d16, narrow_lanes(d, v, kBF16<S>));
}

template <class D, class S>
HWY_INLINE void store_values(D d, hn::Vec<D> v, S* p) {
  if constexpr (kHalf<S>) hn::StoreU(bits16<S>(d, v), hn::Rebind<uint16_t, D>(), reinterpret_cast<uint16_t*>(p));
  else hn::StoreU(v, d, p);
}
// a[0], b[0], a[1], b[1], ... from p on
template <class D, class S>
HWY_INLINE void store_interleaved(D d, hn::Vec<D> a, hn::Vec<D> b, S* p) {
  if constexpr (kHalf<S>)
    hn::StoreInterleaved2(bits16<S>(d, a), bits16<S>(d, b), hn::Rebind<uint16_t, D>(), reinterpret_cast<uint16_t*>(p));
  else hn::StoreInterleaved2(a, b, d, p);
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

template <int M, class D, class S>
HWY_INLINE hn::Vec<D> load_lanes(D d, const S* p, int64_t k) {
  if constexpr (kHalf<S>) {
    const hn::RebindToSigned<D> di;
    const hn::RebindToUnsigned<D> du;
    const hn::Rebind<uint16_t, D> d16;
    const uint16_t* q = reinterpret_cast<const uint16_t*>(p);
    if constexpr (M == kPair) {  // 32-bit loads: the even element of each pair is the low half
      auto u = hn::And(hn::LoadU(du, reinterpret_cast<const uint32_t*>(q + 2 * k)), hn::Set(du, 0xffffu));
      if constexpr (kBF16<S> || !POOLKIT_F16C) return widen_lanes(d, hn::BitCast(di, u), kBF16<S>);
      else return widen16<D, S>(d, hn::DemoteTo(d16, hn::BitCast(di, u)));
    } else {
      return widen16<D, S>(d, hn::LoadU(d16, q + k));
    }
  } else if constexpr (M == kUnit || M == kScalarOnly) {
    return hn::LoadU(d, p + k);
  } else {
#if HWY_TARGET != HWY_SCALAR
    const int64_t N = int64_t(hn::Lanes(d));
    if constexpr (M == kPair) {
      return hn::ConcatEven(d, hn::LoadU(d, p + 2 * k + N), hn::LoadU(d, p + 2 * k));
    } else {
      const hn::Repartition<uint64_t, D> d64;
      const uint64_t* q = reinterpret_cast<const uint64_t*>(p + 2 * k);
      return hn::BitCast(d, hn::ConcatEven(d64, hn::LoadU(d64, q + N / 2), hn::LoadU(d64, q)));
    }
#else
    return hn::LoadU(d, p + k);  // not reached: load_mode() gives kScalarOnly here
#endif
  }
}

// Stores the argmax lanes [k, k + N): narrowed to the local form, or widened flat indices plus their lane part.
template <class D, class VI>
HWY_INLINE void store_argmax(D d, const ForwardJob& j, VI idx, VI lane_flat, int64_t k, int64_t row_code) {
  using T = hn::TFromD<D>;
  using TI = hwy::MakeSigned<T>;
  const hn::RebindToSigned<D> di;
  const int64_t N = int64_t(hn::Lanes(d));
  if (j.form == IndexForm::I64) {
    idx = hn::Add(idx, hn::Add(lane_flat, hn::Set(di, TI((k / j.lanes.group) * j.flat_step + row_code))));
    int64_t* am = static_cast<int64_t*>(j.argmax) + k;
    if constexpr (sizeof(T) == 8) {
      hn::StoreU(idx, di, am);
      return;
    }
#if HWY_TARGET != HWY_SCALAR
    if constexpr (sizeof(T) == 4) {
      const hn::Half<decltype(di)> dh;
      const hn::Repartition<int64_t, decltype(di)> d64;
      hn::StoreU(hn::PromoteTo(d64, hn::LowerHalf(dh, idx)), d64, am);
      hn::StoreU(hn::PromoteTo(d64, hn::UpperHalf(dh, idx)), d64, am + N / 2);
      return;
    }
#endif
  }
  if constexpr (sizeof(T) == 4) {
    if (j.form == IndexForm::I32) return hn::StoreU(idx, di, static_cast<int32_t*>(j.argmax) + k);
    if (j.form == IndexForm::I16) {
      const hn::Rebind<int16_t, decltype(di)> d16;
      return hn::StoreU(hn::DemoteTo(d16, idx), d16, static_cast<int16_t*>(j.argmax) + k);
    }
    if (j.form == IndexForm::U8) {
      const hn::Rebind<uint8_t, decltype(di)> d8;
      return hn::StoreU(hn::DemoteTo(d8, idx), d8, static_cast<uint8_t*>(j.argmax) + k);
    }
  }
  HWY_ALIGN TI buf[hn::MaxLanes(di)];
  hn::Store(idx, di, buf);
  for (int64_t i = 0; i < N; ++i) store_index(j.form, j.argmax, k + i, int64_t(buf[i]));
}

// Where the U vectors from cell a start: N apart, but none past `end` - N (those overlap the ones before and
// give their cells the same sums again).
template <class D>
HWY_INLINE void vector_starts(D d, int64_t a, int64_t end, int64_t* at, int U) {
  const int64_t N = int64_t(hn::Lanes(d));
  for (int v = 0; v < U; ++v) at[v] = std::min(a + v * N, end - N) - a;
}

// Lanes [0, vec_end) of a forward row by `vectors(u, k, end)` (u vectors from lane k, none past end); returns
// the first lane left to the scalar loop. Long chains go four at a time (fewer taps run as fast one vector at a
// time, or faster) where four different vectors remain: rows of channels-first planes end with four overlapping
// the ones before, but a row of one to three vectors (one output's channels) goes one vector at a time instead
// of computing a vector again; channels-last groups (whole vectors) end one vector at a time.
template <int M, class F>
HWY_INLINE int64_t walk_vectors(int64_t N, int64_t vec_end, int ntaps, F&& vectors) {
  if (vec_end < N) return 0;
  int64_t k = 0;
  if (ntaps > 8)
    for (; M == kGroup ? k + 4 * N <= vec_end : k + 3 * N < vec_end; k += 4 * N)
      vectors(std::integral_constant<int, 4>(), k, vec_end);
  for (; k < vec_end; k += N) vectors(std::integral_constant<int, 1>(), k, vec_end);
  return vec_end;
}

// Asks for the input a few rows ahead of a forward job's rows: the rows of one call interleave several input
// streams (one per tap row), too many for the hardware prefetcher to run far enough ahead on its own. One
// request per line of each tap row (taps within a line of the one before share its request).
template <class S>
class RowPrefetch {
 public:
  explicit RowPrefetch(const ForwardJob& j) : j_(j) {
    if (j.rows <= kAhead) return;  // (small jobs: nothing to ask for)
    const Lanes& l = j.lanes;
    span_ = int64_t(sizeof(S)) * ((l.count - 1) / l.group * l.lane_stride + l.group);
    for (int t = 0; t < j.ntaps && nrows_ < kMaxRows; ++t)
      if (t == 0 || std::abs(j.tap_offset[t] - j.tap_offset[t - 1]) * int64_t(sizeof(S)) >= 64)
        row_[nrows_++] = j.tap_offset[t] * int64_t(sizeof(S));
  }
  void operator()(int64_t row) const {
    if (row + kAhead >= j_.rows) return;
    const char* x = static_cast<const char*>(j_.x) + (row + kAhead) * j_.x_row_step * int64_t(sizeof(S));
    for (int r = 0; r < nrows_; ++r)
      for (int64_t b = 0; b < span_; b += 64) prefetch(x + row_[r] + b);
  }

 private:
  static constexpr int kAhead = 4, kMaxRows = 16;
  const ForwardJob& j_;
  int64_t span_ = 0, row_[kMaxRows] = {};
  int nrows_ = 0;
};

// kTaps > 0: the window's tap count known at compile time (2x2 and 3x3 windows), so the tap loop unrolls and
// its offsets stay in registers.
template <class S, bool kIndex, int M, int kTaps>
HWY_NOINLINE void max_rows(const ForwardJob& j) {
  using T = compute_t<S>;
  const hn::ScalableTag<T> d;
  using TI = hwy::MakeSigned<T>;
  const hn::RebindToSigned<decltype(d)> di;
  const int64_t N = int64_t(hn::Lanes(d));
  const Lanes& l = j.lanes;
  const int64_t ai = form_bytes(j.form);
  // the lane part of flat indices: (lane / group) * flat_step
  auto lane_flat = M == kGroup ? hn::Zero(di)  // one output per vector
                   : hn::Mul(l.group == 1 ? hn::Iota(di, 0) : hn::ShiftRight<1>(hn::Iota(di, 0)),
                             hn::Set(di, TI(j.flat_step)));
  const int64_t vec_end = M == kScalarOnly ? 0 : l.vector_count;
  ForwardJob r = j;
  const RowPrefetch<S> ahead(j);
  for (int64_t row = 0; row < j.rows; ++row) {
    const S* x = static_cast<const S*>(j.x) + row * j.x_row_step;
    S* y = static_cast<S*>(j.y) + row * j.y_row_step;
    ahead(row);
    r.argmax = j.argmax ? static_cast<char*>(j.argmax) + row * j.y_row_step * ai : nullptr;
    const int64_t row_code = (j.code_row_first + row) % j.code_period * j.code_row_step;
    // U vectors from lane k (see walk_vectors; overlapping lanes are recomputed to the same bits), their chains
    // of compares interleaved
    auto vectors = [&](auto u, int64_t k, int64_t end) {
      constexpr int U = decltype(u)::value;
      int64_t lane[U], at[U];
      hn::Vec<decltype(d)> m[U];
      hn::Vec<decltype(di)> idx[U];
      vector_starts(d, k, end, lane, U);
      for (int v = 0; v < U; ++v) {
        lane[v] += k;
        at[v] = load_at<M>(l, lane[v]);
        m[v] = load_lanes<kLoadAs<M>>(d, x + j.tap_offset[0], at[v]);
        idx[v] = hn::Set(di, TI(j.tap_code[0]));
      }
      const int ntaps = kTaps > 0 ? kTaps : j.ntaps;
      for (int t = 1; t < ntaps; ++t)
        for (int v = 0; v < U; ++v) {
          auto val = load_lanes<kLoadAs<M>>(d, x + j.tap_offset[t], at[v]);
          auto replace = hn::Or((val > m[v]), hn::IsNaN(val));
          m[v] = hn::IfThenElse(replace, val, m[v]);
          if constexpr (kIndex)
            idx[v] = hn::IfThenElse(hn::RebindMask(di, replace), hn::Set(di, TI(j.tap_code[t])), idx[v]);
        }
      for (int v = 0; v < U; ++v) {
        store_values(d, m[v], y + lane[v]);
        if constexpr (kIndex) store_argmax(d, r, idx[v], lane_flat, lane[v], row_code);
      }
    };
    int64_t k = walk_vectors<M>(N, vec_end, j.ntaps, vectors);
    // the rest one lane at a time, still without branches (on random data the compares mispredict) and with
    // the vector conversions of 16-bit types
    const hn::CappedTag<T, 1> d1;
    const hn::RebindToSigned<decltype(d1)> di1;
    for (; k < l.count; ++k) {
      const S* xk = x + lane_offset(l, k);
      auto m = load_lanes<kUnit>(d1, xk + j.tap_offset[0], 0);
      auto best = hn::Zero(di1);
      for (int t = 1; t < j.ntaps; ++t) {
        const auto v = load_lanes<kUnit>(d1, xk + j.tap_offset[t], 0);
        const auto replace = hn::Or(v > m, hn::IsNaN(v));
        m = hn::IfThenElse(replace, v, m);
        best = hn::IfThenElse(hn::RebindMask(di1, replace), hn::Set(di1, TI(t)), best);
      }
      store_values(d1, m, y + k);
      if constexpr (kIndex) {
        int64_t code = j.tap_code[hn::GetLane(best)];
        if (j.form == IndexForm::I64) code += (k / l.group) * j.flat_step + row_code;
        store_index(j.form, r.argmax, k, code);
      }
    }
  }
}

template <class S, int M>
HWY_NOINLINE void avg_rows(const ForwardJob& j) {
  using T = compute_t<S>;
  const hn::ScalableTag<T> d;
  const int64_t N = int64_t(hn::Lanes(d));
  const Lanes& l = j.lanes;
  const T div = T(j.divisor);
  const int64_t vec_end = M == kScalarOnly ? 0 : l.vector_count;
  const RowPrefetch<S> ahead(j);
  for (int64_t row = 0; row < j.rows; ++row) {
    const S* x = static_cast<const S*>(j.x) + row * j.x_row_step;
    S* y = static_cast<S*>(j.y) + row * j.y_row_step;
    ahead(row);
    // as in max_rows, with chains of sums
    auto vectors = [&](auto u, int64_t k, int64_t end) {
      constexpr int U = decltype(u)::value;
      int64_t lane[U], at[U];
      hn::Vec<decltype(d)> sum[U];
      vector_starts(d, k, end, lane, U);
      for (int v = 0; v < U; ++v) lane[v] += k, at[v] = load_at<M>(l, lane[v]);
      for (int v = 0; v < U; ++v) sum[v] = hn::Zero(d);
      for (int t = 0; t < j.ntaps; ++t)
        for (int v = 0; v < U; ++v) sum[v] = hn::Add(sum[v], load_lanes<kLoadAs<M>>(d, x + j.tap_offset[t], at[v]));
      for (int v = 0; v < U; ++v) store_values(d, hn::Div(sum[v], hn::Set(d, div)), y + lane[v]);
    };
    int64_t k = walk_vectors<M>(N, vec_end, j.ntaps, vectors);
    const hn::CappedTag<T, 1> d1;  // (the vector conversions of 16-bit types)
    for (; k < l.count; ++k) {
      const S* xk = x + lane_offset(l, k);
      auto sum = hn::Zero(d1);
      for (int t = 0; t < j.ntaps; ++t) sum = hn::Add(sum, load_lanes<kUnit>(d1, xk + j.tap_offset[t], 0));
      store_values(d1, hn::Div(sum, hn::Set(d1, div)), y + k);
    }
  }
}

template <class T, bool kIndex, int M>
void max_rows_for_taps(const ForwardJob& j) {
  if (j.ntaps == 4) return max_rows<T, kIndex, M, 4>(j);
  if (j.ntaps == 9) return max_rows<T, kIndex, M, 9>(j);
  return max_rows<T, kIndex, M, 0>(j);
}
template <class T, bool kIndex>
void max_forward(const ForwardJob& j) {
  switch (load_mode<T>(j.lanes)) {
    case kUnit: return max_rows_for_taps<T, kIndex, kUnit>(j);
    case kPair: return max_rows_for_taps<T, kIndex, kPair>(j);
    case kPair64: return max_rows_for_taps<T, kIndex, kPair64>(j);
    case kGroup: return max_rows_for_taps<T, kIndex, kGroup>(j);
    default: return max_rows<T, kIndex, kScalarOnly, 0>(j);
  }
}
template <class T>
void avg_forward(const ForwardJob& j) {
  switch (load_mode<T>(j.lanes)) {
    case kUnit: return avg_rows<T, kUnit>(j);
    case kPair: return avg_rows<T, kPair>(j);
    case kPair64: return avg_rows<T, kPair64>(j);
    case kGroup: return avg_rows<T, kGroup>(j);
    default: return avg_rows<T, kScalarOnly>(j);
  }
}

// Argmax lanes widened to the signed lane type of the values (callers keep to the forms each width supports).
template <class DI>
HWY_INLINE hn::Vec<DI> load_argmax(DI di, IndexForm form, const void* p, int64_t c) {
  using TI = hn::TFromD<DI>;
  if constexpr (sizeof(TI) == 4) {
    switch (form) {
      case IndexForm::U8: return hn::PromoteTo(di, hn::LoadU(hn::Rebind<uint8_t, DI>(), static_cast<const uint8_t*>(p) + c));
      case IndexForm::I16: return hn::PromoteTo(di, hn::LoadU(hn::Rebind<int16_t, DI>(), static_cast<const int16_t*>(p) + c));
      default: return hn::LoadU(di, static_cast<const int32_t*>(p) + c);
    }
  } else {
    if (form == IndexForm::I32)
      return hn::PromoteTo(di, hn::LoadU(hn::Rebind<int32_t, DI>(), static_cast<const int32_t*>(p) + c));
    return hn::LoadU(di, static_cast<const int64_t*>(p) + c);
  }
}

template <class D, class V>
HWY_INLINE void store_taps(D d, int64_t s, int64_t group, const V* t, hn::TFromD<D>* out) {
  (void)group;
#if HWY_TARGET != HWY_SCALAR
  if constexpr (sizeof(hn::TFromD<D>) == 4) {
    if (group == 2) {  // pairs of 4-byte channels move as one 8-byte element
      const hn::Repartition<uint64_t, D> d64;
      uint64_t* o = reinterpret_cast<uint64_t*>(out);
      auto w = [&](int i) { return hn::BitCast(d64, t[i]); };
      if (s == 1) hn::StoreU(w(0), d64, o);
      else if (s == 2) hn::StoreInterleaved2(w(0), w(1), d64, o);
      else if (s == 3) hn::StoreInterleaved3(w(0), w(1), w(2), d64, o);
      else hn::StoreInterleaved4(w(0), w(1), w(2), w(3), d64, o);
      return;
    }
  }
#endif
  if (s == 1) hn::StoreU(t[0], d, out);
  else if (s == 2) hn::StoreInterleaved2(t[0], t[1], d, out);
  else if (s == 3) hn::StoreInterleaved3(t[0], t[1], t[2], d, out);
  else hn::StoreInterleaved4(t[0], t[1], t[2], t[3], d, out);
}

template <class T, bool kMax>
void tiled_backward(const TiledBackwardJob& j) {
  const hn::ScalableTag<T> d;
  using TI = hwy::MakeSigned<T>;
  const hn::RebindToSigned<decltype(d)> di;
  const int64_t N = int64_t(hn::Lanes(d));
  const int64_t s = j.stride, G = j.group;
  const T div = T(j.divisor);
  const bool direct = j.rel == nullptr;
  const int64_t asize = kMax && direct ? form_bytes(j.form) : 0;
  const bool vector = s >= 1 && s <= 4 && (G == 1 || (G == 2 && sizeof(T) == 4 && HWY_TARGET != HWY_SCALAR)) &&
                      (!kMax || !direct || (sizeof(T) == 4 && j.form != IndexForm::I64));
  for (int64_t row = 0; row < j.rows; ++row) {
    const T* g = static_cast<const T*>(j.g) + row * j.g_row_step;
    const void* am = kMax && direct ? static_cast<const char*>(j.argmax) + row * j.g_row_step * asize : nullptr;
    for (int tr = 0; tr < j.tap_rows; ++tr) {
      T* dx = static_cast<T*>(j.dx) + row * j.dx_row_step + (j.tap_row_offset ? j.tap_row_offset[tr] : 0);
      const int64_t code_base = j.code_base + tr * s;
      int64_t k = 0;
      if (vector && j.count >= N) {
        // the last vector may overlap the one before: its lanes write the same values again
        for (int64_t next = 0;; next += N) {
          k = std::min(next, j.count - N);
          auto gv = hn::LoadU(d, g + k);
          if constexpr (!kMax) gv = hn::Div(gv, hn::Set(d, div));
          gv = hn::Add(hn::Zero(d), gv);
          hn::Vec<decltype(d)> t[4];
          if constexpr (kMax) {
            auto rel = direct ? hn::Sub(load_argmax(di, j.form, am, k), hn::Set(di, TI(code_base)))
                              : load_argmax(di, IndexForm::I32, j.rel, k);
            for (int64_t jj = 0; jj < s; ++jj)
              t[jj] = hn::IfThenElseZero(hn::RebindMask(d, rel == hn::Set(di, TI(jj))), gv);
          } else {
            for (int64_t jj = 0; jj < s; ++jj) t[jj] = gv;
          }
          store_taps(d, s, G, t, dx + s * k);
          if (k + N == j.count) break;
        }
        k = j.count;
      }
      for (; k < j.count; ++k) {
        T gv = kMax ? g[k] : T(g[k] / div);
        int64_t rel = !kMax ? 0 : direct ? load_index(j.form, am, k) - code_base : j.rel[k];
        int64_t o = k / G, c = k % G;
        for (int64_t jj = 0; jj < s; ++jj) {
          bool match = !kMax || rel == jj;
          dx[(s * o + jj) * G + c] = match ? T(T(0) + gv) : T(0);
        }
      }
    }
  }
}

// dy in SIn, dx in SOut (the same, or float32 dy already divided for a 16-bit average), summed in SOut's
// compute type
template <class SIn, class SOut, bool kMax, IndexForm kForm>
void gather_backward(const GatherJob& j) {
  using T = compute_t<SOut>;
  const hn::ScalableTag<T> d;
  using TI = hwy::MakeSigned<T>;
  const hn::RebindToSigned<decltype(d)> di;
  const int64_t N = int64_t(hn::Lanes(d));
  const bool vector = !kMax || (sizeof(T) == 4 ? kForm != IndexForm::I64
                                               : (kForm == IndexForm::I64 || kForm == IndexForm::I32));
  constexpr int64_t ab = form_bytes(kForm);
  auto dy = [&](int r, int64_t x) { return static_cast<const SIn*>(j.row_dy[r]) + j.cover_o[x] * j.out_step; };
  auto am = [&](int r, int64_t x) {
    return static_cast<const char*>(j.row_am[r]) + j.cover_o[x] * j.out_step * ab;
  };
  for (int64_t p = 0; p < j.pixels; ++p) {
    SOut* dx = static_cast<SOut*>(j.dx) + p * j.dx_step;
    const int64_t x0 = j.cover_begin[p], x1 = j.cover_begin[p + 1];
    auto code = [&](int r, int64_t x) { return j.flat_codes ? j.row_code[0] + p : j.row_code[r] + j.cover_j[x]; };
    // U vectors of channels from c on, each term's pointers found once for all of them
    auto vectors = [&](auto u, int64_t c) {
      constexpr int U = decltype(u)::value;
      hn::Vec<decltype(d)> sum[U];
      for (int v = 0; v < U; ++v) sum[v] = hn::Zero(d);
      for (int r = 0; r < j.nrows; ++r)
        for (int64_t x = x0; x < x1; ++x) {
          const SIn* g = dy(r, x) + c;
          [[maybe_unused]] const char* a = kMax ? am(r, x) + c * ab : nullptr;
          [[maybe_unused]] const auto want = hn::Set(di, TI(kMax ? code(r, x) : 0));
          for (int v = 0; v < U; ++v) {
            auto gv = load_lanes<kUnit>(d, g, v * N);
            if constexpr (kMax) gv = hn::IfThenElseZero(hn::RebindMask(d, load_argmax(di, kForm, a, v * N) == want), gv);
            sum[v] = hn::Add(sum[v], gv);
          }
        }
      for (int v = 0; v < U; ++v) store_values(d, sum[v], dx + c + v * N);
    };
    int64_t c = 0;
    if (vector) {
      for (; c + 4 * N <= j.channels; c += 4 * N) vectors(std::integral_constant<int, 4>(), c);
      for (; c + N <= j.channels; c += N) vectors(std::integral_constant<int, 1>(), c);
    }
    for (; c < j.channels; ++c) {
      T sum = 0;
      for (int r = 0; r < j.nrows; ++r)
        for (int64_t x = x0; x < x1; ++x)
          if (!kMax || load_index(kForm, am(r, x), c) == code(r, x)) sum += T(dy(r, x)[c]);
      dx[c] = SOut(sum);
    }
  }
}

template <class SIn, class SOut, bool kMax>
void gather_backward(const GatherJob& j) {
  switch (kMax ? j.form : IndexForm::None) {  // the argmax form fixed at compile time: no switch per term
    case IndexForm::U8: return gather_backward<SIn, SOut, kMax, IndexForm::U8>(j);
    case IndexForm::I16: return gather_backward<SIn, SOut, kMax, IndexForm::I16>(j);
    case IndexForm::I32: return gather_backward<SIn, SOut, kMax, IndexForm::I32>(j);
    case IndexForm::I64: return gather_backward<SIn, SOut, kMax, IndexForm::I64>(j);
    default: return gather_backward<SIn, SOut, kMax, IndexForm::None>(j);
  }
}

// A vector of term codes from p: the saved argmax's own narrow form widened, or copies of the lanes' width.
template <class DI, class C>
HWY_INLINE hn::Vec<DI> load_codes(DI di, const C* p) {
  if constexpr (sizeof(C) == sizeof(hn::TFromD<DI>)) return hn::LoadU(di, reinterpret_cast<const hn::TFromD<DI>*>(p));
  else return hn::PromoteTo(di, hn::LoadU(hn::Rebind<C, DI>(), p));
}

// The sums of one phase row of accumulate_row, from its taps [t0, t1) (all of that phase). Cells [v0, v1),
// which every tap reaches, go by vectors, all terms and taps summed in registers; the few at the ends one at a
// time (every cell by vectors when the rows are padded). Vectors go U at a time, their sums interleaved (each is
// a chain of dependent additions). Codes are C (void: average, none).
template <class T, class C>
struct PhaseSums {
  using TI = hwy::MakeSigned<T>;
  using D = hn::ScalableTag<T>;
  static constexpr bool kCode = !std::is_void_v<C>;
  static constexpr int U = 4;
  const RowTerm* terms = nullptr;  // the row's
  int nterms = 0;
  const RowTap *t0 = nullptr, *t1 = nullptr;
  int64_t v0 = 0, v1 = 0;

  PhaseSums() = default;
  PhaseSums(const RowTap* first, const RowTap* end, int64_t len, bool padded) : t0(first), t1(end), v1(len) {
    if (!padded)
      for (const RowTap* k = t0; k < t1; ++k) v0 = std::max(v0, k->lo + k->shift), v1 = std::min(v1, k->hi + k->shift);
    if (t0 == t1 || v1 - v0 < int64_t(hn::Lanes(D()))) v0 = v1 = len;
  }
  T cell(int64_t a) const {
    T v = 0;
    for (int t = 0; t < nterms; ++t) {
      const T* q = static_cast<const T*>(terms[t].q);
      for (const RowTap* k = t0; k < t1; ++k) {
        const int64_t i = a - k->shift;
        if (i < k->lo || i >= k->hi) continue;
        if constexpr (kCode)
          if (int64_t(static_cast<const C*>(terms[t].code)[i]) != terms[t].want_base + k->jw) continue;
        v += q[i];
      }
    }
    return v;
  }
  // sum[v]: cells a + at[v] on
  void vectors(int64_t a, const int64_t* at, hn::Vec<D>* sum) const {
    const D d;
    const hn::RebindToSigned<D> di;
    for (int v = 0; v < U; ++v) sum[v] = hn::Zero(d);
    for (int t = 0; t < nterms; ++t) {
      const T* q = static_cast<const T*>(terms[t].q) + a;
      [[maybe_unused]] const C* code = nullptr;  // (average: none)
      if constexpr (kCode) code = static_cast<const C*>(terms[t].code) + a;
      for (const RowTap* k = t0; k < t1; ++k) {
        [[maybe_unused]] const auto want = hn::Set(di, TI(terms[t].want_base + k->jw));
        for (int v = 0; v < U; ++v) {
          auto g = hn::LoadU(d, q - k->shift + at[v]);
          if constexpr (kCode) g = hn::IfThenElseZero(hn::RebindMask(d, load_codes(di, code - k->shift + at[v]) == want), g);
          sum[v] = hn::Add(sum[v], g);
        }
      }
    }
  }
};

// Phase row into out: the accumulation row (T), or dx itself (O) when there is one phase.
template <class T, class C, class O>
void phase_row(const PhaseSums<T, C>& p, O* out, int64_t len) {
  const hn::ScalableTag<T> d;
  constexpr int U = PhaseSums<T, C>::U;
  int64_t a = 0;
  for (; a < p.v0; ++a) out[a] = O(p.cell(a));
  for (; a < p.v1; a += U * int64_t(hn::Lanes(d))) {
    int64_t at[U];
    hn::Vec<decltype(d)> sum[U];
    vector_starts(d, a, p.v1, at, U);
    p.vectors(a, at, sum);
    for (int v = 0; v < U; ++v) store_values(d, sum[v], out + a + at[v]);
  }
  for (a = p.v1; a < len; ++a) out[a] = O(p.cell(a));
}

// Stride 2 straight into dx: both phase rows' sums at once, interleaved in registers. False when the phases
// share too few cells that go by vectors.
template <class T, class C, class O>
bool two_phases(const PhaseSums<T, C>& p0, const PhaseSums<T, C>& p1, O* dx, int64_t width, int64_t len) {
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<T> d;
  constexpr int U = PhaseSums<T, C>::U;
  const int64_t N = int64_t(hn::Lanes(d));
  const int64_t lo = std::max(p0.v0, p1.v0), hi = std::min({p0.v1, p1.v1, width / 2});
  if (hi - lo < N) return false;
  auto cells = [&](int64_t a) {
    if (2 * a < width) dx[2 * a] = O(p0.cell(a));
    if (2 * a + 1 < width) dx[2 * a + 1] = O(p1.cell(a));
  };
  int64_t a = 0;
  for (; a < lo; ++a) cells(a);
  for (; a < hi; a += U * N) {
    int64_t at[U];
    hn::Vec<decltype(d)> s0[U], s1[U];
    vector_starts(d, a, hi, at, U);
    p0.vectors(a, at, s0);
    p1.vectors(a, at, s1);
    for (int v = 0; v < U; ++v) store_interleaved(d, s0[v], s1[v], dx + 2 * (a + at[v]));
  }
  for (a = hi; a < len; ++a) cells(a);
  return true;
#else
  (void)p0, (void)p1, (void)dx, (void)width, (void)len;
  return false;
#endif
}

// A contiguous range of memory written through a small cached buffer: whole aligned 64-byte lines go out by
// streaming stores (no read of a line before it is written), the partial lines at the range's ends by ordinary
// stores. Stage bytes with `next`, then `commit` them.
class LineStream {
 public:
  explicit LineStream(void* dst) : dst_(static_cast<uint8_t*>(dst)) {}
  ~LineStream() {
    flush(true);
    if (streamed_) hwy::FlushStream();
  }
  uint8_t* next(int64_t bytes) {
    if (used_ + bytes > kCapacity) flush(false);
    return buffer(used_ + bytes) + used_;
  }
  void commit(int64_t bytes) { used_ += bytes; }

 private:
  static constexpr int64_t kLine = 64, kCapacity = 16 << 10;
  // the thread's staging buffer (one stream at a time per thread), grown keeping its bytes
  static uint8_t* buffer(int64_t bytes) {
    thread_local hwy::AlignedFreeUniquePtr<uint8_t[]> buf;
    thread_local int64_t cap = 0;
    if (bytes > cap) {
      const int64_t grown = std::max(bytes, kCapacity);
      auto bigger = hwy::AllocateAligned<uint8_t>(size_t(grown));
      if (cap) std::memcpy(bigger.get(), buf.get(), size_t(cap));
      buf = std::move(bigger), cap = grown;
    }
    return buf.get();
  }
  void flush(bool last) {
    uint8_t* buf = buffer(used_);
    const hn::ScalableTag<uint8_t> d;
    const int64_t N = int64_t(hn::Lanes(d));
    // ordinary stores up to the first line boundary, whole lines streamed, the rest kept (stored at the end)
    int64_t k = std::min(used_, int64_t((kLine - reinterpret_cast<uintptr_t>(dst_) % kLine) % kLine));
    std::memcpy(dst_, buf, size_t(k));
    const int64_t lines_end = k + (used_ - k) / kLine * kLine;
    if (kLine % N == 0)
      for (; k < lines_end; k += N) hn::Stream(hn::LoadU(d, buf + k), d, dst_ + k), streamed_ = true;
    if (last) std::memcpy(dst_ + k, buf + k, size_t(used_ - k)), k = used_;
    std::memmove(buf, buf + k, size_t(used_ - k));
    dst_ += k, used_ -= k;
  }
  uint8_t* dst_;
  int64_t used_ = 0;
  bool streamed_ = false;
};

template <class T, class C, class O>
void accumulate_row(const RowJob& j) {
  T* acc = static_cast<T*>(j.acc);
  const int64_t L = j.phase_len, S = j.phases;
  // (no thread-local vector: its lookup costs more than a small plane's rows)
  PhaseSums<T, C> few[4];
  std::vector<PhaseSums<T, C>> many(size_t(S > 4 ? S : 0));
  PhaseSums<T, C>* phase = S > 4 ? many.data() : few;
  for (int64_t ph = 0, k = 0; ph < S; ++ph) {
    const int64_t k0 = k;
    while (k < j.ntaps && j.taps[k].phase == ph) ++k;
    phase[ph] = PhaseSums<T, C>(j.taps + k0, j.taps + k, L, j.padded);
  }
  // with `stream`, rows back to back form one range
  std::optional<LineStream> out;
  const bool one_range = j.stream && j.dx && (j.rows == 1 || j.dx_row_step == j.width);
  if (one_range) out.emplace(j.dx);
  const int64_t row_bytes = j.width * int64_t(sizeof(O));
  for (int r = 0; r < j.rows; ++r) {
    const int first = j.row_terms ? j.row_terms[r] : 0;
    for (int64_t ph = 0; ph < S; ++ph)
      phase[ph].terms = j.terms + first, phase[ph].nterms = j.row_terms ? j.row_terms[r + 1] - first : j.nterms;
    O* dx = j.dx ? static_cast<O*>(j.dx) + r * j.dx_row_step : nullptr;
    if (dx && j.stream && !one_range) out.emplace(dx);
    if (out) dx = reinterpret_cast<O*>(out->next(row_bytes));
    const bool direct = dx && (S == 1 || (S == 2 && two_phases(phase[0], phase[1], dx, j.width, L)));
    if (direct && S == 1) phase_row(phase[0], dx, L);
    if (!direct) {
      for (int64_t ph = 0; ph < S; ++ph) phase_row(phase[ph], acc + ph * L, L);
      if (dx)
        for (int64_t ph = 0; ph < S; ++ph)
          for (int64_t i = 0, x = ph; x < j.width; ++i, x += S) dx[x] = O(acc[ph * L + i]);
    }
    if (out) out->commit(row_bytes);
    if (out && !one_range) out.reset();
  }
}

template <class S>
void divide(const void* gp, const compute_t<S>* dv, compute_t<S>* q, int64_t n, int64_t group) {
  const hn::ScalableTag<compute_t<S>> d;
  const int64_t N = int64_t(hn::Lanes(d));
  const S* g = static_cast<const S*>(gp);
  // (the last vector ends at n, over lanes the one before gave the same quotients)
  auto at = [&](int64_t i) { return std::min(i, n - N); };
  int64_t i = 0;
  if (n >= N && group == 1)
    for (; i < n; i += N) hn::StoreU(hn::Div(load_lanes<kUnit>(d, g, at(i)), hn::LoadU(d, dv + at(i))), d, q + at(i));
  else if (n >= N && group % N == 0)  // a vector lies inside one group
    for (; i < n; i += N)
      hn::StoreU(hn::Div(load_lanes<kUnit>(d, g, at(i)), hn::Set(d, dv[at(i) / group])), d, q + at(i));
  for (; i < n; ++i) q[i] = compute_t<S>(g[i]) / dv[i / group];
}

template <class T>
void fill_planes(const T* value, int64_t planes, int64_t cells, T* out, bool stream) {
  const hn::ScalableTag<T> d;
  const int64_t N = int64_t(hn::Lanes(d)), total = planes * cells;
  int64_t x = 0;
  if (cells >= N) {  // a vector meets at most one plane boundary
    const hn::RebindToSigned<decltype(d)> di;
    using TI = hn::TFromD<decltype(di)>;
    const auto lane = hn::Iota(di, 0);
    for (; x < total && reinterpret_cast<uintptr_t>(out + x) % (N * sizeof(T)) != 0; ++x) out[x] = value[x / cells];
    int64_t p = x / cells, next = (p + 1) * cells;  // plane of x, and where the next one starts
    for (; x + N <= total; x += N) {
      if (x >= next) ++p, next += cells;
      const auto here = hn::Set(d, value[p]);
      const auto v = x + N <= next ? here
                                   : hn::IfThenElse(hn::RebindMask(d, lane < hn::Set(di, TI(next - x))), here,
                                                    hn::Set(d, value[p + 1]));
      if (stream) hn::Stream(v, d, out + x);
      else hn::Store(v, d, out + x);
    }
    if (stream) hwy::FlushStream();  // the streamed lines reach memory before anyone reads them
  }
  for (; x < total; ++x) out[x] = value[x / cells];
}

bool local_codes(const LocalCodeJob& j) {
  bool ok = true;
  int64_t k = 0;
#if HWY_TARGET <= HWY_AVX2  // (64-bit compares, 32-bit gathers)
  const hn::ScalableTag<int64_t> d64;
  const hn::ScalableTag<int32_t> d32;  // two int64 vectors' worth of lanes
  const hn::Rebind<int16_t, decltype(d32)> d16;
  const hn::Rebind<uint8_t, decltype(d32)> d8;
  const int64_t N = int64_t(hn::Lanes(d32)), H = N / 2;
  const auto span = hn::Set(d64, j.span), before = hn::Set(d64, -1), row = hn::Set(d64, j.row);
  const auto none = hn::Set(d32, -1);
  // the low 32 bits of each int64 lane of lo, then of hi
  auto low_halves = [&](hn::Vec<decltype(d64)> lo, hn::Vec<decltype(d64)> hi) {
    return hn::ConcatEven(d32, hn::BitCast(d32, hi), hn::BitCast(d32, lo));
  };
  auto bad = hn::Zero(d32);  // lanes that met a code of -1 at least once: all ones
  for (; k + N <= j.count; k += N) {
    const auto r0 = hn::Sub(hn::LoadU(d64, j.flat + k), hn::Add(hn::LoadU(d64, j.base + k), row));
    const auto r1 = hn::Sub(hn::LoadU(d64, j.flat + k + H), hn::Add(hn::LoadU(d64, j.base + k + H), row));
    const auto in0 = hn::And(r0 > before, r0 < span), in1 = hn::And(r1 > before, r1 < span);
    const auto idx = low_halves(hn::IfThenElseZero(in0, r0), hn::IfThenElseZero(in1, r1));
    const auto in = hn::MaskFromVec(low_halves(hn::VecFromMask(d64, in0), hn::VecFromMask(d64, in1)));
    const auto code = hn::IfThenElse(in, hn::GatherIndex(d32, j.id, idx), none);
    bad = hn::Or(bad, hn::VecFromMask(d32, code == none));
    if (j.form == IndexForm::I32) hn::StoreU(code, d32, static_cast<int32_t*>(j.out) + k);
    else if (j.form == IndexForm::I16) hn::StoreU(hn::DemoteTo(d16, code), d16, static_cast<int16_t*>(j.out) + k);
    else hn::StoreU(hn::DemoteTo(d8, code), d8, static_cast<uint8_t*>(j.out) + k);
  }
  ok = hn::AllTrue(d32, hn::Eq(bad, hn::Zero(d32)));
#endif
  for (; k < j.count; ++k) {
    const int64_t r = j.flat[k] - j.row - j.base[k];
    const int32_t code = uint64_t(r) < uint64_t(j.span) ? j.id[r] : -1;
    ok &= code >= 0;
    store_index(j.form, j.out, k, code);
  }
  return ok;
}

void MaxForwardF32(const ForwardJob& j) {
  j.form == IndexForm::None ? max_forward<float, false>(j) : max_forward<float, true>(j);
}
void MaxForwardF64(const ForwardJob& j) {
  j.form == IndexForm::None ? max_forward<double, false>(j) : max_forward<double, true>(j);
}
void AvgForwardF32(const ForwardJob& j) { avg_forward<float>(j); }
void AvgForwardF64(const ForwardJob& j) { avg_forward<double>(j); }
void MaxForwardBF16(const ForwardJob& j) {
  j.form == IndexForm::None ? max_forward<bfloat16, false>(j) : max_forward<bfloat16, true>(j);
}
void AvgForwardBF16(const ForwardJob& j) { avg_forward<bfloat16>(j); }
void MaxForwardF16(const ForwardJob& j) {
  j.form == IndexForm::None ? max_forward<float16, false>(j) : max_forward<float16, true>(j);
}
void AvgForwardF16(const ForwardJob& j) { avg_forward<float16>(j); }

void TiledMaxBackwardF32(const TiledBackwardJob& j) { tiled_backward<float, true>(j); }
void TiledMaxBackwardF64(const TiledBackwardJob& j) { tiled_backward<double, true>(j); }
void TiledAvgBackwardF32(const TiledBackwardJob& j) { tiled_backward<float, false>(j); }
void TiledAvgBackwardF64(const TiledBackwardJob& j) { tiled_backward<double, false>(j); }
void GatherMaxBackwardF32(const GatherJob& j) { gather_backward<float, float, true>(j); }
void GatherMaxBackwardF64(const GatherJob& j) { gather_backward<double, double, true>(j); }
void GatherMaxBackwardBF16(const GatherJob& j) { gather_backward<bfloat16, bfloat16, true>(j); }
void GatherMaxBackwardF16(const GatherJob& j) { gather_backward<float16, float16, true>(j); }
void GatherAvgBackwardF32(const GatherJob& j) { gather_backward<float, float, false>(j); }
void GatherAvgBackwardF64(const GatherJob& j) { gather_backward<double, double, false>(j); }
void GatherAvgBackwardBF16(const GatherJob& j) { gather_backward<float, bfloat16, false>(j); }
void GatherAvgBackwardF16(const GatherJob& j) { gather_backward<float, float16, false>(j); }
// Codes: none (average), the saved argmax's rows (U8, I16, I32) or copies of the lanes' width.
template <class T, class O>
void accumulate_row_by_code(const RowJob& j) {
  const int nterms = j.row_terms ? j.row_terms[j.rows] : j.nterms;
  if (nterms == 0 || !j.terms[0].code) return accumulate_row<T, void, O>(j);
  if constexpr (sizeof(T) == 8) {
    accumulate_row<T, int64_t, O>(j);
  } else {
    switch (j.code_form) {
      case IndexForm::U8: return accumulate_row<T, uint8_t, O>(j);
      case IndexForm::I16: return accumulate_row<T, int16_t, O>(j);
      default: return accumulate_row<T, int32_t, O>(j);
    }
  }
}
bool LocalCodes(const LocalCodeJob& j) { return local_codes(j); }
void FillPlanesF32(const float* v, int64_t p, int64_t c, float* out, bool s) { fill_planes(v, p, c, out, s); }
void FillPlanesF64(const double* v, int64_t p, int64_t c, double* out, bool s) { fill_planes(v, p, c, out, s); }
void AccumulateRowF32(const RowJob& j) { accumulate_row_by_code<float, float>(j); }
void AccumulateRowF64(const RowJob& j) { accumulate_row_by_code<double, double>(j); }
void AccumulateRowBF16(const RowJob& j) { accumulate_row_by_code<float, bfloat16>(j); }
void AccumulateRowF16(const RowJob& j) { accumulate_row_by_code<float, float16>(j); }
void DivideF32(const void* g, const float* d, float* q, int64_t n, int64_t group) { divide<float>(g, d, q, n, group); }
void DivideBF16(const void* g, const float* d, float* q, int64_t n, int64_t group) { divide<bfloat16>(g, d, q, n, group); }
void DivideF16(const void* g, const float* d, float* q, int64_t n, int64_t group) { divide<float16>(g, d, q, n, group); }
void DivideF64(const void* g, const double* d, double* q, int64_t n, int64_t group) { divide<double>(g, d, q, n, group); }

}  // namespace poolkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolkit::cpu {
#define POOLKIT_DISPATCH(Name, fn, Job) \
  HWY_EXPORT(Name);                     \
  void fn(const Job& j) { HWY_DYNAMIC_DISPATCH(Name)(j); }
POOLKIT_DISPATCH(MaxForwardF32, max_forward_f32, ForwardJob)
POOLKIT_DISPATCH(MaxForwardF64, max_forward_f64, ForwardJob)
POOLKIT_DISPATCH(AvgForwardF32, avg_forward_f32, ForwardJob)
POOLKIT_DISPATCH(AvgForwardF64, avg_forward_f64, ForwardJob)
POOLKIT_DISPATCH(MaxForwardBF16, max_forward_bf16, ForwardJob)
POOLKIT_DISPATCH(AvgForwardBF16, avg_forward_bf16, ForwardJob)
POOLKIT_DISPATCH(MaxForwardF16, max_forward_f16, ForwardJob)
POOLKIT_DISPATCH(AvgForwardF16, avg_forward_f16, ForwardJob)
POOLKIT_DISPATCH(TiledMaxBackwardF32, tiled_max_backward_f32, TiledBackwardJob)
POOLKIT_DISPATCH(TiledMaxBackwardF64, tiled_max_backward_f64, TiledBackwardJob)
POOLKIT_DISPATCH(TiledAvgBackwardF32, tiled_avg_backward_f32, TiledBackwardJob)
POOLKIT_DISPATCH(TiledAvgBackwardF64, tiled_avg_backward_f64, TiledBackwardJob)
POOLKIT_DISPATCH(GatherMaxBackwardF32, gather_max_backward_f32, GatherJob)
POOLKIT_DISPATCH(GatherMaxBackwardF64, gather_max_backward_f64, GatherJob)
POOLKIT_DISPATCH(GatherAvgBackwardF32, gather_avg_backward_f32, GatherJob)
POOLKIT_DISPATCH(GatherAvgBackwardF64, gather_avg_backward_f64, GatherJob)
POOLKIT_DISPATCH(GatherMaxBackwardBF16, gather_max_backward_bf16, GatherJob)
POOLKIT_DISPATCH(GatherMaxBackwardF16, gather_max_backward_f16, GatherJob)
POOLKIT_DISPATCH(GatherAvgBackwardBF16, gather_avg_backward_bf16, GatherJob)
POOLKIT_DISPATCH(GatherAvgBackwardF16, gather_avg_backward_f16, GatherJob)
POOLKIT_DISPATCH(AccumulateRowF32, accumulate_row_f32, RowJob)
POOLKIT_DISPATCH(AccumulateRowF64, accumulate_row_f64, RowJob)
POOLKIT_DISPATCH(AccumulateRowBF16, accumulate_row_bf16, RowJob)
POOLKIT_DISPATCH(AccumulateRowF16, accumulate_row_f16, RowJob)
#undef POOLKIT_DISPATCH
HWY_EXPORT(FillPlanesF32);
HWY_EXPORT(FillPlanesF64);
void fill_planes_f32(const float* v, int64_t p, int64_t c, float* out, bool s) {
  HWY_DYNAMIC_DISPATCH(FillPlanesF32)(v, p, c, out, s);
}
void fill_planes_f64(const double* v, int64_t p, int64_t c, double* out, bool s) {
  HWY_DYNAMIC_DISPATCH(FillPlanesF64)(v, p, c, out, s);
}
HWY_EXPORT(LocalCodes);
bool flat_to_local_codes(const LocalCodeJob& j) { return HWY_DYNAMIC_DISPATCH(LocalCodes)(j); }
HWY_EXPORT(DivideF32);
HWY_EXPORT(DivideBF16);
HWY_EXPORT(DivideF16);
HWY_EXPORT(DivideF64);
void divide_f32(const void* g, const float* d, float* q, int64_t n, int64_t group) {
  HWY_DYNAMIC_DISPATCH(DivideF32)(g, d, q, n, group);
}
void divide_bf16(const void* g, const float* d, float* q, int64_t n, int64_t group) {
  HWY_DYNAMIC_DISPATCH(DivideBF16)(g, d, q, n, group);
}
void divide_f16(const void* g, const float* d, float* q, int64_t n, int64_t group) {
  HWY_DYNAMIC_DISPATCH(DivideF16)(g, d, q, n, group);
}
void divide_f64(const void* g, const double* d, double* q, int64_t n, int64_t group) {
  HWY_DYNAMIC_DISPATCH(DivideF64)(g, d, q, n, group);
}
}  // namespace poolkit::cpu
#endif
