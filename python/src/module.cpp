// poolkit._core: the C++ operators and geometry builders; the Python package wraps them.
#include "bindings.hpp"
#include "poolkit/error.hpp"

namespace poolkit::py {
namespace {

// poolkit::Error kinds become the matching Python exceptions; the message names the argument and the rule.
void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const Error& e) {
    switch (e.kind()) {
      case ErrorKind::Value: PyErr_SetString(PyExc_ValueError, e.what()); return;
      case ErrorKind::Type: PyErr_SetString(PyExc_TypeError, e.what()); return;
      case ErrorKind::Index: PyErr_SetString(PyExc_IndexError, e.what()); return;
      case ErrorKind::Overflow: PyErr_SetString(PyExc_OverflowError, e.what()); return;
    }
    PyErr_SetString(PyExc_ValueError, e.what());
  }
}

}  // namespace
}  // namespace poolkit::py

NB_MODULE(_core, m) {
  m.doc() = "poolkit's C++ core";
  // Autograd graphs alive at interpreter exit still hold geometries; that is not a leak worth reporting.
  nanobind::set_leak_warnings(false);
  nanobind::register_exception_translator(&poolkit::py::translate);
  poolkit::py::bind_geometry(m);
  poolkit::py::bind_ops(m);
}
