// The integer max forward kernels (kernels_int.hpp). The argmax is followed in lanes of the values' width: its
// code itself where the form is no wider (and not flat), else the tap's number, turned into its code on store
// (int64 flat indices by vectors, other forms lane by lane). One template for the five types; 8-bit lanes fill
// a 64-byte vector with 64 outputs. Channels-first 3x3 stride-2 planes have their own kernel (int_k3s2), and so
// do 8-bit planes 32 cells wide pooled 2x2 by 2 (int_rows32).
#include "src/cpu/kernels_int.hpp"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/kernels_int.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <limits>

#include "src/cpu/k3s2_taps-inl.h"
#include "src/cpu/kernels_forward-inl.h"
#include "src/cpu/prefetch.hpp"

HWY_BEFORE_NAMESPACE();
namespace poolkit::cpu::HWY_NAMESPACE {
namespace {

// How the argmax is followed: not at all, by its code (stored as it is, or converted where the form's width
// differs), or by the tap number (codes wider than the lanes, and flat indices).
enum IntIndex { kIntNone, kIntCode, kIntTap };

// Pairs of wider units: lanes (output, channel) of `group` channels of T making one unit of kUnitBytes, every
// other unit read (channels-last rows of few channels, stride 2): M = kPairUnits + kUnitBytes.
constexpr int kPairUnits = 100;

template <int M, class D>
HWY_INLINE hn::Vec<D> load_int(D d, const hn::TFromD<D>* p, int64_t k) {
#if HWY_TARGET != HWY_SCALAR
  if constexpr (M == kPair) {
    const int64_t N = int64_t(hn::Lanes(d));
    return hn::ConcatEven(d, hn::LoadU(d, p + 2 * k + N), hn::LoadU(d, p + 2 * k));
  }
  if constexpr (M > kPairUnits) {
    using U = hwy::UnsignedFromSize<M - kPairUnits>;
    const hn::Repartition<U, D> du;
    const U* q = reinterpret_cast<const U*>(p + 2 * k);
    return hn::BitCast(d, hn::ConcatEven(du, hn::LoadU(du, q + hn::Lanes(du)), hn::LoadU(du, q)));
  }
#endif
  return hn::LoadU(d, p + k);
}

// The argmax value of lane k (of the job's row with flat part row_code) for tap number or code v.
inline int64_t index_value(const ForwardJob& j, int kIdx, int64_t v, int64_t k, int64_t row_code) {
  int64_t code = kIdx == kIntTap ? j.tap_code[v] : v;
  if (j.form == IndexForm::I64) code += (k / j.lanes.group) * j.flat_step + row_code;
  return code;
}

// Flat int64 indices from tap numbers by vectors: lanes of int32 (the plane's cells fit: see simd_forward) take
// their tap's code from a table in one register, add the lane part ((k / group) * flat_step, per job) and the
// vector's part, and widen to int64. Jobs whose taps outnumber the table's lanes (or 8-byte values) keep the
// lane-by-lane loop.
template <class D>
class FlatIndices {
#if HWY_TARGET == HWY_SCALAR
 public:
  explicit FlatIndices(const ForwardJob&) {}
  bool on() const { return false; }
  template <class TU> void store(const TU*, int64_t*, int64_t, bool) const {}
#else
  using D32 = hn::CappedTag<int32_t, HWY_MIN(16, hn::MaxLanes(D()))>;
  static constexpr size_t kMax = hn::MaxLanes(D());

 public:
  explicit FlatIndices(const ForwardJob& j) {
    const D32 d32;
    on_ = sizeof(hn::TFromD<D>) <= 4 && j.form == IndexForm::I64 && j.ntaps <= int(hn::Lanes(d32));
    if (!on_) return;
    for (int t = 0; t < j.ntaps; ++t) code_[t] = int32_t(j.tap_code[t]);
    for (size_t i = 0; i < hn::Lanes(D()); ++i) lane_part_[i] = int32_t(int64_t(i) / j.lanes.group * j.flat_step);
  }
  bool on() const { return on_; }
  // lanes [0, N) of tap numbers `tap` to out[0, N), plus `base`; streaming stores where `stream`
  template <class TU>
  HWY_INLINE void store(const TU* tap, int64_t* out, int64_t base, bool stream) const {
    const D32 d32;
    const hn::Rebind<TU, D32> dt;
    const hn::Repartition<int64_t, D32> d64;
    const hn::Half<D32> dh;
    const int64_t L = int64_t(hn::Lanes(d32)), N = int64_t(hn::Lanes(D()));
    const auto add = hn::Set(d32, int32_t(base)), codes = hn::Load(d32, code_);
    for (int64_t c = 0; c < N; c += L) {
      hn::Vec<D32> t;
      if constexpr (sizeof(TU) == 4) t = hn::BitCast(d32, hn::LoadU(dt, tap + c));
      else if constexpr (sizeof(TU) < 4) t = hn::PromoteTo(d32, hn::LoadU(dt, tap + c));
      else return;  // (8-byte values: never on)
      auto v = hn::TableLookupLanes(codes, hn::IndicesFromVec(d32, t));
      v = hn::Add(v, hn::Add(hn::LoadU(d32, lane_part_ + c), add));
      put(d64, hn::PromoteTo(d64, hn::LowerHalf(dh, v)), out + c, stream);
      put(d64, hn::PromoteTo(d64, hn::UpperHalf(dh, v)), out + c + L / 2, stream);
    }
  }

