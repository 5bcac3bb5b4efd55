// Max forward of 3x3 windows of stride 2 over a channels-first plane (see K3S2ForwardJob in kernels.hpp): per
// vector of outputs and input row, the row's three taps by two "greater or NaN" steps from one pair load, then
// the window's rows in order by the same rule, which picks the same cell as the reference's scan of all nine in
// row-major order (the first maximum, the last NaN). An output row reuses the row maxima of the input row the
// previous output row ended on: 2 new rows, 6 compares and 2 pair loads per vector, where the general row
// kernel makes 8 compares and 9 pair loads.
#include "kernels.hpp"

#include <algorithm>
#include <limits>
#include <type_traits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/kernels_k3s2_forward.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "src/cpu/k3s2_taps-inl.h"
#include "src/cpu/kernels-inl.h"
#include "src/cpu/prefetch.hpp"

HWY_BEFORE_NAMESPACE();
namespace poolkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Output ow of the plane one tap at a time over the taps inside the plane, in row-major order, without branches
// on the values (random data mispredicts them) and with the vector conversions of 16-bit types.
template <class S>
HWY_INLINE void k3s2_output(const K3S2ForwardJob& j, int64_t oh, int64_t ow) {
  using C = compute_t<S>;
  const hn::CappedTag<C, 1> d1;
  const hn::RebindToSigned<decltype(d1)> di1;
  using TI = hn::TFromD<decltype(di1)>;
  const S* x = static_cast<const S*>(j.x);
  auto best = hn::Zero(d1);
  auto code = hn::Set(di1, TI(-1));
  bool first = true;
  for (int jh = 0; jh < 3; ++jh) {
    const int64_t r = 2 * oh - j.pad_h + jh;
    if (r < 0 || r >= j.height) continue;
    for (int jw = 0; jw < 3; ++jw) {
      const int64_t c = 2 * ow - j.pad_w + jw;
      if (c < 0 || c >= j.width) continue;
      const auto v = load_lanes<kUnit>(d1, x + r * j.x_row + c, 0);
      const auto here = hn::Set(di1, TI(jh * 3 + jw));
      if (first) {
        best = v, code = here, first = false;
      } else {
        const auto keep = stays(d1, v, best);
        best = hn::IfThenElse(keep, best, v);
        code = hn::IfThenElse(hn::RebindMask(di1, keep), code, here);
      }
    }
  }
  store_values(d1, best, static_cast<S*>(j.y) + oh * j.y_row + ow);
  if (j.am) j.am[oh * j.y_row + ow] = uint8_t(hn::GetLane(code));
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
// The output rows of one vector of 16-bit windows (HalfPlane, below, on AVX-512 and AVX2), as a window's rows
// in order: three(row) gives an input row's maximum (key, bits, code 0-2), later(m, jh) adds 3 jh to its code,
// pick(best, m) keeps best or takes m by the rule, store(oh, best) writes an output row and returns true (false: the
// walk stops there, and half_rows returns false). The bottom row's maximum stays for the next output row, whose top
// row it is; with prefetch_rows the rows 4 on are asked for.
template <class Max, class Three, class Later, class Pick, class Store>
HWY_INLINE bool half_rows(const K3S2ForwardJob& j, bool prefetch_rows, const Three& three, const Later& later,
                          const Pick& pick, const Store& store) {
  const int64_t H = j.height;
  const uint16_t* x = static_cast<const uint16_t*>(j.x);
  Max kept{};
  int64_t kept_row = std::numeric_limits<int64_t>::min();
  for (int64_t oh = 0; oh < j.out_h; ++oh) {
    const int64_t top = 2 * oh - j.pad_h;
    if (prefetch_rows)
      for (int64_t r = top + 9; r < top + 11; ++r) prefetch_plane_row(x, j.x_next, r, H, j.x_row, j.width);
    Max best{};
    bool first = true;
    for (int jh = 0; jh < 3; ++jh) {
      const int64_t r = top + jh;
      if (r < 0 || r >= H) continue;
      const Max m = jh == 0 && kept_row == r ? kept : three(x + r * j.x_row);
      if (jh == 2) kept = m, kept_row = r;
      const Max c = jh == 0 ? m : later(m, jh);
      best = first ? c : pick(best, c);
      first = false;
    }
    if (!store(oh, best)) return false;
  }
  return true;
}
#endif

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// 16-bit floats (bfloat16, float16) on AVX-512 without widening: each value compared as a 16-bit integer key
// (half_key, kernels-inl.h), 32 windows a vector, their taps from word permutes (RowTaps, k3s2_taps-inl.h; cells
// outside the row: -inf). The rule is the float kernel's: where a tap's key is greater, or it is NaN, it replaces
// the maximum (the first maximum, the last NaN), each row's three taps, then the rows in order; the left padding
// cell gives way to tap 1, the -inf past the row never replaces. The selected cell's own bits travel beside its key
// (stored with a NaN quiet). Chunks outer, output rows inner: the bottom row's maximum stays in registers for the
// next output row.
template <class S>
class HalfPlane {
  using Taps = RowTaps<uint16_t>;
  struct Max {
    __m512i key, bits, code;
  };

 public:
  explicit HalfPlane(const K3S2ForwardJob& j) : j_(j) {}

  void run() const { j_.am ? run_codes<true>() : run_codes<false>(); }

 private:
  // kCodes: with the argmax (without it no code is kept: resnet-stem bfloat16 max forward 1.07x faster, Zen 4)
  template <bool kCodes>
  void run_codes() const {
    const int64_t OW = j_.out_w;
    const __m512i k3 = _mm512_set1_epi16(3), k6 = _mm512_set1_epi16(6);
    auto later = [&](Max m, int jh) HWY_ATTR {
      if constexpr (kCodes) m.code = _mm512_add_epi16(m.code, jh == 1 ? k3 : k6);
      return m;
    };
    auto pick = [](const Max& best, const Max& m) HWY_ATTR {
      const __mmask32 take = half_key_replaces<S>(m.key, best.key);
      return Max{_mm512_mask_mov_epi16(best.key, take, m.key), _mm512_mask_mov_epi16(best.bits, take, m.bits),
                 kCodes ? _mm512_mask_mov_epi16(best.code, take, m.code) : best.code};
    };
    // non-negative windows (see three_nonnegative): unsigned compares of the bits
    auto pick_nonnegative = [](const Max& best, const Max& m) HWY_ATTR {
      if constexpr (!kCodes) return Max{best.key, _mm512_max_epu16(best.bits, m.bits), best.code};
      const __mmask32 take = _mm512_cmpgt_epu16_mask(m.bits, best.bits);
      return Max{best.key, _mm512_mask_mov_epi16(best.bits, take, m.bits),
                 _mm512_mask_mov_epi16(best.code, take, m.code)};
    };
    const __m512i inf = _mm512_set1_epi16(short(kHalfInf<S>));
    static thread_local int misses = 0;  // (chunks of any plane of this thread's)
    for (int64_t o0 = 0; o0 < OW; o0 += 32) {
      const __mmask32 out = first_lanes<__mmask32>(std::min<int64_t>(32, OW - o0));
      const Taps taps(o0, j_.pad_w, j_.width);
      // the chunk's rows the short way while their windows are non-negative; from the first that is not (its
      // maximum's bits above +infinity's: a tap negative or NaN), all of them again by the keys, and the next 16
      // chunks on this thread straight by the keys (resnet-stem's forward 1.10-1.19x faster on non-negative
      // inputs, 0.96-1.03x on inputs of either sign, Zen 4)
      if (misses > 0) {
        --misses;
      } else if (half_rows<Max>(
              j_, o0 == 0, [&](const uint16_t* row) HWY_ATTR { return three_nonnegative<kCodes>(taps, row); },
              later, pick_nonnegative, [&](int64_t oh, const Max& best) HWY_ATTR {
                if (_mm512_mask_cmpgt_epu16_mask(out, best.bits, inf)) return false;
                _mm512_mask_storeu_epi16(static_cast<uint16_t*>(j_.y) + oh * j_.y_row + o0, out, best.bits);
                if constexpr (kCodes)
                  _mm256_mask_storeu_epi8(j_.am + oh * j_.y_row + o0, out, _mm512_cvtepi16_epi8(best.code));
                return true;
              })) {
        continue;
      } else {
        misses = 16;
      }
      half_rows<Max>(
          j_, o0 == 0, [&](const uint16_t* row) HWY_ATTR { return three<kCodes>(taps, row); }, later, pick,
          [&](int64_t oh, const Max& best) HWY_ATTR {
            _mm512_mask_storeu_epi16(static_cast<uint16_t*>(j_.y) + oh * j_.y_row + o0, out,
                                     half_quiet<S>(best.bits, best.key));
            if constexpr (kCodes)
              _mm256_mask_storeu_epi8(j_.am + oh * j_.y_row + o0, out, _mm512_cvtepi16_epi8(best.code));
            return true;
          });
    }
  }

  // the three taps of one input row for the chunk's windows: the maximum's key, bits and code (0-2; zero
  // without kCodes)
  template <bool kCodes>
  HWY_INLINE Max three(const Taps& taps, const uint16_t* row) const {
    __m512i v0, v1, v2;
    taps.load(row, _mm512_set1_epi16(short(0x8000 | kHalfInf<S>)), v0, v1, v2);
    const __m512i k0 = half_key<S>(v0), k1 = half_key<S>(v1), k2 = half_key<S>(v2);
    const __mmask32 take1 = half_key_replaces<S>(k1, k0) | taps.left();
    Max m{_mm512_mask_mov_epi16(k0, take1, k1), _mm512_mask_mov_epi16(v0, take1, v1), _mm512_setzero_si512()};
    const __mmask32 take2 = half_key_replaces<S>(k2, m.key);
    m.key = _mm512_mask_mov_epi16(m.key, take2, k2), m.bits = _mm512_mask_mov_epi16(m.bits, take2, v2);
    if constexpr (kCodes)
      m.code = _mm512_mask_mov_epi16(_mm512_maskz_mov_epi16(take1, _mm512_set1_epi16(1)), take2,
                                     _mm512_set1_epi16(2));
    return m;
  }

  // The same where every tap is non-negative and no NaN (bits at most +infinity's, as after a ReLU; cells outside
  // the row read as +0, which never replaces): there the bits, compared as unsigned integers, order as the
  // values, equal values have equal bits and no NaN needs quieting. Only bits and codes are kept (key unused); a
  // tap negative or NaN leaves a maximum's bits above +infinity's, which the caller checks.
  template <bool kCodes>
  HWY_INLINE Max three_nonnegative(const Taps& taps, const uint16_t* row) const {
    __m512i v0, v1, v2;
    taps.load(row, _mm512_setzero_si512(), v0, v1, v2);
    if constexpr (!kCodes) return Max{v0, _mm512_max_epu16(_mm512_max_epu16(v0, v1), v2), v0};
    const __mmask32 take1 = _mm512_cmpgt_epu16_mask(v1, v0) | taps.left();
    const __m512i b = _mm512_mask_mov_epi16(v0, take1, v1);
    const __mmask32 take2 = _mm512_cmpgt_epu16_mask(v2, b);
    return Max{v0, _mm512_mask_mov_epi16(b, take2, v2),
               _mm512_mask_mov_epi16(_mm512_maskz_mov_epi16(take1, _mm512_set1_epi16(1)), take2,
                                     _mm512_set1_epi16(2))};
  }

  const K3S2ForwardJob& j_;
};
#elif HWY_ARCH_X86 && HWY_TARGET == HWY_AVX2
// The same on AVX2, 16 windows a vector: a row's taps by packing the low and high halves of the 32-bit pairs of
// unaligned loads (tap 2's from a load two cells on and one 17 on, so that nothing past its last cell is read;
// at the left padding, tap 0's from the pairs one lane up). Windows a vector would read past the row for (a last
// window the edge cuts) go one at a time (k3s2_output). Lanes stay in the packs' order (windows 0-3, 8-11 | 4-7,
// 12-15) until the stores.
template <class S>
class HalfPlane {
  struct Max {
    __m256i key, bits, code;
  };

 public:
  explicit HalfPlane(const K3S2ForwardJob& j) : j_(j) {}

  void run() const {
    const int64_t OW = j_.out_w, OH = j_.out_h, W = j_.width, pw = j_.pad_w;
    // vectors of windows [m, m + 16) for m in [0, hi]: cells [max(2m - pw, 0), 2m - pw + 33) inside the row
    const int64_t hi = W - 33 + pw < 0 ? -1 : std::min(OW - 16, (W - 33 + pw) / 2);
    if (hi >= 0) run_vectors(hi);
    // the others after the vectors, which bring the plane into the cache (one column of windows before them met
    // every row's first line in memory: half of the kernel's time)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = hi >= 0 ? hi + 16 : 0; ow < OW; ++ow) k3s2_output<S>(j_, oh, ow);
  }

 private:
  void run_vectors(int64_t hi) const {
    const __m256i k3 = _mm256_set1_epi16(3), k6 = _mm256_set1_epi16(6);
    auto later = [&](Max t, int jh) HWY_ATTR {
      t.code = _mm256_add_epi16(t.code, jh == 1 ? k3 : k6);
      return t;
    };
    auto pick = [](const Max& best, const Max& t) HWY_ATTR {
      const __m256i take = half_key_replaces<S>(t.key, best.key);
      return Max{_mm256_blendv_epi8(best.key, t.key, take), _mm256_blendv_epi8(best.bits, t.bits, take),
                 _mm256_blendv_epi8(best.code, t.code, take)};
    };
    for (int64_t m = 0;; m = std::min(m + 16, hi)) {  // (the last vector may overlap the one before)
      const int64_t s = 2 * m - j_.pad_w;
      half_rows<Max>(
          j_, m == 0, [&](const uint16_t* row) HWY_ATTR { return three(row, s); }, later, pick,
          [&](int64_t oh, const Max& best) HWY_ATTR {
            const __m256i bits = _mm256_permute4x64_epi64(half_quiet<S>(best.bits, best.key), 0xD8);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(static_cast<uint16_t*>(j_.y) + oh * j_.y_row + m), bits);
            if (j_.am) {
              const __m256i code = _mm256_permute4x64_epi64(best.code, 0xD8);
              _mm_storeu_si128(reinterpret_cast<__m128i*>(j_.am + oh * j_.y_row + m),
                               _mm_packus_epi16(_mm256_castsi256_si128(code), _mm256_extracti128_si256(code, 1)));
            }
            return true;
          });
      if (m == hi) break;
    }
  }

  // the three taps of `row` for the vector's windows, whose first starts at cell s (-1: the padding; cells
  // [max(s, 0), s + 33) read): the maximum's key, bits and code (0-2)
  HWY_INLINE Max three(const uint16_t* row, int64_t s) const {
    const __m256i low = _mm256_set1_epi32(0xFFFF);
    auto at = [](const uint16_t* q) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q)); };
    __m256i v0, v1, v2, left = _mm256_setzero_si256();
    if (s < 0) {  // taps 1 and 2 the pairs from cell 0; tap 0 the high halves of the pairs one lane up
      const __m256i a = at(row), b = at(row + 16);
      const __m256i up = _mm256_permutevar8x32_epi32(a, _mm256_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6));
      v0 = _mm256_packus_epi32(_mm256_srli_epi32(up, 16), _mm256_srli_epi32(at(row + 14), 16));
      v1 = _mm256_packus_epi32(_mm256_and_si256(a, low), _mm256_and_si256(b, low));
      v2 = _mm256_packus_epi32(_mm256_srli_epi32(a, 16), _mm256_srli_epi32(b, 16));
      left = _mm256_setr_epi16(-1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);  // window 0: tap 1 first
    } else {
      const uint16_t* p = row + s;
      const __m256i a = at(p), b = at(p + 16), a2 = at(p + 2), b2 = at(p + 17);
      v0 = _mm256_packus_epi32(_mm256_and_si256(a, low), _mm256_and_si256(b, low));
      v1 = _mm256_packus_epi32(_mm256_srli_epi32(a, 16), _mm256_srli_epi32(b, 16));
      v2 = _mm256_packus_epi32(_mm256_and_si256(a2, low), _mm256_srli_epi32(b2, 16));
    }
    const __m256i k0 = half_key<S>(v0), k1 = half_key<S>(v1), k2 = half_key<S>(v2);
    const __m256i take1 = _mm256_or_si256(half_key_replaces<S>(k1, k0), left);
    Max m{_mm256_blendv_epi8(k0, k1, take1), _mm256_blendv_epi8(v0, v1, take1),
          _mm256_and_si256(take1, _mm256_set1_epi16(1))};
    const __m256i take2 = half_key_replaces<S>(k2, m.key);
    m.key = _mm256_blendv_epi8(m.key, k2, take2), m.bits = _mm256_blendv_epi8(m.bits, v2, take2);
    m.code = _mm256_blendv_epi8(m.code, _mm256_set1_epi16(2), take2);
    return m;
  }

  const K3S2ForwardJob& j_;
};
#endif

