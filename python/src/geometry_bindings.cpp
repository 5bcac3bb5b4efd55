// The geometry builders of geometry.hpp, so that Python never computes an output size itself.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "poolkit/geometry.hpp"
#include "poolkit/ops.hpp"
#include "recipe.hpp"
#include "../../src/reference/plane.hpp"

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
          "argmax_cells",
          [](const Geometry& g) {
            // the reference's walk of each window: one source for what a window-local tap names
            const Geometry g3 = ref::detail::as3d(g);
            const int64_t taps = g.window_cells();
            std::vector<int64_t> cells(size_t(g.plane_out() * taps), -1);
            int64_t o = 0;
            ref::detail::for_each_output(g3, 1, 1, [&](int64_t, int64_t, int64_t a, int64_t b, int64_t d) {
              ref::detail::for_each_cell(g3, a, b, d, [&](int64_t t, int64_t h, int64_t w, int64_t local) {
                cells[size_t(o * taps + local)] = ref::detail::flat3(g3, t, h, w);
              });
              ++o;
            });
            return cells;
          },
          "For each output of a plane (in order) and each window-local tap (the compact argmax), the flat index in "
          "the (n, c) input plane of the cell it names (PyTorch's int64 index); -1 where the tap lies in the "
          "padding or past a smaller window. Row-major, window_cells() a row. Fractional geometries: those of the "
          "samples they were built with.");

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