 private:
  bool on_ = false;
  HWY_ALIGN int32_t code_[hn::MaxLanes(D32())] = {};
  HWY_ALIGN int32_t lane_part_[kMax];
#endif
};

// A vector of argmax lanes (codes or tap numbers, per kIdx) from lane k on, in the job's form.
template <int kIdx, class D, class VU>
HWY_INLINE void store_index_vector(const ForwardJob& j, const FlatIndices<D>& flat, VU idx, char* am, int64_t k,
                                   int64_t row_code, bool stream, bool stream_flat) {
  const hn::DFromV<VU> du;
  using TU = hn::TFromD<decltype(du)>;
  const int64_t N = int64_t(hn::Lanes(du)), ai = form_bytes(j.form);
  const Lanes& l = j.lanes;
  if (kIdx == kIntCode && ai == int64_t(sizeof(TU))) return put(du, idx, reinterpret_cast<TU*>(am) + k, stream);
  HWY_ALIGN TU buf[hn::MaxLanes(du)];
  hn::Store(idx, du, buf);
  if (flat.on()) {
    flat.store(buf, reinterpret_cast<int64_t*>(am) + k, (k / l.group) * j.flat_step + row_code, stream_flat);
  } else if (j.form == IndexForm::I64 && l.group == 1) {  // (flat indices of lanes one output each: no division)
    int64_t* out = reinterpret_cast<int64_t*>(am) + k;
    const int64_t base = k * j.flat_step + row_code;
    for (int64_t i = 0; i < N; ++i) out[i] = j.tap_code[buf[i]] + base + i * j.flat_step;
  } else {
    for (int64_t i = 0; i < N; ++i) store_index(j.form, am, k + i, index_value(j, kIdx, int64_t(buf[i]), k + i, row_code));
  }
}

template <class D, int kIdx, int M>
HWY_NOINLINE void int_max_rows(const ForwardJob& j) {
  using T = hn::TFromD<D>;
  const D d;
  using TU = hwy::MakeUnsigned<T>;
  const hn::RebindToUnsigned<decltype(d)> du;
  const int64_t N = int64_t(hn::Lanes(d));
  const Lanes& l = j.lanes;
  const int64_t vec_end = M == kScalarOnly ? 0 : l.vector_count;
  const RowPrefetch<T> ahead(j);
  const int64_t ai = form_bytes(j.form);
  const bool stream = streams<T>(d, j, kIdx == kIntCode && ai == int64_t(sizeof(T)) ? ai : 0);
  const FlatIndices<D> flat(j);
  // int64 indices stream too where each of their lines is whole (8 lanes a line, from an aligned start)
  const bool stream_flat = stream && flat.on() && reinterpret_cast<uintptr_t>(j.argmax) % 64 == 0 &&
                           j.y_row_step % 8 == 0 && N % 8 == 0;
  int64_t period_row = j.code_row_first % j.code_period;
  for (int64_t row = 0; row < j.rows; ++row, period_row = period_row + 1 == j.code_period ? 0 : period_row + 1) {
    const T* x = static_cast<const T*>(j.x) + row * j.x_row_step;
    T* y = static_cast<T*>(j.y) + row * j.y_row_step;
    char* am = j.argmax ? static_cast<char*>(j.argmax) + row * j.y_row_step * ai : nullptr;
    const int64_t row_code = period_row * j.code_row_step;
    ahead(row);
    // U vectors from lane k (walk_vectors: four at a time for long windows), their chains interleaved
    auto vectors = [&](auto u, int64_t k, int64_t end, int64_t at0) {
      constexpr int U = decltype(u)::value;
      int64_t lane[U], at[U];
      hn::Vec<D> m[U];
      hn::Vec<decltype(du)> idx[U];
      vector_starts(d, k, end, lane, U);
      for (int v = 0; v < U; ++v) {
        lane[v] += k, at[v] = vector_at<M, U>(l, lane[v], at0);
        m[v] = load_int<M>(d, x + j.tap_offset[0], at[v]);
        idx[v] = hn::Set(du, TU(kIdx == kIntCode ? j.tap_code[0] : 0));
      }
      for (int t = 1; t < j.ntaps; ++t) {
        const T* xt = x + j.tap_offset[t];
        const auto code = hn::Set(du, TU(kIdx == kIntCode ? j.tap_code[t] : t));
        for (int v = 0; v < U; ++v) {
          const auto val = load_int<M>(d, xt, at[v]);
          if constexpr (kIdx == kIntNone) {
            m[v] = hn::Max(m[v], val);
          } else {
            const auto replace = val > m[v];
            m[v] = hn::IfThenElse(replace, val, m[v]);
            idx[v] = hn::IfThenElse(hn::RebindMask(du, replace), code, idx[v]);
          }
        }
      }
      for (int v = 0; v < U; ++v) {
        put(d, m[v], y + lane[v], stream);
        if constexpr (kIdx != kIntNone) store_index_vector<kIdx>(j, flat, idx[v], am, lane[v], row_code, stream, stream_flat);
      }
    };
    // (with an argmax one vector at a time: four ran 1.2x slower, channels-last 3x3 8-bit, AVX3_DL)
    int64_t k = walk_vectors<M>(l, N, vec_end, kIdx == kIntNone && j.ntaps > 8, vectors);
    for (; k < l.count; ++k) {  // the rest one lane at a time
      const T* xk = x + lane_offset(l, k);
      T m = xk[j.tap_offset[0]];
      int best = 0;
      for (int t = 1; t < j.ntaps; ++t) {
        const T v = xk[j.tap_offset[t]];
        if (v > m) m = v, best = t;
      }
      y[k] = m;
      if constexpr (kIdx != kIntNone) store_index(j.form, am, k, index_value(j, kIntTap, best, k, row_code));
    }
  }
  if (stream) hwy::FlushStream();
}

template <class D, int kIdx>
void int_max_by_mode(const ForwardJob& j) {
  const int64_t N = int64_t(hn::Lanes(D())), g = j.lanes.group;
  const Lanes& l = j.lanes;
  if (g == 1 && l.lane_stride == 1) return int_max_rows<D, kIdx, kUnit>(j);
  if (g % N == 0) return int_max_rows<D, kIdx, kGroup>(j);
#if HWY_TARGET != HWY_SCALAR
  if (g == 1 && l.lane_stride == 2) return int_max_rows<D, kIdx, kPair>(j);
  if (g > 1 && l.lane_stride == 2 * g && N % g == 0) {
    const int64_t unit = g * int64_t(sizeof(hn::TFromD<D>));
    if (unit == 2) return int_max_rows<D, kIdx, kPairUnits + 2>(j);
    if (unit == 4) return int_max_rows<D, kIdx, kPairUnits + 4>(j);
    if (unit == 8) return int_max_rows<D, kIdx, kPairUnits + 8>(j);
  }
#endif
  int_max_rows<D, kIdx, kScalarOnly>(j);
}

// Vectors as wide as the rows allow: whole ones, else a half or a quarter of one (rows of 16 or 32 outputs of
// 8-bit types, e.g. channels-first planes of 32 or 64 columns pooled by 2).
template <class T, int kIdx>
void int_max_by_width(const ForwardJob& j) {
  const hn::ScalableTag<T> d;
  const int64_t full = int64_t(hn::Lanes(d)), vec = j.lanes.vector_count;
  if constexpr (hn::MaxLanes(d) > 32 / sizeof(T)) {
    if (vec < full && vec >= int64_t(32 / sizeof(T))) return int_max_by_mode<hn::CappedTag<T, 32 / sizeof(T)>, kIdx>(j);
  }
  if constexpr (hn::MaxLanes(d) > 16 / sizeof(T)) {
    if (vec < full && vec >= int64_t(16 / sizeof(T))) return int_max_by_mode<hn::CappedTag<T, 16 / sizeof(T)>, kIdx>(j);
  }
  int_max_by_mode<hn::ScalableTag<T>, kIdx>(j);
}

template <class T>
void int_max_forward(const ForwardJob& j) {
  if (j.form == IndexForm::None) return int_max_by_width<T, kIntNone>(j);
  // codes no wider than the lanes (and not flat) are followed as they are; else tap numbers, which must fit
  if (j.form != IndexForm::I64 && form_bytes(j.form) <= int64_t(sizeof(T))) return int_max_by_width<T, kIntCode>(j);
  if (uint64_t(j.ntaps) <= uint64_t(std::numeric_limits<hwy::MakeUnsigned<T>>::max()))
    return int_max_by_width<T, kIntTap>(j);
  int_max_rows<hn::ScalableTag<T>, kIntTap, kScalarOnly>(j);  // (the scalar loop keeps tap numbers in an int)
}

#if HWY_TARGET != HWY_SCALAR  // (pair splits: ConcatEven/ConcatOdd)
// 3x3 windows of stride 2 over a channels-first plane, no argmax (see K3S2ForwardJob): max is exact and
// order-free for integers, so per output row the three input rows' maxima first, cell by cell, into a row with
// the type's lowest value in its padding, then the three taps along it from one pair split (the windows overlap
// by a cell: ConcatEven at +0 and +2, ConcatOdd at +1). Each input cell is loaded once (twice: the row two
// output rows share), not nine times by pair loads. Vectors as wide as each pass's row allows (dv along the
// input row, d along the output row); the last of a row overlaps the one before (the same bits again).
template <class DV, class D>
void int_k3s2_plane(DV dv, D d, const K3S2ForwardJob& j) {
  using T = hn::TFromD<D>;
  const int64_t NV = int64_t(hn::Lanes(dv)), N = int64_t(hn::Lanes(d)), H = j.height, W = j.width, OW = j.out_w;
  const T* x = static_cast<const T*>(j.x);
  T* b = static_cast<T*>(j.row_max);  // b[pw + w]: the max of column w's rows; room: see the header
  std::fill(b, b + j.pad_w + W + 2 * N + 2, std::numeric_limits<T>::lowest());
  T* bw = b + j.pad_w;
  for (int64_t oh = 0; oh < j.out_h; ++oh) {
    const int64_t top = 2 * oh - j.pad_h, r0 = std::max<int64_t>(0, top), r1 = std::min(H, top + 3);
    for (int64_t r = top + 9; r < top + 11; ++r) prefetch_plane_row(x, j.x_next, r, H, j.x_row, W);  // (4 rows on)
    for (int64_t w = 0;; w = std::min(w + NV, W - NV)) {
      auto m = hn::LoadU(dv, x + r0 * j.x_row + w);
      for (int64_t r = r0 + 1; r < r1; ++r) m = hn::Max(m, hn::LoadU(dv, x + r * j.x_row + w));
      hn::StoreU(m, dv, bw + w);
      if (w == W - NV) break;
    }
    T* y = static_cast<T*>(j.y) + oh * j.y_row;
    for (int64_t o = 0;; o = std::min(o + N, OW - N)) {
      const T* p = b + 2 * o;  // window o: cells 2o, 2o + 1, 2o + 2 of b
      const auto lo = hn::LoadU(d, p), hi = hn::LoadU(d, p + N);
      const auto m = hn::Max(hn::Max(hn::ConcatEven(d, hi, lo), hn::ConcatOdd(d, hi, lo)),
                             hn::ConcatEven(d, hn::LoadU(d, p + 2 + N), hn::LoadU(d, p + 2)));
      hn::StoreU(m, d, y + o);
      if (o == OW - N) break;
    }
  }
}

// Pair splits of byte lanes as x86's byte packs leave them (AVX2 and the AVX-512 targets: each 128-bit block holds
// eight lanes of `lo`, then eight of `hi`): every split of a vector's windows is in the same order, so compares and
// blends work on them as they are and in_order puts the outputs right once, not every split (ConcatEven is a pack
// and a permutation there). Other targets and narrower vectors: the splits themselves, in order.
template <class D>
constexpr bool kPackOrder = HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2 && sizeof(hn::TFromD<D>) == 1 &&
                            hn::MaxLanes(D()) >= 32;

template <bool kOdd, class D>
HWY_INLINE hn::Vec<D> split_pairs(D d, hn::Vec<D> hi, hn::Vec<D> lo) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if constexpr (kPackOrder<D>) {
    const hn::Repartition<uint16_t, D> dw;
    auto part = [&](hn::Vec<D> v) {  // the lane in each 16-bit unit's low byte
      return kOdd ? hn::ShiftRight<8>(hn::BitCast(dw, v)) : hn::And(hn::BitCast(dw, v), hn::Set(dw, 0xFF));
    };
    const auto a = part(lo), b = part(hi);
    using VU = hn::Vec<hn::RebindToUnsigned<D>>;
#if HWY_TARGET <= HWY_AVX3
    if constexpr (hn::MaxLanes(D()) == 64) return hn::BitCast(d, VU{_mm512_packus_epi16(a.raw, b.raw)});
#endif
    if constexpr (hn::MaxLanes(D()) == 32) return hn::BitCast(d, VU{_mm256_packus_epi16(a.raw, b.raw)});
  }
#endif
  return kOdd ? hn::ConcatOdd(d, hi, lo) : hn::ConcatEven(d, hi, lo);
}

template <class D>
HWY_INLINE hn::Vec<D> in_order(D d, hn::Vec<D> v) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if constexpr (kPackOrder<D>) {
    const hn::Repartition<uint64_t, D> d64;
    if constexpr (hn::MaxLanes(D()) == 32) {
      return hn::BitCast(d, hn::Vec<decltype(d64)>{_mm256_permute4x64_epi64(hn::BitCast(d64, v).raw, 0xD8)});
    } else {
      alignas(64) static constexpr uint64_t kBlocks[8] = {0, 2, 4, 6, 1, 3, 5, 7};
      return hn::BitCast(d, hn::TableLookupLanes(hn::BitCast(d64, v), hn::SetTableIndices(d64, kBlocks)));
    }
  }
#endif
  (void)d;
  return v;
}

