#include "../core/validate.hpp"
#include "plane.hpp"
#include "poolkit/ops.hpp"
#include "poolkit/rng.hpp"

namespace poolkit::ref {
namespace {

// Training: the flat plane index of the cell drawn for window (a, b, d) of plane (n, c). Weights are max(x, 0);
// the draw r in [0, 1) comes from (seed, flat output index); the first cell whose running weight exceeds
// r * total is taken. With no positive weight, the first cell read.
template <class T>
int64_t drawn_cell(const Geometry& g3, const StochasticOptions& opt, const detail::View5<const T>& x, int64_t n,
                   int64_t c, int64_t a, int64_t b, int64_t d) {
  using A = acc_t<T>;
  A total = 0;
  int64_t first = -1, last_positive = -1;
  detail::for_each_cell(g3, a, b, d, [&](int64_t t, int64_t h, int64_t w, int64_t) {
    A v = A(x.at(n, c, t, h, w));
    if (first < 0) first = detail::flat3(g3, t, h, w);
    if (v > 0) { total += v; last_positive = detail::flat3(g3, t, h, w); }
  });
  if (!(total > 0)) return first;
  uint64_t counter = uint64_t(((n * x.c + c) * g3.axes[0].out + a) * g3.axes[1].out * g3.axes[2].out +
                              b * g3.axes[2].out + d);
  A target = A(uniform01(opt.seed, counter)) * total;
  A run = 0;
  int64_t pick = last_positive;  // when rounding keeps every running sum at or below the target
  bool found = false;
  detail::for_each_cell(g3, a, b, d, [&](int64_t t, int64_t h, int64_t w, int64_t) {
    A v = A(x.at(n, c, t, h, w));
    if (found || !(v > 0)) return;
    run += v;
    if (run > target) { pick = detail::flat3(g3, t, h, w); found = true; }
  });
  return pick;
}

// Inference: sum(w * x) / sum(w) with w = max(x, 0); zero when no weight is positive.
template <class T>
void weighted_sums(const Geometry& g3, const detail::View5<const T>& x, int64_t n, int64_t c, int64_t a, int64_t b,
                   int64_t d, acc_t<T>& num, acc_t<T>& den) {
  num = 0;
  den = 0;
  detail::for_each_cell(g3, a, b, d, [&](int64_t t, int64_t h, int64_t w, int64_t) {
    acc_t<T> v = acc_t<T>(x.at(n, c, t, h, w));
    if (v > 0) { num += v * v; den += v; }
  });
}

int64_t plane_cell(const Geometry& g3, int64_t flat, int axis) {
  if (axis == 2) return flat % g3.axes[2].in;
  if (axis == 1) return (flat / g3.axes[2].in) % g3.axes[1].in;
  return flat / (g3.axes[2].in * g3.axes[1].in);
}

}  // namespace

void stochastic_pool_forward(const Geometry& g, const StochasticOptions& opt, const TensorView& x,
                             const TensorView& y) {
  validate::stochastic_pool_forward(g, opt, x, y);
  Geometry g3 = detail::as3d(g);
  detail::dispatch_float(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    detail::View5<const T> xv(x);
    detail::View5<T> yv(y);
    detail::for_each_output(g3, xv.n, xv.c, [&](int64_t n, int64_t c, int64_t a, int64_t b, int64_t d) {
      if (opt.training) {
        int64_t f = drawn_cell(g3, opt, xv, n, c, a, b, d);
        yv.at(n, c, a, b, d) = xv.at(n, c, plane_cell(g3, f, 0), plane_cell(g3, f, 1), plane_cell(g3, f, 2));
      } else {
        A num, den;
        weighted_sums(g3, xv, n, c, a, b, d, num, den);
        yv.at(n, c, a, b, d) = T(den > 0 ? num / den : A(0));
      }
    });
  });
}

void stochastic_pool_backward(const Geometry& g, const StochasticOptions& opt, const TensorView& dy,
                              const TensorView& x, const TensorView& dx) {
  validate::stochastic_pool_backward(g, opt, dy, x, dx);
  Geometry g3 = detail::as3d(g);
  detail::dispatch_float(dx.dtype, [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    detail::View5<const T> xv(x), dyv(dy);
    detail::View5<T> dxv(dx);
    detail::for_each_input(g3, dxv.n, dxv.c, [&](int64_t n, int64_t c, int64_t t, int64_t h, int64_t w) {
      int64_t self = detail::flat3(g3, t, h, w);
      A xi = A(xv.at(n, c, t, h, w)), sum = 0;
      detail::for_each_covering(g3, t, h, w, [&](int64_t a, int64_t b, int64_t d) {
        A gy = A(dyv.at(n, c, a, b, d));
        if (opt.training) {
          if (drawn_cell(g3, opt, xv, n, c, a, b, d) == self) sum += gy;
          return;
        }
        A num, den;
        weighted_sums(g3, xv, n, c, a, b, d, num, den);
        if (den > 0 && xi > 0) sum += gy * (A(2) * xi - num / den) / den;  // d(num/den)/dx_i
      });
      dxv.at(n, c, t, h, w) = T(sum);
    });
  });
}

}  // namespace poolkit::ref
