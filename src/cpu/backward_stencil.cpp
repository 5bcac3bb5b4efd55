// Average backward of 3x3 windows of stride 1 and padding 1 (the output as large as the input: overlap-avg's
// case, the stride-1 pools of Inception blocks) as a nine-point stencil. Every dx cell is the sum from +0 of q =
// dy / divisor at the nine outputs around it, rows before and columns before first: its covering outputs in
// increasing order, the reference's order. The divisions run in the same loop as the sums, ahead of them, so
// that the divider works while the loads and additions do (a pass of divisions before the sums, as the general
// paths make, took 40% of the time).
//  - Channels-first planes: the vectors run over a plane's cells as one row (q packed, with a row and a cell of
//    zeros before and after it: offsets -W-1, -W, -W+1, -1, 0, 1, W-1, W, W+1), without per-row set-up or a
//    partial vector at each row's end; the taps of offset -1 / +1 along W, which on the first / last column
//    would read the row before's last cell / the next row's first, are masked to zeros there (the
//    reference adds nothing, and adding +0 to a sum started at +0 changes no bit).
//  - Channels-last images of whole cache lines of channels: q a ring of three rows with a pixel of zeros at
//    each end; per dx row and cache line of channels, the pixels in turn, two taps of each row kept in registers
//    from the pixel before, the row below's next pixel divided into the ring as its newest tap.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "backward.hpp"
#include "prefetch.hpp"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/backward_stencil.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "src/cpu/kernels-inl.h"

#ifndef POOLKIT_CPU_STENCIL_JOB  // (this file is compiled once per target: the job once)
#define POOLKIT_CPU_STENCIL_JOB
namespace poolkit::cpu {
// One plane: dy and dx (rows packed, `width` cells each), each cell's divisor, and q with room for
// (height + 2) * width + 2 cells.
struct StencilJob {
  const void* dy = nullptr;
  const void* divisor = nullptr;
  void* q = nullptr;
  void* dx = nullptr;
  int64_t height = 0, width = 0;  // width over the widest vector's lanes (16)
  bool stream = false;            // dx past the cache by streaming stores where whole aligned vectors allow
  const void* next_dy = nullptr;  // the plane after this one, asked for while this one sums
};
// Channels-last: dx rows [h0, h1) of one image of `channels` (whole vectors) per pixel, packed rows; q a ring of
// three rows of width + 2 pixels (a pixel of zeros at each end), each row's cells the divided dy of one output row.
struct StencilRowsJob {
  const void* dy = nullptr;  // the image's
  const void* divisor = nullptr;  // per pixel
  void* ring = nullptr;
  void* dx = nullptr;  // the image's
  int64_t height = 0, width = 0, channels = 0, h0 = 0, h1 = 0;
  bool stream = false;
};
}  // namespace poolkit::cpu
#endif