// Flat int64 indices of a row of one-byte 3x3 codes (code c: tap row c / 3, column c % 3): the input cell's
// index in its plane, (top + c / 3) W + 2 ow - pad_w + c % 3, by vectors of 16 int32 lanes (the plane's cells
// fit: see simd_forward) and a table of the nine codes' offsets in one register; streaming stores where `stream`
// (the row's lines whole: 8-lane stores from an aligned start). fits(): false on targets of fewer lanes.
class FlatRow {
  using D32 = hn::CappedTag<int32_t, 16>;

 public:
  static bool fits() { return hn::Lanes(D32()) == 16; }
  explicit FlatRow(int64_t width) {
    for (int c = 0; c < 16; ++c) off_[c] = int32_t(c < 9 ? k3s2_code_offset(c, width) : 0);
  }
  void store(const uint8_t* code, int64_t n, int64_t first, int64_t* out, bool stream) const {
    const D32 d32;
    const hn::Rebind<uint8_t, D32> d8;
    const hn::Repartition<int64_t, D32> d64;
    const hn::Half<D32> dh;
    const int64_t L = int64_t(hn::Lanes(d32));
    const auto table = hn::Load(d32, off_), step = hn::Mul(hn::Iota(d32, 0), hn::Set(d32, 2));
    int64_t o = 0;
    for (; o + L / 2 <= n; o += L) {  // (a last half: 16 codes read, 8 stored; code has room for them)
      const auto codes = hn::PromoteTo(d32, hn::LoadU(d8, code + o));
      const auto tab = hn::TableLookupLanes(table, hn::IndicesFromVec(d32, codes));
      const auto v = hn::Add(tab, hn::Add(step, hn::Set(d32, int32_t(first + 2 * o))));
      put(d64, hn::PromoteTo(d64, hn::LowerHalf(dh, v)), out + o, stream);
      if (o + L > n) {
        o += L / 2;
        break;
      }
      put(d64, hn::PromoteTo(d64, hn::UpperHalf(dh, v)), out + o + L / 2, stream);
    }
    for (; o < n; ++o) out[o] = first + 2 * o + off_[code[o]];
  }

