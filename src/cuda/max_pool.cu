// Max, adaptive max, global max and fractional max pooling on CUDA tensors.
#include <memory>
#include <vector>

#include "../backends.hpp"
#include "fast_kernels.hpp"
#include "max_kernels.hpp"
#include "runtime.cuh"

namespace poolkit::cuda {
namespace {
using namespace detail;

// The per-plane samples in three-axis order (leading unit axes 0), copied to the device.
std::unique_ptr<Scratch> upload_samples(const Geometry& g, const TensorView& s) {
  int64_t N = s.shape[0], C = s.shape[1];
  std::vector<double> h(size_t(N * C * 3), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int i = 0; i < g.rank; ++i) {
        int64_t k = g.rank == 2 ? 1 - i : i;  // PyTorch's order: 2-D samples are (W, H)
        h[size_t((n * C + c) * 3 + i + 3 - g.rank)] =
            load_as_double(s, n * s.strides[0] + c * s.strides[1] + k * s.strides[2]);
      }
  auto mem = std::make_unique<Scratch>(h.size() * sizeof(double));
  check(cudaMemcpyAsync(mem->p, h.data(), h.size() * sizeof(double), cudaMemcpyHostToDevice, stream()),
        "cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream()), "cudaStreamSynchronize");  // h is freed on return
  return mem;
}

void forward(const Geometry& g, const double* samples, const TensorView& x, const TensorView& y,
             const TensorView& argmax) {
  Geometry g3 = pad3(g);
  const TensorView* ts[] = {&x, &y, &argmax};
  int64_t total = y.numel();
  with_types(x.dtype, fits_int32(total, ts, 3), [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    if (!samples && tiled2_eligible(g3, x, y, sizeof(T)) && (!argmax.data || argmax.is_contiguous())) {
      constexpr int V = Vec16<T>::n;
      MaxForwardTiled2<T, I> f{g3, x.ptr<const T>(), y.ptr<T>(), argmax_view(argmax), I(g3.axes[2].out / V)};
      launch(f, I(total / V));
      return;
    }
    if constexpr (std::is_same_v<I, int32_t>)
      if (!samples && fast_axes_eligible(g3)) {
        fast_max_forward<T>(g3, x, y, argmax, channel_lanes<T>({&x, &y}), 4, launch_fast());
        return;
      }
    MaxForward<T, I> f;
    f.g = g3;
    f.samples = samples;
    f.x = view5<const T, I>(x);
    f.y = view5<T, I>(y);
    f.argmax = argmax_view(argmax);
    f.C = I(x.shape[1]);
    copy3(f.O, spatial3(y));
    f.channels_last = walks_channels_last(y);
    launch(f, I(total));
  });
}

void backward(const Geometry& g, const double* samples, const TensorView& dy, const TensorView& argmax,
              const TensorView& x, const TensorView& dx) {
  Geometry g3 = pad3(g);
  const TensorView* ts[] = {&dy, &argmax, &x, &dx};
  int64_t total = dx.numel();
  std::unique_ptr<ErrorFlag> err;
  if (argmax.data) err = std::make_unique<ErrorFlag>();
  with_types(dx.dtype, fits_int32(total, ts, 4), [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    if constexpr (std::is_same_v<I, int32_t>)
      if (!samples && argmax.data && fast_axes_eligible(g3)) {
        fast_max_backward<T>(g3, dy, argmax, dx, err->get(), channel_lanes<T>({&dy, &dx}), 4,
                             scatters(g3, dx), launch_fast(), zero_dense);
        return;
      }
    MaxBackward<T, I> f;
    f.g = g3;
    f.samples = samples;
    f.dy = view5<const T, I>(dy);
    f.x = view5<const T, I>(x.data ? x : dx);
    f.dx = view5<T, I>(dx);
    f.argmax = argmax_view(argmax);
    f.error = err ? err->get() : nullptr;
    f.C = I(dx.shape[1]);
    copy3(f.In, spatial3(dx));
    f.channels_last = walks_channels_last(dx);
    launch(f, I(total));
  });
  if (err && err->raised())
    fail("argmax", "a value does not name a cell inside its window", ErrorKind::Index);
}

}  // namespace

bool max_pool_forward(const Geometry& g, const TensorView& x, const TensorView& y, const TensorView& argmax) {
  forward(g, nullptr, x, y, argmax);
  return true;
}

bool max_pool_backward(const Geometry& g, const TensorView& dy, const TensorView& argmax, const TensorView& x,
                       const TensorView& dx) {
  backward(g, nullptr, dy, argmax, x, dx);
  return true;
}

bool fractional_max_pool_forward(const Geometry& g, const TensorView& samples, const TensorView& x,
                                 const TensorView& y, const TensorView& argmax) {
  auto s = upload_samples(g, samples);
  forward(g, s->as<const double>(), x, y, argmax);
  return true;
}

bool fractional_max_pool_backward(const Geometry& g, const TensorView& samples, const TensorView& dy,
                                  const TensorView& argmax, const TensorView& x, const TensorView& dx) {
  auto s = upload_samples(g, samples);
  backward(g, s->as<const double>(), dy, argmax, x, dx);
  return true;
}

}  // namespace poolkit::cuda
