// poolkit._core: the C++ operators and geometry builders; the Python package wraps them.
#include <nanobind/ndarray.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "poolkit/cuda.hpp"
#include "poolkit/error.hpp"
#include "poolkit/memory.hpp"

namespace poolkit::py {
namespace {

// The C++ names of tensor arguments as the Python functions call them.
std::string python_name(const std::string& arg) {
  static const std::map<std::string, std::string> names = {
      {"x", "input"}, {"y", "output"}, {"argmax", "indices"}, {"dy", "grad_output"}, {"dx", "grad_input"}};
  auto it = names.find(arg);
  return it == names.end() ? arg : it->second;
}

// poolkit::Error kinds become the matching Python exceptions; the message names the argument and the rule.
void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const Error& e) {
    std::string msg = e.what();
    const std::string prefix = "poolkit: " + e.argument() + ":";
    if (msg.rfind(prefix, 0) == 0) msg = "poolkit: " + python_name(e.argument()) + ":" + msg.substr(prefix.size());
    PyObject* type = PyExc_ValueError;
    switch (e.kind()) {
      case ErrorKind::Value: type = PyExc_ValueError; break;
      case ErrorKind::Type: type = PyExc_TypeError; break;
      case ErrorKind::Index: type = PyExc_IndexError; break;
      case ErrorKind::Overflow: type = PyExc_OverflowError; break;
    }
    PyErr_SetString(type, msg.c_str());
  }
}

}  // namespace
}  // namespace poolkit::py

NB_MODULE(_core, m) {
  m.doc() = "poolkit's C++ core";
  // Autograd graphs alive at interpreter exit still hold geometries; that is not a leak worth reporting.
  nanobind::set_leak_warnings(false);
  nanobind::register_exception_translator(&poolkit::py::translate);
  namespace nb = nanobind;
  using namespace nb::literals;
  m.def(
      "empty_bytes",
      [](size_t n) {
        void* p = poolkit::allocate(n);
        nb::capsule owner(p, [](void* q) noexcept { poolkit::release(q); });
        size_t shape[1] = {n};
        return nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>>(p, 1, shape, owner);
      },
      "nbytes"_a, "Uninitialised bytes from poolkit's memory cache, as a NumPy uint8 array.");
  m.def(
      "empty_tensor",
      [](const std::vector<size_t>& shape, const std::vector<int64_t>& strides, uint8_t code, uint8_t bits) {
        if (strides.size() != shape.size()) throw nb::value_error("poolkit: strides: one per axis of shape");
        size_t extent = 1;  // elements up to the farthest one the strides reach, plus one
        for (size_t i = 0; i < shape.size(); ++i) {
          if (shape[i] == 0) extent = 0;
          if (strides[i] < 0) throw nb::value_error("poolkit: strides: must not be negative");
        }
        if (extent)
          for (size_t i = 0; i < shape.size(); ++i) extent += (shape[i] - 1) * size_t(strides[i]);
        void* p = poolkit::allocate(extent * bits / 8);
        nb::capsule owner(p, [](void* q) noexcept { poolkit::release(q); });
        return nb::ndarray<nb::pytorch>(p, shape.size(), shape.data(), owner, strides.data(),
                                         nb::dlpack::dtype{code, bits, 1});
      },
      "shape"_a, "strides"_a, "code"_a, "bits"_a,
      "Uninitialised host memory from poolkit's memory cache as a torch.Tensor of this shape, element strides and "
      "DLPack type (code, bits): one call where NumPy bytes viewed as a tensor took several.");
  m.def("set_cache_limit", &poolkit::set_cache_limit, "nbytes"_a);
  m.def("cache_limit", &poolkit::cache_limit);
  m.def("cached_bytes", &poolkit::cached_bytes);
  m.def(
      "allocator_functions",
      [] { return std::vector<uintptr_t>{uintptr_t(&poolkit::allocate), uintptr_t(&poolkit::release)}; },
      "The addresses of this module's allocate(size_t) and release(void*), for poolkit.torch's C++ kernels: one "
      "memory cache a process.");
  m.def(
      "set_cuda_stream",
      [](int device, uintptr_t stream) { poolkit::set_cuda_stream(device, reinterpret_cast<void*>(stream)); },
      "device"_a, "stream"_a,
      "The CUDA device (made current) and stream (a cudaStream_t as an int; 0: the default stream) that this "
      "thread's next operators on CUDA tensors run on.");
  m.attr("with_cuda") = poolkit::built_with_cuda();
  poolkit::py::bind_geometry(m);
  poolkit::py::bind_ops(m);
}