HWY_BEFORE_NAMESPACE();
namespace poolkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class T>
void stencil_plane(const StencilJob& j) {
  const hn::ScalableTag<T> d;
  const hn::RebindToSigned<decltype(d)> di;
  using TI = hn::TFromD<decltype(di)>;
  const int64_t N = int64_t(hn::Lanes(d)), W = j.width, cells = j.height * W, lead = W + 1;
  const T* dy = static_cast<const T*>(j.dy);
  const T* dv = static_cast<const T*>(j.divisor);
  T* q = static_cast<T*>(j.q);
  T* dx = static_cast<T*>(j.dx);
  // q: zeros, the plane's cells divided, zeros; the divisions a row and 17 vectors ahead of the sums (a row and
  // one vector ahead, the sums' unaligned loads met the divisions' stores still on their way to the cache and
  // waited: 1.5x slower than two passes). The last vector of each loop ends at the plane's end, over lanes the
  // one before gave the same values.
  std::fill_n(q, lead, T(0));
  std::fill_n(q + lead + cells, lead, T(0));
  T* const p = q + lead;
  int64_t divided = 0;  // cells of q made
  auto divide_to = [&](int64_t end) {
    for (end = std::min(end, cells); divided < end; divided += N) {
      const int64_t a = std::min(divided, cells - N);
      hn::StoreU(hn::Div(hn::LoadU(d, dy + a), hn::LoadU(d, dv + a)), d, p + a);
    }
  };
  const bool stream = j.stream && whole_aligned_rows(dx, cells, cells, N, int64_t(sizeof(T)));
  const char* next = static_cast<const char*>(j.next_dy);
  const auto width = hn::Set(di, TI(W)), zero = hn::Zero(di), last = hn::Set(di, TI(W - 1));
  // the column of each lane of the vector from cell a (W >= N: one wrap at most)
  auto columns = [&](hn::Vec<decltype(di)> col) { return hn::IfThenElse(hn::Lt(col, width), col, hn::Sub(col, width)); };
  auto col = columns(hn::Iota(di, 0));
  for (int64_t c = 0; c < cells; c += N) {
    const int64_t a = std::min(c, cells - N);
    if (a != c) col = columns(hn::Iota(di, TI(a % W)));
    divide_to(a + N + W + 1 + 16 * N);  // (the vector's last tap, and 16 vectors more)
    const auto inner_lo = hn::RebindMask(d, hn::Not(hn::Eq(col, zero)));  // lanes past column 0
    const auto inner_hi = hn::RebindMask(d, hn::Not(hn::Eq(col, last)));  // lanes before column W - 1
    const T* s = p + a;
    // (not MaskedLoad: on SSE4 it is an aligned load; with AVX-512 the compiler makes these masked loads)
    auto masked = [&](auto m, const T* at) { return hn::IfThenElseZero(m, hn::LoadU(d, at)); };
    auto sum = hn::Add(hn::Zero(d), masked(inner_lo, s - W - 1));
    sum = hn::Add(sum, hn::LoadU(d, s - W));
    sum = hn::Add(sum, masked(inner_hi, s - W + 1));
    sum = hn::Add(sum, masked(inner_lo, s - 1));
    sum = hn::Add(sum, hn::LoadU(d, s));
    sum = hn::Add(sum, masked(inner_hi, s + 1));
    sum = hn::Add(sum, masked(inner_lo, s + W - 1));
    sum = hn::Add(sum, hn::LoadU(d, s + W));
    sum = hn::Add(sum, masked(inner_hi, s + W + 1));
    put(d, sum, dx + a, stream);
    if (next) prefetch(next + a * int64_t(sizeof(T)));
    col = columns(hn::Add(col, hn::Set(di, TI(N))));
  }
  if (stream) hwy::FlushStream();
}

