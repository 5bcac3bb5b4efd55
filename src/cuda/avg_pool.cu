// Average, Lp and mixed pooling on CUDA tensors.
#include <algorithm>
#include <initializer_list>
#include <vector>

#include "../backends.hpp"
#include "avg_kernels.hpp"
#include "fast_kernels.hpp"
#include "runtime.cuh"

namespace poolkit::cuda {
namespace {
using namespace detail;

// Fills the fields every forward functor shares and launches it over y.
template <class F, class T, class I>
void run_forward(F f, const TensorView& x, const TensorView& y) {
  f.x = view5<const T, I>(x);
  f.y = view5<T, I>(y);
  f.C = I(x.shape[1]);
  copy3(f.O, spatial3(y));
  f.channels_last = walks_channels_last(y);
  launch(f, I(y.numel()));
}

template <class F, class T, class I>
void run_backward(F f, const TensorView& dy, const TensorView& dx) {
  f.dy = view5<const T, I>(dy);
  f.dx = view5<T, I>(dx);
  f.C = I(dx.shape[1]);
  copy3(f.In, spatial3(dx));
  f.channels_last = walks_channels_last(dx);
  launch(f, I(dx.numel()));
}

bool int32_ok(std::initializer_list<const TensorView*> ts) {
  int64_t total = 0;
  for (const TensorView* t : ts) total = std::max(total, t->rank() ? t->numel() : 0);
  return fits_int32(total, ts.begin(), int(ts.size()));
}

}  // namespace

bool avg_pool_forward(const Geometry& g, const AvgOptions& opt, const TensorView& x, const TensorView& y) {
  Geometry g3 = pad3(g);
  with_types(x.dtype, int32_ok({&x, &y}), [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    if (tiled2_eligible(g3, x, y, sizeof(T))) {
      constexpr int V = Vec16<T>::n;
      AvgForwardTiled2<T, I> f{g3, avg_params(opt), x.ptr<const T>(), y.ptr<T>(), I(g3.axes[2].out / V)};
      launch(f, I(y.numel() / V));
      return;
    }
    if constexpr (std::is_same_v<I, int32_t>)
      if (fast_axes_eligible(g3)) {
        fast_avg_forward<T>(g3, opt, x, y, channel_lanes<T>({&x, &y}), 4, launch_fast());
        return;
      }
    AvgForward<T, I> f;
    f.g = g3;
    f.opt = avg_params(opt);
    run_forward<AvgForward<T, I>, T, I>(f, x, y);
  });
  return true;
}

bool avg_pool_backward(const Geometry& g, const AvgOptions& opt, const TensorView& dy, const TensorView& dx) {
  Geometry g3 = pad3(g);
  with_types(dx.dtype, int32_ok({&dy, &dx}), [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    if constexpr (std::is_same_v<I, int32_t>)
      if (fast_axes_eligible(g3)) {
        fast_avg_backward<T>(g3, opt, dy, dx, channel_lanes<T>({&dy, &dx}), 4, scatters(g3, dx), launch_fast(),
                             zero_dense);
        return;
      }
    AvgBackward<T, I> f;
    f.g = g3;
    f.opt = avg_params(opt);
    run_backward<AvgBackward<T, I>, T, I>(f, dy, dx);
  });
  return true;
}

bool lp_pool_forward(const Geometry& g, const LpOptions& opt, const TensorView& x, const TensorView& y) {
  with_types(x.dtype, int32_ok({&x, &y}), [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    LpForward<T, I> f;
    f.g = pad3(g);
    f.p = opt.p;
    f.onnx = opt.convention == LpConvention::Onnx;
    run_forward<LpForward<T, I>, T, I>(f, x, y);
  });
  return true;
}

bool lp_pool_backward(const Geometry& g, const LpOptions& opt, const TensorView& dy, const TensorView& x,
                      const TensorView& dx) {
  with_types(dx.dtype, int32_ok({&dy, &x, &dx}), [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    LpBackward<T, I> f;
    f.g = pad3(g);
    f.p = opt.p;
    f.onnx = opt.convention == LpConvention::Onnx;
    f.x = view5<const T, I>(x);
    run_backward<LpBackward<T, I>, T, I>(f, dy, dx);
  });
  return true;
}

bool mixed_pool_forward(const Geometry& g, const MixedOptions& opt, const TensorView& x, const TensorView& y) {
  with_types(x.dtype, int32_ok({&x, &y}), [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    MixedForward<T, I> f;
    f.g = pad3(g);
    f.opt = avg_params(opt.avg);
    f.lambda = opt.lambda;
    run_forward<MixedForward<T, I>, T, I>(f, x, y);
  });
  return true;
}

bool mixed_pool_backward(const Geometry& g, const MixedOptions& opt, const TensorView& dy, const TensorView& x,
                         const TensorView& dx, double* dlambda) {
  with_types(dx.dtype, int32_ok({&dy, &x, &dx}), [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    if (dlambda) {  // one term per output, added on the host in the reference's order
      int64_t outputs = dy.numel();
      Scratch terms(size_t(outputs) * sizeof(double));
      MixedLambdaTerms<T, I> f;
      f.g = pad3(g);
      f.opt = avg_params(opt.avg);
      f.dy = view5<const T, I>(dy);
      f.x = view5<const T, I>(x);
      f.terms = terms.as<double>();
      f.C = I(dy.shape[1]);
      copy3(f.O, spatial3(dy));
      launch(f, I(outputs));
      std::vector<double> h(static_cast<size_t>(outputs));
      check(cudaMemcpyAsync(h.data(), terms.p, h.size() * sizeof(double), cudaMemcpyDeviceToHost, stream()),
            "cudaMemcpyAsync");
      check(cudaStreamSynchronize(stream()), "cudaStreamSynchronize");
      double sum = 0;
      for (double v : h) sum += v;
      *dlambda = sum;
    }
    MixedBackward<T, I> f;
    f.g = pad3(g);
    f.opt = avg_params(opt.avg);
    f.lambda = opt.lambda;
    f.x = view5<const T, I>(x);
    run_backward<MixedBackward<T, I>, T, I>(f, dy, dx);
  });
  return true;
}

}  // namespace poolkit::cuda
