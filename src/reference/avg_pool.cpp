#include "../core/validate.hpp"
#include "avg_window.hpp"
#include "poolkit/ops.hpp"

namespace poolkit::ref {

void avg_pool_forward(const Geometry& g, const AvgOptions& opt, const TensorView& x, const TensorView& y) {
  validate::avg_pool_forward(g, opt, x, y);
  Geometry g3 = detail::as3d(g);
  auto pool = [&](auto tag) {
    using T = decltype(tag);
    detail::View5<const T> xv(x);
    detail::View5<T> yv(y);
    detail::for_each_output(g3, xv.n, xv.c, [&](int64_t n, int64_t c, int64_t a, int64_t b, int64_t d) {
      yv.at(n, c, a, b, d) = T(detail::window_avg(g3, opt, xv, n, c, a, b, d));
    });
  };
  if (x.dtype == DType::i64) pool(int64_t{});  // (validate lets int64 through for fixed windows alone)
  else detail::dispatch_float(x.dtype, pool);
}

void avg_pool_backward(const Geometry& g, const AvgOptions& opt, const TensorView& dy, const TensorView& dx) {
  validate::avg_pool_backward(g, opt, dy, dx);
  Geometry g3 = detail::as3d(g);
  detail::dispatch_float(dx.dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    detail::View5<const T> dyv(dy);
    detail::View5<T> dxv(dx);
    detail::for_each_input(g3, dxv.n, dxv.c, [&](int64_t n, int64_t c, int64_t t, int64_t h, int64_t w) {
      A sum = 0;
      detail::for_each_covering(g3, t, h, w, [&](int64_t a, int64_t b, int64_t d) {
        sum += A(dyv.at(n, c, a, b, d)) / A(detail::avg_divisor(g3, opt, a, b, d));
      });
      dxv.at(n, c, t, h, w) = T(sum);
    });
  });
}

}  // namespace poolkit::ref