 private:
  HWY_ALIGN int32_t off_[16];
};

// The same windows with the one-byte argmax (8-bit types), or int64 flat indices made from it (j.flat): the
// reference's first maximum in row-major order is each row's first maximum (its three taps in order), then the
// rows in order, a row replacing only where greater. Each input row is copied into a row with the type's lowest
// value in its padding; a padding cell is never taken: lowest is never greater than the real cell beside it, and
// the left one (tap 0 of output 0) gives way to tap 1 whatever its value. The bottom row's three-tap maxima and
// codes are kept (vector by vector) for the next output row, which starts on that input row.
template <class D>
void int_k3s2_plane_argmax(D d, const K3S2ForwardJob& j) {
  using T = hn::TFromD<D>;
  const hn::RebindToUnsigned<D> du;
  const int64_t N = int64_t(hn::Lanes(d)), H = j.height, W = j.width, OW = j.out_w, pw = j.pad_w;
  const int64_t span = pw + W + 2 * N + 2;  // one padded row; room for three and the kept row: see the header
  const T* x = static_cast<const T*>(j.x);
  T* row[3] = {static_cast<T*>(j.row_max), static_cast<T*>(j.row_max) + span, static_cast<T*>(j.row_max) + 2 * span};
  T* kept_max = row[2] + span;  // vector v's lanes at v N
  T* kept_code = kept_max + OW + N;
  std::fill(row[0], row[0] + 3 * span, std::numeric_limits<T>::lowest());
  const FlatRow flat(W);
  const bool stream =
      j.flat && j.stream && reinterpret_cast<uintptr_t>(j.flat) % 64 == 0 && OW % 8 == 0 && j.y_row % 8 == 0;
  int64_t kept = std::numeric_limits<int64_t>::min();  // the input row whose maxima are kept (none: -1 is a top)
  const auto first_lane = hn::FirstN(d, pw == 1 ? 1 : 0);
  hn::Vec<D> k[9];  // the codes
  for (int c = 0; c < 9; ++c) k[c] = hn::Set(d, T(c));
  auto kept_row = [&](int64_t v, hn::Vec<D>& m, hn::Vec<D>& c) {  // (kept with the bottom row's codes 6-8)
    m = hn::LoadU(d, kept_max + v * N), c = hn::Sub(hn::LoadU(d, kept_code + v * N), k[6]);
  };
  // the three taps of input row jh of the windows from p on (cells 2o, 2o + 1, 2o + 2 of the padded row): their
  // maximum m and code c, the first maximum winning
  auto three = [&](const T* p, int jh, bool first_out, hn::Vec<D>& m, hn::Vec<D>& c) {
    const auto lo = hn::LoadU(d, p), hi = hn::LoadU(d, p + N);
    m = split_pairs<false>(d, hi, lo);
    const auto t1 = split_pairs<true>(d, hi, lo);
    auto take = hn::Gt(t1, m);
    if (first_out) take = hn::Or(take, first_lane);
    m = hn::IfThenElse(take, t1, m), c = hn::IfThenElse(take, k[3 * jh + 1], k[3 * jh]);
    const auto t2 = split_pairs<false>(d, hn::LoadU(d, p + 2 + N), hn::LoadU(d, p + 2));
    take = hn::Gt(t2, m);
    m = hn::Max(m, t2), c = hn::IfThenElse(take, k[3 * jh + 2], c);
  };
  for (int64_t oh = 0; oh < j.out_h; ++oh) {
    const int64_t top = 2 * oh - j.pad_h;
    for (int64_t r = top + 9; r < top + 11; ++r) prefetch_plane_row(x, j.x_next, r, H, j.x_row, W);  // (4 rows on)
    const bool reuse = kept == top;
    for (int jh = reuse ? 1 : 0; jh < 3; ++jh) {
      const int64_t r = top + jh;
      if (r < 0 || r >= H) continue;
      for (int64_t w = 0;; w = std::min(w + N, W - N)) {
        hn::StoreU(hn::LoadU(d, x + r * j.x_row + w), d, row[jh] + pw + w);
        if (w == W - N) break;
      }
    }
    const bool keep = top + 2 < H;
    T* y = static_cast<T*>(j.y) + oh * j.y_row;
    uint8_t* am = j.flat ? static_cast<uint8_t*>(j.row_code) : j.am + oh * j.y_row;
    const bool inner = reuse && top + 2 < H;  // (rows 0-2 all in the plane, row 0's maxima kept)
    for (int64_t o = 0, v = 0;; o = std::min(o + N, OW - N), ++v) {
      hn::Vec<D> best, code;
      if (inner) {
        kept_row(v, best, code);
        hn::Vec<D> m1, c1, m2, c2;
        three(row[1] + 2 * o, 1, o == 0, m1, c1);
        three(row[2] + 2 * o, 2, o == 0, m2, c2);
        if (keep) hn::StoreU(m2, d, kept_max + v * N), hn::StoreU(c2, d, kept_code + v * N);
        auto take = hn::Gt(m1, best);
        best = hn::Max(best, m1), code = hn::IfThenElse(take, c1, code);
        take = hn::Gt(m2, best);
        best = hn::Max(best, m2), code = hn::IfThenElse(take, c2, code);
      } else {
        bool first = true;
        for (int jh = 0; jh < 3; ++jh) {
          if (top + jh < 0 || top + jh >= H) continue;
          hn::Vec<D> m, c;
          if (jh == 0 && reuse) {
            kept_row(v, m, c);
          } else {
            three(row[jh] + 2 * o, jh, o == 0, m, c);
            if (jh == 2 && keep) hn::StoreU(m, d, kept_max + v * N), hn::StoreU(c, d, kept_code + v * N);
          }
          if (first) {
            best = m, code = c, first = false;
          } else {
            const auto take = hn::Gt(m, best);
            best = hn::Max(best, m), code = hn::IfThenElse(take, c, code);
          }
        }
      }
      hn::StoreU(in_order(d, best), d, y + o);
      hn::StoreU(hn::BitCast(du, in_order(d, code)), du, am + o);
      if (o == OW - N) break;
    }
    if (j.flat) flat.store(am, OW, top * W - pw, j.flat + oh * j.y_row, stream);
    kept = keep ? top + 2 : std::numeric_limits<int64_t>::min();
  }
  if (stream) hwy::FlushStream();
}

