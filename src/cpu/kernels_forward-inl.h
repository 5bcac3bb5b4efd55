// The forward kernels: max (with the argmax in any of its forms) and average over rows of outputs, each output
// a window of taps, vectorised along the lanes of a row (see Lanes in kernels.hpp). Instantiated per dtype by
// kernels_forward.cpp (float32, float64) and kernels_forward_half.cpp (bfloat16, float16), which compile in
// parallel. Included once per Highway target (after foreach_target.h), hence the toggling guard.
#if defined(POOLKIT_CPU_KERNELS_FORWARD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef POOLKIT_CPU_KERNELS_FORWARD_INL_H_
#undef POOLKIT_CPU_KERNELS_FORWARD_INL_H_
#else
#define POOLKIT_CPU_KERNELS_FORWARD_INL_H_
#endif

#include <algorithm>
#include <cstdlib>

#include <hwy/highway.h>

#include "src/cpu/cpu_features.hpp"
#include "src/cpu/kernels-inl.h"
#include "src/cpu/prefetch.hpp"

HWY_BEFORE_NAMESPACE();
namespace poolkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Stores the argmax lanes [k, k + N): narrowed to the local form, or widened flat indices plus their lane part
// (by streaming stores with stream64: int64 rows of whole aligned lines).
template <class D, class VI>
HWY_INLINE void store_argmax(D d, const ForwardJob& j, VI idx, VI lane_flat, int64_t k, int64_t row_code,
                             bool stream64) {
  using T = hn::TFromD<D>;
  using TI = hwy::MakeSigned<T>;
  const hn::RebindToSigned<D> di;
  const int64_t N = int64_t(hn::Lanes(d));
  if (j.form == IndexForm::I64) {
    idx = hn::Add(idx, hn::Add(lane_flat, hn::Set(di, TI((k / j.lanes.group) * j.flat_step + row_code))));
    int64_t* am = static_cast<int64_t*>(j.argmax) + k;
    if constexpr (sizeof(T) == 8) {
      put(di, idx, am, stream64);
      return;
    }
#if HWY_TARGET != HWY_SCALAR
    if constexpr (sizeof(T) == 4) {
      const hn::Half<decltype(di)> dh;
      const hn::Repartition<int64_t, decltype(di)> d64;
      put(d64, hn::PromoteTo(d64, hn::LowerHalf(dh, idx)), am, stream64);
      put(d64, hn::PromoteTo(d64, hn::UpperHalf(dh, idx)), am + N / 2, stream64);
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

#if HWY_TARGET <= HWY_AVX2
// A job of one output a row over many rows (a row's outputs whose windows the input's edges cut go one per job;
// one at a time, they had cost overlap-avg's channels-first forward 40% of its time for 2 of its 56 columns):
// `f(x, y, xi, yi, r0)` for each N rows from r0 (the last N overlapping the ones before: the same bits again),
// x and y those rows' first, xi / yi the rows' offsets in elements to gather and scatter with. False, nothing
// done, for any other job.
template <class S, class F>
HWY_INLINE bool over_rows(const ForwardJob& j, F&& f) {
  const hn::ScalableTag<S> d;
  const hn::RebindToSigned<decltype(d)> di;
  using TI = hn::TFromD<decltype(di)>;
  const int64_t N = int64_t(hn::Lanes(d)), xs = j.x_row_step, ys = j.y_row_step;
  if (j.lanes.count != 1 || j.rows < N || xs <= 0 || ys <= 0 || N * std::max(xs, ys) > INT32_MAX) return false;
  const auto lane = hn::Iota(di, 0);
  const auto xi = hn::Mul(lane, hn::Set(di, TI(xs))), yi = hn::Mul(lane, hn::Set(di, TI(ys)));
  for (int64_t r = 0; r < j.rows; r += N) {
    const int64_t r0 = std::min(r, j.rows - N);
    f(static_cast<const S*>(j.x) + r0 * xs, static_cast<S*>(j.y) + r0 * ys, xi, yi, r0);
  }
  return true;
}
#endif

// Lanes [0, vec_end) of a forward row by `vectors(u, k, end, at)` (u vectors from lane k, none past end; for
// one vector, `at`: where load_lanes<M> reads lane k); returns the first lane left to the scalar loop. With
// `four` (long windows; fewer taps ran as fast one vector at a time, or faster, but in max_rows' float
// channels-last groups of 4 taps), chains go four at a time where four different vectors remain: rows of
// channels-first planes end with four overlapping the ones before, but a row of one to three
// vectors (one output's channels) goes one vector at a time instead of computing a vector again; channels-last
// groups (whole vectors) end one vector at a time, with kAtByAddition their `at` kept by additions output after
// output instead of a division per vector (see max_rows).
template <int M, bool kAtByAddition = false, class F>
HWY_INLINE int64_t walk_vectors(const Lanes& l, int64_t N, int64_t vec_end, bool four, F&& vectors) {
  if (vec_end < N) return 0;
  int64_t k = 0;
  if (four)
    for (; M == kGroup ? k + 4 * N <= vec_end : k + 3 * N < vec_end; k += 4 * N)
      vectors(std::integral_constant<int, 4>(), k, vec_end, 0);
  if constexpr (M == kGroup && kAtByAddition) {
    int64_t at = load_at<M>(l, k);
    for (int64_t edge = (k / l.group + 1) * l.group; k < vec_end; edge += l.group, at += l.lane_stride - l.group)
      for (; k < edge && k < vec_end; k += N, at += N) vectors(std::integral_constant<int, 1>(), k, vec_end, at);
  } else {
    for (; k < vec_end; k += N) vectors(std::integral_constant<int, 1>(), k, vec_end, load_at<M>(l, k));
  }
  return vec_end;
}

// Asks for the input a few rows ahead of a forward job's rows: the rows of one call interleave several input
// streams (one per tap row), too many for the hardware prefetcher to run far enough ahead on its own. One
// request per line of the row's input ranges (the taps' ranges merged) that the row before did not ask for. Long
// rows (channels-last) are left to the hardware prefetcher, except for 8-bit types: asking for them cost 3x3
// windows 1.3-1.5x (resnet-stem max, overlap-avg average; Zen 4), float32 and 16-bit ones 1.1-1.3x on Zen 5,
// where 8-bit ones gained 1.2-1.5x (resnet-stem NHWC); and where windows do not overlap (pool3d's 2x2x2, whose
// rows ask for 32 KiB each, four rows ahead: more than the first-level cache holds) pool3d's channels-last float32
// forward ran 1.4x faster without them on an Intel Xeon (session 33), vgg's and seed's no slower. Rows count as
// long from 1 KiB: 16 and 32 channels-last channels of 3-D windows (rows of 2 KiB) ran 1.3-1.5x faster without
// them there (session 35), 8 channels of 2-D ones as fast.
template <class S>
class RowPrefetch {
 public:
  explicit RowPrefetch(const ForwardJob& j) : j_(j) {
    if (j.rows <= kMinAhead && j.next_rows == 0) return;  // (small jobs: nothing to ask for)
    const Lanes& l = j.lanes;
    const int64_t es = int64_t(sizeof(S)), span = es * ((l.count - 1) / l.group * l.lane_stride + l.group);
    if (span >= kLongRow && sizeof(S) > 1) return;  // (long rows)
    Range taps[kMaxTaps];
    int n = 0;
    for (int t = 0; t < j.ntaps && n < kMaxTaps; ++t) taps[n++] = {j.tap_offset[t] * es, j.tap_offset[t] * es + span};
    std::sort(taps, taps + n, [](const Range& a, const Range& b) { return a.lo < b.lo; });
    int m = 0;  // merged in place (ranges within a line of each other join)
    for (int i = 0; i < n; ++i) {
      if (m > 0 && taps[i].lo <= taps[m - 1].hi + 64) taps[m - 1].hi = std::max(taps[m - 1].hi, taps[i].hi);
      else taps[m++] = taps[i];
    }
    // less the row before's ranges (the same, step bytes lower); both lists sorted and disjoint
    const int64_t step = j.x_row_step * es;
    for (int i = 0; i < m && parts_ < kMaxTaps; ++i) {
      int64_t lo = taps[i].lo;
      for (int k = 0; k < m && step > 0 && lo < taps[i].hi; ++k) {
        const int64_t plo = taps[k].lo - step, phi = taps[k].hi - step;
        if (phi <= lo || plo >= taps[i].hi) continue;
        if (plo > lo && parts_ < kMaxTaps) part_[parts_++] = {lo, plo};
        lo = std::max(lo, phi);
      }
      if (lo < taps[i].hi && parts_ < kMaxTaps) part_[parts_++] = {lo, taps[i].hi};
    }
    int64_t fresh = 0;
    for (int i = 0; i < parts_; ++i) fresh += part_[i].hi - part_[i].lo;
    ahead_ = int(std::clamp<int64_t>(kAheadBytes / std::max<int64_t>(1, fresh), kMinAhead, kMaxAhead));
  }
  void operator()(int64_t row) const {
    const int64_t es = int64_t(sizeof(S)), to = row + ahead_;
    if (to >= j_.rows && (j_.next_rows == 0 || to >= j_.rows + ahead_)) return;
    const char* x = static_cast<const char*>(j_.x) +
                    (to < j_.rows ? to * j_.x_row_step : j_.next_rows + (to - j_.rows) * j_.x_row_step) * es;
    for (int r = 0; r < parts_; ++r) {
      const char* end = x + part_[r].hi;  // (from the first line's start: every line the range touches)
      for (const char* p = x + part_[r].lo - (reinterpret_cast<uintptr_t>(x + part_[r].lo) & 63); p < end; p += 64)
        far_ ? prefetch_far(p) : prefetch(p);
    }
  }

 private:
  struct Range {
    int64_t lo, hi;  // bytes from the row's input
  };
  // rows ahead: as many as ask for kAheadBytes, within [kMinAhead, kMaxAhead] (short rows of few streams, as
  // pool3d's channels-first 16 outputs of 4 input rows, ran 1.05-1.10x faster 8 rows ahead than 4; long rows
  // had lost by asking 10 rows ahead)
  static constexpr int kMinAhead = 4, kMaxAhead = 16, kMaxTaps = 32;
  static constexpr int64_t kAheadBytes = 4096;
  static constexpr int64_t kLongRow = 1024;  // bytes
  const ForwardJob& j_;
  Range part_[kMaxTaps];  // (not zeroed: jobs of one short row are many, and parts_ says what is set)
  int parts_ = 0, ahead_ = kMinAhead;
  const bool far_ = !std::is_integral_v<S> && cpu_row_prefetch_far;  // (see cpu_features.hpp)
};

// What streaming stores ask of a job besides where its values' rows start: j.stream, rows of whole vectors, and
// argmax rows whole and aligned (index_bytes per lane; 0: the argmax by ordinary stores).
template <class D>
bool stream_rows(D d, const ForwardJob& j, int64_t index_bytes) {
  const int64_t N = int64_t(hn::Lanes(d)), n = j.lanes.count;
  return j.stream && j.lanes.vector_count == n &&
         (index_bytes == 0 || whole_aligned_rows(j.argmax, j.y_row_step, n, N, index_bytes));
}
// Whether a job's outputs may go out by streaming stores: stream_rows, and every vector store of its values whole
// and aligned (whole_aligned_rows).
template <class S, class D>
bool streams(D d, const ForwardJob& j, int64_t index_bytes) {
  const int64_t N = int64_t(hn::Lanes(d));
  return stream_rows(d, j, index_bytes) && whole_aligned_rows(j.y, j.y_row_step, j.lanes.count, N, int64_t(sizeof(S)));
}
// Whether a job's float32 outputs whose rows start inside a line (an array of malloc's), the rest as stream_rows
// asks, go past the cache through a LineStreamer.
template <class S, class D>
bool realigns(D d, const ForwardJob& j, int64_t index_bytes) {
  if constexpr (!LineStreamer::kOn || sizeof(S) != 4 || kHalf<S> || hn::MaxLanes(D()) != 16) {
    (void)d, (void)j, (void)index_bytes;
    return false;
  } else {
    const int64_t n = j.lanes.count;
    return stream_rows(d, j, index_bytes) && n % 16 == 0 && reinterpret_cast<uintptr_t>(j.y) % 4 == 0 &&
           !whole_aligned_rows(j.y, j.y_row_step, n, 16, 4);
  }
}
// v to y: through `lines` where realign (see realigns), else as put_values.
template <class D, class S>
HWY_INLINE void put_row_values(D d, hn::Vec<D> v, S* y, bool stream, bool realign, LineStreamer& lines) {
  if constexpr (LineStreamer::kOn && sizeof(S) == 4 && hn::MaxLanes(D()) == 16) {
    if (realign) return lines.put(y, hn::BitCast(hn::RebindToUnsigned<D>(), v).raw);
  }
  (void)realign, (void)lines;
  put_values(d, v, y, stream);
}

// How max_rows tracks the argmax: not at all, in lanes of the values' width (any form), or in byte lanes (the
// uint8 form, float lanes, AVX-512: the compare's mask serves them as it is, and a blend of 16 bytes costs half
// of one of 16 words on CPUs that split 512-bit operations).
enum IndexLanes { kNoIndex, kWideIndex, kByteIndex };
#if HWY_TARGET <= HWY_AVX3
template <class S> constexpr bool kByteIndexFits = sizeof(compute_t<S>) == 4;
#else
template <class S> constexpr bool kByteIndexFits = false;
#endif

// One tap of U vectors (lanes at `at` from xt): where its value is greater than the maximum so far, or NaN, it
// becomes the maximum and (with an index) its code the argmax. Force-inlined: as a lambda, the vectors went
// through the stack.
// Without an index, the maximum's chain is one instruction a tap where x86's max gives the reference's choice
// (MAXPS(val, m) is val only where val > m: ties keep the first, a NaN m stays), and NaN taps go to `nan` (the
// last one; the caller takes it where there was one) off that chain: a compare and a blend on the chain had
// made 8-tap windows of channels-last groups, one vector at a time, wait on the latency of each tap.
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
constexpr bool kMaxChain = true;
#else
constexpr bool kMaxChain = false;
#endif
template <int kIdx, int M, int U, class IdxD, class D, class S>
HWY_INLINE void max_tap(D d, const S* xt, const int64_t* at, hn::Vec<IdxD> code, hn::Vec<D>* m, hn::Vec<IdxD>* idx,
                        hn::Vec<D>* nan) {
  const IdxD didx;
  for (int v = 0; v < U; ++v) {
    const auto val = load_lanes<kLoadAs<M>>(d, xt, at[v]);
    if constexpr (kIdx == kNoIndex && kMaxChain) {
      m[v] = hn::Max(val, m[v]);
      nan[v] = hn::IfThenElse(hn::IsNaN(val), val, nan[v]);
      continue;
    }
    const auto keep = stays(d, val, m[v]);
    m[v] = hn::IfThenElse(keep, m[v], val);
    if constexpr (kIdx == kByteIndex)  // (the float compare's mask serves the byte lanes as it is)
      idx[v] = hn::IfThenElse(hn::Mask<IdxD>{keep.raw}, idx[v], code);
    else if constexpr (kIdx == kWideIndex)
      idx[v] = hn::IfThenElse(hn::RebindMask(didx, keep), idx[v], code);
  }
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// The window of half_group_max where every tap is non-negative and no NaN (bits at most +infinity's, as after a
// ReLU): there the bits, compared as unsigned integers, order as the values, equal values have equal bits and
// no NaN needs quieting, so one unsigned maximum a tap (no index) or one compare (the first greater tap, with
// codes) replaces the keys' five to seven operations. bits become the bits to store; false where a tap was
// negative or NaN (the maximum's bits are then above +infinity's), the window left to the keys.
template <class S, int kIdx, int kTaps>
HWY_INLINE bool half_group_max_nonnegative(const ForwardJob& j, const uint16_t* p, __m512i bits[2], __m256i code[2]) {
  for (int h = 0; h < 2; ++h)
    bits[h] = _mm512_loadu_si512(p + j.tap_offset[0] + 32 * h), code[h] = _mm256_set1_epi8(char(j.tap_code[0]));
  const int ntaps = kTaps > 0 ? kTaps : j.ntaps;
#pragma GCC unroll 9
  for (int t = 1; t < ntaps; ++t)
    for (int h = 0; h < 2; ++h) {
      const __m512i v = _mm512_loadu_si512(p + j.tap_offset[t] + 32 * h);
      if constexpr (kIdx == kByteIndex) {
        const __mmask32 take = _mm512_cmpgt_epu16_mask(v, bits[h]);
        bits[h] = _mm512_mask_mov_epi16(bits[h], take, v);
        code[h] = _mm256_mask_mov_epi8(code[h], take, _mm256_set1_epi8(char(j.tap_code[t])));
      } else {
        bits[h] = _mm512_max_epu16(bits[h], v);
      }
    }
  const __m512i inf = _mm512_set1_epi16(short(kHalfInf<S>));
  return (_mm512_cmpgt_epu16_mask(bits[0], inf) | _mm512_cmpgt_epu16_mask(bits[1], inf)) == 0;
}

// 64 channels of a 16-bit channels-last window from x (its taps at j.tap_offset), two vectors of 32 by integer keys
// (half_key, kernels-inl.h): the same choice as max_tap's, the chosen cells' own bits stored (a NaN quiet), their
// codes (kByteIndex) to am. Against max_tap's widening to float32, 16 lanes at a time: bench/RESULTS.md, session 29.
// Non-negative windows go the shorter way of half_group_max_nonnegative first (resnet-stem's channels-last forward
// 1.10-1.18x faster so, Zen 4), unless `misses` (the caller's, over its windows) says a recent one was not: then
// the next 16 go straight to the keys (inputs of either sign as fast as without the shorter way).
template <class S, int kIdx, int kTaps>
HWY_INLINE void half_group_max(const ForwardJob& j, const S* x, S* y, uint8_t* am, bool stream, int& misses) {
  const uint16_t* p = reinterpret_cast<const uint16_t*>(x);
  __m512i bits[2], out[2];
  __m256i code[2];
  bool keys = true;
  if (misses > 0)
    --misses;
  else if (half_group_max_nonnegative<S, kIdx, kTaps>(j, p, bits, code))
    out[0] = bits[0], out[1] = bits[1], keys = false;
  else
    misses = 16;
  if (keys) {
    __m512i best[2];
    for (int h = 0; h < 2; ++h) {
      bits[h] = _mm512_loadu_si512(p + j.tap_offset[0] + 32 * h), best[h] = half_key<S>(bits[h]);
      code[h] = _mm256_set1_epi8(char(j.tap_code[0]));
    }
    const int ntaps = kTaps > 0 ? kTaps : j.ntaps;
#pragma GCC unroll 9
    for (int t = 1; t < ntaps; ++t)
      for (int h = 0; h < 2; ++h) {
        const __m512i v = _mm512_loadu_si512(p + j.tap_offset[t] + 32 * h), key = half_key<S>(v);
        const __mmask32 take = half_key_replaces<S>(key, best[h]);
        best[h] = _mm512_mask_mov_epi16(best[h], take, key), bits[h] = _mm512_mask_mov_epi16(bits[h], take, v);
        if constexpr (kIdx == kByteIndex)
          code[h] = _mm256_mask_mov_epi8(code[h], take, _mm256_set1_epi8(char(j.tap_code[t])));
      }
    for (int h = 0; h < 2; ++h) out[h] = half_quiet<S>(bits[h], best[h]);
  }
  // past the cache where the job streams and the outputs start on lines (their halves then do too): resnet-stem's
  // byte-argmax forward 1.19x (bfloat16) / 1.16x (float16) faster so on Zen 4, its lines no longer read before
  // they are written (on an Intel Xeon, session 29, streamed stores had run no faster, less steady)
  const bool nt = stream && (reinterpret_cast<uintptr_t>(y) & 63) == 0 && (reinterpret_cast<uintptr_t>(am) & 31) == 0;
  for (int h = 0; h < 2; ++h) {
    if (nt) _mm512_stream_si512(reinterpret_cast<__m512i*>(y + 32 * h), out[h]);
    else _mm512_storeu_si512(y + 32 * h, out[h]);
    if constexpr (kIdx == kByteIndex) {
      __m256i* a = reinterpret_cast<__m256i*>(am + 32 * h);
      if (nt) _mm256_stream_si256(a, code[h]);
      else _mm256_storeu_si256(a, code[h]);
    }
  }
}
#endif

// kTaps > 0: the window's tap count known at compile time (2x2, 3x3, 2x2x2 windows), so the tap loop unrolls and
// its offsets stay in registers.
template <class S, int kIdx, int M, int kTaps>
HWY_NOINLINE void max_rows(const ForwardJob& j) {
  using T = compute_t<S>;
  constexpr bool kIndex = kIdx != kNoIndex;
  const hn::ScalableTag<T> d;
  using TI = hwy::MakeSigned<T>;
  const hn::RebindToSigned<decltype(d)> di;
  const hn::Rebind<uint8_t, decltype(d)> db;
  using IdxD = std::conditional_t<kIdx == kByteIndex, decltype(db), decltype(di)>;
  using TIdx = hn::TFromD<IdxD>;
  const IdxD didx;
  const int64_t N = int64_t(hn::Lanes(d));
  const Lanes& l = j.lanes;
  // the lane part of flat indices: (lane / group) * flat_step
  auto lane_flat = M == kGroup ? hn::Zero(di)  // one output per vector (other modes: groups of 1, 2, 4 or 8)
                   : hn::Mul(hn::ShiftRightSame(hn::Iota(di, 0), hwy::FloorLog2(uint64_t(l.group))),
                             hn::Set(di, TI(j.flat_step)));
  const int64_t vec_end = M == kScalarOnly ? 0 : l.vector_count;
  const int64_t ai = form_bytes(j.form);
#if HWY_TARGET <= HWY_AVX2
  // one output a row: vectors over the rows, the same compares in the same tap order, the argmax lane by lane
  if constexpr (!kHalf<S>) {
    HWY_ALIGN TI best_tap[hn::MaxLanes(di)];
    const bool done = over_rows<S>(j, [&](const S* x, S* y, auto xi, auto yi, int64_t r0) {
      auto m = hn::GatherIndex(d, x + j.tap_offset[0], xi);
      auto best = hn::Zero(di);
      for (int t = 1; t < j.ntaps; ++t) {
        const auto v = hn::GatherIndex(d, x + j.tap_offset[t], xi);
        const auto keep = stays(d, v, m);
        m = hn::IfThenElse(keep, m, v);
        best = hn::IfThenElse(hn::RebindMask(di, keep), best, hn::Set(di, TI(t)));
      }
      hn::ScatterIndex(m, d, y, yi);
      if constexpr (kIndex) {
        hn::Store(best, di, best_tap);
        for (int64_t i = 0; i < N; ++i) {
          int64_t code = j.tap_code[best_tap[i]];
          if (j.form == IndexForm::I64) code += (j.code_row_first + r0 + i) % j.code_period * j.code_row_step;
          store_index(j.form, static_cast<char*>(j.argmax) + (r0 + i) * j.y_row_step * ai, 0, code);
        }
      }
    });
    if (done) return;
  }
#endif
  ForwardJob r = j;
  const RowPrefetch<S> ahead(j);
  const bool group_ahead = cpu_group_prefetch;  // (see cpu_features.hpp)
  const bool realign = realigns<S>(d, j, kIdx == kByteIndex ? 1 : 0);
  const bool stream = realign || streams<S>(d, j, kIdx == kByteIndex ? 1 : 0);
  LineStreamer lines;
  [[maybe_unused]] int misses = 0;  // (half_group_max's)
  // int64 indices (twice the values' bytes or more) past the cache too, where their rows are whole aligned lines
  // and windows of up to 8 taps go one vector at a time: int64 forwards of seed 1.1-1.2x faster, vgg and pool3d
  // channels-last 1.07-1.1x; resnet-stem's channels-last (9 taps, four vectors at a time) 1.1x slower with them
  [[maybe_unused]] const bool stream64 = kIdx == kWideIndex && stream && j.form == IndexForm::I64 &&
                                         j.ntaps <= 8 && whole_aligned_rows(j.argmax, j.y_row_step, l.count, 8, 8);
  int64_t period_row = j.code_row_first % j.code_period;  // (no division per row: a single output's row is short)
  for (int64_t row = 0; row < j.rows; ++row, period_row = period_row + 1 == j.code_period ? 0 : period_row + 1) {
    const S* x = static_cast<const S*>(j.x) + row * j.x_row_step;
    S* y = static_cast<S*>(j.y) + row * j.y_row_step;
    ahead(row);
    r.argmax = j.argmax ? static_cast<char*>(j.argmax) + row * j.y_row_step * ai : nullptr;
    const int64_t row_code = period_row * j.code_row_step;
    // float32 / float64 windows of 2 to 4 taps: their inputs' row pointers held in registers (read through j, they
    // were read again at every vector: the stores might alias them) and, in channels-last groups, each vector's
    // offset by additions (walk_vectors): vgg's channels-last forward without an index 1.3-1.4x faster with both,
    // 1.1x with the pointers alone, slower with the additions alone; 16-bit types and windows of more taps (their
    // registers taken by the vectors) ran slower with them.
    constexpr bool kHeld = kTaps > 0 && kTaps <= 4 && !kHalf<S>;
    const S* xt[kHeld ? kTaps : 1];
    if constexpr (kHeld)
      for (int t = 0; t < kTaps; ++t) xt[t] = x + j.tap_offset[t];
    // the byte index's tap codes as vectors, held likewise (byte stores may alias anything: read through j,
    // the codes and their pointer were loaded again at every vector; the wide index ran no faster with them held)
    auto code = [&](int t) { return hn::Set(didx, TIdx(j.tap_code[t])); };
    constexpr bool kHeldCode = kHeld && kIdx == kByteIndex;
    hn::Vec<IdxD> held_code[kHeldCode ? kTaps : 1];
    if constexpr (kHeldCode)
      for (int t = 0; t < kTaps; ++t) held_code[t] = code(t);
    // U vectors from lane k (see walk_vectors; overlapping lanes are recomputed to the same bits), their chains
    // of compares interleaved
    auto vectors = [&](auto u, int64_t k, int64_t end, int64_t at0) {
      constexpr int U = decltype(u)::value;
      int64_t lane[U], at[U];
      hn::Vec<decltype(d)> m[U], nan[U];
      hn::Vec<IdxD> idx[U];
      vector_starts(d, k, end, lane, U);
      for (int v = 0; v < U; ++v) lane[v] += k, at[v] = vector_at<M, U>(l, lane[v], at0);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
      // 16-bit channels-last pixels: 32 channels a vector, compared as integer keys, where the four are contiguous
      if constexpr (kHalf<S> && M == kGroup && U == 4 && kIdx != kWideIndex)
        if (lane[3] == lane[0] + 3 * N && at[3] == at[0] + 3 * N && at[1] == at[0] + N && at[2] == at[0] + 2 * N) {
          // each tap's lines asked for 2 KiB ahead, as float32's groups do (from memory: bfloat16 resnet-stem 1.15x
          // faster, float16 1.04x; the widening path had run slower with them)
          const int ntaps = kTaps > 0 ? kTaps : j.ntaps;
          for (int t = 0; t < ntaps; ++t)
            for (int v = 0; v < U; v += 2) prefetch(x + j.tap_offset[t] + at[v] + 2048 / int64_t(sizeof(S)));
          half_group_max<S, kIdx, kTaps>(j, x + at[0], y + lane[0],
                                         kIndex ? static_cast<uint8_t*>(r.argmax) + lane[0] : nullptr, stream,
                                         misses);
          return;
        }
#endif
      for (int v = 0; v < U; ++v) {
        // channels-last groups ask for each tap's input 2 KiB ahead of this vector (their jobs of a row or two get
        // no RowPrefetch, and the hardware's prefetcher alone fell well short of the memory's pace): float32
        // resnet-stem 1.25-1.4x faster, pool3d 1.13-1.26x, vgg with indices 1.03-1.13x (bench/RESULTS.md, session
        // 22, Zen 5); bfloat16 resnet-stem ran 1.15-1.3x slower with it; not on Zen 4 (cpu_group_prefetch)
        if constexpr (M == kGroup && !kHalf<S>) if (group_ahead) {
          const int ntaps = kTaps > 0 ? kTaps : j.ntaps;
          for (int t = 0; t < ntaps; ++t)
            prefetch((kHeld ? xt[t] : x + j.tap_offset[t]) + at[v] + 2048 / int64_t(sizeof(S)));
        }
        m[v] = load_lanes<kLoadAs<M>>(d, kHeld ? xt[0] : x + j.tap_offset[0], at[v]);
        idx[v] = kHeldCode ? held_code[0] : code(0);
        nan[v] = m[v];
      }
      // 16-bit: the taps unrolled whole (the loop had copied their vectors between registers each tap: 1.1x;
      // float32 ran as fast either way, and unrolled it tripled this file's compile time under the sanitizers)
      if constexpr (kTaps > 0 && kHalf<S>) {
#pragma GCC unroll 9
        for (int t = 1; t < kTaps; ++t) max_tap<kIdx, M, U, IdxD>(d, x + j.tap_offset[t], at, code(t), m, idx, nan);
      } else {
        const int ntaps = kTaps > 0 ? kTaps : j.ntaps;
        for (int t = 1; t < ntaps; ++t)
          max_tap<kIdx, M, U, IdxD>(d, kHeld ? xt[t] : x + j.tap_offset[t], at, kHeldCode ? held_code[t] : code(t),
                                    m, idx, nan);
      }
      if constexpr (kIdx == kNoIndex && kMaxChain)
        for (int v = 0; v < U; ++v) m[v] = hn::IfThenElse(hn::IsNaN(nan[v]), nan[v], m[v]);
      for (int v = 0; v < U; ++v) {
        put_row_values(d, m[v], y + lane[v], stream, realign, lines);
        // (the one-byte index streams only from four vectors, a whole line: one vector at a time, its line
        // fills over rows or outputs while a partial streaming store holds a fill buffer that reads need)
        if constexpr (kIdx == kByteIndex) put(db, idx[v], static_cast<uint8_t*>(r.argmax) + lane[v], stream && U == 4);
        else if constexpr (kIndex) store_argmax(d, r, idx[v], lane_flat, lane[v], row_code, stream64);
      }
    };
    // four vectors at a time for windows of over 8 taps and for the 2x2 windows of float channels-last groups
    // without a wide index: vgg's channels-last forward 1.08-1.12x faster without an index, 1.04-1.06x with the
    // uint8 argmax (in one process with oneDNN's); pool3d's 8 taps ran no faster so, int64 indices 1.04x slower
    // (bench/RESULTS.md, session 46)
    constexpr bool kFourOf4 = kTaps == 4 && M == kGroup && kIdx != kWideIndex && !kHalf<S>;
    int64_t k = walk_vectors<M, kHeld>(l, N, vec_end, j.ntaps > 8 || kFourOf4, vectors);
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
        const auto keep = stays(d1, v, m);
        m = hn::IfThenElse(keep, m, v);
        best = hn::IfThenElse(hn::RebindMask(di1, keep), best, hn::Set(di1, TI(t)));
      }
      store_values(d1, m, y + k);
      if constexpr (kIndex) {
        int64_t code = j.tap_code[hn::GetLane(best)];
        if (j.form == IndexForm::I64) code += (k / l.group) * j.flat_step + row_code;
        store_index(j.form, r.argmax, k, code);
      }
    }
  }
  lines.flush();
  if (stream) hwy::FlushStream();
}

template <class S, int M>
HWY_NOINLINE void avg_rows(const ForwardJob& j) {
  using T = compute_t<S>;
  const hn::ScalableTag<T> d;
  const int64_t N = int64_t(hn::Lanes(d));
  const Lanes& l = j.lanes;
  const T div = T(j.divisor);
  const int64_t vec_end = M == kScalarOnly ? 0 : l.vector_count;
#if HWY_TARGET <= HWY_AVX2
  // one output a row: vectors over the rows, the same taps added in the same order
  if constexpr (!kHalf<S>) {
    const bool done = over_rows<S>(j, [&](const S* x, S* y, auto xi, auto yi, int64_t) {
      auto sum = hn::Zero(d);
      for (int t = 0; t < j.ntaps; ++t) sum = hn::Add(sum, hn::GatherIndex(d, x + j.tap_offset[t], xi));
      hn::ScatterIndex(hn::Div(sum, hn::Set(d, div)), d, y, yi);
    });
    if (done) return;
  }
#endif
  const RowPrefetch<S> ahead(j);
  const bool realign = realigns<S>(d, j, 0);
  const bool stream = realign || streams<S>(d, j, 0);
  LineStreamer lines;
  for (int64_t row = 0; row < j.rows; ++row) {
    const S* x = static_cast<const S*>(j.x) + row * j.x_row_step;
    S* y = static_cast<S*>(j.y) + row * j.y_row_step;
    ahead(row);
    // as in max_rows, with chains of sums
    auto vectors = [&](auto u, int64_t k, int64_t end, int64_t at0) {
      constexpr int U = decltype(u)::value;
      int64_t lane[U], at[U];
      hn::Vec<decltype(d)> sum[U];
      vector_starts(d, k, end, lane, U);
      for (int v = 0; v < U; ++v) lane[v] += k, at[v] = vector_at<M, U>(l, lane[v], at0);
      for (int v = 0; v < U; ++v) sum[v] = hn::Zero(d);
      // channels-last groups ask for the last tap's input 4 KiB ahead (float32 overlap-avg, 3x3 stride 1: 1.5 ->
      // 0.7 ms in one process, calls in turn; every tap 2 KiB ahead, as max_rows asks, 1.1 ms: overlapping windows'
      // taps share their lines)
      if constexpr (M == kGroup && !kHalf<S>)
        for (int v = 0; v < U; ++v) prefetch(x + j.tap_offset[j.ntaps - 1] + at[v] + 4096 / int64_t(sizeof(S)));
      for (int t = 0; t < j.ntaps; ++t)
        for (int v = 0; v < U; ++v) sum[v] = hn::Add(sum[v], load_lanes<kLoadAs<M>>(d, x + j.tap_offset[t], at[v]));
      for (int v = 0; v < U; ++v) put_row_values(d, hn::Div(sum[v], hn::Set(d, div)), y + lane[v], stream, realign, lines);
    };
    int64_t k = walk_vectors<M>(l, N, vec_end, j.ntaps > 8, vectors);
    const hn::CappedTag<T, 1> d1;  // (the vector conversions of 16-bit types)
    for (; k < l.count; ++k) {
      const S* xk = x + lane_offset(l, k);
      auto sum = hn::Zero(d1);
      for (int t = 0; t < j.ntaps; ++t) sum = hn::Add(sum, load_lanes<kUnit>(d1, xk + j.tap_offset[t], 0));
      store_values(d1, hn::Div(sum, hn::Set(d1, div)), y + k);
    }
  }
  lines.flush();
  if (stream) hwy::FlushStream();
}

template <class T, int kIdx, int M>
void max_rows_for_taps(const ForwardJob& j) {
  if (j.ntaps == 4) return max_rows<T, kIdx, M, 4>(j);
  // (2x2x2, channels-last groups among them: pool3d's float32 forward from 1.13-1.16x to 1.07-1.10x of a plain
  // loop's time in one process with their per-tap prefetch off, as on Zen 4, alike with it on; bench/RESULTS.md,
  // session 46)
  if (j.ntaps == 8) return max_rows<T, kIdx, M, 8>(j);
  if (j.ntaps == 9) return max_rows<T, kIdx, M, 9>(j);
  return max_rows<T, kIdx, M, 0>(j);
}
template <class T, int kIdx>
void max_forward(const ForwardJob& j) {
  switch (load_mode<T>(j.lanes)) {
    case kUnit: return max_rows_for_taps<T, kIdx, kUnit>(j);
    case kPair: return max_rows_for_taps<T, kIdx, kPair>(j);
    case kPair64: return max_rows_for_taps<T, kIdx, kPair64>(j);
    case kGroup: return max_rows_for_taps<T, kIdx, kGroup>(j);
    case kBlocks4:
      if constexpr (kBlockLoads<T>) return max_rows_for_taps<T, kIdx, kBlocks4>(j);
      [[fallthrough]];
    case kBlocks8:
      if constexpr (kBlockLoads<T>) return max_rows_for_taps<T, kIdx, kBlocks8>(j);
      [[fallthrough]];
    default: return max_rows<T, kIdx, kScalarOnly, 0>(j);
  }
}
template <class T>
void avg_forward(const ForwardJob& j) {
  switch (load_mode<T>(j.lanes)) {
    case kUnit: return avg_rows<T, kUnit>(j);
    case kPair: return avg_rows<T, kPair>(j);
    case kPair64: return avg_rows<T, kPair64>(j);
    case kGroup: return avg_rows<T, kGroup>(j);
    case kBlocks4:
      if constexpr (kBlockLoads<T>) return avg_rows<T, kBlocks4>(j);
      [[fallthrough]];
    case kBlocks8:
      if constexpr (kBlockLoads<T>) return avg_rows<T, kBlocks8>(j);
      [[fallthrough]];
    default: return avg_rows<T, kScalarOnly>(j);
  }
}

template <class T>
void max_forward_by_index(const ForwardJob& j) {
  if (j.form == IndexForm::None) return max_forward<T, kNoIndex>(j);
  if constexpr (kByteIndexFits<T>)
    if (j.form == IndexForm::U8) return max_forward<T, kByteIndex>(j);
  max_forward<T, kWideIndex>(j);
}

}  // namespace poolkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // toggle guard
