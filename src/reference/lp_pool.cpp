#include <cmath>

#include "../core/validate.hpp"
#include "avg_window.hpp"
#include "poolkit/ops.hpp"

namespace poolkit::ref {
namespace {

// x^e with the exact special cases PyTorch's pow uses (squares and cubes by multiplication, 0.5 by sqrt, and
// their reciprocals for -0.5, -1, -2).
template <class A>
A power(A v, double e) {
  if (e == 1) return v;
  if (e == 2) return v * v;
  if (e == 3) return v * v * v;
  if (e == 0.5) return std::sqrt(v);
  if (e == -0.5) return A(1) / std::sqrt(v);
  if (e == -1) return A(1) / v;
  if (e == -2) return A(1) / (v * v);
  return std::pow(v, A(e));
}

// The quantity raised to 1/p. Torch: K * avg(x^p), K the product of the kernel sizes, each step rounded to T
// as PyTorch's chain of tensor ops does. ONNX: the sum of |x|^p.
template <class T>
acc_t<T> pooled_power(const Geometry& g3, const LpOptions& opt, const detail::View5<const T>& x, int64_t n,
                      int64_t c, int64_t a, int64_t b, int64_t d) {
  using A = acc_t<T>;
  A sum = 0;
  if (opt.convention == LpConvention::Onnx) {
    detail::for_each_cell(g3, a, b, d, [&](int64_t t, int64_t h, int64_t w, int64_t) {
      sum += power(std::abs(A(x.at(n, c, t, h, w))), opt.p);
    });
    return sum;
  }
  detail::for_each_cell(g3, a, b, d, [&](int64_t t, int64_t h, int64_t w, int64_t) {
    sum += A(T(power(A(x.at(n, c, t, h, w)), opt.p)));
  });
  A avg = A(T(sum / A(detail::avg_divisor(g3, AvgOptions{}, a, b, d))));
  if (avg == 0) avg = 0;  // sign(avg) * relu(|avg|) turns -0 into +0
  return A(T(avg * A(g3.axes[0].kernel * g3.axes[1].kernel * g3.axes[2].kernel)));
}

}  // namespace

void lp_pool_forward(const Geometry& g, const LpOptions& opt, const TensorView& x, const TensorView& y) {
  validate::lp_pool_forward(g, opt, x, y);
  Geometry g3 = detail::as3d(g);
  detail::dispatch_float(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    detail::View5<const T> xv(x);
    detail::View5<T> yv(y);
    detail::for_each_output(g3, xv.n, xv.c, [&](int64_t n, int64_t c, int64_t a, int64_t b, int64_t d) {
      yv.at(n, c, a, b, d) = T(power(pooled_power(g3, opt, xv, n, c, a, b, d), 1.0 / opt.p));
    });
  });
}

void lp_pool_backward(const Geometry& g, const LpOptions& opt, const TensorView& dy, const TensorView& x,
                      const TensorView& dx) {
  validate::lp_pool_backward(g, opt, dy, x, dx);
  Geometry g3 = detail::as3d(g);
  detail::dispatch_float(dx.dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    detail::View5<const T> xv(x), dyv(dy);
    detail::View5<T> dxv(dx);
    const bool onnx = opt.convention == LpConvention::Onnx;
    // What every cell of window o receives, before the cell's own d(x^p)/dx. No gradient where the pooled
    // quantity is zero (PyTorch's relu there; ONNX's root has no derivative).
    auto out_factor = [&](int64_t n, int64_t c, int64_t a, int64_t b, int64_t d) -> A {
      A s = pooled_power(g3, opt, xv, n, c, a, b, d), gy = A(dyv.at(n, c, a, b, d));
      if (!(s != 0)) return 0;
      A f = gy / A(opt.p) * power(s, 1.0 / opt.p - 1.0);
      if (onnx) return f;
      return f * A(g3.axes[0].kernel * g3.axes[1].kernel * g3.axes[2].kernel) /
             A(detail::avg_divisor(g3, AvgOptions{}, a, b, d));
    };
    detail::for_each_input(g3, dxv.n, dxv.c, [&](int64_t n, int64_t c, int64_t t, int64_t h, int64_t w) {
      A sum = 0;
      detail::for_each_covering(g3, t, h, w, [&](int64_t a, int64_t b, int64_t d) { sum += out_factor(n, c, a, b, d); });
      A xi = A(xv.at(n, c, t, h, w));
      A slope = onnx ? A(opt.p) * power(std::abs(xi), opt.p - 1.0) * (xi > 0 ? A(1) : xi < 0 ? A(-1) : A(0))
                     : A(opt.p) * power(xi, opt.p - 1.0);
      dxv.at(n, c, t, h, w) = T(sum * slope);
    });
  });
}

}  // namespace poolkit::ref
