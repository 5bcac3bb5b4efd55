// Max backward of 3x3 windows of stride 2 over a channels-first plane (see K3S2Job in kernels.hpp): each vector
// of output columns m makes dx columns 2m and 2m + 1 of two dx rows at once, every cell the sum from +0 of its
// (at most four) terms in increasing output order, as the reference sums them.
#include "kernels.hpp"
#include "cpu_features.hpp"

#include <algorithm>
#include <type_traits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/kernels_k3s2.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "src/cpu/kernels-inl.h"
#include "src/cpu/prefetch.hpp"

HWY_BEFORE_NAMESPACE();
namespace poolkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The lane type that moves cells of S: 16-bit types as their bits.
template <class S> using cell_t = std::conditional_t<sizeof(S) == 2, uint16_t, S>;

// dst[i] = src[i] for i < n by whole vectors (the last one overlapping the one before where n is not a multiple;
// 16-byte vectors where n is short), streamed past the cache with `stream` (dst aligned to the vector, n a
// multiple of it; the caller fences once after the last).
template <class S>
HWY_INLINE void copy_cells(const S* src, S* dst, int64_t n, bool stream) {
  using B = cell_t<S>;
  const B* from = reinterpret_cast<const B*>(src);
  B* to = reinterpret_cast<B*>(dst);
  const hn::ScalableTag<B> d;
  const int64_t L = int64_t(hn::Lanes(d));
  if (n >= L) {
    for (int64_t i = 0; i + L < n; i += L) put(d, hn::LoadU(d, from + i), to + i, stream);
    put(d, hn::LoadU(d, from + n - L), to + n - L, stream);
    return;
  }
  const hn::CappedTag<B, 16 / sizeof(B)> d16;
  const int64_t L16 = int64_t(hn::Lanes(d16));
  if (n < L16) {
    for (int64_t i = 0; i < n; ++i) to[i] = from[i];
    return;
  }
  for (int64_t i = 0; i + L16 < n; i += L16) hn::StoreU(hn::LoadU(d16, from + i), d16, to + i);
  hn::StoreU(hn::LoadU(d16, from + n - L16), d16, to + n - L16);
}

// dst[i] = the pattern `bits` for i in [0, n), by whole vectors that may write up to one vector past n.
template <class S>
HWY_INLINE void fill_cells(S* dst, typename std::type_identity<cell_t<S>>::type bits, int64_t n) {
  using B = cell_t<S>;
  const hn::ScalableTag<B> d;
  const int64_t L = int64_t(hn::Lanes(d));
  for (int64_t i = 0; i < n; i += L) hn::StoreU(hn::Set(d, bits), d, reinterpret_cast<B*>(dst) + i);
}

// The largest of p[0, n) in some lane, by 16-byte vectors where n allows (read from the source: loads of bytes
// just stored in other pieces wait for the stores); the caller reduces the lanes once a plane.
using CodeD = hn::CappedTag<uint8_t, 16>;
HWY_INLINE hn::Vec<CodeD> largest(const uint8_t* p, int64_t n) {
  const CodeD d;
  const int64_t L = int64_t(hn::Lanes(d));
  if (n < L) return hn::Set(d, *std::max_element(p, p + n));
  auto top = hn::LoadU(d, p + n - L);
  for (int64_t i = 0; i + L < n; i += L) top = hn::Max(top, hn::LoadU(d, p + i));
  return top;
}

