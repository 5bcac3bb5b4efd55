#include "generic.hpp"

#include <limits>
#include <type_traits>
#include <vector>

#include "common.hpp"

namespace poolkit::cpu {
namespace {

template <class T> bool is_nan(T v) { return v != v; }

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
          A m = std::is_integral_v<A> ? std::numeric_limits<A>::lowest() : -std::numeric_limits<A>::infinity();
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

// The floating types, and with `integers` those max pooling takes too.
template <class F>
bool for_type(DType t, bool integers, F&& f) {
  switch (t) {
    case DType::f32: return f(float{});
    case DType::f64: return f(double{});
    case DType::bf16: return f(bfloat16{});
    case DType::f16: return f(float16{});
    case DType::u8: return integers && f(uint8_t{});
    case DType::i8: return integers && f(int8_t{});
    case DType::i16: return integers && f(int16_t{});
    case DType::i32: return integers && f(int32_t{});
    case DType::i64: return integers && f(int64_t{});
  }
  return false;
}

}  // namespace

bool generic_forward(bool is_max, const Geometry& g, const AvgOptions& opt, const TensorView& x, const TensorView& y,
                     const TensorView& argmax) {
  Geometry g3 = as3d(g);
  Plane p{g3, Tables(g3), opt};
  View5 xv(x), yv(y), av(argmax);
  IndexForm form = index_form(argmax);
  const int64_t C = x.shape[1];
  return for_type(x.dtype, is_max, [&](auto tag) {  // (int64 average: the reference)
    using T = decltype(tag);
    return parallel_for(x.shape[0] * C, x.numel() + y.numel(), [&](int64_t i) {
      forward_plane<T>(p, is_max, xv, yv, av, form, i / C, i % C);
      return true;
    });
  });
}

}  // namespace poolkit::cpu