template <class S>
bool k3s2_forward(const K3S2ForwardJob& j) {
#if HWY_TARGET == HWY_SCALAR
  (void)j;
  return false;
#else
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if constexpr (kHalf<S>) {
    HalfPlane<S>(j).run();
    return true;
  }
#endif
  using C = compute_t<S>;
  const hn::ScalableTag<C> d;
  const hn::RebindToSigned<decltype(d)> di;
  using V = hn::Vec<decltype(d)>;
  using VI = hn::Vec<decltype(di)>;
  using TI = hn::TFromD<decltype(di)>;
  const int64_t N = int64_t(hn::Lanes(d)), H = j.height, W = j.width, OW = j.out_w, pw = j.pad_w;
  const S* x = static_cast<const S*>(j.x);
  S* y = static_cast<S*>(j.y);
  constexpr int64_t kAhead = 4;
  C* keep = static_cast<C*>(j.row_max);
  TI* keep_code = static_cast<TI*>(j.row_code);
  // vectors of outputs [m, m + N), s = 2m - pw: one pair load of cells [s, s + 2N) gives taps 0 and 1, tap 2 is
  // tap 0 one lane on, and the last lane's is cell s + 2N (absent past the row). At the left edge (s = -1) the
  // pairs load from cell 0: taps 1 and 2, tap 0 one lane back, absent in lane 0, whose scan starts at tap 1.
  // Nothing is read outside the row. The last vector overlaps the one before (the same outputs, the same bits);
  // outputs past it (a last window with fewer than two cells) one at a time.
  const int64_t hi = std::min(OW - N, (W + pw) / 2 - N);
  const bool vectors = hi >= 0 && 2 * N <= W;
  const VI lane = hn::Iota(di, 0);
  const auto last_lane = hn::Eq(lane, hn::Set(di, TI(N - 1))), lane0 = hn::Eq(lane, hn::Zero(di));
  const auto down = hn::IndicesFromVec(d, hn::Min(hn::Add(lane, hn::Set(di, TI(1))), hn::Set(di, TI(N - 1))));
  const auto up = hn::IndicesFromVec(d, hn::Max(hn::Sub(lane, hn::Set(di, TI(1))), hn::Zero(di)));
  const hn::CappedTag<C, 1> d1;
  // where v is greater than the maximum so far, or NaN, it and its code replace them
  // (lanes outside `in` keep theirs: a tap past the row)
  const auto all = hn::Eq(lane, lane);
  auto take = [&](V v, VI c, V& best, VI& code, decltype(all) in) {
    const auto replace = hn::AndNot(stays(d, v, best), hn::RebindMask(d, in));
    best = hn::IfThenElse(replace, v, best);
    code = hn::IfThenElse(hn::RebindMask(di, replace), c, code);
  };
  auto row_max = [&](const S* row, int64_t m, V& best, VI& code) {
    const int64_t s = 2 * m - pw;
    V t0, t1, t2;
    if (s < 0) {
      load_pairs(d, row, t1, t2);
      t0 = hn::IfThenElse(hn::RebindMask(d, lane0), t1, hn::TableLookupLanes(t2, up));
      code = hn::IfThenElse(lane0, hn::Set(di, TI(1)), hn::Zero(di));
    } else {
      load_pairs(d, row + s, t0, t1);
      code = hn::Zero(di);
      best = t0;
      take(t1, hn::Set(di, TI(1)), best, code, all);
      t2 = hn::TableLookupLanes(t0, down);
      const bool inside = s + 2 * N < W;  // else the last lane's tap 2 lies past the row: that lane leaves it out
      if (inside)
        t2 = hn::IfThenElse(hn::RebindMask(d, last_lane), hn::Set(d, hn::GetLane(load_lanes<kUnit>(d1, row + s + 2 * N, 0))), t2);
      take(t2, hn::Set(di, TI(2)), best, code, inside ? all : hn::Not(last_lane));
      return;
    }
    best = t0;
    take(t1, hn::Set(di, TI(1)), best, code, all);
    take(t2, hn::Set(di, TI(2)), best, code, all);
  };
  [[maybe_unused]] const hn::Rebind<uint8_t, decltype(di)> d8;
  for (int64_t oh = 0; oh < j.out_h; ++oh) {
    const int64_t r0 = 2 * oh - j.pad_h;
    // the two input rows a few output rows ahead, on into the next plane (the hardware prefetcher, stopping at
    // each page, left the loads waiting: 2x slower)
    for (int64_t r = r0 + 2 * kAhead + 1; r < r0 + 2 * kAhead + 3; ++r) {
      const S* row = r < H ? x + r * j.x_row : j.x_next ? static_cast<const S*>(j.x_next) + (r - H) * j.x_row : nullptr;
      if (row && r - H < H)
        for (int64_t b = 0; b < W * int64_t(sizeof(S)); b += 64) prefetch(reinterpret_cast<const char*>(row) + b);
    }
    if (!vectors) {
      for (int64_t ow = 0; ow < OW; ++ow) k3s2_output<S>(j, oh, ow);
      continue;
    }
    for (int64_t ow = hi + N; ow < OW; ++ow) k3s2_output<S>(j, oh, ow);
    for (int64_t m = 0;; m = std::min(m + N, hi)) {
      V best = hn::Zero(d);
      VI code = hn::Zero(di);
      bool first = true;
      for (int jh = 0; jh < 3; ++jh) {
        const int64_t r = r0 + jh;
        if (r < 0 || r >= H) continue;
        V v;
        VI c;
        // the input row the previous output row ended on, from the half of the buffers it wrote (two halves: the
        // last vector overlaps the one before, which must not see this row's results)
        const int64_t from = ((oh + 1) & 1) * (OW + N), to = (oh & 1) * (OW + N);
        if (jh == 0 && oh > 0) {
          v = hn::LoadU(d, keep + from + m), c = hn::LoadU(di, keep_code + from + m);
        } else {
          row_max(x + r * j.x_row, m, v, c);
          if (jh == 2) hn::StoreU(v, d, keep + to + m), hn::StoreU(c, di, keep_code + to + m);
        }
        c = hn::Add(c, hn::Set(di, TI(3 * jh)));
        if (first) best = v, code = c, first = false;
        else take(v, c, best, code, all);
      }
      store_values(d, best, y + oh * j.y_row + m);
      if (j.am) {
        if constexpr (sizeof(TI) == 4) {
          hn::StoreU(hn::DemoteTo(d8, code), d8, j.am + oh * j.y_row + m);
        } else {  // (no demotion of 64-bit lanes to bytes here)
          HWY_ALIGN TI lanes[hn::MaxLanes(di)];
          hn::Store(code, di, lanes);
          for (int64_t i = 0; i < N; ++i) j.am[oh * j.y_row + m + i] = uint8_t(lanes[i]);
        }
      }
      if (m == hi) break;
    }
  }
  return true;
#endif
}

