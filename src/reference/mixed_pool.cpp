#include <cmath>

#include "../core/validate.hpp"
#include "avg_window.hpp"
#include "max_window.hpp"
#include "poolkit/ops.hpp"

namespace poolkit::ref {
void mixed_pool_forward(const Geometry& g, const MixedOptions& opt, const TensorView& x, const TensorView& y) {
  validate::mixed_pool_forward(g, opt, x, y);
  Geometry g3 = detail::as3d(g);
  detail::dispatch_float(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    detail::View5<const T> xv(x);
    detail::View5<T> yv(y);
    const A lam = A(opt.lambda);
    detail::for_each_output(g3, xv.n, xv.c, [&](int64_t n, int64_t c, int64_t a, int64_t b, int64_t d) {
      A m = detail::window_max(g3, xv, n, c, a, b, d).value;
      A v = detail::window_avg(g3, opt.avg, xv, n, c, a, b, d);
      yv.at(n, c, a, b, d) = T(lam * m + (A(1) - lam) * v);
    });
  });
}

void mixed_pool_backward(const Geometry& g, const MixedOptions& opt, const TensorView& dy, const TensorView& x,
                         const TensorView& dx, double* dlambda) {
  validate::mixed_pool_backward(g, opt, dy, x, dx, dlambda);
  Geometry g3 = detail::as3d(g);
  detail::dispatch_float(dx.dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    detail::View5<const T> xv(x), dyv(dy);
    detail::View5<T> dxv(dx);
    const A lam = A(opt.lambda);
    double dl = 0;  // sum over outputs of dy * (max - avg)
    detail::for_each_output(g3, xv.n, xv.c, [&](int64_t n, int64_t c, int64_t a, int64_t b, int64_t d) {
      double m = double(detail::window_max(g3, xv, n, c, a, b, d).value);
      double v = double(detail::window_avg(g3, opt.avg, xv, n, c, a, b, d));
      dl += double(A(dyv.at(n, c, a, b, d))) * (m - v);
    });
    if (dlambda) *dlambda = dl;
    detail::for_each_input(g3, dxv.n, dxv.c, [&](int64_t n, int64_t c, int64_t t, int64_t h, int64_t w) {
      int64_t self = detail::flat3(g3, t, h, w);
      A sum = 0;
      detail::for_each_covering(g3, t, h, w, [&](int64_t a, int64_t b, int64_t d) {
        A gy = A(dyv.at(n, c, a, b, d));
        if (detail::window_max(g3, xv, n, c, a, b, d).flat == self) sum += lam * gy;
        sum += (A(1) - lam) * gy / A(detail::avg_divisor(g3, opt.avg, a, b, d));
      });
      dxv.at(n, c, t, h, w) = T(sum);
    });
  });
}

}  // namespace poolkit::ref
