// Max unpooling on CUDA tensors; indices are checked on the device.
#include <algorithm>
#include <string>

#include "../backends.hpp"
#include "runtime.cuh"
#include "unpool_kernels.hpp"

namespace poolkit::cuda {
using namespace detail;

namespace {
[[noreturn]] void bad_index(int64_t plane) {
  fail("indices", "found an invalid max index (the output plane has " + std::to_string(plane) + " cells)",
       ErrorKind::Index);
}
}  // namespace

bool max_unpool_forward(const TensorView& x, const TensorView& indices, const TensorView& y) {
  const TensorView* ts[] = {&x, &indices, &y};
  Sizes3 in = spatial3(x), out = spatial3(y);
  int64_t out_cells = out.v[0] * out.v[1] * out.v[2];
  ErrorFlag err;
  with_types(x.dtype, fits_int32(std::max(x.numel(), y.numel()), ts, 3), [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    Scratch winner(size_t(y.numel()) * sizeof(I));
    check(cudaMemsetAsync(winner.p, 0xff, size_t(y.numel()) * sizeof(I), stream()), "cudaMemsetAsync");  // -1
    UnpoolWinners<I> w;
    w.indices = view5<const int64_t, I>(indices);
    w.winner = winner.as<I>();
    w.error = err.get();
    w.C = I(x.shape[1]);
    copy3(w.In, in);
    w.out_cells = I(out_cells);
    w.channels_last = walks_channels_last(x);
    launch(w, I(x.numel()));
    if (err.raised()) bad_index(out_cells);  // before y is touched
    UnpoolGather<T, I> f;
    f.x = view5<const T, I>(x);
    f.y = view5<T, I>(y);
    f.winner = winner.as<const I>();
    f.C = I(x.shape[1]);
    copy3(f.In, in);
    copy3(f.Out, out);
    f.channels_last = walks_channels_last(y);
    launch(f, I(y.numel()));
  });
  return true;
}

bool max_unpool_backward(const TensorView& dy, const TensorView& indices, const TensorView& dx) {
  const TensorView* ts[] = {&dy, &indices, &dx};
  Sizes3 in = spatial3(dx), out = spatial3(dy);
  ErrorFlag err;
  with_types(dx.dtype, fits_int32(std::max(dx.numel(), dy.numel()), ts, 3), [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    UnpoolBackward<T, I> f;
    f.dy = view5<const T, I>(dy);
    f.indices = view5<const int64_t, I>(indices);
    f.dx = view5<T, I>(dx);
    f.error = err.get();
    f.C = I(dx.shape[1]);
    copy3(f.In, in);
    copy3(f.Out, out);
    f.channels_last = walks_channels_last(dx);
    launch(f, I(dx.numel()));
  });
  if (err.raised()) bad_index(out.v[0] * out.v[1] * out.v[2]);
  return true;
}

}  // namespace poolkit::cuda
