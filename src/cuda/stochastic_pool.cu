// Stochastic pooling on CUDA tensors.
#include "../backends.hpp"
#include "runtime.cuh"
#include "stochastic_kernels.hpp"

namespace poolkit::cuda {
using namespace detail;

bool stochastic_pool_forward(const Geometry& g, const StochasticOptions& opt, const TensorView& x,
                             const TensorView& y) {
  const TensorView* ts[] = {&x, &y};
  with_types(x.dtype, fits_int32(x.numel(), ts, 2), [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    StochasticForward<T, I> f;
    f.g = pad3(g);
    f.training = opt.training;
    f.seed = opt.seed;
    f.x = view5<const T, I>(x);
    f.y = view5<T, I>(y);
    f.C = I(x.shape[1]);
    copy3(f.O, spatial3(y));
    f.channels_last = walks_channels_last(y);
    launch(f, I(y.numel()));
  });
  return true;
}

bool stochastic_pool_backward(const Geometry& g, const StochasticOptions& opt, const TensorView& dy,
                              const TensorView& x, const TensorView& dx) {
  const TensorView* ts[] = {&dy, &x, &dx};
  with_types(dx.dtype, fits_int32(dx.numel(), ts, 3), [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    StochasticBackward<T, I> f;
    f.g = pad3(g);
    f.training = opt.training;
    f.seed = opt.seed;
    f.dy = view5<const T, I>(dy);
    f.x = view5<const T, I>(x);
    f.dx = view5<T, I>(dx);
    f.C = I(dx.shape[1]);
    copy3(f.In, spatial3(dx));
    f.channels_last = walks_channels_last(dx);
    launch(f, I(dx.numel()));
  });
  return true;
}

}  // namespace poolkit::cuda
