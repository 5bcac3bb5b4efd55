#include "../core/validate.hpp"
#include "max_window.hpp"
#include "poolkit/ops.hpp"
#include "poolkit/rng.hpp"

namespace poolkit {
namespace {

// The geometry of plane (n, c): its samples in PyTorch's axis order (1-D: W; 2-D: W, H; 3-D: T, H, W).
struct FractionalPlanes {
  Geometry g;
  TensorView samples;
  Geometry operator()(int64_t n, int64_t c) const {
    double u[kMaxSpatial];
    for (int i = 0; i < g.rank; ++i) {
      int64_t k = g.rank == 2 ? 1 - i : i;
      int64_t off = n * samples.strides[0] + c * samples.strides[1] + k * samples.strides[2];
      u[i] = load_as_double(samples, off);
    }
    return ref::detail::as3d(with_fractional_samples(g, u));
  }
};

}  // namespace

void fractional_samples(uint64_t seed, const TensorView& samples) {
  if (samples.rank() != 3) fail("samples", "must be (N, C, rank)");
  if (samples.dtype != DType::f32 && samples.dtype != DType::f64)
    fail("samples", "must be float32 or float64", ErrorKind::Type);
  int64_t k = 0;
  for (int64_t n = 0; n < samples.shape[0]; ++n)
    for (int64_t c = 0; c < samples.shape[1]; ++c)
      for (int64_t i = 0; i < samples.shape[2]; ++i) {
        double u = uniform01(seed, uint64_t(k++));
        if (samples.dtype == DType::f32 && float(u) >= 1.0f) u = 0;  // keep [0, 1) after rounding
        store_from_double(samples, n * samples.strides[0] + c * samples.strides[1] + i * samples.strides[2], u);
      }
}

namespace ref {

void fractional_max_pool_forward(const Geometry& g, const TensorView& samples, const TensorView& x,
                                 const TensorView& y, const TensorView& argmax) {
  validate::fractional_max_pool_forward(g, samples, x, y, argmax);
  detail::max_forward(FractionalPlanes{g, samples}, x, y, argmax);
}

void fractional_max_pool_backward(const Geometry& g, const TensorView& samples, const TensorView& dy,
                                  const TensorView& argmax, const TensorView& x, const TensorView& dx) {
  validate::fractional_max_pool_backward(g, samples, dy, argmax, x, dx);
  detail::max_backward(FractionalPlanes{g, samples}, dy, argmax, x, dx);
}

}  // namespace ref
}  // namespace poolkit
