// The operators of ops_list.inc on arrays the caller allocated (Python allocates outputs in the input's layout).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "arrays.hpp"
#include "bindings.hpp"
#include "poolkit/ops.hpp"

namespace poolkit::py {
namespace {

using Opt = std::optional<In>;
using OptI64 = std::optional<int64_t>;

AvgOptions avg_options(bool count_include_pad, OptI64 divisor_override) {
  AvgOptions o;
  o.count_include_pad = count_include_pad;
  o.divisor_override = divisor_override;
  return o;
}

LpOptions lp_options(double p, const std::string& convention) {
  LpOptions o;
  o.p = p;
  if (convention == "torch") o.convention = LpConvention::Torch;
  else if (convention == "onnx") o.convention = LpConvention::Onnx;
  else fail("convention", "must be 'torch' or 'onnx' (got '" + convention + "')");
  return o;
}

// Runs f without the GIL: the arrays stay alive in the caller's frame.
template <class F>
void unlocked(F&& f) {
  nb::gil_scoped_release release;
  f();
}

}  // namespace

void bind_ops(nb::module_& m) {
  m.def("max_pool_forward", [](const Geometry& g, In x, Out y, std::optional<Out> argmax) {
    TensorView xv = view_of(x, "input"), yv = view_of(y, "output"), av = optional_view(argmax, "indices");
    unlocked([&] { max_pool_forward(g, xv, yv, av); });
  }, "geometry"_a, "x"_a, "y"_a, "argmax"_a.none());
  m.def("max_pool_backward", [](const Geometry& g, In dy, Opt argmax, Opt x, Out dx) {
    TensorView dyv = view_of(dy, "grad_output"), av = optional_view(argmax, "indices"),
               xv = optional_view(x, "input"), dxv = view_of(dx, "grad_input");
    unlocked([&] { max_pool_backward(g, dyv, av, xv, dxv); });
  }, "geometry"_a, "dy"_a, "argmax"_a.none(), "x"_a.none(), "dx"_a);

  m.def("avg_pool_forward", [](const Geometry& g, bool cip, OptI64 div, In x, Out y) {
    TensorView xv = view_of(x, "input"), yv = view_of(y, "output");
    AvgOptions o = avg_options(cip, div);
    unlocked([&] { avg_pool_forward(g, o, xv, yv); });
  }, "geometry"_a, "count_include_pad"_a, "divisor_override"_a.none(), "x"_a, "y"_a);
  m.def("avg_pool_backward", [](const Geometry& g, bool cip, OptI64 div, In dy, Out dx) {
    TensorView dyv = view_of(dy, "grad_output"), dxv = view_of(dx, "grad_input");
    AvgOptions o = avg_options(cip, div);
    unlocked([&] { avg_pool_backward(g, o, dyv, dxv); });
  }, "geometry"_a, "count_include_pad"_a, "divisor_override"_a.none(), "dy"_a, "dx"_a);

  m.def("lp_pool_forward", [](const Geometry& g, double p, const std::string& conv, In x, Out y) {
    LpOptions o = lp_options(p, conv);
    TensorView xv = view_of(x, "input"), yv = view_of(y, "output");
    unlocked([&] { lp_pool_forward(g, o, xv, yv); });
  }, "geometry"_a, "norm_type"_a, "convention"_a, "x"_a, "y"_a);
  m.def("lp_pool_backward", [](const Geometry& g, double p, const std::string& conv, In dy, In x, Out dx) {
    LpOptions o = lp_options(p, conv);
    TensorView dyv = view_of(dy, "grad_output"), xv = view_of(x, "input"), dxv = view_of(dx, "grad_input");
    unlocked([&] { lp_pool_backward(g, o, dyv, xv, dxv); });
  }, "geometry"_a, "norm_type"_a, "convention"_a, "dy"_a, "x"_a, "dx"_a);

  m.def("mixed_pool_forward", [](const Geometry& g, double lambda, bool cip, OptI64 div, In x, Out y) {
    MixedOptions o{lambda, avg_options(cip, div)};
    TensorView xv = view_of(x, "input"), yv = view_of(y, "output");
    unlocked([&] { mixed_pool_forward(g, o, xv, yv); });
  }, "geometry"_a, "lambda_"_a, "count_include_pad"_a, "divisor_override"_a.none(), "x"_a, "y"_a);
  m.def("mixed_pool_backward", [](const Geometry& g, double lambda, bool cip, OptI64 div, In dy, In x, Out dx) {
    MixedOptions o{lambda, avg_options(cip, div)};
    TensorView dyv = view_of(dy, "grad_output"), xv = view_of(x, "input"), dxv = view_of(dx, "grad_input");
    double dlambda = 0;
    unlocked([&] { mixed_pool_backward(g, o, dyv, xv, dxv, &dlambda); });
    return dlambda;
  }, "geometry"_a, "lambda_"_a, "count_include_pad"_a, "divisor_override"_a.none(), "dy"_a, "x"_a, "dx"_a);

  m.def("stochastic_pool_forward", [](const Geometry& g, bool training, uint64_t seed, In x, Out y) {
    StochasticOptions o{training, seed};
    TensorView xv = view_of(x, "input"), yv = view_of(y, "output");
    unlocked([&] { stochastic_pool_forward(g, o, xv, yv); });
  }, "geometry"_a, "training"_a, "seed"_a, "x"_a, "y"_a);
  m.def("stochastic_pool_backward", [](const Geometry& g, bool training, uint64_t seed, In dy, In x, Out dx) {
    StochasticOptions o{training, seed};
    TensorView dyv = view_of(dy, "grad_output"), xv = view_of(x, "input"), dxv = view_of(dx, "grad_input");
    unlocked([&] { stochastic_pool_backward(g, o, dyv, xv, dxv); });
  }, "geometry"_a, "training"_a, "seed"_a, "dy"_a, "x"_a, "dx"_a);

  m.def("fractional_samples", [](uint64_t seed, Out samples) {
    TensorView sv = view_of(samples, "_random_samples");
    fractional_samples(seed, sv);
  }, "seed"_a, "samples"_a);
  m.def("fractional_max_pool_forward", [](const Geometry& g, In samples, In x, Out y, std::optional<Out> argmax) {
    TensorView sv = view_of(samples, "_random_samples"), xv = view_of(x, "input"), yv = view_of(y, "output"),
               av = optional_view(argmax, "indices");
    unlocked([&] { fractional_max_pool_forward(g, sv, xv, yv, av); });
  }, "geometry"_a, "samples"_a, "x"_a, "y"_a, "argmax"_a.none());
  m.def("fractional_max_pool_backward", [](const Geometry& g, In samples, In dy, Opt argmax, Opt x, Out dx) {
    TensorView sv = view_of(samples, "_random_samples"), dyv = view_of(dy, "grad_output"),
               av = optional_view(argmax, "indices"), xv = optional_view(x, "input"), dxv = view_of(dx, "grad_input");
    unlocked([&] { fractional_max_pool_backward(g, sv, dyv, av, xv, dxv); });
  }, "geometry"_a, "samples"_a, "dy"_a, "argmax"_a.none(), "x"_a.none(), "dx"_a);

  m.def("max_unpool_forward", [](In x, In indices, Out y) {
    TensorView xv = view_of(x, "input"), iv = view_of(indices, "indices"), yv = view_of(y, "output");
    unlocked([&] { max_unpool_forward(xv, iv, yv); });
  }, "x"_a, "indices"_a, "y"_a);
  m.def("max_unpool_backward", [](In dy, In indices, Out dx) {
    TensorView dyv = view_of(dy, "grad_output"), iv = view_of(indices, "indices"), dxv = view_of(dx, "grad_input");
    unlocked([&] { max_unpool_backward(dyv, iv, dxv); });
  }, "dy"_a, "indices"_a, "dx"_a);
}

}  // namespace poolkit::py