// Copies the output rows into the padded rows (see K3S2Job), checking on the way that every code names a cell of
// its window: below 9 where the window is whole, and inside the plane where the plane's edge cuts it. The
// margins (zeros and no-codes around and beside the rows) are filled for a thread's first plane of a layout only:
// the copies never touch them.
template <class S>
bool pad_rows(const K3S2Job& j) {
  using C = compute_t<S>;
  const hn::ScalableTag<C> d;
  const hn::RebindToSigned<decltype(d)> di;
  using VI = hn::Vec<decltype(di)>;
  using TI = hn::TFromD<decltype(di)>;
  const int64_t N = int64_t(hn::Lanes(d)), OH = j.out_h, OW = j.out_w;
  S* g = static_cast<S*>(j.g);
  uint8_t* code = static_cast<uint8_t*>(j.code);
  const VI eight = hn::Set(di, 8), zero = hn::Zero(di);
  const VI last_col = hn::Set(di, TI(j.width - 1)), last_row = hn::Set(di, TI(j.height - 1));
  const bool margins = j.margins_filled;
  VI bad = zero;  // all ones in a lane that met a bad code
  auto top = hn::Zero(CodeD());  // the largest code of the rows whose windows are whole along H
  const VI two_lanes = hn::ShiftLeft<1>(hn::Iota(di, 0));
  for (int64_t r = 0; r < j.rows; ++r) {  // padded row r: output row r - 1
    S* gr = g + r * j.pitch;
    uint8_t* cr = code + r * j.pitch;
    const int64_t oh = r - 1;
    if (oh < 0 || oh >= OH) {
      if (!margins) fill_cells(gr, 0, j.pitch), fill_cells(cr, kK3S2NoCode, j.pitch);
      continue;
    }
    if (!margins) {  // (before the row: the vector store writes past the margin)
      fill_cells(gr, 0, 1), cr[0] = kK3S2NoCode;
      fill_cells(gr + OW + 1, 0, j.pitch - OW - 1), fill_cells(cr + OW + 1, kK3S2NoCode, j.pitch - OW - 1);
    }
    copy_cells(static_cast<const S*>(j.dy) + oh * j.dy_row, gr + 1, OW, false);
    const uint8_t* am = j.am + oh * j.am_row;
    copy_cells(am, cr + 1, OW, false);
    if (oh >= j.full_h[0] && oh < j.full_h[1]) {
      // windows whole along H: codes below 9, and those of the columns whose windows the edges cut, on a cell
      top = hn::Max(top, largest(am, OW));
      for (int64_t ow = 0; ow < OW; ++ow) {
        if (ow == j.full_w[0]) ow = std::max(ow, j.full_w[1]);
        if (ow >= OW) break;
        const int64_t col = 2 * ow - j.pad_w + cr[1 + ow] % 3;
        if (cr[1 + ow] > 8 || col < 0 || col >= j.width) return false;
      }
      continue;
    }
    for (int64_t ow = 0; ow < OW; ow += N) {
      // tap (jh, jw) = (c * 11 >> 5, c - 3 jh) for c < 9; its cell (2 oh - pad_h + jh, 2 ow - pad_w + jw)
      const VI c = load_argmax(di, IndexForm::U8, ow + N <= OW ? am : cr + 1, ow);  // (the source where it lasts)
      const VI jh = hn::ShiftRight<5>(hn::Add(hn::Add(hn::ShiftLeft<3>(c), hn::ShiftLeft<1>(c)), c));
      const VI jw = hn::Sub(c, hn::Add(hn::ShiftLeft<1>(jh), jh));
      const VI col = hn::Add(hn::Add(hn::Set(di, TI(2 * ow - j.pad_w)), two_lanes), jw);
      const VI row = hn::Add(hn::Set(di, TI(2 * oh - j.pad_h)), jh);
      const auto outside = hn::Or(hn::Or(hn::Lt(col, zero), hn::Gt(col, last_col)),
                                  hn::Or(hn::Lt(row, zero), hn::Gt(row, last_row)));
      const auto wrong = hn::And(hn::FirstN(di, size_t(OW - ow)), hn::Or(hn::Gt(c, eight), outside));
      bad = hn::Or(bad, hn::VecFromMask(di, wrong));
    }
  }
  return hn::AllTrue(di, hn::Eq(bad, zero)) && hn::GetLane(hn::MaxOfLanes(CodeD(), top)) <= 8;
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// Whether rows may go straight to dx (see k3s2_plane): float32, and 16-bit types where cpu_half_rows_direct;
// 16 outputs a vector.
template <class S> constexpr bool kDirect = std::is_same_v<S, float> || kHalf<S>;
// a[0], b[0], a[1], b[1], ... to p by streaming stores (p aligned to the vector): the first 16 cells, and with
// `both` the next 16, each vector one two-table permute.
HWY_INLINE void stream_pairs(__m512 a, __m512 b, float* p, bool both) {
  const __m512i lo = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  _mm512_stream_ps(p, _mm512_permutex2var_ps(a, lo, b));
  if (both) _mm512_stream_ps(p + 16, _mm512_permutex2var_ps(a, _mm512_add_epi32(lo, _mm512_set1_epi32(8)), b));
}
// 32 16-bit cells to p by streaming stores of 32 bytes (p aligned to them: a row of 16-bit cells may start
// mid-line; one 64-byte store where p allows ran no faster): the first 16, and with `both` the next 16.
HWY_INLINE void stream_cells16(__m512i v, void* p, bool both) {
  _mm256_stream_si256(static_cast<__m256i*>(p), _mm512_castsi512_si256(v));
  if (both) _mm256_stream_si256(static_cast<__m256i*>(p) + 1, _mm512_extracti64x4_epi64(v, 1));
}
#else
template <class S> constexpr bool kDirect = false;
#endif

// Cell c of a dx row is u = c + PW of the padded axis, where output m's taps 0, 1, 2 lie at u = 2m, 2m + 1, 2m + 2.
// A "single" cell (u odd) is tap 1 of one output; a "double" cell (u even) is tap 2 of one output and then tap 0
// of the next. Rows likewise: a single row is tap row 1 of one output row; a double row, tap row 2 of one and
// then tap row 0 of the next. Codes are tap row * 3 + tap.
template <class S, int PH, int PW>
bool k3s2_plane(const K3S2Job& j) {
  using C = compute_t<S>;
  const hn::ScalableTag<C> d;
  using V = hn::Vec<decltype(d)>;
  const hn::RebindToSigned<decltype(d)> di;
  const int64_t N = int64_t(hn::Lanes(d)), H = j.height, W = j.width;
  if (!pad_rows<S>(j)) return false;
  const S* g = static_cast<const S*>(j.g);
  const uint8_t* code = static_cast<const uint8_t*>(j.code);
  S* plane = static_cast<S*>(j.plane);
  const V zero = hn::Zero(d);
  // the codes of 16 lanes from padded cell `at`, and the lanes where they are `tap` (AVX3, float lanes: compared
  // in their bytes, the compare's mask the float lanes'; else widened to int32 lanes)
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  constexpr bool kByteCodes = std::is_same_v<C, float>;
#else
  constexpr bool kByteCodes = false;
#endif
  const hn::CappedTag<uint8_t, 16> dc;
  auto codes = [&](int64_t at) {
    if constexpr (kByteCodes) return hn::LoadU(dc, code + at);
    else return load_argmax(di, IndexForm::U8, code, at);
  };
  using Codes = decltype(codes(0));
  auto hit = [&](Codes c, int tap) {
    if constexpr (kByteCodes) return hn::Mask<decltype(d)>{hn::Eq(c, hn::Set(dc, uint8_t(tap))).raw};
    else return hn::RebindMask(d, hn::Eq(c, hn::Set(di, tap)));
  };
  // sum + v where code c is `tap`, else sum: one masked addition (sums start at +0 and never become -0, so
  // adding +0 for a miss, as the reference does, changes nothing)
  auto add = [&](V sum, Codes c, int tap, V v) { return hn::IfThenElse(hit(c, tap), hn::Add(sum, v), sum); };
  // A contiguous dx takes the plane's final rows after each pair of rows (streaming stores spread over the
  // work rather than in one burst at the end); a strided one, row by row at the end.
  S* dx = static_cast<S*>(j.dx);
  const bool whole = j.dx_row == W;
  const int64_t L = int64_t(hn::Lanes(hn::ScalableTag<cell_t<S>>()));
  const bool stream = whole && j.stream && whole_aligned_rows(dx, H * W, H * W, L, int64_t(sizeof(S)));
  // rows of whole vectors of outputs (16-bit: half a vector of cells, where cpu_half_rows_direct) go straight to
  // dx by streaming stores, without the plane and its copy (AVX3)
  const bool direct = kDirect<S> && (!kHalf<S> || cpu_half_rows_direct) && stream &&
                      whole_aligned_rows(dx, W, W, N, int64_t(sizeof(S)));
  [[maybe_unused]] const S* const dx_end = dx + H * W;
  int64_t copied = 0;
  for (int64_t n = 0, h = 0; h < H; ++n, h += 2) {
    // padded rows a (output row n - 1 + PH) and b (the next); the single row reads output row n
    const int64_t ra = (n + PH) * j.pitch, rb = ra + j.pitch;
    // the next plane's output row n on its way to the cache while this one computes (pad_rows found each row of
    // dy waiting on memory)
    if (j.next_dy && n < j.out_h) {
      const char* y = static_cast<const char*>(j.next_dy) + n * j.dy_row * int64_t(sizeof(S));
      for (int64_t b = 0; b < j.out_w * int64_t(sizeof(S)); b += 64) prefetch(y + b);
      for (int64_t b = 0; b < j.out_w; b += 64) prefetch(j.next_am + n * j.am_row + b);
    }
    // (row h + 1 may lie past H: the plane has room; past dx's rows nothing is stored)
    S* const rows = direct ? dx : plane;
    S* const single_row = rows + (h + 1 - PH) * W;
    S* const double_row = rows + (h + PH) * W;
    // (Each row's last vector spills into the rows after it, which their own stores then overwrite: vectors go
    // from the row's end to its start, the lower row's before the upper's. Rows straight to dx store only
    // their cells: the last vector's first half where the row ends there, nothing past it.)
    for (int64_t m = j.lanes - N; m >= 0; m -= N) {
      // lane m of a row at index m + 1: the double cells' outputs at i and i + 1, the single cells' at m + 1
      const int64_t i = m + PW;
      const Codes a0 = codes(ra + i), a1 = codes(ra + i + 1), b0 = codes(rb + i), b1 = codes(rb + i + 1);
      const V ga0 = load_lanes<kUnit>(d, g + ra + i, 0), ga1 = load_lanes<kUnit>(d, g + ra + i + 1, 0);
      const V gb0 = load_lanes<kUnit>(d, g + rb + i, 0), gb1 = load_lanes<kUnit>(d, g + rb + i + 1, 0);
      const Codes c0 = PH == 0 ? b0 : a0, c1 = PH == 0 ? b1 : a1;  // output row n
      const V gc0 = PH == 0 ? gb0 : ga0, gc1 = PH == 0 ? gb1 : ga1;
      const V ss = PW == 0 ? add(zero, c1, 4, gc1) : add(zero, c0, 4, gc0);
      const V sd = add(add(zero, c0, 5, gc0), c1, 3, gc1);
      const V ds = PW == 0 ? add(add(zero, a1, 7, ga1), b1, 1, gb1) : add(add(zero, a0, 7, ga0), b0, 1, gb0);
      const V dd = add(add(add(add(zero, a0, 8, ga0), a1, 6, ga1), b0, 2, gb0), b1, 0, gb1);
      // cells 2m, 2m + 1: (double, single) for PW = 0, (single, double) for PW = 1
      auto put = [&](S* row, V single, V twofold) {
        const V first = PW == 0 ? twofold : single, second = PW == 0 ? single : twofold;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
        if constexpr (kDirect<S>) {
          if (direct) {
            if (2 * m < W && row < dx_end) {
              const bool both = 2 * m + 2 * N <= W;
              if constexpr (kHalf<S>) stream_cells16(interleaved16<S>(d, first, second).raw, row + 2 * m, both);
              else stream_pairs(first.raw, second.raw, row + 2 * m, both);
            }
            return;
          }
        }
#endif
        store_interleaved(d, first, second, row + 2 * m);
      };
      if constexpr (PH == 0) put(double_row, ds, dd), put(single_row, ss, sd);
      else put(single_row, ss, sd), put(double_row, ds, dd);
    }
    if (direct) continue;
    // rows below h + 2 are final (the spill of row h + 1 lands in rows its own stores overwrite later)
    const int64_t ready = std::min(H, h + 2) * W, upto = ready == H * W ? ready : ready / (4 * L) * (4 * L);
    if (whole && upto - copied >= 4 * L) copy_cells(plane + copied, dx + copied, upto - copied, stream), copied = upto;
  }
  if (direct) {
    hwy::FlushStream();
  } else if (whole) {
    if (copied < H * W) copy_cells(plane + copied, dx + copied, H * W - copied, stream);
    if (stream) hwy::FlushStream();
  } else {
    for (int64_t h = 0; h < H; ++h) copy_cells(plane + h * W, dx + h * j.dx_row, W, false);
  }
  return true;
}

template <class S>
bool k3s2_max_backward(const K3S2Job& j) {
  if (j.pad_h == 0) return j.pad_w == 0 ? k3s2_plane<S, 0, 0>(j) : k3s2_plane<S, 0, 1>(j);
  return j.pad_w == 0 ? k3s2_plane<S, 1, 0>(j) : k3s2_plane<S, 1, 1>(j);
}

bool K3S2MaxBackwardF32(const K3S2Job& j) { return k3s2_max_backward<float>(j); }
bool K3S2MaxBackwardF64(const K3S2Job& j) { return k3s2_max_backward<double>(j); }
bool K3S2MaxBackwardBF16(const K3S2Job& j) { return k3s2_max_backward<bfloat16>(j); }
bool K3S2MaxBackwardF16(const K3S2Job& j) { return k3s2_max_backward<float16>(j); }

}  // namespace poolkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolkit::cpu {
HWY_EXPORT(K3S2MaxBackwardF32);
HWY_EXPORT(K3S2MaxBackwardF64);
HWY_EXPORT(K3S2MaxBackwardBF16);
HWY_EXPORT(K3S2MaxBackwardF16);
bool k3s2_max_backward_f32(const K3S2Job& j) { return HWY_DYNAMIC_DISPATCH(K3S2MaxBackwardF32)(j); }
bool k3s2_max_backward_f64(const K3S2Job& j) { return HWY_DYNAMIC_DISPATCH(K3S2MaxBackwardF64)(j); }
bool k3s2_max_backward_bf16(const K3S2Job& j) { return HWY_DYNAMIC_DISPATCH(K3S2MaxBackwardBF16)(j); }
bool k3s2_max_backward_f16(const K3S2Job& j) { return HWY_DYNAMIC_DISPATCH(K3S2MaxBackwardF16)(j); }
}  // namespace poolkit::cpu
#endif