bool K3S2MaxForwardF32(const K3S2ForwardJob& j) { return k3s2_forward<float>(j); }
bool K3S2MaxForwardF64(const K3S2ForwardJob& j) { return k3s2_forward<double>(j); }
bool K3S2MaxForwardBF16(const K3S2ForwardJob& j) { return k3s2_forward<bfloat16>(j); }
bool K3S2MaxForwardF16(const K3S2ForwardJob& j) { return k3s2_forward<float16>(j); }

}  // namespace poolkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolkit::cpu {
HWY_EXPORT(K3S2MaxForwardF32);
HWY_EXPORT(K3S2MaxForwardF64);
HWY_EXPORT(K3S2MaxForwardBF16);
HWY_EXPORT(K3S2MaxForwardF16);
bool k3s2_max_forward_f32(const K3S2ForwardJob& j) { return HWY_DYNAMIC_DISPATCH(K3S2MaxForwardF32)(j); }
bool k3s2_max_forward_f64(const K3S2ForwardJob& j) { return HWY_DYNAMIC_DISPATCH(K3S2MaxForwardF64)(j); }
bool k3s2_max_forward_bf16(const K3S2ForwardJob& j) { return HWY_DYNAMIC_DISPATCH(K3S2MaxForwardBF16)(j); }
bool k3s2_max_forward_f16(const K3S2ForwardJob& j) { return HWY_DYNAMIC_DISPATCH(K3S2MaxForwardF16)(j); }
}  // namespace poolkit::cpu
#endif
