#include "generic.hpp"

#include <limits>
#include <vector>

#include "common.hpp"

namespace poolkit::cpu {
namespace {

template <class T> bool is_nan(T v) { return v != v; }

int64_t load_index(const View5& am, IndexForm form, int64_t off) {
  switch (form) {
    case IndexForm::U8: return *am.at<uint8_t>(off);
    case IndexForm::I16: return *am.at<int16_t>(off);
    case IndexForm::I32: return *am.at<int32_t>(off);
    default: return *am.at<int64_t>(off);
  }
}
void store_index(const View5& am, IndexForm form, int64_t off, int64_t v) {
  switch (form) {
    case IndexForm::U8: *am.at<uint8_t>(off) = uint8_t(v); return;
    case IndexForm::I16: *am.at<int16_t>(off) = int16_t(v); return;
    case IndexForm::I32: *am.at<int32_t>(off) = int32_t(v); return;
    case IndexForm::I64: *am.at<int64_t>(off) = v; return;
    case IndexForm::None: return;
  }
}

struct Plane {
  Geometry g3;
  Tables tab;
  AvgOptions opt;
  std::vector<int32_t> tap_of;  // window-local argmax -> (jt, jh, jw) packed by 3 (empty: decode by division)
  int64_t divisor(int64_t a, int64_t b, int64_t d) const {
    if (opt.divisor_override) return *opt.divisor_override;
    bool inc = opt.count_include_pad;
    return g3.axes[0].divisor(a, inc) * g3.axes[1].divisor(b, inc) * g3.axes[2].divisor(d, inc);
  }
  // Visits the valid taps of window (ot, oh, ow) in window order: f(t, h, w, local).
  template <class F>
  void taps(int64_t ot, int64_t oh, int64_t ow, F&& f) const {
    const AxisTable &A = tab.t, &B = tab.h, &W = tab.w;
    for (int64_t jt = A.first[ot]; jt < A.last[ot]; ++jt)
      for (int64_t jh = B.first[oh]; jh < B.last[oh]; ++jh)
        for (int64_t jw = W.first[ow]; jw < W.last[ow]; ++jw)
          f(A.pos(ot, jt), B.pos(oh, jh), W.pos(ow, jw), tab.local(jt, jh, jw));
  }
  // The flat input cell a saved argmax names, or -1 when it is not a cell of window (ot, oh, ow).
  int64_t cell(IndexForm form, int64_t v, int64_t ot, int64_t oh, int64_t ow) const {
    const AxisTable* ax[3] = {&tab.t, &tab.h, &tab.w};
    int64_t o[3] = {ot, oh, ow}, j[3], pos[3];
    if (form == IndexForm::I64) {
      int64_t H = tab.h.axis.in, W = tab.w.axis.in;
      if (v < 0 || v >= tab.t.axis.in * H * W) return -1;
      pos[0] = v / (H * W), pos[1] = (v / W) % H, pos[2] = v % W;
      for (int i = 0; i < 3; ++i) j[i] = ax[i]->axis.tap_at(o[i], pos[i]);
    } else if (!tap_of.empty()) {
      if (v < 0 || v >= int64_t(tap_of.size() / 3)) return -1;
      for (int i = 0; i < 3; ++i) j[i] = tap_of[size_t(3 * v + i)], pos[i] = ax[i]->pos(o[i], j[i]);
    } else {
      if (v < 0) return -1;
      for (int i = 2; i >= 0; --i) j[i] = v % ax[i]->axis.kernel, v /= ax[i]->axis.kernel;
      if (v != 0) return -1;
      for (int i = 0; i < 3; ++i) pos[i] = ax[i]->pos(o[i], j[i]);
    }
    for (int i = 0; i < 3; ++i)
      if (j[i] < ax[i]->first[o[i]] || j[i] >= ax[i]->last[o[i]]) return -1;
    return tab.flat(pos[0], pos[1], pos[2]);
  }
};

template <class T>
void forward_plane(const Plane& p, bool is_max, const View5& x, const View5& y, const View5& am, IndexForm form,
                   int64_t n, int64_t c) {
  using A = acc_t<T>;
  const Axis *ax = p.g3.axes;
  for (int64_t ot = 0; ot < ax[0].out; ++ot)
    for (int64_t oh = 0; oh < ax[1].out; ++oh)
      for (int64_t ow = 0; ow < ax[2].out; ++ow) {
        const int64_t yo = y.offset(n, c, ot, oh, ow);
        if (is_max) {
          A m = -std::numeric_limits<A>::infinity();
          int64_t code = -1;
          p.taps(ot, oh, ow, [&](int64_t t, int64_t h, int64_t w, int64_t local) {
            A v = A(*x.at<T>(x.offset(n, c, t, h, w)));
            if (code < 0 || v > m || is_nan(v)) {
              if (v > m || is_nan(v)) m = v;
              code = form == IndexForm::I64 ? p.tab.flat(t, h, w) : local;
            }
          });
          *y.at<T>(yo) = T(m);
          if (form != IndexForm::None) store_index(am, form, am.offset(n, c, ot, oh, ow), code);
        } else {
          A sum = 0;
          p.taps(ot, oh, ow, [&](int64_t t, int64_t h, int64_t w, int64_t) { sum += A(*x.at<T>(x.offset(n, c, t, h, w))); });
          *y.at<T>(yo) = T(sum / A(p.divisor(ot, oh, ow)));
        }
      }
}

template <class T>
bool backward_plane(const Plane& p, bool is_max, const View5& dy, const View5& am, IndexForm form, const View5& dx,
                    int64_t n, int64_t c) {
  using A = acc_t<T>;
  const Axis *ax = p.g3.axes;
  thread_local std::vector<A> acc;
  acc.assign(size_t(ax[0].in * ax[1].in * ax[2].in), A(0));
  for (int64_t ot = 0; ot < ax[0].out; ++ot)
    for (int64_t oh = 0; oh < ax[1].out; ++oh)
      for (int64_t ow = 0; ow < ax[2].out; ++ow) {
        const int64_t yo = dy.offset(n, c, ot, oh, ow);
        A g = A(*dy.at<T>(yo));
        if (is_max) {
          int64_t cell = p.cell(form, load_index(am, form, am.offset(n, c, ot, oh, ow)), ot, oh, ow);
          if (cell < 0) return false;
          acc[size_t(cell)] += g;
        } else {
          A q = g / A(p.divisor(ot, oh, ow));
          p.taps(ot, oh, ow, [&](int64_t t, int64_t h, int64_t w, int64_t) { acc[size_t(p.tab.flat(t, h, w))] += q; });
        }
      }
  size_t i = 0;
  for (int64_t t = 0; t < ax[0].in; ++t)
    for (int64_t h = 0; h < ax[1].in; ++h)
      for (int64_t w = 0; w < ax[2].in; ++w) *dx.at<T>(dx.offset(n, c, t, h, w)) = T(acc[i++]);
  return true;
}

template <class F>
bool for_float(DType t, F&& f) {
  switch (t) {
    case DType::f32: return f(float{});
    case DType::f64: return f(double{});
    case DType::bf16: return f(bfloat16{});
    case DType::f16: return f(float16{});
    default: return false;
  }
}

}  // namespace

bool generic_forward(bool is_max, const Geometry& g, const AvgOptions& opt, const TensorView& x, const TensorView& y,
                     const TensorView& argmax) {
  Geometry g3 = as3d(g);
  Plane p{g3, Tables(g3), opt, {}};
  View5 xv(x), yv(y), av(argmax);
  IndexForm form = index_form(argmax);
  const int64_t C = x.shape[1];
  return for_float(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    return parallel_for(x.shape[0] * C, x.numel() + y.numel(), [&](int64_t i) {
      forward_plane<T>(p, is_max, xv, yv, av, form, i / C, i % C);
      return true;
    });
  });
}

