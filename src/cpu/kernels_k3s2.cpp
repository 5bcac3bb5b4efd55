// Max backward of 3x3 windows of stride 2 over a channels-first plane (see K3S2Job in kernels.hpp): each vector
// of output columns m makes dx columns 2m and 2m + 1 of two dx rows at once, every cell the sum from +0 of its
// (at most four) terms in increasing output order, as the reference sums them.
#include "kernels.hpp"

#include <type_traits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/kernels_k3s2.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "src/cpu/kernels-inl.h"

HWY_BEFORE_NAMESPACE();
namespace poolkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// dst[i] = src[i] for i < n by whole vectors (the last one overlapping the one before where n is not a multiple),
// streamed past the cache with `stream` (dst aligned to the vector, n a multiple of it).
template <class S>
HWY_INLINE void copy_cells(const S* src, S* dst, int64_t n, bool stream) {
  using B = std::conditional_t<sizeof(S) == 2, uint16_t, S>;
  const hn::ScalableTag<B> d;
  const int64_t L = int64_t(hn::Lanes(d));
  const B* from = reinterpret_cast<const B*>(src);
  B* to = reinterpret_cast<B*>(dst);
  if (n < L) {
    for (int64_t i = 0; i < n; ++i) to[i] = from[i];
    return;
  }
  for (int64_t i = 0; i + L < n; i += L) put(d, hn::LoadU(d, from + i), to + i, stream);
  put(d, hn::LoadU(d, from + n - L), to + n - L, stream);
  if (stream) hwy::FlushStream();
}

// Codes of lanes [i, i + N) as integer lanes of d.
template <class D>
HWY_INLINE hn::Vec<hn::RebindToSigned<D>> load_codes(D /*d*/, const uint8_t* p) {
  const hn::RebindToSigned<D> di;
  const hn::Rebind<uint8_t, D> d8;
  if constexpr (sizeof(hn::TFromD<D>) == 4) return hn::BitCast(di, hn::PromoteTo(hn::RebindToUnsigned<D>(), hn::LoadU(d8, p)));
  else return hn::PromoteTo(di, hn::PromoteTo(hn::Rebind<int32_t, D>(), hn::LoadU(d8, p)));
}

