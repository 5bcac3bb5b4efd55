// The XLA FFI handlers (CPU): each wraps XLA's buffers as views and calls one operator of the core, which runs
// on poolkit's threads. A poolkit::Error comes back as an ffi::Error carrying its message (argument and rule).
#include "handlers.hpp"

#include <exception>

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

ffi::Error max_forward(Buf x, Ret y, Attrs a) {
  return guarded([&] {
    Layout l = layout_of(a);
    TensorView xv = view_of(x, l, "input");
    max_pool_forward(geometry_of(a, spatial_size(xv)), xv, view_of(*y, l, "output"), {});
  });
}

ffi::Error max_forward_argmax(Buf x, Ret y, Ret argmax, Attrs a) {
  return guarded([&] {
    Layout l = layout_of(a);
    TensorView xv = view_of(x, l, "input");
    max_pool_forward(geometry_of(a, spatial_size(xv)), xv, view_of(*y, l, "output"), view_of(*argmax, l, "indices"));
  });
}

ffi::Error max_backward(Buf dy, Buf argmax, Ret dx, Attrs a) {
  return guarded([&] {
    Layout l = layout_of(a);
    TensorView dxv = view_of(*dx, l, "grad_input");
    max_pool_backward(geometry_of(a, spatial_size(dxv)), view_of(dy, l, "grad_output"), view_of(argmax, l, "indices"),
                      {}, dxv);
  });
}

ffi::Error avg_forward(Buf x, Ret y, Attrs a) {
  return guarded([&] {
    Layout l = layout_of(a);
    TensorView xv = view_of(x, l, "input");
    avg_pool_forward(geometry_of(a, spatial_size(xv)), avg_options(a), xv, view_of(*y, l, "output"));
  });
}

ffi::Error avg_backward(Buf dy, Ret dx, Attrs a) {
  return guarded([&] {
    Layout l = layout_of(a);
    TensorView dxv = view_of(*dx, l, "grad_input");
    avg_pool_backward(geometry_of(a, spatial_size(dxv)), avg_options(a), view_of(dy, l, "grad_output"), dxv);
  });
}

ffi::Error lp_forward(Buf x, Ret y, Attrs a) {
  return guarded([&] {
    Layout l = layout_of(a);
    TensorView xv = view_of(x, l, "input");
    lp_pool_forward(geometry_of(a, spatial_size(xv)), lp_options(a), xv, view_of(*y, l, "output"));
  });
}

ffi::Error lp_backward(Buf dy, Buf x, Ret dx, Attrs a) {
  return guarded([&] {
    Layout l = layout_of(a);
    TensorView dxv = view_of(*dx, l, "grad_input");
    lp_pool_backward(geometry_of(a, spatial_size(dxv)), lp_options(a), view_of(dy, l, "grad_output"),
                     view_of(x, l, "input"), dxv);
  });
}

ffi::Error stochastic_forward(Buf x, Ret y, Attrs a) {
  return guarded([&] {
    Layout l = layout_of(a);
    TensorView xv = view_of(x, l, "input");
    stochastic_pool_forward(geometry_of(a, spatial_size(xv)), stochastic_options(a), xv, view_of(*y, l, "output"));
  });
}

ffi::Error stochastic_backward(Buf dy, Buf x, Ret dx, Attrs a) {
  return guarded([&] {
    Layout l = layout_of(a);
    TensorView dxv = view_of(*dx, l, "grad_input");
    stochastic_pool_backward(geometry_of(a, spatial_size(dxv)), stochastic_options(a), view_of(dy, l, "grad_output"),
                             view_of(x, l, "input"), dxv);
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
XLA_FFI_DEFINE_HANDLER_SYMBOL(LpForward, lp_forward, ffi::Ffi::Bind().Arg<Buf>().Ret<Buf>().Attrs<Attrs>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(LpBackward, lp_backward,
                              ffi::Ffi::Bind().Arg<Buf>().Arg<Buf>().Ret<Buf>().Attrs<Attrs>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(StochasticForward, stochastic_forward,
                              ffi::Ffi::Bind().Arg<Buf>().Ret<Buf>().Attrs<Attrs>());
XLA_FFI_DEFINE_HANDLER_SYMBOL(StochasticBackward, stochastic_backward,
                              ffi::Ffi::Bind().Arg<Buf>().Arg<Buf>().Ret<Buf>().Attrs<Attrs>());

}  // namespace poolkit::jax_ffi