// Channels-last rows (see the top of the file), U vectors of channels a pass: a whole cache line, so that the
// streaming stores of a pass fill dx's lines (AVX2, Zen 3: half lines streamed, the other half a pass later, ran
// 1.7x slower than stores through the cache, and 3.0x slower than whole lines at 2 threads, 2.45x at 1).
template <class T, int U>
void stencil_rows_by(const StencilRowsJob& j) {
  const hn::ScalableTag<T> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t N = int64_t(hn::Lanes(d)), H = j.height, W = j.width, C = j.channels, row = (W + 2) * C;
  const T* dy = static_cast<const T*>(j.dy);
  const T* dv = static_cast<const T*>(j.divisor);
  T* ring = static_cast<T*>(j.ring);
  T* dx = static_cast<T*>(j.dx);
  const bool stream = j.stream && whole_aligned_rows(dx, C, C, U * N, int64_t(sizeof(T)));
  auto ring_row = [&](int64_t oh) { return ring + (oh + 3) % 3 * row + C; };  // pixel 0 of output row oh's
  for (int64_t k = 0; k < 3; ++k) std::fill_n(ring + k * row, C, T(0)), std::fill_n(ring + k * row + row - C, C, T(0));
  auto divided = [&](int64_t oh, int64_t w, int64_t c) {
    const int64_t pixel = oh * W + w;
    return hn::Div(hn::LoadU(d, dy + pixel * C + c), hn::Set(d, dv[pixel]));
  };
  auto fill_row = [&](int64_t oh) {  // output row oh divided into the ring (zeros outside the image)
    T* q = ring_row(oh);
    if (oh < 0 || oh >= H) {
      std::fill_n(q, W * C, T(0));
      return;
    }
    for (int64_t w = 0; w < W; ++w)
      for (int64_t c = 0; c < C; c += N) hn::StoreU(divided(oh, w, c), d, q + w * C + c);
  };
  fill_row(j.h0 - 1), fill_row(j.h0);
  for (int64_t h = j.h0; h < j.h1; ++h) {
    const T *up = ring_row(h - 1), *mid = ring_row(h);
    T* down = ring_row(h + 1);
    const bool below = h + 1 < H;  // (else the row below is padding: zeros in registers, nothing divided)
    for (int64_t c = 0; c < C; c += U * N) {
      // taps of the pixel before: u0, u1 (up), m0, m1 (mid), v0, v1 (down), pixel -1 first
      V u0[U], u1[U], m0[U], m1[U], v0[U], v1[U];
      for (int k = 0; k < U; ++k) {
        const int64_t ck = c + k * N;
        u0[k] = hn::LoadU(d, up - C + ck), u1[k] = hn::LoadU(d, up + ck), m0[k] = hn::LoadU(d, mid - C + ck);
        m1[k] = hn::LoadU(d, mid + ck), v0[k] = hn::Zero(d), v1[k] = hn::Zero(d);
        if (below) v1[k] = divided(h + 1, 0, ck), hn::StoreU(v1[k], d, down + ck);
      }
      T* out = dx + h * W * C + c;
      for (int64_t w = 0; w < W; ++w, out += C) {
        // the next row's row below asked for, all its channels, on the first pass: the passes step through dy a
        // pixel (whole lines) apart, which the prefetchers did not follow (Zen 4: 1.28x)
        if (c == 0 && h + 2 < H)
          for (int64_t b = 0; b < C * int64_t(sizeof(T)); b += 64)
            prefetch(reinterpret_cast<const char*>(dy + ((h + 2) * W + w) * C) + b);
        for (int k = 0; k < U; ++k) {
          const int64_t ck = c + k * N;
          const V u2 = hn::LoadU(d, up + (w + 1) * C + ck), m2 = hn::LoadU(d, mid + (w + 1) * C + ck);
          V v2 = hn::Zero(d);
          if (below && w + 1 < W) v2 = divided(h + 1, w + 1, ck), hn::StoreU(v2, d, down + (w + 1) * C + ck);
          V sum = hn::Add(hn::Zero(d), u0[k]);
          sum = hn::Add(hn::Add(hn::Add(sum, u1[k]), u2), m0[k]);
          sum = hn::Add(hn::Add(hn::Add(sum, m1[k]), m2), v0[k]);
          sum = hn::Add(hn::Add(sum, v1[k]), v2);
          put(d, sum, out + k * N, stream);
          u0[k] = u1[k], u1[k] = u2, m0[k] = m1[k], m1[k] = m2, v0[k] = v1[k], v1[k] = v2;
        }
      }
    }
  }
  if (stream) hwy::FlushStream();
}

template <class T>
void stencil_rows(const StencilRowsJob& j) {
  // (the caller's channels fill whole cache lines)
  constexpr size_t kLine = 64 / sizeof(T), kLanes = hn::MaxLanes(hn::ScalableTag<T>());
  if constexpr (kLanes < kLine && kLine % kLanes == 0 && kLine / kLanes <= 4) {
    if (j.channels % int64_t(kLine) == 0 && int64_t(hn::Lanes(hn::ScalableTag<T>())) == int64_t(kLanes))
      return stencil_rows_by<T, int(kLine / kLanes)>(j);
  }
  stencil_rows_by<T, 1>(j);
}

void StencilF32(const StencilJob& j) { stencil_plane<float>(j); }
void StencilF64(const StencilJob& j) { stencil_plane<double>(j); }
void StencilRowsF32(const StencilRowsJob& j) { stencil_rows<float>(j); }
void StencilRowsF64(const StencilRowsJob& j) { stencil_rows<double>(j); }

}  // namespace poolkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolkit::cpu {

HWY_EXPORT(StencilF32);
HWY_EXPORT(StencilF64);
HWY_EXPORT(StencilRowsF32);
HWY_EXPORT(StencilRowsF64);

// Whether dy and dx are channels-last images whose pixels are whole cache lines of channels, rows of pixels back to
// back (the channels-last stencil; else channels-first planes).
static bool whole_line_pixels(const Backward& b) {
  const int64_t C = b.C, W = b.tab.w.axis.in;
  auto last = [&](const View5& v) { return v.s[1] == 1 && v.s[4] == C && v.s[3] == W * C; };
  return C > 1 && C * b.esize % 64 == 0 && last(b.dx) && last(b.dy);
}

