#pragma once
#include <nanobind/nanobind.h>

namespace poolkit::py {
namespace nb = nanobind;
using namespace nb::literals;

void bind_geometry(nb::module_& m);
void bind_ops(nb::module_& m);
}  // namespace poolkit::py
