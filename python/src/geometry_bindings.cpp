// The geometry builders of geometry.hpp, so that Python never computes an output size itself.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "poolkit/geometry.hpp"
#include "poolkit/ops.hpp"
#include "recipe.hpp"

namespace poolkit::py {

using V = std::vector<int64_t>;

void bind_geometry(nb::module_& m) {
  nb::class_<Geometry>(m, "Geometry", "Which input cells each output cell reads (built by the *_geometry functions).")
      .def_ro("rank", &Geometry::rank)
      .def("input_size", &Geometry::input_size)
      .def("output_size", &Geometry::output_size)
      .def("window_cells", &Geometry::window_cells)
      .def("local_argmax_dtype", [](const Geometry& g) { return std::string(dtype_name(local_argmax_dtype(g))); })
      .def(
          "window_origins",
          [](const Geometry& g) {
            std::vector<std::tuple<V, int64_t, int64_t>> axes;
            for (int a = 0; a < g.rank; ++a) {
              const Axis& A = g.axes[a];
              V origin(size_t(A.out));
              for (int64_t o = 0; o < A.out; ++o) origin[size_t(o)] = A.origin(o);
              axes.emplace_back(origin, A.step(), A.kernel);
            }
            return axes;
          },
          "Per spatial axis: (the input position of each window's tap 0, the distance between taps, the taps of "
          "the largest window). Tap j of window o reads position origin[o] + j * step; a compact (window-local) "
          "argmax is its taps as a number whose digit radices are the largest windows, the last axis's digit the "
          "lowest. Fractional geometries: those of the samples they were built with.");

  m.def("torch_geometry", &torch_geometry, "input_size"_a, "kernel_size"_a, "stride"_a, "padding"_a, "dilation"_a,
        "ceil_mode"_a);
  m.def("keras_geometry", &keras_geometry, "input_size"_a, "pool_size"_a, "strides"_a, "padding"_a);
  m.def(
      "onnx_geometry",
      [](const V& in, const V& kernel, const V& strides, const V& dilations, const V& pads, const std::string& auto_pad,
         bool ceil_mode) { return onnx_geometry(in, OnnxParams{kernel, strides, dilations, pads, auto_pad, ceil_mode}); },
      "input_size"_a, "kernel_shape"_a, "strides"_a, "dilations"_a, "pads"_a, "auto_pad"_a, "ceil_mode"_a);
  m.def("adaptive_geometry", &adaptive_geometry, "input_size"_a, "output_size"_a);
  m.def("global_geometry", &global_geometry, "input_size"_a);
  m.def("fractional_geometry", &fractional_geometry, "input_size"_a, "output_size"_a, "kernel_size"_a,
        "in_float"_a);
  m.def("fractional_output_size", &fractional_output_size, "input_size"_a, "output_ratio"_a, "kernel_size"_a);
  m.def("recipe_geometry", &recipe_geometry, "builder"_a, "ints"_a, "lens"_a, "reals"_a, "text"_a, "flag"_a,
        "input_size"_a, "The geometry of a flattened recipe (poolkit._params.flat_recipe).");
  m.def("unpool_output_size", &unpool_output_size, "input_size"_a, "kernel_size"_a, "stride"_a, "padding"_a,
        "output_size"_a.none());
}

}  // namespace poolkit::py
