// The XLA FFI handlers (CPU): each wraps XLA's buffers as views and calls one operator of the core, which runs
// on poolkit's threads. A poolkit::Error comes back as an ffi::Error carrying its message (argument and rule).
#include "handlers.hpp"

#include <algorithm>
#include <exception>
#include <vector>

#include "poolkit/error.hpp"
#include "poolkit/ops.hpp"
#include "views.hpp"

namespace poolkit::jax_ffi {
namespace {

using Buf = ffi::AnyBuffer;
using Ret = ffi::Result<ffi::AnyBuffer>;
using Attrs = ffi::Dictionary;

template <class F>
ffi::Error guarded(F&& f) {
  try {
    f();
    return ffi::Error::Success();
  } catch (const Error& e) {
    return ffi::Error::InvalidArgument(e.what());
  } catch (const std::exception& e) {
    return ffi::Error::Internal(std::string("poolkit: ") + e.what());
  }
}

AvgOptions avg_options(const Attrs& a) {
  AvgOptions o;
  o.count_include_pad = attr<int64_t>(a, "count_include_pad") != 0;
  if (auto d = a.get<int64_t>("divisor_override"); d.has_value()) o.divisor_override = *d;
  return o;
}

LpOptions lp_options(const Attrs& a) {
  LpOptions o;
  o.p = attr<double>(a, "norm_type");
  o.convention = attr<int64_t>(a, "onnx_convention") != 0 ? LpConvention::Onnx : LpConvention::Torch;
  return o;
}

StochasticOptions stochastic_options(const Attrs& a) {
  return StochasticOptions{attr<int64_t>(a, "training") != 0, uint64_t(attr<int64_t>(a, "seed"))};
}

// Mixed pooling's lambda comes as a buffer (it is differentiable): one value, or one per group of N under vmap
// (the mapped axes lead, so group g is the g-th of lambda.size equal slices of N).
double scalar_at(const Buf& b, int64_t i) {
  if (b.element_type() == ffi::DataType::F64) return static_cast<const double*>(b.untyped_data())[i];
  if (b.element_type() == ffi::DataType::F32) return static_cast<const float*>(b.untyped_data())[i];
  fail("lambda_", "must be float32 or float64", ErrorKind::Type);
}

void put_scalar(Ret& b, int64_t i, double v) {
  if (b->element_type() == ffi::DataType::F64) static_cast<double*>(b->untyped_data())[i] = v;
  else static_cast<float*>(b->untyped_data())[i] = float(v);
}

MixedOptions mixed_options(const Attrs& a, double lambda) {
  MixedOptions o;
  o.lambda = lambda;
  o.avg = avg_options(a);
  return o;
}

// Calls f(group) once per lambda value, with `views` narrowed to that group's slice of N.
template <class F>
void per_lambda_group(const Buf& lambda, std::initializer_list<TensorView*> views, F&& f) {
  const int64_t groups = int64_t(lambda.element_count()), n = (*views.begin())->shape[0];
  if (groups < 1 || n % groups != 0)
    fail("lambda_", "must hold one value, or one per vmapped batch entry (got " + std::to_string(groups) +
                        " values for a batch of " + std::to_string(n) + ")");
  std::vector<TensorView> whole;
  for (auto* v : views) whole.push_back(*v);
  for (int64_t g = 0; g < groups; ++g) {
    size_t i = 0;
    for (auto* v : views) *v = slice_n(whole[i++], g * (n / groups), n / groups);
    f(g);
  }
}

ffi::Error max_forward(Buf x, Ret y, Attrs a) {
  return guarded([&] {
    Layout l = layout_of(a);
    TensorView xv = view_of(x, l, "input");
    max_pool_forward(geometry_of(a, spatial_size(xv)), xv, output_view(*y, l, "output"), {});
  });
}

ffi::Error max_forward_argmax(Buf x, Ret y, Ret argmax, Attrs a) {
  return guarded([&] {
    Layout l = layout_of(a);
    TensorView xv = view_of(x, l, "input");
    max_pool_forward(geometry_of(a, spatial_size(xv)), xv, output_view(*y, l, "output"),
                     output_view(*argmax, l, "indices"));
  });
}

ffi::Error max_backward(Buf dy, Buf argmax, Ret dx, Attrs a) {
  return guarded([&] {
    Layout l = layout_of(a);
    TensorView dxv = output_view(*dx, l, "grad_input");
    max_pool_backward(geometry_of(a, spatial_size(dxv)), view_of(dy, l, "grad_output"), view_of(argmax, l, "indices"),
                      {}, dxv);
  });
}

ffi::Error avg_forward(Buf x, Ret y, Attrs a) {
  return guarded([&] {
    Layout l = layout_of(a);
    TensorView xv = view_of(x, l, "input");
    avg_pool_forward(geometry_of(a, spatial_size(xv)), avg_options(a), xv, output_view(*y, l, "output"));
  });
}

ffi::Error avg_backward(Buf dy, Ret dx, Attrs a) {
  return guarded([&] {
    Layout l = layout_of(a);
    TensorView dxv = output_view(*dx, l, "grad_input");
    avg_pool_backward(geometry_of(a, spatial_size(dxv)), avg_options(a), view_of(dy, l, "grad_output"), dxv);
  });
}

// Widens n elements of integer type t at `from` into int64 `to`, or (narrow) the int64 values back into type t
// keeping their low bits: two's-complement sums taken in int64 and cut to t are t's own wrapping sums.
template <class T>
void cast_ints(const void* from, void* to, int64_t n, bool narrow) {
  if (narrow) std::copy_n(static_cast<const int64_t*>(from), n, static_cast<T*>(to));
  else std::copy_n(static_cast<const T*>(from), n, static_cast<int64_t*>(to));
}

void cast_ints(DType t, const void* from, void* to, int64_t n, bool narrow) {
  switch (t) {
    case DType::u8: return cast_ints<uint8_t>(from, to, n, narrow);
    case DType::i8: return cast_ints<int8_t>(from, to, n, narrow);
    case DType::i16: return cast_ints<int16_t>(from, to, n, narrow);
    default: return cast_ints<int32_t>(from, to, n, narrow);
  }
}

// The sum over each window in the input's integer type, wrapping as lax.reduce_window's add does (flax.linen's
// average of integers divides it afterwards): the core's int64 average with divisor 1, over slices of N widened
// to int64 for the narrower types.
ffi::Error int_sum_forward(Buf x, Ret y, Attrs a) {
  return guarded([&] {
    Layout l = layout_of(a);
    TensorView xv = view_of(x, l, "input"), yv = output_view(*y, l, "output");
    if (!is_integer(xv.dtype)) fail("input", "the window sum takes integer types alone", ErrorKind::Type);
    const Geometry g = geometry_of(a, spatial_size(xv));
    AvgOptions sum;
    sum.divisor_override = 1;
    if (xv.dtype == DType::i64) return avg_pool_forward(g, sum, xv, yv);
    const int64_t n = xv.shape[0], xs = xv.strides[0], ys = yv.strides[0];
    const int64_t step = std::max<int64_t>(1, (int64_t(1) << 20) / std::max<int64_t>(1, xs + ys));  // ~8 MiB
    std::vector<int64_t> wide_x(size_t(std::min(n, step) * xs)), wide_y(size_t(std::min(n, step) * ys));
    for (int64_t b = 0; b < n; b += step) {
      const int64_t count = std::min(step, n - b);
      const TensorView xb = slice_n(xv, b, count), yb = slice_n(yv, b, count);
      TensorView wx = xb, wy = yb;
      wx.data = wide_x.data(), wy.data = wide_y.data(), wx.dtype = wy.dtype = DType::i64;
      cast_ints(xv.dtype, xb.data, wx.data, count * xs, false);
      avg_pool_forward(g, sum, wx, wy);
      cast_ints(xv.dtype, wy.data, yb.data, count * ys, true);
    }
  });
}

ffi::Error lp_forward(Buf x, Ret y, Attrs a) {
  return guarded([&] {
    Layout l = layout_of(a);
    TensorView xv = view_of(x, l, "input");
    lp_pool_forward(geometry_of(a, spatial_size(xv)), lp_options(a), xv, output_view(*y, l, "output"));
  });
}

ffi::Error lp_backward(Buf dy, Buf x, Ret dx, Attrs a) {
  return guarded([&] {
    Layout l = layout_of(a);
    TensorView dxv = output_view(*dx, l, "grad_input");
    lp_pool_backward(geometry_of(a, spatial_size(dxv)), lp_options(a), view_of(dy, l, "grad_output"),
                     view_of(x, l, "input"), dxv);
  });
}

ffi::Error stochastic_forward(Buf x, Ret y, Attrs a) {
  return guarded([&] {
    Layout l = layout_of(a);
    TensorView xv = view_of(x, l, "input");
    stochastic_pool_forward(geometry_of(a, spatial_size(xv)), stochastic_options(a), xv, output_view(*y, l, "output"));
  });
}

ffi::Error stochastic_backward(Buf dy, Buf x, Ret dx, Attrs a) {
  return guarded([&] {
    Layout l = layout_of(a);
    TensorView dxv = output_view(*dx, l, "grad_input");
    stochastic_pool_backward(geometry_of(a, spatial_size(dxv)), stochastic_options(a), view_of(dy, l, "grad_output"),
                             view_of(x, l, "input"), dxv);
  });
}

void fractional_forward(Buf& x, Buf& samples, Ret& y, Ret* argmax, const Attrs& a) {
  Layout l = layout_of(a);
  TensorView xv = view_of(x, l, "input");
  fractional_max_pool_forward(geometry_of(a, spatial_size(xv)), samples_view(samples, l), xv,
                              output_view(*y, l, "output"),
                              argmax ? output_view(**argmax, l, "indices") : TensorView{});
}

ffi::Error fractional_forward_plain(Buf x, Buf samples, Ret y, Attrs a) {
  return guarded([&] { fractional_forward(x, samples, y, nullptr, a); });
}

ffi::Error fractional_forward_argmax(Buf x, Buf samples, Ret y, Ret argmax, Attrs a) {
  return guarded([&] { fractional_forward(x, samples, y, &argmax, a); });
}

ffi::Error fractional_backward(Buf dy, Buf argmax, Buf samples, Ret dx, Attrs a) {
  return guarded([&] {
    Layout l = layout_of(a);
    TensorView dxv = output_view(*dx, l, "grad_input");
    fractional_max_pool_backward(geometry_of(a, spatial_size(dxv)), samples_view(samples, l),
                                 view_of(dy, l, "grad_output"), view_of(argmax, l, "indices"), {}, dxv);
  });
}

ffi::Error unpool_forward(Buf x, Buf indices, Ret y, Attrs a) {
  return guarded([&] {
    Layout l = layout_of(a);
    max_unpool_forward(view_of(x, l, "input"), view_of(indices, l, "indices"), output_view(*y, l, "output"));
  });
}

ffi::Error unpool_backward(Buf dy, Buf indices, Ret dx, Attrs a) {
  return guarded([&] {
    Layout l = layout_of(a);
    max_unpool_backward(view_of(dy, l, "grad_output"), view_of(indices, l, "indices"),
                        output_view(*dx, l, "grad_input"));
  });
}

ffi::Error mixed_forward(Buf x, Buf lambda, Ret y, Attrs a) {
  return guarded([&] {
    Layout l = layout_of(a);
    TensorView xv = view_of(x, l, "input"), yv = output_view(*y, l, "output");
    const Geometry g = geometry_of(a, spatial_size(xv));
    per_lambda_group(lambda, {&xv, &yv}, [&](int64_t i) {
      mixed_pool_forward(g, mixed_options(a, scalar_at(lambda, i)), xv, yv);
    });
  });
}

ffi::Error mixed_backward(Buf dy, Buf x, Buf lambda, Ret dx, Ret dlambda, Attrs a) {
  return guarded([&] {
    Layout l = layout_of(a);
    TensorView dyv = view_of(dy, l, "grad_output"), xv = view_of(x, l, "input"),
               dxv = output_view(*dx, l, "grad_input");
    const Geometry g = geometry_of(a, spatial_size(dxv));
    per_lambda_group(lambda, {&dyv, &xv, &dxv}, [&](int64_t i) {
      double d = 0;
      mixed_pool_backward(g, mixed_options(a, scalar_at(lambda, i)), dyv, xv, dxv, &d);
      put_scalar(dlambda, i, d);
    });
  });
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(MaxForward, max_forward, ffi::Ffi::Bind().Arg<Buf>().Ret<Buf>().Attrs<Attrs>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(MaxForwardArgmax, max_forward_argmax,
                              ffi::Ffi::Bind().Arg<Buf>().Ret<Buf>().Ret<Buf>().Attrs<Attrs>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(MaxBackward, max_backward,
                              ffi::Ffi::Bind().Arg<Buf>().Arg<Buf>().Ret<Buf>().Attrs<Attrs>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(AvgForward, avg_forward, ffi::Ffi::Bind().Arg<Buf>().Ret<Buf>().Attrs<Attrs>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(AvgBackward, avg_backward, ffi::Ffi::Bind().Arg<Buf>().Ret<Buf>().Attrs<Attrs>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(IntSumForward, int_sum_forward,
                              ffi::Ffi::Bind().Arg<Buf>().Ret<Buf>().Attrs<Attrs>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(LpForward, lp_forward, ffi::Ffi::Bind().Arg<Buf>().Ret<Buf>().Attrs<Attrs>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(LpBackward, lp_backward,
                              ffi::Ffi::Bind().Arg<Buf>().Arg<Buf>().Ret<Buf>().Attrs<Attrs>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(StochasticForward, stochastic_forward,
                              ffi::Ffi::Bind().Arg<Buf>().Ret<Buf>().Attrs<Attrs>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(StochasticBackward, stochastic_backward,
                              ffi::Ffi::Bind().Arg<Buf>().Arg<Buf>().Ret<Buf>().Attrs<Attrs>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(FractionalForward, fractional_forward_plain,
                              ffi::Ffi::Bind().Arg<Buf>().Arg<Buf>().Ret<Buf>().Attrs<Attrs>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(FractionalForwardArgmax, fractional_forward_argmax,
                              ffi::Ffi::Bind().Arg<Buf>().Arg<Buf>().Ret<Buf>().Ret<Buf>().Attrs<Attrs>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(FractionalBackward, fractional_backward,
                              ffi::Ffi::Bind().Arg<Buf>().Arg<Buf>().Arg<Buf>().Ret<Buf>().Attrs<Attrs>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(UnpoolForward, unpool_forward,
                              ffi::Ffi::Bind().Arg<Buf>().Arg<Buf>().Ret<Buf>().Attrs<Attrs>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(UnpoolBackward, unpool_backward,
                              ffi::Ffi::Bind().Arg<Buf>().Arg<Buf>().Ret<Buf>().Attrs<Attrs>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(MixedForward, mixed_forward,
                              ffi::Ffi::Bind().Arg<Buf>().Arg<Buf>().Ret<Buf>().Attrs<Attrs>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(MixedBackward, mixed_backward,
                              ffi::Ffi::Bind().Arg<Buf>().Arg<Buf>().Arg<Buf>().Ret<Buf>().Ret<Buf>().Attrs<Attrs>());

}  // namespace poolkit::jax_ffi