#if HWY_TARGET == HWY_AVX3_DL
// The same windows of 8-bit planes (with the one-byte argmax, int64 flat indices from it, or no index) by
// AVX-512 VBMI byte permutes (RowTaps, k3s2_taps-inl.h): a chunk of up to 64 outputs of a row reads its 128 cells
// in two masked loads (cells outside the row: the type's lowest), one permute a tap, no padded copies of the rows.
// The rule is int_k3s2_plane_argmax's: each row's first maximum over its three taps, then the rows in order, a
// row replacing only where greater; the left padding cell gives way to tap 1 whatever its value, other padding
// cells are lowest and never greater. Chunks outer, output rows inner: the bottom row's taps' maxima and codes
// stay in registers for the next output row.
template <class T>
class BytePlane {
  using Taps = RowTaps<uint8_t>;

 public:
  explicit BytePlane(const K3S2ForwardJob& j) : j_(j) {}

  template <bool kArgmax>
  void run() const {
    const int64_t OW = j_.out_w, OH = j_.out_h, H = j_.height;
    const FlatRow flat(j_.width);
    const bool stream =
        j_.flat && j_.stream && reinterpret_cast<uintptr_t>(j_.flat) % 64 == 0 && OW % 8 == 0 && j_.y_row % 8 == 0;
    alignas(64) uint8_t codes[64 + 16] = {};  // (FlatRow reads up to 16 codes past the last)
    const __m512i k3 = _mm512_set1_epi8(3), k6 = _mm512_set1_epi8(6);
    const T* x = static_cast<const T*>(j_.x);
    for (int64_t o0 = 0; o0 < OW; o0 += 64) {
      const int64_t n = std::min<int64_t>(64, OW - o0);
      const __mmask64 out = first_lanes<__mmask64>(n);
      const Taps taps(o0, j_.pad_w, j_.width);
      __m512i kept_m = _mm512_setzero_si512(), kept_c = kept_m;
      int64_t kept = std::numeric_limits<int64_t>::min();  // the input row whose taps' maxima are kept
      for (int64_t oh = 0; oh < OH; ++oh) {
        const int64_t top = 2 * oh - j_.pad_h;
        if (o0 == 0)
          for (int64_t r = top + 9; r < top + 11; ++r)
            prefetch_plane_row(x, j_.x_next, r, H, j_.x_row, j_.width);  // (4 rows on)
        __m512i best = kept_m, code = kept_c;
        bool first = true;
        for (int jh = 0; jh < 3; ++jh) {
          const int64_t r = top + jh;
          if (r < 0 || r >= H) continue;
          __m512i m, c = _mm512_setzero_si512();
          if (jh == 0 && kept == r) {
            m = kept_m, c = kept_c;
          } else {
            three<kArgmax>(taps, x + r * j_.x_row, m, c);
          }
          if (jh == 2) kept_m = m, kept_c = c, kept = r;
          if (first) {  // (codes of rows 1 and 2: 3-5 and 6-8)
            best = m, code = jh == 0 ? c : _mm512_add_epi8(c, jh == 1 ? k3 : k6), first = false;
            continue;
          }
          if constexpr (kArgmax) code = _mm512_mask_add_epi8(code, gt(m, best), c, jh == 1 ? k3 : k6);
          best = max(best, m);
        }
        _mm512_mask_storeu_epi8(static_cast<T*>(j_.y) + oh * j_.y_row + o0, out, best);
        if constexpr (kArgmax) {
          if (!j_.flat) {
            _mm512_mask_storeu_epi8(j_.am + oh * j_.y_row + o0, out, code);
          } else {
            _mm512_store_si512(codes, code);
            flat.store(codes, n, top * j_.width + taps.first_cell(), j_.flat + oh * j_.y_row + o0, stream);
          }
        }
      }
    }
    if (stream) hwy::FlushStream();
  }

