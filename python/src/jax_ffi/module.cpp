// poolkit._jax_ffi: the XLA FFI handlers as capsules, for jax.ffi.register_ffi_target(..., platform="cpu").
#include <nanobind/nanobind.h>

#include "handlers.hpp"

namespace nb = nanobind;

NB_MODULE(_jax_ffi, m) {
  m.doc() = "poolkit's operators as XLA FFI handlers (CPU)";
  m.def("registrations", [] {
    nb::dict d;
#define POOLKIT_JAX_CAPSULE(symbol, target) \
  d[target] = nb::capsule(reinterpret_cast<void*>(&poolkit::jax_ffi::symbol));
    POOLKIT_JAX_HANDLERS(POOLKIT_JAX_CAPSULE)
#undef POOLKIT_JAX_CAPSULE
    return d;
  }, "Target name -> FFI handler capsule.");
}