bool stencil_fits(const Backward& b) {
  const Axis &A = b.tab.t.axis, &B = b.tab.h.axis, &W = b.tab.w.axis;
  auto box3 = [](const Axis& a) {
    return a.kind == AxisKind::Regular && a.kernel == 3 && a.stride == 1 && a.dilation == 1 && a.pad_lo == 1 &&
           a.out == a.in;
  };
  auto first = [&](const View5& v) { return v.s[4] == 1 && v.s[3] == W.in; };
  return !b.is_max && (b.dtype == DType::f32 || b.dtype == DType::f64) && A.in == 1 && A.out == 1 &&
         A.kernel == 1 && box3(B) && box3(W) && W.in > 16 && (whole_line_pixels(b) || (first(b.dx) && first(b.dy)));
}

// The divisor of each output cell of a plane.
template <class T>
static std::vector<T> divisors(const Backward& b) {
  const int64_t H = b.tab.h.axis.in, W = b.tab.w.axis.in;
  std::vector<T> divisor(static_cast<size_t>(H * W));
  for (int64_t h = 0; h < H; ++h)
    for (int64_t w = 0; w < W; ++w) divisor[size_t(h * W + w)] = T(b.divisor(0, h, w));
  return divisor;
}

template <class T>
static bool images(const Backward& b) {
  const int64_t H = b.tab.h.axis.in, W = b.tab.w.axis.in;
  const std::vector<T> divisor = divisors<T>(b);
  const auto kernel = sizeof(T) == 4 ? HWY_DYNAMIC_DISPATCH(StencilRowsF32) : HWY_DYNAMIC_DISPATCH(StencilRowsF64);
  // rows per task: four tasks a thread at least (a task's first two rows of q are divided by the task before too)
  const int64_t chunks = std::min(H, (4 * num_threads() + b.N - 1) / b.N), rows = (H + chunks - 1) / chunks;
  return parallel_for(b.N * chunks, b.work, [&](int64_t task) {
    thread_local std::vector<T> ring;
    ring.resize(size_t(3 * (W + 2) * b.C));
    const int64_t n = task / chunks;
    StencilRowsJob j;
    j.dy = b.dy.at<T>(b.dy.offset(n, 0, 0, 0, 0)), j.dx = b.dx.at<T>(b.dx.offset(n, 0, 0, 0, 0));
    j.divisor = divisor.data(), j.ring = ring.data();
    j.height = H, j.width = W, j.channels = b.C, j.stream = b.stream_dx;
    j.h0 = task % chunks * rows, j.h1 = std::min(H, j.h0 + rows);
    if (j.h0 < j.h1) kernel(j);
    if (ring.size() * sizeof(T) > (size_t(8) << 20)) ring = {};  // (not kept)
    return true;
  });
}

template <class T>
static bool planes(const Backward& b) {
  const int64_t H = b.tab.h.axis.in, W = b.tab.w.axis.in, cells = H * W, planes = b.N * b.C;
  const std::vector<T> divisor = divisors<T>(b);
  const auto kernel = sizeof(T) == 4 ? HWY_DYNAMIC_DISPATCH(StencilF32) : HWY_DYNAMIC_DISPATCH(StencilF64);
  const int64_t chunk = std::max<int64_t>(1, 4096 / (2 * cells));  // small planes go several to a task
  return parallel_for((planes + chunk - 1) / chunk, b.work, [&](int64_t task) {
    thread_local std::vector<T> q;
    q.resize(size_t(cells + 2 * W + 2));
    StencilJob j;
    j.divisor = divisor.data(), j.q = q.data(), j.height = H, j.width = W, j.stream = b.stream_dx;
    for (int64_t i = task * chunk; i < std::min(planes, (task + 1) * chunk); ++i) {
      const int64_t n = i / b.C, c = i % b.C;
      j.dy = b.dy.at<T>(b.dy.offset(n, c, 0, 0, 0));
      j.dx = b.dx.at<T>(b.dx.offset(n, c, 0, 0, 0));
      j.next_dy = i + 1 < planes ? b.dy.at<T>(b.dy.offset((i + 1) / b.C, (i + 1) % b.C, 0, 0, 0)) : nullptr;
      kernel(j);
    }
    if (q.size() * sizeof(T) > (size_t(8) << 20)) q = {};  // (not kept)
    return true;
  });
}

bool stencil_backward(const Backward& b) {
  if (whole_line_pixels(b)) return b.dtype == DType::f32 ? images<float>(b) : images<double>(b);
  return b.dtype == DType::f32 ? planes<float>(b) : planes<double>(b);
}

}  // namespace poolkit::cpu
#endif