 private:
  static __mmask64 gt(__m512i a, __m512i b) {
    if constexpr (std::is_signed_v<T>) return _mm512_cmpgt_epi8_mask(a, b);
    else return _mm512_cmpgt_epu8_mask(a, b);
  }
  static __m512i max(__m512i a, __m512i b) {
    if constexpr (std::is_signed_v<T>) return _mm512_max_epi8(a, b);
    else return _mm512_max_epu8(a, b);
  }
  // the three taps of one input row for the chunk's windows: their maximum m and (kArgmax) its code c, 0-2
  template <bool kArgmax>
  HWY_INLINE void three(const Taps& taps, const T* row, __m512i& m, __m512i& c) const {
    __m512i t0, t1, t2;
    taps.load(reinterpret_cast<const uint8_t*>(row), _mm512_set1_epi8(char(std::numeric_limits<T>::lowest())), t0, t1,
              t2);
    if constexpr (!kArgmax) {
      m = max(max(t0, t1), t2);
      return;
    }
    const __mmask64 take1 = gt(t1, t0) | taps.left();
    m = _mm512_mask_blend_epi8(take1, t0, t1);
    c = _mm512_maskz_mov_epi8(take1, _mm512_set1_epi8(1));
    const __mmask64 take2 = gt(t2, m);
    m = max(m, t2);
    c = _mm512_mask_mov_epi8(c, take2, _mm512_set1_epi8(2));
  }