// Cell c of a dx row is u = c + PW of the padded axis, where output m's taps 0, 1, 2 lie at u = 2m, 2m + 1, 2m + 2.
// A "single" cell (u odd) is tap 1 of one output; a "double" cell (u even) is tap 2 of one output and then tap 0
// of the next. Rows likewise: a single row is tap row 1 of one output row; a double row, tap row 2 of one and
// then tap row 0 of the next. Codes are tap row * 3 + tap.
template <class S, int PH, int PW>
void k3s2_plane(const K3S2Job& j) {
  using C = compute_t<S>;
  const hn::ScalableTag<C> d;
  using V = hn::Vec<decltype(d)>;
  using VI = hn::Vec<hn::RebindToSigned<decltype(d)>>;
  const hn::RebindToSigned<decltype(d)> di;
  const int64_t N = int64_t(hn::Lanes(d)), H = j.height, W = j.width;
  const S* g = static_cast<const S*>(j.g);
  const uint8_t* code = static_cast<const uint8_t*>(j.code);
  S* plane = static_cast<S*>(j.plane);
  const V zero = hn::Zero(d);
  auto pick = [&](VI c, int tap, V v) { return hn::IfThenElseZero(hn::RebindMask(d, hn::Eq(c, hn::Set(di, tap))), v); };
  for (int64_t n = 0, h = 0; h < H; ++n, h += 2) {
    // padded rows a (output row n - 1 + PH) and b (the next); the single row reads output row n
    const int64_t ra = (n + PH) * j.pitch, rb = ra + j.pitch;
    S* single_row = plane + (h + 1 - PH) * W;  // (row h + 1 may lie past H: the plane has room)
    S* double_row = plane + (h + PH) * W;
    // (Each row's last vector spills into the rows after it, which their own stores then overwrite: vectors go
    // from the row's end to its start, the lower row's before the upper's.)
    for (int64_t m = j.lanes - N; m >= 0; m -= N) {
      // lane m of a row at index m + 1: the double cells' outputs at i and i + 1, the single cells' at m + 1
      const int64_t i = m + PW;
      const VI a0 = load_codes(d, code + ra + i), a1 = load_codes(d, code + ra + i + 1);
      const VI b0 = load_codes(d, code + rb + i), b1 = load_codes(d, code + rb + i + 1);
      const V ga0 = load_lanes<kUnit>(d, g + ra + i, 0), ga1 = load_lanes<kUnit>(d, g + ra + i + 1, 0);
      const V gb0 = load_lanes<kUnit>(d, g + rb + i, 0), gb1 = load_lanes<kUnit>(d, g + rb + i + 1, 0);
      const VI c0 = PH == 0 ? b0 : a0, c1 = PH == 0 ? b1 : a1;  // output row n
      const V gc0 = PH == 0 ? gb0 : ga0, gc1 = PH == 0 ? gb1 : ga1;
      const V ss = hn::Add(zero, PW == 0 ? pick(c1, 4, gc1) : pick(c0, 4, gc0));
      const V sd = hn::Add(hn::Add(zero, pick(c0, 5, gc0)), pick(c1, 3, gc1));
      const V ds = PW == 0 ? hn::Add(hn::Add(zero, pick(a1, 7, ga1)), pick(b1, 1, gb1))
                           : hn::Add(hn::Add(zero, pick(a0, 7, ga0)), pick(b0, 1, gb0));
      V dd = hn::Add(hn::Add(zero, pick(a0, 8, ga0)), pick(a1, 6, ga1));
      dd = hn::Add(hn::Add(dd, pick(b0, 2, gb0)), pick(b1, 0, gb1));
      // cells 2m, 2m + 1: (double, single) for PW = 0, (single, double) for PW = 1
      auto put = [&](S* row, V single, V twofold) {
        if constexpr (PW == 0) store_interleaved(d, twofold, single, row + 2 * m);
        else store_interleaved(d, single, twofold, row + 2 * m);
      };
      if constexpr (PH == 0) put(double_row, ds, dd), put(single_row, ss, sd);
      else put(single_row, ss, sd), put(double_row, ds, dd);
    }
  }
  S* dx = static_cast<S*>(j.dx);
  if (j.dx_row == W) {
    const int64_t L = int64_t(hn::Lanes(hn::ScalableTag<std::conditional_t<sizeof(S) == 2, uint16_t, S>>()));
    copy_cells(plane, dx, H * W, j.stream && whole_aligned_rows(dx, H * W, H * W, L, int64_t(sizeof(S))));
  } else {
    for (int64_t h = 0; h < H; ++h) copy_cells(plane + h * W, dx + h * j.dx_row, W, false);
  }
}

template <class S>
void k3s2_max_backward(const K3S2Job& j) {
  if (j.pad_h == 0) return j.pad_w == 0 ? k3s2_plane<S, 0, 0>(j) : k3s2_plane<S, 0, 1>(j);
  return j.pad_w == 0 ? k3s2_plane<S, 1, 0>(j) : k3s2_plane<S, 1, 1>(j);
}

void K3S2MaxBackwardF32(const K3S2Job& j) { k3s2_max_backward<float>(j); }
void K3S2MaxBackwardF64(const K3S2Job& j) { k3s2_max_backward<double>(j); }
void K3S2MaxBackwardBF16(const K3S2Job& j) { k3s2_max_backward<bfloat16>(j); }
void K3S2MaxBackwardF16(const K3S2Job& j) { k3s2_max_backward<float16>(j); }

}  // namespace poolkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolkit::cpu {
POOLKIT_KERNEL_DISPATCH(K3S2MaxBackwardF32, k3s2_max_backward_f32, K3S2Job)
POOLKIT_KERNEL_DISPATCH(K3S2MaxBackwardF64, k3s2_max_backward_f64, K3S2Job)
POOLKIT_KERNEL_DISPATCH(K3S2MaxBackwardBF16, k3s2_max_backward_bf16, K3S2Job)
POOLKIT_KERNEL_DISPATCH(K3S2MaxBackwardF16, k3s2_max_backward_f16, K3S2Job)
}  // namespace poolkit::cpu
#endif
