// Average backward of 3x3 windows of stride 1 and padding 1 over channels-first planes (the output as large as
// the input: overlap-avg's case, the stride-1 pools of Inception blocks), as a nine-point stencil over the whole
// plane. Per plane: q = dy / divisor, packed, with a row and a cell of zeros before and after it; then every dx
// cell is the sum from +0 of q at offsets -W-1, -W, -W+1, -1, 0, 1, W-1, W, W+1 (W the plane's width), in that
// order: its covering outputs in increasing order, the reference's. The taps of offset -1 and +1 along W read
// the row before's last cell or the next row's first on the plane's first and last columns; masked loads give
// zeros there instead (the reference adds nothing: adding +0 to a sum started at +0 changes no bit). The
// vectors run over the plane's cells as one row, without the row accumulation's per-row set-up and its
// partial vectors at each row's end (56-wide rows: 3.5 vectors).
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
  int64_t height = 0, width = 0;  // width at least the widest vector's lanes (16)
  bool stream = false;            // dx past the cache by streaming stores where whole aligned vectors allow
  const void* next_dy = nullptr;  // the plane after this one, asked for while this one sums
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
  // q: zeros, the plane's cells divided, zeros. The divisions run ahead of the sums that read them, in the same
  // loop, so that the divider works while the loads and additions do (as a pass of its own before the sums it
  // took 40% of the time): a row and 17 vectors ahead (a row and one vector ahead, the sums' unaligned loads met
  // the divisions' stores still on their way to the cache and waited: 1.5x slower than the two passes). The
  // last vector of each ends at the plane's end, over lanes the one before gave the same values.
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
    auto sum = hn::Add(hn::Zero(d), hn::MaskedLoad(inner_lo, d, s - W - 1));
    sum = hn::Add(sum, hn::LoadU(d, s - W));
    sum = hn::Add(sum, hn::MaskedLoad(inner_hi, d, s - W + 1));
    sum = hn::Add(sum, hn::MaskedLoad(inner_lo, d, s - 1));
    sum = hn::Add(sum, hn::LoadU(d, s));
    sum = hn::Add(sum, hn::MaskedLoad(inner_hi, d, s + 1));
    sum = hn::Add(sum, hn::MaskedLoad(inner_lo, d, s + W - 1));
    sum = hn::Add(sum, hn::LoadU(d, s + W));
    sum = hn::Add(sum, hn::MaskedLoad(inner_hi, d, s + W + 1));
    put(d, sum, dx + a, stream);
    if (next) prefetch(next + a * int64_t(sizeof(T)));
    col = columns(hn::Add(col, hn::Set(di, TI(N))));
  }
  if (stream) hwy::FlushStream();
}

void StencilF32(const StencilJob& j) { stencil_plane<float>(j); }
void StencilF64(const StencilJob& j) { stencil_plane<double>(j); }

}  // namespace poolkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolkit::cpu {

HWY_EXPORT(StencilF32);
HWY_EXPORT(StencilF64);

bool stencil_fits(const Backward& b) {
  const Axis &A = b.tab.t.axis, &B = b.tab.h.axis, &W = b.tab.w.axis;
  auto box3 = [](const Axis& a) {
    return a.kind == AxisKind::Regular && a.kernel == 3 && a.stride == 1 && a.dilation == 1 && a.pad_lo == 1 &&
           a.out == a.in;
  };
  return !b.is_max && (b.dtype == DType::f32 || b.dtype == DType::f64) && A.in == 1 && A.out == 1 &&
         A.kernel == 1 && box3(B) && box3(W) && W.in >= 16 && b.dx.s[4] == 1 && b.dy.s[4] == 1 &&
         b.dx.s[3] == W.in && b.dy.s[3] == W.in;
}

template <class T>
static bool planes(const Backward& b) {
  const int64_t H = b.tab.h.axis.in, W = b.tab.w.axis.in, cells = H * W, planes = b.N * b.C;
  std::vector<T> divisor(static_cast<size_t>(cells));
  for (int64_t h = 0; h < H; ++h)
    for (int64_t w = 0; w < W; ++w) divisor[size_t(h * W + w)] = T(b.divisor(0, h, w));
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

bool stencil_backward(const Backward& b) { return b.dtype == DType::f32 ? planes<float>(b) : planes<double>(b); }

}  // namespace poolkit::cpu
#endif