  const K3S2ForwardJob& j_;
};
#endif

// 2x2 stride-2 windows over rows of 32 8-bit cells, with the one-byte argmax or none (Rows32Job): two output
// rows per vector of 32 lanes, from the two rows' top input rows (one split: taps 0 and 1) and bottom ones (taps 2
// and 3); each tap replaces the maximum only where greater, in window order, so the first maximum wins.
template <class D>
void int_rows32(D d, const Rows32Job& j) {
  using T = hn::TFromD<D>;
  const hn::RebindToUnsigned<D> du;
  const T* x = static_cast<const T*>(j.x);
  T* y = static_cast<T*>(j.y);
  const bool stream =
      j.stream && reinterpret_cast<uintptr_t>(y) % 32 == 0 && reinterpret_cast<uintptr_t>(j.am) % 32 == 0;
  int64_t r = 0;
  for (; r + 2 <= j.rows; r += 2) {
    const T* p = x + 64 * r;  // rows r and r + 1: top, bottom, top, bottom input rows
    const auto top0 = hn::LoadU(d, p), bottom0 = hn::LoadU(d, p + 32), top1 = hn::LoadU(d, p + 64),
               bottom1 = hn::LoadU(d, p + 96);
    auto m = split_pairs<false>(d, top1, top0);
    const auto t1 = split_pairs<true>(d, top1, top0), t2 = split_pairs<false>(d, bottom1, bottom0),
               t3 = split_pairs<true>(d, bottom1, bottom0);
    if (!j.am) {
      put(d, in_order(d, hn::Max(hn::Max(m, t1), hn::Max(t2, t3))), y + 16 * r, stream);
      continue;
    }
    auto take = hn::Gt(t1, m);
    auto code = hn::IfThenElse(take, hn::Set(d, T(1)), hn::Zero(d));
    m = hn::Max(m, t1);
    take = hn::Gt(t2, m);
    code = hn::IfThenElse(take, hn::Set(d, T(2)), code), m = hn::Max(m, t2);
    take = hn::Gt(t3, m);
    code = hn::IfThenElse(take, hn::Set(d, T(3)), code), m = hn::Max(m, t3);
    put(d, in_order(d, m), y + 16 * r, stream);
    put(du, hn::BitCast(du, in_order(d, code)), j.am + 16 * r, stream);
  }
  for (; r < j.rows; ++r)  // (an odd row at the end)
    for (int64_t o = 0; o < 16; ++o) {
      const T* p = x + 64 * r + 2 * o;
      const T v[4] = {p[0], p[1], p[32], p[33]};
      int best = 0;
      for (int t = 1; t < 4; ++t)
        if (v[t] > v[best]) best = t;
      y[16 * r + o] = v[best];
      if (j.am) j.am[16 * r + o] = uint8_t(best);
    }
  if (stream) hwy::FlushStream();
}

#endif

template <class T>
bool int_k3s2(const K3S2ForwardJob& j) {
#if HWY_TARGET == HWY_SCALAR
  (void)j;
  return false;
#else
  const hn::ScalableTag<T> d;
  const hn::CappedTag<T, 32 / sizeof(T)> d32;
  const hn::CappedTag<T, 16 / sizeof(T)> d16;
  const int64_t full = int64_t(hn::Lanes(d)), half = int64_t(hn::Lanes(d32)), quarter = int64_t(hn::Lanes(d16));
  const bool argmax = j.am || j.flat;
#if HWY_TARGET == HWY_AVX3_DL
  if constexpr (sizeof(T) == 1) {
    const BytePlane<T> plane(j);
    argmax ? plane.template run<true>() : plane.template run<false>();
    return true;
  }
#endif
  if ((argmax && (sizeof(T) != 1 || (j.flat && !FlatRow::fits()))) || j.out_w < quarter || j.width < 2 * quarter)
    return false;
  if constexpr (sizeof(T) == 1) {
    if (argmax) {
      if (j.out_w >= full) int_k3s2_plane_argmax(d, j);
      else if (j.out_w >= half) int_k3s2_plane_argmax(d32, j);
      else int_k3s2_plane_argmax(d16, j);
      return true;
    }
  }
  auto run = [&](auto dv) {
    if (j.out_w >= full) return int_k3s2_plane(dv, d, j);
    if (j.out_w >= half) return int_k3s2_plane(dv, d32, j);
    int_k3s2_plane(dv, d16, j);
  };
  if (j.width >= full) run(d);
  else if (j.width >= half) run(d32);
  else run(d16);
  return true;
#endif
}