bool generic_backward(bool is_max, const Geometry& g, const AvgOptions& opt, const TensorView& dy,
                      const TensorView& argmax, const TensorView& dx) {
  if (is_max && !argmax.data) return false;
  Geometry g3 = as3d(g);
  Plane p{g3, Tables(g3), opt, {}};
  View5 dyv(dy), dxv(dx), av(argmax);
  IndexForm form = index_form(argmax);
  const int64_t K0 = g3.axes[0].kernel, K1 = g3.axes[1].kernel, K2 = g3.axes[2].kernel;
  if (is_max && form != IndexForm::I64 && K0 * K1 * K2 <= (int64_t(1) << 16))
    for (int64_t a = 0; a < K0; ++a)
      for (int64_t b = 0; b < K1; ++b)
        for (int64_t c = 0; c < K2; ++c) p.tap_of.insert(p.tap_of.end(), {int32_t(a), int32_t(b), int32_t(c)});
  const int64_t C = dx.shape[1];
  return for_float(dx.dtype, [&](auto tag) {
    using T = decltype(tag);
    return parallel_for(dx.shape[0] * C, dx.numel() + dy.numel(), [&](int64_t i) {
      return backward_plane<T>(p, is_max, dyv, av, form, dxv, i / C, i % C);
    });
  });
}

}  // namespace poolkit::cpu
