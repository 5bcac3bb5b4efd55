#include "../core/validate.hpp"
#include "max_window.hpp"
#include "poolkit/ops.hpp"

namespace poolkit::ref {

void max_pool_forward(const Geometry& g, const TensorView& x, const TensorView& y, const TensorView& argmax) {
  validate::max_pool_forward(g, x, y, argmax);
  Geometry g3 = detail::as3d(g);
  detail::max_forward([&](int64_t, int64_t) { return g3; }, x, y, argmax);
}

void max_pool_backward(const Geometry& g, const TensorView& dy, const TensorView& argmax, const TensorView& x,
                       const TensorView& dx) {
  validate::max_pool_backward(g, dy, argmax, x, dx);
  Geometry g3 = detail::as3d(g);
  detail::max_backward([&](int64_t, int64_t) { return g3; }, dy, argmax, x, dx);
}

}  // namespace poolkit::ref