template <class T>
bool rows32(const Rows32Job& j) {
#if HWY_TARGET == HWY_SCALAR
  (void)j;
  return false;
#else
  const hn::CappedTag<T, 32> d;
  if (hn::Lanes(d) != 32) return false;
  int_rows32(d, j);
  return true;
#endif
}

}  // namespace

bool Rows32MaxForwardU8(const Rows32Job& j) { return rows32<uint8_t>(j); }
bool Rows32MaxForwardI8(const Rows32Job& j) { return rows32<int8_t>(j); }

void K3S2FlatRows(const K3S2FlatJob& j) {
#if HWY_TARGET != HWY_SCALAR
  const bool vector = FlatRow::fits();
  const FlatRow flat(j.width);
#endif
  for (int64_t oh = 0; oh < j.out_h; ++oh) {
    const uint8_t* code = j.codes + oh * j.row;
    int64_t* out = j.flat + oh * j.row;
    const int64_t first = (2 * oh - j.pad_h) * j.width - j.pad_w;  // the row's first window's first cell
#if HWY_TARGET != HWY_SCALAR
    if (vector) {
      flat.store(code, j.out_w, first, out, j.stream);
      continue;
    }
#endif
    for (int64_t ow = 0; ow < j.out_w; ++ow) out[ow] = first + 2 * ow + k3s2_code_offset(code[ow], j.width);
  }
#if HWY_TARGET != HWY_SCALAR
  if (vector && j.stream) hwy::FlushStream();
#endif
}

bool K3S2MaxForwardU8(const K3S2ForwardJob& j) { return int_k3s2<uint8_t>(j); }
bool K3S2MaxForwardI8(const K3S2ForwardJob& j) { return int_k3s2<int8_t>(j); }
bool K3S2MaxForwardI16(const K3S2ForwardJob& j) { return int_k3s2<int16_t>(j); }
bool K3S2MaxForwardI32(const K3S2ForwardJob& j) { return int_k3s2<int32_t>(j); }
bool K3S2MaxForwardI64(const K3S2ForwardJob& j) { return int_k3s2<int64_t>(j); }

void MaxForwardU8(const ForwardJob& j) { int_max_forward<uint8_t>(j); }
void MaxForwardI8(const ForwardJob& j) { int_max_forward<int8_t>(j); }
void MaxForwardI16(const ForwardJob& j) { int_max_forward<int16_t>(j); }
void MaxForwardI32(const ForwardJob& j) { int_max_forward<int32_t>(j); }
void MaxForwardI64(const ForwardJob& j) { int_max_forward<int64_t>(j); }

}  // namespace poolkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolkit::cpu {
POOLKIT_KERNEL_DISPATCH(MaxForwardU8, max_forward_u8, ForwardJob)
POOLKIT_KERNEL_DISPATCH(MaxForwardI8, max_forward_i8, ForwardJob)
POOLKIT_KERNEL_DISPATCH(MaxForwardI16, max_forward_i16, ForwardJob)
POOLKIT_KERNEL_DISPATCH(MaxForwardI32, max_forward_i32, ForwardJob)
POOLKIT_KERNEL_DISPATCH(MaxForwardI64, max_forward_i64, ForwardJob)
HWY_EXPORT(K3S2MaxForwardU8);
HWY_EXPORT(K3S2MaxForwardI8);
HWY_EXPORT(K3S2MaxForwardI16);
HWY_EXPORT(K3S2MaxForwardI32);
HWY_EXPORT(K3S2MaxForwardI64);
HWY_EXPORT(K3S2FlatRows);
HWY_EXPORT(Rows32MaxForwardU8);
HWY_EXPORT(Rows32MaxForwardI8);
void k3s2_flat_rows(const K3S2FlatJob& j) { HWY_DYNAMIC_DISPATCH(K3S2FlatRows)(j); }
bool rows32_max_forward_int(DType t, const Rows32Job& j) {
  return t == DType::u8 ? HWY_DYNAMIC_DISPATCH(Rows32MaxForwardU8)(j) : HWY_DYNAMIC_DISPATCH(Rows32MaxForwardI8)(j);
}
bool k3s2_max_forward_int(DType t, const K3S2ForwardJob& j) {
  switch (t) {
    case DType::u8: return HWY_DYNAMIC_DISPATCH(K3S2MaxForwardU8)(j);
    case DType::i8: return HWY_DYNAMIC_DISPATCH(K3S2MaxForwardI8)(j);
    case DType::i16: return HWY_DYNAMIC_DISPATCH(K3S2MaxForwardI16)(j);
    case DType::i32: return HWY_DYNAMIC_DISPATCH(K3S2MaxForwardI32)(j);
    default: return HWY_DYNAMIC_DISPATCH(K3S2MaxForwardI64)(j);
  }
}
}  // namespace poolkit::cpu
#endif
