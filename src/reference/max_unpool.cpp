#include <string>

#include "../core/validate.hpp"
#include "max_window.hpp"
#include "poolkit/ops.hpp"

namespace poolkit::ref {
void max_unpool_forward(const TensorView& x, const TensorView& indices, const TensorView& y) {
  validate::max_unpool_forward(x, indices, y);
  detail::dispatch_max(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    detail::View5<const T> xv(x);
    detail::View5<const int64_t> iv(indices);
    detail::View5<T> yv(y);
    auto in = detail::spatial3(x), out = detail::spatial3(y);
    for (int64_t n = 0; n < xv.n; ++n)
      for (int64_t c = 0; c < xv.c; ++c) {
        for (int64_t a = 0; a < out[0]; ++a)
          for (int64_t b = 0; b < out[1]; ++b)
            for (int64_t d = 0; d < out[2]; ++d) yv.at(n, c, a, b, d) = T(0);
        for (int64_t a = 0; a < in[0]; ++a)  // in input order: the last writer of a cell wins
          for (int64_t b = 0; b < in[1]; ++b)
            for (int64_t d = 0; d < in[2]; ++d) {
              int64_t v = iv.at(n, c, a, b, d);
              yv.at(n, c, v / (out[1] * out[2]), (v / out[2]) % out[1], v % out[2]) = xv.at(n, c, a, b, d);
            }
      }
  });
}

void max_unpool_backward(const TensorView& dy, const TensorView& indices, const TensorView& dx) {
  validate::max_unpool_backward(dy, indices, dx);
  detail::dispatch_max(dx.dtype, [&](auto tag) {
    using T = decltype(tag);
    detail::View5<const T> dyv(dy);
    detail::View5<const int64_t> iv(indices);
    detail::View5<T> dxv(dx);
    auto in = detail::spatial3(dx), out = detail::spatial3(dy);
    for (int64_t n = 0; n < dxv.n; ++n)
      for (int64_t c = 0; c < dxv.c; ++c)
        for (int64_t a = 0; a < in[0]; ++a)
          for (int64_t b = 0; b < in[1]; ++b)
            for (int64_t d = 0; d < in[2]; ++d) {
              int64_t v = iv.at(n, c, a, b, d);
              dxv.at(n, c, a, b, d) = dyv.at(n, c, v / (out[1] * out[2]), (v / out[2]) % out[1], v % out[2]);
            }
  });
}

}  // namespace poolkit::ref
