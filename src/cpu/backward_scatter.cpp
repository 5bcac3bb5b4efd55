// Max backward of channels-first planes by scatter: per plane, each output's gradient is added at the cell its
// saved window-local argmax names, outputs in increasing order -- the order in which the reference sums the
// terms of a cell -- into a plane of sums that starts at +0 (float32 for 16-bit types), which is then written to
// dx and cleared. The work is one load and one addition per output, where the row accumulation pays a compare
// per tap and covering row of every dx cell.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "backward.hpp"
#include "convert.hpp"
#include "kernels.hpp"

namespace poolkit::cpu {
namespace {

constexpr int64_t kMostCodes = 65536;  // the per-code tables' size limit

struct ScatterPlan {
  const Backward& b;
  int64_t codes;                     // taps of a window: valid codes are below
  std::vector<int64_t> offset;       // per code: its cell's offset in the plane from the window's origin cell
  std::vector<uint16_t> jt, jh, jw;  // per code: its taps, checked where the plane's edges cut a window
  int64_t H, W, in_cells;
  bool stream;  // dx's stores past the cache

  explicit ScatterPlan(const Backward& bw)
      : b(bw), H(bw.tab.h.axis.in), W(bw.tab.w.axis.in), stream(bw.stream_dx) {
    const Axis &A = b.tab.t.axis, &B = b.tab.h.axis, &C = b.tab.w.axis;
    codes = A.kernel * B.kernel * C.kernel;
    in_cells = A.in * H * W;
    for (int64_t v = 0; v < codes; ++v) {
      const int64_t t = v / (B.kernel * C.kernel), h = v / C.kernel % B.kernel, w = v % C.kernel;
      offset.push_back(t * A.step() * H * W + h * B.step() * W + w * C.step());
      jt.push_back(uint16_t(t)), jh.push_back(uint16_t(h)), jw.push_back(uint16_t(w));
    }
  }
};

// Is every code of output row (ot, oh) a tap of its window? Where the row's windows are whole along T and H, the
// outputs whose windows are whole along W need only the range check.
template <class U>
bool row_valid(const ScatterPlan& p, const U* am, int64_t as, int64_t ot, int64_t oh) {
  using V = std::make_unsigned_t<U>;
  const AxisTable &At = p.b.tab.t, &Bt = p.b.tab.h, &Wt = p.b.tab.w;
  const bool whole = At.first[ot] == 0 && At.last[ot] == At.axis.kernel && Bt.first[oh] == 0 &&
                     Bt.last[oh] == Bt.axis.kernel;
  const int64_t lo = whole ? Wt.full_begin : 0, hi = whole ? Wt.full_end : 0, OW = Wt.axis.out;
  V top = 0;
  for (int64_t ow = lo; ow < hi; ++ow) top = std::max(top, V(am[ow * as]));  // (read as unsigned: -1 is large)
  if (hi > lo && uint64_t(top) >= uint64_t(p.codes)) return false;
  for (int64_t ow = 0; ow < OW; ++ow) {
    if (ow == lo && hi > lo) ow = hi;
    if (ow >= OW) break;
    const V v = V(am[ow * as]);
    if (uint64_t(v) >= uint64_t(p.codes)) return false;
    if (p.jt[v] < At.first[ot] || p.jt[v] >= At.last[ot] || p.jh[v] < Bt.first[oh] || p.jh[v] >= Bt.last[oh] ||
        p.jw[v] < Wt.first[ow] || p.jw[v] >= Wt.last[ow])
      return false;
  }
  return true;
}

template <class T>
using sum_t = std::conditional_t<sizeof(T) == 8, double, float>;

// One thread's buffers: the plane's sums (all +0 between planes), a row's target cells and widened gradients.
template <class A>
struct Scratch {
  std::vector<A> sums, widened;
  std::vector<int64_t> cell;
};

template <class T>
void drain(sum_t<T>* sums, T* dx, int64_t n, bool stream) {
  if constexpr (std::is_same_v<T, float>) drain_sums_f32(sums, dx, n, stream);
  else if constexpr (std::is_same_v<T, double>) drain_sums_f64(sums, dx, n, stream);
  else if constexpr (std::is_same_v<T, bfloat16>) drain_sums_bf16(sums, dx, n, stream);
  else drain_sums_f16(sums, dx, n, stream);
}

template <class T, class U>
bool plane(const ScatterPlan& p, Scratch<sum_t<T>>& s, int64_t n, int64_t c) {
  using A = sum_t<T>;
  const Backward& b = p.b;
  const AxisTable &At = b.tab.t, &Bt = b.tab.h, &Wt = b.tab.w;
  const int64_t OT = At.axis.out, OH = Bt.axis.out, OW = Wt.axis.out, HW = p.H * p.W;
  const int64_t ys = b.dy.s[4], as = b.am.s[4];
  for (int64_t ot = 0; ot < OT; ++ot)
    for (int64_t oh = 0; oh < OH; ++oh)
      if (!row_valid(p, b.am.at<U>(b.am.offset(n, c, ot, oh, 0)), as, ot, oh)) return false;
  A* sum = s.sums.data();
  int64_t* cell = s.cell.data();
  const int64_t* offset = p.offset.data();
  const int64_t* origin_w = Wt.origin.data();
  for (int64_t ot = 0; ot < OT; ++ot)
    for (int64_t oh = 0; oh < OH; ++oh) {
      const T* g = b.dy.at<T>(b.dy.offset(n, c, ot, oh, 0));
      const U* am = b.am.at<U>(b.am.offset(n, c, ot, oh, 0));
      const A* v = reinterpret_cast<const A*>(g);
      if constexpr (!std::is_same_v<T, A>) {  // 16-bit: the row widened by vectors first
        if (ys == 1) widen_to_f32(b.dtype, g, s.widened.data(), OW);
        else for (int64_t ow = 0; ow < OW; ++ow) s.widened[size_t(ow)] = A(g[ow * ys]);
        v = s.widened.data();
      }
      const int64_t vs = std::is_same_v<T, A> ? ys : 1;
      // The row's cells first: a store whose address waits on the argmax's load let the loads after it run
      // ahead and be replayed (3-4x slower).
      const int64_t base = At.origin[size_t(ot)] * HW + Bt.origin[size_t(oh)] * p.W;
      for (int64_t ow = 0; ow < OW; ++ow) cell[ow] = base + origin_w[ow] + offset[am[ow * as]];
      for (int64_t ow = 0; ow < OW; ++ow) sum[cell[ow]] += v[ow * vs];
    }
  const int64_t T_ = At.axis.in, xs = b.dx.s[4];
  if (cells_in_a_row(b.dx, T_, p.H, p.W)) return drain(sum, b.dx.at<T>(b.dx.offset(n, c, 0, 0, 0)), p.in_cells, p.stream), true;
  for (int64_t t = 0; t < T_; ++t)
    for (int64_t h = 0; h < p.H; ++h) {
      T* dx = b.dx.at<T>(b.dx.offset(n, c, t, h, 0));
      A* row = sum + (t * p.H + h) * p.W;
      if (xs == 1) {
        drain(row, dx, p.W, false);
      } else {
        for (int64_t w = 0; w < p.W; ++w) dx[w * xs] = T(row[w]);
        std::fill_n(row, p.W, A(0));
      }
    }
  return true;
}

template <class T>
bool planes(const ScatterPlan& p) {
  using A = sum_t<T>;
  const Backward& b = p.b;
  const int64_t planes = b.N * b.C, per_plane = b.work / std::max<int64_t>(1, planes);
  const int64_t chunk = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, per_plane));  // small planes go together
  return parallel_for((planes + chunk - 1) / chunk, b.work, [&](int64_t task) {
    thread_local Scratch<A> s;
    if (int64_t(s.sums.size()) < p.in_cells) s.sums.assign(size_t(p.in_cells), A(0));
    s.widened.resize(size_t(b.tab.w.axis.out)), s.cell.resize(size_t(b.tab.w.axis.out));
    bool ok = true;
    for (int64_t i = task * chunk; i < std::min(planes, (task + 1) * chunk) && ok; ++i) {
      const int64_t n = i / b.C, c = i % b.C;
      switch (b.form) {
        case IndexForm::U8: ok = plane<T, uint8_t>(p, s, n, c); break;
        case IndexForm::I16: ok = plane<T, int16_t>(p, s, n, c); break;
        default: ok = plane<T, int32_t>(p, s, n, c); break;
      }
    }
    if (s.sums.size() * sizeof(A) > (size_t(8) << 20)) s = Scratch<A>{};  // huge planes: not kept on every thread
    return ok;
  });
}

}  // namespace

bool scatter_fits(const Backward& b) {
  const int64_t codes = b.tab.t.axis.kernel * b.tab.h.axis.kernel * b.tab.w.axis.kernel;
  const int64_t cells = b.tab.t.axis.in * b.tab.h.axis.in * b.tab.w.axis.in;
  return b.is_max && b.form != IndexForm::I64 && b.form != IndexForm::None && codes <= kMostCodes &&
         cells * b.esize <= (int64_t(64) << 20);
}

bool scatter_backward(const Backward& b) {
  const ScatterPlan p(b);
  switch (b.dtype) {
    case DType::f32: return planes<float>(p);
    case DType::f64: return planes<double>(p);
    case DType::bf16: return planes<bfloat16>(p);
    default: return planes<float16>(p);
  }
}

}  // namespace poolkit::cpu
